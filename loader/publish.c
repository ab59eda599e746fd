// SPDX-License-Identifier: GPL-2.0
/*
 * Publication of a loaded object: its maps, programs and links pinned under
 * temporary names, old links detached just before the new ones attach, then
 * everything renamed into place at once, or nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "kstats_pins.h"
#include "object.h"

static void owner_of_map(const struct obj_load *l, const char *name,
			 const char **uid, const char **gid, unsigned int *mode)
{
	const struct kstats_map_meta *mm = kstats_objmeta_map(&l->meta, name);

	*uid = mm ? mm->uid : "root";
	*gid = mm ? mm->gid : "root";
	*mode = mm ? mm->mode : 0600;
}

static int stage_maps(struct obj_load *l, struct pin_txn *txn)
{
	char aside[LOADER_PATH_LEN];
	const char *uid, *gid;
	struct map_result *m;
	struct bpf_map *map;
	unsigned int mode;
	int ret;

	bpf_object__for_each_map(map, l->obj) {
		if (bpf_map__is_internal(map))
			continue;
		m = add_map(l->res, bpf_map__name(map), l->ctx);
		map_type_names(bpf_object__btf(l->obj), map, &m->types);
		owner_of_map(l, m->name, &uid, &gid, &mode);
		if (m->reused) {
			prev_map_created(l->ctx, l->res->name, m->name, m->map_id,
					 &m->created_boottime_ns, &m->created_realtime_ns);
			ret = apply_owner(m->pin, uid, gid, mode);
		} else {
			snprintf(aside, sizeof(aside), "%s/aside_%llu_%s", l->ctx->pin_dir,
				 (unsigned long long)l->created_real_ns, strrchr(m->pin, '/') + 1);
			m->map_id = kstats_fd_obj_id(bpf_map__fd(map));
			m->created_boottime_ns = l->created_boot_ns;
			m->created_realtime_ns = l->created_real_ns;
			ret = txn_pin(txn, bpf_map__fd(map), m->pin, m->replaced ? aside : NULL,
				      uid, gid, mode);
			if (!ret && m->replaced)
				ret = own_pin(l->res, aside);
		}
		if (ret) {
			set_outcome(l->res, OUT_FAILED_PIN, "pin %s: %s", m->pin, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Pins of kind this object may have left: one per program, and owned ones. */
static size_t collect_pins(const struct obj_result *res, const char *kind,
			   const char **pins)
{
	size_t i, n = 0;

	for (i = 0; i < res->nprogs; i++)
		pins[n++] = !strcmp(kind, "link_") ? res->progs[i].link_pin
						   : res->progs[i].prog_pin;
	for (i = 0; i < res->npins; i++)
		if (is_pin_kind(res->pins[i], kind))
			pins[n++] = res->pins[i];
	return n;
}

static struct link_swap *hold_old_links(struct obj_load *l)
{
	size_t max = l->res->nprogs + l->res->npins + 1, nlinks, nprogs;
	const char **links = calloc(max, sizeof(*links));
	const char **progs = calloc(max, sizeof(*progs));
	struct link_swap *sw = NULL;
	char why[LOADER_PATH_LEN + 64] = "out of memory";

	if (links && progs) {
		nlinks = collect_pins(l->res, "link_", links);
		nprogs = collect_pins(l->res, "prog_", progs);
		sw = swap_begin(links, nlinks, progs, nprogs, why, sizeof(why));
	}
	if (!sw)
		set_outcome(l->res, OUT_FAILED_PIN, "%s", why);
	free(links);
	free(progs);
	return sw;
}

