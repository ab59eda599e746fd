// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the pull state parser (puller/state.c).  Each input is
 * decoded twice: as a whole file (the header checks), and as the JSON body
 * behind a header with the right length and CRC, so that mutations reach
 * the field checks instead of dying at the checksum.  A state that decodes
 * must encode and decode again to the same state.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pull.h"

static void same_or_abort(const struct pull_state *a, const struct pull_state *b)
{
	size_t i;

	if (a->pull_id != b->pull_id || strcmp(a->boot_id, b->boot_id) ||
	    a->nmaps != b->nmaps)
		abort();
	for (i = 0; i < a->nmaps; i++) {
		const struct pull_map_state *x = &a->maps[i], *y = &b->maps[i];

		if (strcmp(x->obj, y->obj) || strcmp(x->map, y->map) ||
		    x->map_id != y->map_id || x->nkey_cols != y->nkey_cols ||
		    x->nkeys != y->nkeys || x->start_boot_ns != y->start_boot_ns ||
		    x->start_real_ns != y->start_real_ns ||
		    memcmp(x->keys, y->keys, x->nkeys * sizeof(*x->keys)))
			abort();
	}
}

static void decode_and_round_trip(const char *buf, size_t len)
{
	struct pull_state st, again;
	char err[256], *enc = NULL;
	size_t enc_len;

	if (state_decode(buf, len, &st, err, sizeof(err)))
		return;
	if (state_encode(&st, &enc, &enc_len) ||
	    state_decode(enc, enc_len, &again, err, sizeof(err)))
		abort();
	same_or_abort(&st, &again);
	state_free(&again);
	state_free(&st);
	free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *framed = malloc(size + 128);
	int hlen;

	decode_and_round_trip((const char *)data, size);
	if (!framed)
		return 0;
	hlen = snprintf(framed, 128, "kernelstats-state 1 %08lx %zu\n",
			crc32(0, data, (uInt)size), size);
	memcpy(framed + hlen, data, size);
	decode_and_round_trip(framed, hlen + size);
	free(framed);
	return 0;
}
