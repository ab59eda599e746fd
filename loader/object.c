// SPDX-License-Identifier: GPL-2.0
/*
 * One object, start to end: gating from its own metadata, variant choice,
 * load (retried without a rejected variant or optional program), then
 * publication of its pins, all or nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "loader.h"
#include "trust.h"

#define VERIFIER_LOG_SIZE (64 * 1024)
#define LOG_TAIL_LINES 6
#define LOG_TAIL_CHARS 1024

struct prog_plan {
	const struct kstats_prog_meta *meta;
	struct bpf_program *prog;	/* in the current open of the object */
	bool in_range;
	bool available;
	bool rejected;			/* failed to load in an earlier attempt */
	bool chosen;
	char why[256];			/* why not available */
	char *log;			/* verifier log of the current attempt */
	int kept_fd;			/* identical program already attached */
};

struct obj_load {
	struct loader_ctx *ctx;
	struct obj_result *res;
	struct kstats_objmeta meta;
	struct bpf_object *obj;
	struct prog_plan *pl;		/* parallel to res->progs */
	__u64 created_boot_ns;
	__u64 created_real_ns;
};

/* ---- opening ---- */

/*
 * libbpf parses the ELF in a child first: a malformed file that crashes it
 * then costs one FAILED_OBJECT, not the whole boot-time run.
 */
static int probe_open(struct obj_load *l)
{
	char why[sizeof(l->ctx->libbpf_err)] = "";
	int pipefd[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return 0;	/* cannot isolate: open in-process */
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return 0;
	}
	if (!pid) {
		struct bpf_object *obj;

		close(pipefd[0]);
		log_capture(why, sizeof(why));
		obj = bpf_object__open_file(l->res->path, NULL);
		if (!obj && !*why)
			snprintf(why, sizeof(why), "%s", strerror(errno));
		if (!obj && write(pipefd[1], why, strlen(why)) < 0)
			_exit(2);
		_exit(obj ? 0 : 1);
	}
	close(pipefd[1]);
	n = read(pipefd[0], why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = 0;
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) < 0)
		return 0;
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	if (WIFSIGNALED(status))
		set_outcome(l->res, OUT_FAILED_OBJECT, "libbpf crashed parsing it (%s)",
			    strsignal(WTERMSIG(status)));
	else
		set_outcome(l->res, OUT_FAILED_OBJECT, "libbpf cannot open it: %s",
			    *why ? why : "unknown error");
	return -ENOEXEC;
}

static int open_object(struct obj_load *l)
{
	struct bpf_program *prog;
	size_t i = 0;

	log_capture(l->ctx->libbpf_err, sizeof(l->ctx->libbpf_err));
	l->obj = bpf_object__open_file(l->res->path, NULL);
	if (!l->obj) {
		set_outcome(l->res, OUT_FAILED_OBJECT, "libbpf cannot open it: %s",
			    l->ctx->libbpf_err);
		return -ENOEXEC;
	}
	bpf_object__for_each_program(prog, l->obj)
		if (l->pl && i < l->res->nprogs)
			l->pl[i++].prog = prog;
	return 0;
}

/* ---- variants ---- */

static const char *attach_type_of(const char *section)
{
	static const char *const kinds[] = { "tp_btf", "raw_tp", "kprobe" };
	size_t i, n;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		n = strlen(kinds[i]);
		if (!strncmp(section, kinds[i], n) && section[n] == '/')
			return kinds[i];
	}
	return "other";
}

