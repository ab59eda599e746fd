// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the typed loader-status reader (btfreader/loader_status.c).
 * Every string of a parsed status must be readable and every lookup safe.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kstats_status.h"

static size_t touch(const char *s)
{
	return strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kstats_status st;
	char err[512];
	size_t i, j, n = 0;

	if (kstats_status_parse((const char *)data, size, "fuzz", &st, err, sizeof(err)))
		return 0;
	n += touch(st.kernel_release) + touch(st.boot_id) + touch(st.pin_dir);
	for (i = 0; i < st.nobjs; i++) {
		const struct kstats_status_obj *o = &st.objs[i];

		n += touch(o->name) + touch(o->path) + touch(kstats_outcome_name(o->outcome)) +
		     touch(o->copy) + touch(o->reason);
		for (j = 0; j < o->nprogs; j++)
			n += touch(o->progs[j].name) + touch(o->progs[j].reason) +
			     touch(o->progs[j].link_pin) + touch(o->progs[j].prog_pin);
		for (j = 0; j < o->nmaps; j++) {
			n += touch(o->maps[j].name) + touch(o->maps[j].pin);
			if (kstats_status_map_by_id(&st, o->maps[j].map_id) == NULL &&
			    o->maps[j].map_id)
				abort();	/* a map with an id must be found by it */
		}
		if (kstats_status_obj(&st, o->name) == NULL)
			abort();
	}
	kstats_status_free(&st);
	return n == SIZE_MAX;
}
