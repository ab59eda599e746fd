// SPDX-License-Identifier: GPL-2.0
/* kstats pull: one atom, its payload built from the schema (atom_schema.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pull_run.h"

static int reserve(struct pull_run *r)
{
	struct atom_slot **atoms;
	size_t cap = r->cap ? r->cap * 2 : 16;

	if (r->natoms < r->cap)
		return 0;
	atoms = realloc(r->atoms, cap * sizeof(*atoms));
	if (!atoms)
		return -ENOMEM;
	r->atoms = atoms;
	r->cap = cap;
	return 0;
}

int pull_emit_atom(struct pull_run *r, const struct pull_metric *pm,
		   const struct window *w, const int64_t *key, size_t nkey,
		   const char *name, const int32_t *buckets, unsigned int anomalies)
{
	struct atom_slot *s;
	Kernelstats__Atom *a;
	int ret = reserve(r);

	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	a = &s->atom;
	kernelstats__atom__init(a);
	memcpy(s->buckets, buckets, sizeof(s->buckets));
	ret = atom_build(s, &pm->shape, key, nkey, name);
	if (ret) {
		atom_slot_free(s);
		return ret;
	}
	a->has_atom_id = a->has_pull_id = a->has_reset = a->has_anomalies = 1;
	a->has_window_start_realtime_ns = a->has_window_end_realtime_ns = 1;
	a->has_window_start_boottime_ns = a->has_window_end_boottime_ns = 1;
	a->atom_id = (int32_t)pm->shape.oneof->id;
	a->pull_id = r->pull_id;
	a->boot_id = r->boot_id;
	a->window_start_realtime_ns = w->start_real;
	a->window_end_realtime_ns = w->end_real;
	a->window_start_boottime_ns = w->start_boot;
	a->window_end_boottime_ns = w->end_boot;
	a->reset = w->reset;
	a->anomalies = anomalies;
	a->has_wall_clock_step_ns = w->clock_step != 0;
	a->wall_clock_step_ns = w->clock_step;
	r->atoms[r->natoms++] = s;
	return 0;
}
