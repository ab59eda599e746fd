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
#include "object.h"
#include "trust.h"

#define VERIFIER_LOG_SIZE (64 * 1024)
#define LOG_TAIL_LINES 6
#define LOG_TAIL_CHARS 1024

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
