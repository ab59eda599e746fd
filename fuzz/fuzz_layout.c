// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as a BTF blob (btf__new), then
 * kstats_layout_build on every type id.  Beyond "no crash, no leak", each
 * layout built must keep every leaf inside its type, since the reader loads
 * leaves from a buffer of exactly that size.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kstats_reader.h"

#define MAX_IDS 4096
/*
 * Types larger than this are skipped: the map definitions' __uint() arrays
 * (int[65536]) would spend the run naming leaves.  The unit tests cover
 * the leaf limit.
 */
#define MAX_ROOT_SIZE 16384

static void check_layout(const struct kstats_layout *l)
{
	size_t i;

	for (i = 0; i < l->ncols; i++) {
		const struct kstats_column *c = &l->cols[i];

		if ((c->size != 1 && c->size != 2 && c->size != 4 && c->size != 8) ||
		    (uint64_t)c->offset + c->size > l->size ||
		    !memchr(c->name, 0, sizeof(c->name)) || !c->name[0])
			abort();
	}
	if (!kstats_layout_equal(l, l))
		abort();
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level; (void)fmt; (void)ap;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	libbpf_set_print(quiet);	/* btf__new's warnings on every bad blob */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[KSTATS_ERR_LEN];
	struct kstats_layout l;
	struct btf *btf;
	uint32_t id, n;

	btf = btf__new(data, size);
	if (!btf)
		return 0;
	n = btf__type_cnt(btf);
	for (id = 0; id < n && id < MAX_IDS; id++) {
		if (btf__resolve_size(btf, id) > MAX_ROOT_SIZE)
			continue;
		err[0] = 0;
		if (kstats_layout_build(btf, id, "value", false, &l, err, sizeof(err))) {
			/* A refusal says why and leaves nothing behind. */
			if (!err[0] || l.cols || l.ncols)
				abort();
			continue;
		}
		check_layout(&l);
		kstats_layout_free(&l);
	}
	btf__free(btf);
	return 0;
}