static int stage_progs(struct obj_load *l, struct link_swap *sw, struct pin_txn *txn)
{
	struct prog_result *p;
	struct prog_plan *pl;
	size_t i;
	int fd, ret;

	for (i = 0; i < l->res->nprogs; i++) {
		p = &l->res->progs[i];
		pl = &l->pl[i];
		if (!pl->chosen)
			continue;
		fd = bpf_program__fd(pl->prog);
		pl->kept_fd = swap_keep(sw, p->link_pin, fd, &p->prog_id);
		p->kept = pl->kept_fd >= 0;
		if (p->kept)
			snprintf(p->reason, sizeof(p->reason),
				 "kept: the same program was already attached");
		else
			p->prog_id = kstats_fd_obj_id(fd);
		ret = txn_pin(txn, p->kept ? pl->kept_fd : fd, p->prog_pin, NULL,
			      pl->meta->uid, pl->meta->gid, pl->meta->mode);
		if (ret) {
			set_outcome(l->res, OUT_FAILED_PIN, "pin %s: %s", p->prog_pin,
				    strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Attaches every chosen program that is not kept; links go into txn. */
static int attach_progs(struct obj_load *l, struct pin_txn *txn, struct bpf_link **links)
{
	struct prog_result *p;
	struct prog_plan *pl;
	size_t i;
	int ret;

	for (i = 0; i < l->res->nprogs; i++) {
		p = &l->res->progs[i];
		pl = &l->pl[i];
		if (!pl->chosen || p->kept)
			continue;
		links[i] = bpf_program__attach(pl->prog);
		if (!links[i]) {
			ret = -errno;
			p->outcome = OUT_FAILED_ATTACH;
			snprintf(p->reason, sizeof(p->reason), "attach: %s", strerror(-ret));
			set_outcome(l->res, OUT_FAILED_ATTACH, "%s: attach: %s", p->name,
				    strerror(-ret));
			return ret;
		}
		ret = txn_pin(txn, bpf_link__fd(links[i]), p->link_pin, NULL,
			      pl->meta->uid, pl->meta->gid, pl->meta->mode);
		if (ret) {
			set_outcome(l->res, OUT_FAILED_PIN, "pin %s: %s", p->link_pin,
				    strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Whether a chosen program is pinned at path (variants can share a section). */
static bool chosen_prog_pin(const struct obj_load *l, const char *path)
{
	size_t i;

	for (i = 0; i < l->res->nprogs; i++)
		if (l->pl[i].chosen && !strcmp(l->res->progs[i].prog_pin, path))
			return true;
	return false;
}

/* After publication: own what exists now, drop pins of unchosen programs. */
static void settle_pins(struct obj_load *l)
{
	struct obj_result *res = l->res;
	size_t i;

	for (i = 0; i < res->nmaps; i++)
		own_pin(res, res->maps[i].pin);
	for (i = 0; i < res->nprogs; i++) {
		struct prog_result *p = &res->progs[i];

		if (!l->pl[i].chosen) {
			if (owns_pin(res, p->prog_pin) && !chosen_prog_pin(l, p->prog_pin))
				unlink(p->prog_pin);
			p->prog_pin[0] = 0;
		}
		if (!l->pl[i].chosen || access(p->link_pin, F_OK))
			p->link_pin[0] = 0;
		if (*p->prog_pin)
			own_pin(res, p->prog_pin);
		if (*p->link_pin)
			own_pin(res, p->link_pin);
	}
	prune_pins(res);
}

static void destroy_links(struct bpf_link **links, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		bpf_link__destroy(links[i]);	/* pinned ones stay attached */
}

/*
 * Maps, programs and links are pinned under temporary names first.  Old
 * links are detached just before the new ones attach (never two copies);
 * if an attach fails, the new links go and the old programs come back.
 */
void publish(struct obj_load *l)
{
	struct pin_txn *txn = txn_new(l->ctx->pin_dir);
	struct bpf_link **links = calloc(l->res->nprogs + 1, sizeof(*links));
	struct link_swap *sw = hold_old_links(l);
	int ret = -ENOMEM;

	if (!sw)
		goto out;
	if (!txn || !links) {
		set_outcome(l->res, OUT_FAILED_PIN, "out of memory");
		goto out;
	}
	ret = stage_maps(l, txn);
	ret = ret ?: stage_progs(l, sw, txn);
	if (ret)
		goto out;
	ret = swap_detach(sw, l->res->reason, sizeof(l->res->reason));
	ret = ret ?: attach_progs(l, txn, links);
	ret = ret ?: txn_commit(txn, l->res->reason, sizeof(l->res->reason));
	if (ret) {
		if (l->res->outcome == OUT_LOADED)
			l->res->outcome = OUT_FAILED_PIN;
		txn_abort(txn);
		destroy_links(links, l->res->nprogs);
		memset(links, 0, l->res->nprogs * sizeof(*links));
		swap_rollback(sw);
	}
out:
	if (!ret)
		settle_pins(l);
	destroy_links(links, links ? l->res->nprogs : 0);
	swap_free(sw);
	txn_free(txn);
	free(links);
}
