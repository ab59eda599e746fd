// SPDX-License-Identifier: GPL-2.0
/*
 * One object, start to end: its name checked, its file read once, gating
 * from its own metadata, variant choice (variant.c), load (retried without
 * a rejected variant or optional program), then
 * publication of its pins, all or nothing (publish.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kstats_fileio.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "object.h"
#include "trust.h"

#define VERIFIER_LOG_SIZE (64 * 1024)
#define LOG_TAIL_LINES 6
#define LOG_TAIL_CHARS 1024

/* ---- opening ---- */


static const char *file_kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "not a regular file";
}

static int not_regular(struct obj_load *l, mode_t mode)
{
	set_outcome(l->res, OUT_FAILED_OBJECT, "%s is %s; only regular files are "
		    "loaded: remove it from the object directory", l->res->path,
		    file_kind(mode));
	return -EINVAL;
}

static int read_fd(struct obj_load *l, int fd)
{
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return not_regular(l, st.st_mode);
	if (!st.st_size || st.st_size > OBJECT_MAX_BYTES) {
		set_outcome(l->res, OUT_FAILED_OBJECT, "%s is %s (%lld bytes); rebuild "
			    "it", l->res->path, st.st_size ? "too large" : "empty",
			    (long long)st.st_size);
		return -EINVAL;
	}
	l->elf = malloc(st.st_size);
	if (!l->elf)
		return -ENOMEM;
	l->elf_len = st.st_size;
	n = pread(fd, l->elf, l->elf_len, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == l->elf_len ? 0 : -EIO;	/* changed meanwhile */
}

/*
 * The object's bytes, read once: every later step parses them from memory.
 * A symlink is resolved once, here; the target is looked at before opening
 * (lstat), so that a FIFO, device or socket is never opened, and opened so
 * that it cannot block or follow a link swapped in meanwhile.  The trust
 * check judges that descriptor: a link flipped after it changes nothing.
 */
static int read_object(struct obj_load *l)
{
	char *real = realpath(l->res->path, NULL);
	struct stat st;
	int fd, ret;

	if (!real) {
		set_outcome(l->res, OUT_FAILED_OBJECT, "cannot resolve %s: %s; remove it "
			    "from the object directory", l->res->path, strerror(errno));
		return -ENOENT;
	}
	if (lstat(real, &st))
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = not_regular(l, st.st_mode);
	else if ((fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		ret = errno == ELOOP ? not_regular(l, S_IFLNK) : -errno;
	else {
		ret = read_fd(l, fd);
		if (!ret)
			l->untrusted = check_trusted_fd(l->res->path, real, fd, l->res->reason,
							sizeof(l->res->reason));
		close(fd);
	}
	free(real);
	if (ret && !outcome_failed(l->res->outcome))
		set_outcome(l->res, OUT_FAILED_OBJECT, "cannot read %s: %s", l->res->path,
			    strerror(-ret));
	return ret;
}

static int open_object(struct obj_load *l)
{
	struct bpf_program *prog;
	size_t i = 0;

	log_capture(l->libbpf_err, sizeof(l->libbpf_err));
	l->obj = obj_open_mem(l->res->name, l->elf, l->elf_len);
	if (!l->obj) {
		set_outcome(l->res, OUT_FAILED_OBJECT, "libbpf cannot open it: %s",
			    l->libbpf_err);
		return -ENOEXEC;
	}
	bpf_object__for_each_program(prog, l->obj)
		if (l->pl && i < l->res->nprogs)
			l->pl[i++].prog = prog;
	return 0;
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
	ret = prev_map_types(l->ctx, l->res->name, m->name, kstats_fd_obj_id(fd), &known);
	ret = map_shape_check(bpf_object__btf(l->obj), map, fd, ret ? NULL : &known,
			      why, sizeof(why));
	if (!ret && !ring_consumable(map, fd, why, sizeof(why))) {
		/* Its events are in flight, not counts: nothing is lost. */
		log_msg(LOG_WARNING, "%s: recreating %s: %s", l->res->name, m->pin, why);
		close(fd);
		return OUT_LOADED;
	}
	if (!ret) {
		ret = bpf_map__reuse_fd(map, fd);
		m->reused = !ret;
		m->map_id = kstats_fd_obj_id(fd);
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
			    "incompatible: %s; the old programs keep counting into it "
			    "and kstats pull reads it until the next boot loads this "
			    "object; --replace-incompatible moves it aside now",
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
	const char *q = strstr(l->libbpf_err, "prog '");
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
			 strerror(-err), l->libbpf_err);
}

static void free_logs(struct obj_load *l)
{
	size_t i;

	for (i = 0; i < l->res->nprogs; i++) {
		free(l->pl[i].log);
		l->pl[i].log = NULL;
	}
}

/*
 * A limit of this process or machine, not the object's code: the verifier's
 * log then shows a program that passed, and no variant would load better.
 */
static const char *limit_hit(int err)
{
	switch (err) {
	case -EMFILE:
		return "the loader's open files limit (ulimit -n, LimitNOFILE=)";
	case -ENFILE:
		return "the system's open files limit (fs.file-max)";
	case -ENOMEM:
		return "memory, or the locked memory limit before Linux 5.11 (ulimit -l)";
	}
	return NULL;
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
		/* Written only when a load fails: only its first byte touched now. */
		pl->log = malloc(VERIFIER_LOG_SIZE);
		if (!pl->log)
			continue;
		*pl->log = 0;
		bpf_program__set_log_buf(pl->prog, pl->log, VERIFIER_LOG_SIZE);
	}
	log_capture(l->libbpf_err, sizeof(l->libbpf_err));
	ret = bpf_object__load(l->obj);
	l->created_boot_ns = kstats_clock_ns(CLOCK_BOOTTIME);
	l->created_real_ns = kstats_clock_ns(CLOCK_REALTIME);
	if (ret && limit_hit(ret)) {
		set_outcome(l->res, OUT_FAILED_OBJECT, "load: %s: raise %s; libbpf: %s",
			    strerror(-ret), limit_hit(ret), l->libbpf_err);
	} else if (ret) {
		bad = failed_prog(l);
		if (bad >= 0)
			reject_prog(l, bad, ret);
		else
			set_outcome(l->res, OUT_FAILED_OBJECT, "load: %s; libbpf: %s",
				    strerror(-ret), l->libbpf_err);
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

	/* One more for the attempt that made check_deferred() run. */
	for (attempt = 0; attempt <= l->res->nprogs + 1; attempt++) {
		if (attempt) {
			bpf_object__close(l->obj);
			l->obj = NULL;
			if (open_object(l))
				return OUT_FAILED_OBJECT;
		}
		o = choose_variants(l);
		if (o != OUT_LOADED && check_deferred(l))
			o = choose_variants(l);
		if (o != OUT_LOADED)
			return o;
		o = prepare_maps(l);
		if (o != OUT_LOADED)
			return o;
		ret = try_load(l);
		if (!ret)
			return OUT_LOADED;
		if (check_deferred(l))
			continue;
		if (ret != -EAGAIN)
			return OUT_FAILED_OBJECT;
	}
	return OUT_FAILED_VERIFIER;	/* not reached: each try rejects one */
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
	int ret = kstats_objmeta_read_mem(l->elf, l->elf_len, l->res->path, &l->meta,
					  err, sizeof(err));

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
	char fix[KSTATS_NAME_LEN];

	if (object_name_check(res->name, fix, sizeof(fix))) {
		set_outcome(res, OUT_SKIPPED_OBJECT_NAME, "object name %s is not letters "
			    "and digits after a letter, so its pin names could be another "
			    "object's; rename the file to %s.bpf", res->name, fix);
		return res->outcome;
	}
	if (read_object(l))
		return res->outcome;
	if (is_disabled(l->ctx, res->name)) {
		read_meta(l);	/* only to list its programs */
		set_outcome(res, OUT_SKIPPED_DISABLED, "disabled by %s",
			    l->ctx->disable_all ? "disable = all" : "configuration");
		progs_from_meta(l);
		return res->outcome;
	}
	/* Code anyone but root could have written never reaches the kernel. */
	if (l->untrusted)
		return OUT_FAILED_OBJECT;
	if (read_meta(l))
		return res->outcome;
	metrics_known(l);
	if (!obj_in_kver_range(l)) {
		progs_from_meta(l);
		return res->outcome;
	}
	/* After the opens: a corrupt copy is FAILED_OBJECT, not a duplicate. */
	if (probe_open(l) || open_object(l) || init_progs(l) || metrics_check(l))
		return res->outcome;
	return load_loop(l);
}

/*
 * The object's name is its file name without .bpf, a part of its pin names:
 * never empty, short enough, and without the '.' that bpffs refuses.  A bad
 * one gets a name no good one can have (it contains a '.') and no pins.
 */
static int name_object(struct obj_result *res)
{
	const char *base = strrchr(res->path, '/');
	size_t n;

	base = base ? base + 1 : res->path;
	n = strlen(base) - 4;	/* the scan lists only names ending in .bpf */
	if (n && !kstats_obj_name(res->path, res->name, sizeof(res->name)) &&
	    !strchr(res->name, '.'))
		return 0;
	snprintf(res->name, sizeof(res->name), "%.*s%s",
		 (int)(n < sizeof(res->name) ? n : sizeof(res->name) - 4), base,
		 n >= sizeof(res->name) ? "..." : "");
	if (!n)
		set_outcome(res, OUT_FAILED_OBJECT, "%s: an object needs a name before "
			    ".bpf; rename it", res->path);
	else if (n >= sizeof(res->name))
		set_outcome(res, OUT_FAILED_OBJECT, "object name is %zu bytes, the limit "
			    "is %zu; rename it", n, sizeof(res->name) - 1);
	else
		set_outcome(res, OUT_FAILED_OBJECT, "object name %s has a '.', which "
			    "bpffs refuses in pin names; rename it", res->name);
	return -EINVAL;
}

/*
 * The bytes as loaded, beside the status file: readers decode the pinned
 * maps with them, not with a newer object on disk whose layout may differ
 * (REFUSED_INCOMPATIBLE_PIN keeps the old maps until the next boot).
 */
static void keep_loaded_copy(const struct obj_load *l)
{
	char path[LOADER_PATH_LEN + KSTATS_NAME_LEN + 8];
	int ret;

	snprintf(path, sizeof(path), "%s/%s.bpf", l->ctx->run_dir, l->res->name);
	ret = kstats_file_replace(path, l->elf, l->elf_len, 0644);
	if (ret)
		log_msg(LOG_WARNING, "warning: cannot write %s: %s; after an upgrade "
			"that changes its maps, kstats cannot read them", path,
			strerror(-ret));
}

void load_object(struct loader_ctx *ctx, size_t idx, const char *path,
		 struct obj_result *res)
{
	struct obj_load l = { .ctx = ctx, .idx = idx, .res = res };

	memset(res, 0, sizeof(*res));
	snprintf(res->path, sizeof(res->path), "%s", path);
	if (!name_object(res)) {
		adopt_prev_pins(ctx, res);
		res->outcome = run_object(&l);
		if (res->outcome == OUT_LOADED)
			publish(&l);
		if (res->outcome == OUT_LOADED)
			keep_loaded_copy(&l);
		else
			finish_not_loaded(&l);
		prune_pins(res);
	}
	metrics_claim(&l);	/* on every path: later objects may wait for it */
	bpf_object__close(l.obj);
	log_capture(NULL, 0);	/* l.libbpf_err ends with this frame */
	free(l.pl);
	free(l.elf);
	kstats_objmeta_free(&l.meta);
}