static int init_prog(struct obj_load *l, struct bpf_program *prog, size_t i)
{
	struct prog_result *p = &l->res->progs[i];
	struct prog_plan *pl = &l->pl[i];
	const char *pin_dir = l->ctx->pin_dir;
	__u32 kver = l->ctx->kver;

	pl->prog = prog;
	pl->kept_fd = -1;
	snprintf(p->name, sizeof(p->name), "%s", bpf_program__name(prog));
	snprintf(p->section, sizeof(p->section), "%s", bpf_program__section_name(prog));
	p->attach_type = attach_type_of(p->section);
	if (kstats_pin_path(p->link_pin, sizeof(p->link_pin), pin_dir, "link",
			    l->res->name, p->name) ||
	    kstats_pin_path(p->prog_pin, sizeof(p->prog_pin), pin_dir, "prog",
			    l->res->name, p->section)) {
		set_outcome(l->res, OUT_FAILED_OBJECT, "pin path for %s is too long", p->name);
		return -ENAMETOOLONG;
	}
	pl->meta = kstats_objmeta_prog(&l->meta, p->name);
	if (!pl->meta) {
		set_outcome(l->res, OUT_FAILED_OBJECT, "program %s has no metadata; declare "
			    "it with DEFINE_BPF_PROG or DEFINE_BPF_TRACEPOINT", p->name);
		return -EINVAL;
	}
	snprintf(p->attach, sizeof(p->attach), "%s", pl->meta->attach);
	pl->in_range = kver >= pl->meta->min_kver && kver < pl->meta->max_kver;
	if (!pl->in_range)
		snprintf(pl->why, sizeof(pl->why), "kernel %s is outside %s",
			 kver_str(kver).s, kver_range_str(pl->meta->min_kver,
							  pl->meta->max_kver).s);
	else
		pl->available = attach_point_exists(l->ctx, p->section, pl->why,
						    sizeof(pl->why));
	return 0;
}

