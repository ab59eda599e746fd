// SPDX-License-Identifier: GPL-2.0
/* One object's programs: their attach points, and the variant chosen per handler. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kstats_pins.h"
#include "loader.h"

static const char *attach_type_of(const char *section)
{
	__u32 v;
	size_t n;

	for (v = KSTATS_VARIANT_TP_BTF; v < KSTATS_VARIANT_OTHER; v++) {
		n = strlen(variant_name(v));
		if (!strncmp(section, variant_name(v), n) && section[n] == '/')
			break;
	}
	return variant_name(v);
}

/* Checks deferred attach points and forgets the failed attempt; false if none. */
bool check_deferred(struct obj_load *l)
{
	bool any = false;
	size_t i;

	for (i = 0; i < l->res->nprogs; i++) {
		struct prog_plan *pl = &l->pl[i];

		any |= pl->deferred;
		if (pl->deferred)
			pl->available = attach_point_exists(l->ctx, l->res->progs[i].section,
							    pl->why, sizeof(pl->why));
		pl->deferred = false;
	}
	if (!any)
		return false;
	for (i = 0; i < l->res->nprogs; i++)
		l->pl[i].rejected = false;
	l->res->outcome = KSTATS_LOADED;
	l->res->reason[0] = 0;
	return true;
}

int init_progs(struct obj_load *l)
{
	const char *pin_dir = l->ctx->pin_dir;
	struct bpf_program *prog;
	struct kstats_status_prog *p;
	struct prog_plan *pl;
	size_t n = 0;

	bpf_object__for_each_program(prog, l->obj)
		n++;
	l->res->progs = calloc(n ? n : 1, sizeof(*l->res->progs));
	l->pl = calloc(n ? n : 1, sizeof(*l->pl));
	if (!l->res->progs || !l->pl)
		goto oom;
	bpf_object__for_each_program(prog, l->obj) {
		p = &l->res->progs[l->res->nprogs];
		pl = &l->pl[l->res->nprogs];
		if (prog_init(p))
			goto oom;
		l->res->nprogs++;
		pl->prog = prog;
		snprintf(p->name, KSTATS_NAME_LEN, "%s", bpf_program__name(prog));
		snprintf(p->section, LOADER_SECTION_LEN, "%s", bpf_program__section_name(prog));
		snprintf(p->attach_type, LOADER_TYPE_LEN, "%s", attach_type_of(p->section));
		if (kstats_pin_path(p->link_pin, LOADER_PATH_LEN, pin_dir, "link",
				    l->res->name, p->name) ||
		    kstats_pin_path(p->prog_pin, LOADER_PATH_LEN, pin_dir, "prog",
				    l->res->name, p->section)) {
			set_outcome(l->res, KSTATS_FAILED_OBJECT, "pin path for %s is too long",
				    p->name);
			return -ENAMETOOLONG;
		}
		pl->meta = kstats_objmeta_prog(&l->meta, p->name);
		if (!pl->meta) {
			set_outcome(l->res, KSTATS_FAILED_OBJECT, "program %s has no metadata; "
				    "declare it with DEFINE_BPF_PROG or DEFINE_BPF_TRACEPOINT",
				    p->name);
			return -EINVAL;
		}
		snprintf(p->attach, KSTATS_NAME_LEN, "%s", pl->meta->attach);
		pl->in_range = kver_in(l->ctx->kver, pl->meta->min_kver, pl->meta->max_kver,
				       pl->why, sizeof(pl->why));
		if (pl->in_range && attach_point_deferred(p->section))
			pl->available = pl->deferred = true;
		else if (pl->in_range)
			pl->available = attach_point_exists(l->ctx, p->section, pl->why,
							    sizeof(pl->why));
	}
	return 0;
oom:
	set_outcome(l->res, KSTATS_FAILED_OBJECT, "out of memory");
	return -ENOMEM;
}

static bool same_group(const struct obj_load *l, size_t i, size_t j)
{
	return !strcmp(l->res->progs[i].attach, l->res->progs[j].attach);
}

