// SPDX-License-Identifier: GPL-2.0
/* One loaded object: maps checked, pins staged, links swapped, all published at once. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kstats_pins.h"
#include "loader.h"

static int stage_maps(struct obj_load *l, struct pin_txn *txn)
{
	/* A map without metadata: root's only. */
	static const struct kstats_map_meta root_only = { .uid = "root", .gid = "root",
							  .mode = 0600 };
	const struct kstats_map_meta *mm;
	char aside[LOADER_PATH_LEN];
	struct kstats_status_map *m;
	struct bpf_map *map;
	int ret;

	bpf_object__for_each_map(map, l->obj) {
		if (bpf_map__is_internal(map))
			continue;
		m = add_map(l->res, bpf_map__name(map), l->ctx);
		map_type_names(bpf_object__btf(l->obj), map, m->key_type, m->value_type);
		mm = kstats_objmeta_map(&l->meta, m->name) ?: &root_only;
		if (m->reused) {
			prev_map_created(l->ctx, l->res->name, m->name, m->map_id,
					 &m->created_boot_ns, &m->created_real_ns);
			ret = apply_owner(m->pin, mm->uid, mm->gid, mm->mode);
		} else {
			snprintf(aside, sizeof(aside), "%s/aside_%llu_%s", l->ctx->pin_dir,
				 (unsigned long long)l->created_real_ns, strrchr(m->pin, '/') + 1);
			m->map_id = kstats_fd_obj_id(bpf_map__fd(map));
			m->created_boot_ns = l->created_boot_ns;
			m->created_real_ns = l->created_real_ns;
			ret = txn_pin(txn, bpf_map__fd(map), m->pin, m->replaced ? aside : NULL,
				      mm->uid, mm->gid, mm->mode);
			if (!ret && m->replaced)
				ret = own_pin(l->res, aside);
		}
		if (ret) {
			set_outcome(l->res, KSTATS_FAILED_PIN, "pin %s: %s", m->pin, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Pins the chosen programs, or with links, attaches those not kept and pins their links. */
static int stage_progs(struct obj_load *l, struct link_swap *sw, struct pin_txn *txn,
		       struct bpf_link **links)
{
	struct kstats_status_prog *p;
	struct prog_plan *pl;
	const char *pin;
	size_t i;
	int fd, kept_fd, ret = 0;

	for (i = 0; !ret && i < l->res->nprogs; i++) {
		p = &l->res->progs[i];
		pl = &l->pl[i];
		if (!pl->chosen || (links && p->kept))
			continue;
		if (links && !(links[i] = bpf_program__attach(pl->prog))) {
			ret = -errno;
			p->outcome = KSTATS_FAILED_ATTACH;
			snprintf(p->reason, LOADER_REASON_LEN, "attach: %s", strerror(-ret));
			set_outcome(l->res, KSTATS_FAILED_ATTACH, "%s: attach: %s", p->name,
				    strerror(-ret));
			return ret;
		}
		fd = links ? bpf_link__fd(links[i]) : bpf_program__fd(pl->prog);
		if (!links) {
			p->prog_id = kstats_fd_obj_id(fd);
			kept_fd = swap_keep(sw, p->link_pin, fd, &p->prog_id);	/* the swap's */
			p->kept = kept_fd >= 0;
			if (p->kept) {
				fd = kept_fd;
				snprintf(p->reason, LOADER_REASON_LEN,
					 "kept: the same program was already attached");
			}
		}
		pin = links ? p->link_pin : p->prog_pin;
		ret = txn_pin(txn, fd, pin, NULL, pl->meta->uid, pl->meta->gid, pl->meta->mode);
		if (ret)
			set_outcome(l->res, KSTATS_FAILED_PIN, "pin %s: %s", pin, strerror(-ret));
	}
	return ret;
}

/* After publication: own what exists now, drop pins of unchosen programs. */
static void settle_pins(struct obj_load *l)
{
	struct kstats_status_obj *res = l->res;
	size_t i, j;

	for (i = 0; i < res->nmaps; i++)
		own_pin(res, res->maps[i].pin);
	for (i = 0; i < res->nprogs; i++) {
		struct kstats_status_prog *p = &res->progs[i];

		/* Unless a chosen program is pinned there (variants can share a section). */
		for (j = 0; j < res->nprogs; j++)
			if (l->pl[j].chosen && !strcmp(res->progs[j].prog_pin, p->prog_pin))
				break;
		if (!l->pl[i].chosen) {
			if (owns_pin(res, p->prog_pin) && j == res->nprogs)
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

/* Old links detach just before the new ones attach; a failed attach restores them. */
void publish(struct obj_load *l)
{
	struct pin_txn txn = { .pin_dir = l->ctx->pin_dir };
	struct bpf_link **links = calloc(l->res->nprogs + 1, sizeof(*links));
	struct link_swap *sw = swap_begin(l->res, l->res->reason, LOADER_REASON_LEN);
	int ret = -ENOMEM;
	size_t i;

	if (!sw) {
		l->res->outcome = KSTATS_FAILED_PIN;
		goto out;
	}
	if (!links) {
		set_outcome(l->res, KSTATS_FAILED_PIN, "out of memory");
		goto out;
	}
	ret = stage_maps(l, &txn) ?: stage_progs(l, sw, &txn, NULL);
	if (ret)
		goto out;
	ret = swap_detach(sw, l->res->reason, LOADER_REASON_LEN);
	ret = ret ?: stage_progs(l, sw, &txn, links);
	ret = ret ?: txn_commit(&txn, l->res->reason, LOADER_REASON_LEN);
	if (ret) {
		if (l->res->outcome == KSTATS_LOADED)
			l->res->outcome = KSTATS_FAILED_PIN;
		txn_abort(&txn);	/* first: the links it pinned detach when destroyed */
	}
	for (i = 0; i < l->res->nprogs; i++)
		bpf_link__destroy(links[i]);	/* pinned ones stay attached */
	if (ret)
		swap_rollback(sw);
	else
		settle_pins(l);
out:
	swap_free(sw);
	txn_abort(&txn);
	free(txn.e);
	free(links);
}

enum kstats_outcome prepare_map(struct obj_load *l, struct bpf_map *map)
{
	struct kstats_status_map *m = add_map(l->res, bpf_map__name(map), l->ctx);
	struct map_types known;
	char why[256];
	int fd, ret;

	if (!m || !*m->pin)
		return set_outcome(l->res, KSTATS_FAILED_PIN, "no pin path for map %s",
				   bpf_map__name(map));
	m->reused = m->replaced = false;
	fd = pin_open(m->pin);
	if (fd < 0 && errno == ENOENT)
		return KSTATS_LOADED;
	if (fd < 0)
		return set_outcome(l->res, KSTATS_FAILED_PIN, "cannot open pinned %s: %s",
				   m->pin, strerror(errno));
	ret = prev_map_types(l->ctx, l->res->name, m->name, kstats_fd_obj_id(fd), known.key,
			     known.value);
	ret = map_shape_check(bpf_object__btf(l->obj), map, fd, ret ? NULL : &known,
			      why, sizeof(why));
	if (!ret && !ring_consumable(map, fd, why, sizeof(why))) {
		/* Its events are in flight, not counts: nothing is lost. */
		log_msg(LOG_WARNING, "%s: recreating %s: %s", l->res->name, m->pin, why);
		close(fd);
		return KSTATS_LOADED;
	}
	if (!ret) {
		ret = bpf_map__reuse_fd(map, fd);
		m->reused = !ret;
		m->map_id = kstats_fd_obj_id(fd);
		close(fd);
		return ret ? set_outcome(l->res, KSTATS_FAILED_PIN, "cannot reuse %s: %s", m->pin,
					 strerror(-ret)) : KSTATS_LOADED;
	}
	close(fd);
	if (!l->ctx->replace_incompatible)
		return set_outcome(l->res, KSTATS_REFUSED_INCOMPATIBLE_PIN, "map %s pinned at "
				   "%s is incompatible: %s; the old programs keep counting "
				   "into it and kstats pull reads it until the next boot "
				   "loads this object; --replace-incompatible moves it aside "
				   "now", m->name, m->pin, why);
	m->replaced = true;
	log_msg(LOG_WARNING, "%s: replacing incompatible %s (%s)", l->res->name, m->pin,
		why);
	return KSTATS_LOADED;
}