static int init_progs(struct obj_load *l)
{
	struct bpf_program *prog;
	size_t n = 0;
	int ret;

	bpf_object__for_each_program(prog, l->obj)
		n++;
	l->res->progs = calloc(n ? n : 1, sizeof(*l->res->progs));
	l->pl = calloc(n ? n : 1, sizeof(*l->pl));
	if (!l->res->progs || !l->pl) {
		set_outcome(l->res, OUT_FAILED_OBJECT, "out of memory");
		return -ENOMEM;
	}
	bpf_object__for_each_program(prog, l->obj) {
		ret = init_prog(l, prog, l->res->nprogs++);
		if (ret)
			return ret;
	}
	return 0;
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

static void explain_unchosen(struct obj_load *l, size_t i, int best)
{
	struct prog_result *p = &l->res->progs[i];
	struct prog_plan *pl = &l->pl[i];

	if (pl->rejected)
		return;		/* keeps its FAILED_VERIFIER */
	if (!pl->in_range)
		p->outcome = OUT_SKIPPED_KERNEL_VERSION;
	else if (!pl->available)
		p->outcome = OUT_SKIPPED_NO_ATTACH_POINT;
	else
		p->outcome = OUT_SKIPPED_VARIANT;
	if (p->outcome == OUT_SKIPPED_VARIANT)
		snprintf(p->reason, sizeof(p->reason), "%s variant %s preferred",
			 variant_name(l->pl[best].meta->variant), l->res->progs[best].name);
	else
		snprintf(p->reason, sizeof(p->reason), "%s", pl->why);
}

/* "<attach>: <prog>: <why>; <prog>: <why>" over the group's in-range members. */
static void group_why(struct obj_load *l, size_t i, char *buf, size_t len)
{
	size_t j, n = snprintf(buf, len, "%s", l->res->progs[i].attach);
	const char *sep = ":";

	for (j = 0; j < l->res->nprogs && n < len; j++) {
		if (!same_group(l, i, j) || !l->pl[j].in_range)
			continue;
		n += snprintf(buf + n, len - n, "%s %s: %s", sep, l->res->progs[j].name,
			      l->pl[j].rejected ? l->res->progs[j].reason : l->pl[j].why);
		sep = ";";
	}
}

/*
 * A mandatory attach point none of whose variants can run stops the object:
 * FAILED_VERIFIER when one was rejected, SKIPPED_NO_ATTACH_POINT when the
 * kernel lacks it.  Programs outside their kernel range never stop it.
 */
static enum outcome group_stop(struct obj_load *l, size_t i)
{
	bool in_range = false, rejected = false;
	size_t j;

	for (j = 0; j < l->res->nprogs; j++) {
		if (!same_group(l, i, j))
			continue;
		if (l->pl[j].meta->flags & KSTATS_PROG_OPTIONAL)
			return OUT_LOADED;
		rejected |= l->pl[j].rejected;
		in_range |= l->pl[j].in_range;
	}
	if (!in_range)
		return OUT_LOADED;
	l->res->outcome = rejected ? OUT_FAILED_VERIFIER : OUT_SKIPPED_NO_ATTACH_POINT;
	group_why(l, i, l->res->reason, sizeof(l->res->reason));
	return l->res->outcome;
}

/* Chooses one variant per attach point; returns what stops the object. */
static enum outcome choose_variants(struct obj_load *l)
{
	struct obj_result *res = l->res;
	enum outcome stop = OUT_LOADED;
	bool any_in_range = false, any_chosen = false;
	size_t i;
	int best;

	for (i = 0; i < res->nprogs; i++) {
		best = best_variant(l, i);
		l->pl[i].chosen = best == (int)i;
		if (l->pl[i].chosen) {
			res->progs[i].outcome = OUT_LOADED;
			res->progs[i].reason[0] = 0;
		} else {
			explain_unchosen(l, i, best);
		}
		any_in_range |= l->pl[i].in_range;
		any_chosen |= l->pl[i].chosen;
		if (best < 0 && stop == OUT_LOADED)
			stop = group_stop(l, i);
	}
	if (stop == OUT_LOADED && res->nprogs && !any_chosen) {
		if (any_in_range)
			set_outcome(res, OUT_SKIPPED_NO_ATTACH_POINT,
				    "none of its attach points exists in this kernel");
		else
			set_outcome(res, OUT_SKIPPED_KERNEL_VERSION,
				    "no program is for kernel %s", kver_str(l->ctx->kver).s);
		stop = res->outcome;
	}
	return stop;
}

/* ---- loading ---- */

static enum outcome prepare_map(struct obj_load *l, struct bpf_map *map)
{
	struct map_result *m = add_map(l->res, bpf_map__name(map), l->ctx);
	struct map_types known;
	char why[256];
	int fd, ret;

	if (!m || !*m->pin) {
		set_outcome(l->res, OUT_FAILED_PIN, "no pin path for map %s",
			    bpf_map__name(map));
		return OUT_FAILED_PIN;
	}
	m->reused = m->replaced = false;
	fd = pin_open(m->pin);
	if (fd < 0) {
		if (errno == ENOENT)
			return OUT_LOADED;
		set_outcome(l->res, OUT_FAILED_PIN, "cannot open pinned %s: %s", m->pin,
			    strerror(errno));
		return OUT_FAILED_PIN;
	}
	ret = prev_map_types(l->ctx, l->res->name, m->name, fd_obj_id(fd), &known);
	ret = map_shape_check(bpf_object__btf(l->obj), map, fd, ret ? NULL : &known,
			      why, sizeof(why));
	if (!ret) {
		ret = bpf_map__reuse_fd(map, fd);
		m->reused = !ret;
		m->map_id = fd_obj_id(fd);
		close(fd);
		if (!ret)
			return OUT_LOADED;
		set_outcome(l->res, OUT_FAILED_PIN, "cannot reuse %s: %s", m->pin,
			    strerror(-ret));
		return OUT_FAILED_PIN;
	}
	close(fd);
	if (!l->ctx->replace_incompatible) {
		set_outcome(l->res, OUT_REFUSED_INCOMPATIBLE_PIN, "map %s pinned at %s is "
			    "incompatible: %s; --replace-incompatible moves it aside",
			    m->name, m->pin, why);
		return OUT_REFUSED_INCOMPATIBLE_PIN;
	}
	m->replaced = true;
	log_msg(LOG_WARNING, "%s: replacing incompatible %s (%s)", l->res->name, m->pin,
		why);
	return OUT_LOADED;
}

/* Reuses every compatible pinned map; refuses incompatible ones. */
static enum outcome prepare_maps(struct obj_load *l)
{
	struct bpf_map *map;
	enum outcome o;

	bpf_object__for_each_map(map, l->obj) {
		/* .rodata/.bss belong to one load: never pinned, never reused. */
		if (bpf_map__is_internal(map))
			continue;
		o = prepare_map(l, map);
		if (o != OUT_LOADED)
			return o;
	}
	return OUT_LOADED;
}

/* The last lines of a verifier log, joined into one line. */
static void log_tail(const char *log, char *out, size_t len)
{
	const char *end = log + strlen(log), *start = end;
	int lines = 0;
	size_t n;
	char *p;

	while (end > log && end[-1] == '\n')
		end--;
	start = end;
	while (start > log && lines < LOG_TAIL_LINES && end - start < LOG_TAIL_CHARS)
		if (*--start == '\n')
			lines++;
	if (*start == '\n')
		start++;
	n = end - start < (long)len - 1 ? (size_t)(end - start) : len - 1;
	memcpy(out, start, n);
	out[n] = 0;
	for (p = out; *p; p++)
		if (*p == '\n')
			*p = '|';
		else if (*p == '\t')
			*p = ' ';
}

/* Which program made bpf_object__load() fail, or -1. */
static int failed_prog(const struct obj_load *l)
{
	const char *q = strstr(l->ctx->libbpf_err, "prog '");
	size_t i, n;

	for (i = 0; i < l->res->nprogs; i++)
		if (l->pl[i].chosen && l->pl[i].log && *l->pl[i].log)
			return i;
	if (!q)
		return -1;
	q += strlen("prog '");
	n = strcspn(q, "'");
	for (i = 0; i < l->res->nprogs; i++)
		if (strlen(l->res->progs[i].name) == n && !strncmp(l->res->progs[i].name, q, n))
			return i;
	return -1;
}

static void reject_prog(struct obj_load *l, size_t i, int err)
{
	struct prog_result *p = &l->res->progs[i];
	char tail[LOG_TAIL_CHARS + 1] = "";

	if (l->pl[i].log && *l->pl[i].log)
		log_tail(l->pl[i].log, tail, sizeof(tail));
	l->pl[i].rejected = true;
	p->outcome = OUT_FAILED_VERIFIER;
	if (*tail)
		snprintf(p->reason, sizeof(p->reason), "load: %s; verifier: %s",
			 strerror(-err), tail);
	else
		snprintf(p->reason, sizeof(p->reason), "load: %s; libbpf: %s",
			 strerror(-err), l->ctx->libbpf_err);
}

static void free_logs(struct obj_load *l)
{
	size_t i;

	for (i = 0; i < l->res->nprogs; i++) {
		free(l->pl[i].log);
		l->pl[i].log = NULL;
	}
}

/* 0 loaded; -EAGAIN when a program was rejected and another try may work. */
static int try_load(struct obj_load *l)
{
	struct prog_plan *pl;
	size_t i;
	int ret, bad;

	for (i = 0; i < l->res->nprogs; i++) {
		pl = &l->pl[i];
		bpf_program__set_autoload(pl->prog, pl->chosen);
		if (!pl->chosen)
			continue;
		pl->log = calloc(1, VERIFIER_LOG_SIZE);
		if (pl->log)
			bpf_program__set_log_buf(pl->prog, pl->log, VERIFIER_LOG_SIZE);
	}
	log_capture(l->ctx->libbpf_err, sizeof(l->ctx->libbpf_err));
	ret = bpf_object__load(l->obj);
	l->created_boot_ns = clock_ns(CLOCK_BOOTTIME);
	l->created_real_ns = clock_ns(CLOCK_REALTIME);
	if (ret) {
		bad = failed_prog(l);
		if (bad >= 0)
			reject_prog(l, bad, ret);
		else
			set_outcome(l->res, OUT_FAILED_OBJECT, "load: %s; libbpf: %s",
				    strerror(-ret), l->ctx->libbpf_err);
		ret = bad >= 0 ? -EAGAIN : ret;
	}
	free_logs(l);
	return ret;
}

/* Loads, dropping rejected variants one at a time; returns the outcome. */
static enum outcome load_loop(struct obj_load *l)
{
	enum outcome o;
	size_t attempt;
	int ret;

	for (attempt = 0; attempt <= l->res->nprogs; attempt++) {
		if (attempt) {
			bpf_object__close(l->obj);
			l->obj = NULL;
			if (open_object(l))
				return OUT_FAILED_OBJECT;
		}
		o = choose_variants(l);
		if (o != OUT_LOADED)
			return o;
		o = prepare_maps(l);
		if (o != OUT_LOADED)
			return o;
		ret = try_load(l);
		if (!ret)
			return OUT_LOADED;
		if (ret != -EAGAIN)
			return OUT_FAILED_OBJECT;
	}
	return OUT_FAILED_VERIFIER;	/* not reached: each try rejects one */
}

/* ---- publishing ---- */

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
			m->map_id = fd_obj_id(bpf_map__fd(map));
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
			p->prog_id = fd_obj_id(fd);
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
static void publish(struct obj_load *l)
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

/* ---- one object ---- */

static void finish_not_loaded(struct obj_load *l)
{
	struct obj_result *res = l->res;
	size_t i;

	/* A clean skip stops the object; a failure leaves it as it was. */
	if (!outcome_failed(res->outcome))
		retire_programs(res);
	for (i = 0; i < res->nprogs; i++) {
		struct prog_result *p = &res->progs[i];

		if (p->outcome != OUT_LOADED)
			continue;
		p->outcome = res->outcome;
		snprintf(p->reason, sizeof(p->reason), "not loaded: the object is %s",
			 outcome_str(res->outcome));
	}
	describe_kept_pins(l->ctx, res, &l->meta);
}

static int read_meta(struct obj_load *l)
{
	char err[512];
	int ret = kstats_objmeta_read(l->res->path, &l->meta, err, sizeof(err));

	if (ret) {
		set_outcome(l->res, OUT_FAILED_OBJECT, "%s", err);
		return ret;
	}
	l->res->critical = l->meta.obj.flags & KSTATS_OBJ_CRITICAL;
	return 0;
}

/* An object skipped unopened: its programs as its metadata lists them. */
static void progs_from_meta(struct obj_load *l)
{
	struct obj_result *res = l->res;
	const struct kstats_prog_meta *pm;
	struct prog_result *p;
	size_t i;

	res->progs = calloc(l->meta.nprogs ? l->meta.nprogs : 1, sizeof(*res->progs));
	if (!res->progs)
		return;
	for (i = 0; i < l->meta.nprogs; i++) {
		pm = &l->meta.progs[i];
		p = &res->progs[res->nprogs++];
		snprintf(p->name, sizeof(p->name), "%s", pm->name);
		snprintf(p->attach, sizeof(p->attach), "%s", pm->attach);
		p->attach_type = variant_name(pm->variant);
		p->outcome = res->outcome;
		snprintf(p->reason, sizeof(p->reason), "%s", res->reason);
		if (kstats_pin_path(p->link_pin, sizeof(p->link_pin), l->ctx->pin_dir,
				    "link", res->name, p->name))
			p->link_pin[0] = 0;
	}
}

static bool obj_in_kver_range(struct obj_load *l)
{
	const struct kstats_obj_meta *om = &l->meta.obj;

	if (l->ctx->kver >= om->min_kver && l->ctx->kver < om->max_kver)
		return true;
	set_outcome(l->res, OUT_SKIPPED_KERNEL_VERSION, "kernel %s is outside %s",
		    kver_str(l->ctx->kver).s, kver_range_str(om->min_kver, om->max_kver).s);
	return false;
}

static enum outcome run_object(struct obj_load *l)
{
	struct obj_result *res = l->res;

	if (is_disabled(l->ctx, res->name)) {
		read_meta(l);	/* only to list its programs */
		set_outcome(res, OUT_SKIPPED_DISABLED, "disabled by %s",
			    l->ctx->disable_all ? "disable = all" : "configuration");
		progs_from_meta(l);
		return res->outcome;
	}
	/* Code anyone but root could have written never reaches the kernel. */
	if (check_trusted(res->path, res->reason, sizeof(res->reason)))
		return OUT_FAILED_OBJECT;
	if (read_meta(l))
		return res->outcome;
	if (!obj_in_kver_range(l)) {
		progs_from_meta(l);
		return res->outcome;
	}
	if (probe_open(l) || open_object(l) || init_progs(l))
		return res->outcome;
	return load_loop(l);
}

void load_object(struct loader_ctx *ctx, const char *path, struct obj_result *res)
{
	struct obj_load l = { .ctx = ctx, .res = res };

	memset(res, 0, sizeof(*res));
	snprintf(res->path, sizeof(res->path), "%s", path);
	if (kstats_obj_name(path, res->name, sizeof(res->name)))
		snprintf(res->name, sizeof(res->name), "?");
	adopt_prev_pins(ctx, res);
	res->outcome = run_object(&l);
	if (res->outcome == OUT_LOADED)
		publish(&l);
	if (res->outcome != OUT_LOADED)
		finish_not_loaded(&l);
	prune_pins(res);
	bpf_object__close(l.obj);
	free(l.pl);
	kstats_objmeta_free(&l.meta);
}