/* The preferred usable variant in the group of program i, or -1. */
static int best_variant(const struct obj_load *l, size_t i)
{
	int best = -1;
	size_t j;

	for (j = 0; j < l->res->nprogs; j++) {
		if (!same_group(l, i, j) || !l->pl[j].available || l->pl[j].rejected)
			continue;
		if (best < 0 || l->pl[j].meta->variant < l->pl[best].meta->variant)
			best = j;
	}
	return best;
}

/* A mandatory attach point with no runnable in-range variant stops the object. */
static enum kstats_outcome group_stop(struct obj_load *l, size_t i)
{
	bool in_range = false, rejected = false;
	const char *sep = ":";
	char *why = l->res->reason;
	size_t j, n;

	for (j = 0; j < l->res->nprogs; j++) {
		if (!same_group(l, i, j))
			continue;
		if (l->pl[j].meta->flags & KSTATS_PROG_OPTIONAL)
			return KSTATS_LOADED;
		rejected |= l->pl[j].rejected;
		in_range |= l->pl[j].in_range;
	}
	if (!in_range)
		return KSTATS_LOADED;
	/* "<attach>: <prog>: <why>; <prog>: <why>" over the group's in-range members. */
	n = snprintf(why, LOADER_REASON_LEN, "%s", l->res->progs[i].attach);
	for (j = 0; j < l->res->nprogs && n < LOADER_REASON_LEN; j++) {
		if (!same_group(l, i, j) || !l->pl[j].in_range)
			continue;
		n += snprintf(why + n, LOADER_REASON_LEN - n, "%s %s: %s", sep,
			      l->res->progs[j].name,
			      l->pl[j].rejected ? l->res->progs[j].reason : l->pl[j].why);
		sep = ";";
	}
	l->res->outcome = rejected ? KSTATS_FAILED_VERIFIER : KSTATS_SKIPPED_NO_ATTACH_POINT;
	return l->res->outcome;
}

/* Returns what stops the object. */
enum kstats_outcome choose_variants(struct obj_load *l)
{
	struct kstats_status_obj *res = l->res;
	enum kstats_outcome stop = KSTATS_LOADED;
	bool any_in_range = false, any_chosen = false;
	size_t i;
	int best;

	for (i = 0; i < res->nprogs; i++) {
		struct kstats_status_prog *p = &res->progs[i];
		struct prog_plan *pl = &l->pl[i];

		best = best_variant(l, i);
		pl->chosen = best == (int)i;
		if (pl->chosen) {
			p->outcome = KSTATS_LOADED;
			p->reason[0] = 0;
		} else if (!pl->rejected) {	/* a rejected one keeps its FAILED_VERIFIER */
			p->outcome = !pl->in_range ? KSTATS_SKIPPED_KERNEL_VERSION :
				     !pl->available ? KSTATS_SKIPPED_NO_ATTACH_POINT :
				     KSTATS_SKIPPED_VARIANT;
			if (p->outcome == KSTATS_SKIPPED_VARIANT)
				snprintf(p->reason, LOADER_REASON_LEN, "%s variant %s preferred",
					 variant_name(l->pl[best].meta->variant),
					 res->progs[best].name);
			else
				snprintf(p->reason, LOADER_REASON_LEN, "%s", pl->why);
		}
		any_in_range |= pl->in_range;
		any_chosen |= pl->chosen;
		if (best < 0 && stop == KSTATS_LOADED)
			stop = group_stop(l, i);
	}
	if (stop != KSTATS_LOADED || !res->nprogs || any_chosen)
		return stop;
	if (any_in_range)
		return set_outcome(res, KSTATS_SKIPPED_NO_ATTACH_POINT,
				   "none of its attach points exists in this kernel");
	return set_outcome(res, KSTATS_SKIPPED_KERNEL_VERSION, "no program is for kernel %s",
			   kver_str(l->ctx->kver).s);
}
