// SPDX-License-Identifier: GPL-2.0
/* One object: read once, gated, loaded (retried without a rejected variant), published. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "kstats_fileio.h"
#include "kstats_pins.h"
#include "loader.h"

#define VERIFIER_LOG_SIZE (64 * 1024)
#define LOG_TAIL_LINES 6
#define LOG_TAIL_CHARS 1024

static int not_regular(struct obj_load *l, mode_t mode)
{
	set_outcome(l->res, KSTATS_FAILED_OBJECT, "%s is %s; only regular files are "
		    "loaded: remove it from the object directory", l->res->path,
		    S_ISFIFO(mode) ? "a FIFO" : S_ISDIR(mode) ? "a directory" :
		    S_ISSOCK(mode) ? "a socket" : S_ISCHR(mode) ? "a character device" :
		    S_ISBLK(mode) ? "a block device" : S_ISLNK(mode) ? "a symbolic link" :
		    "not a regular file");
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
		set_outcome(l->res, KSTATS_FAILED_OBJECT, "%s is %s (%lld bytes); rebuild "
			    "it", l->res->path, st.st_size ? "too large" : "empty",
			    (long long)st.st_size);
		return -EINVAL;
	}
	l->elf = malloc(st.st_size);
	if (!l->elf)
		return -ENOMEM;
	l->elf_len = st.st_size;
	n = pread(fd, l->elf, l->elf_len, 0);
	return n < 0 ? -errno : (size_t)n == l->elf_len ? 0 : -EIO;	/* -EIO: changed */
}

/* lstat() first: a FIFO or device is never opened; the open neither blocks nor follows. */
static int read_object(struct obj_load *l)
{
	char *real = realpath(l->res->path, NULL);
	struct stat st;
	int fd, ret;

	if (!real) {
		set_outcome(l->res, KSTATS_FAILED_OBJECT, "cannot resolve %s: %s; remove it "
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
							LOADER_REASON_LEN);
		close(fd);
	}
	free(real);
	if (ret && !outcome_failed(l->res->outcome))
		set_outcome(l->res, KSTATS_FAILED_OBJECT, "cannot read %s: %s", l->res->path,
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
		set_outcome(l->res, KSTATS_FAILED_OBJECT, "libbpf cannot open it: %s",
			    l->libbpf_err);
		return -ENOEXEC;
	}
	bpf_object__for_each_program(prog, l->obj)
		if (l->pl && i < l->res->nprogs)
			l->pl[i++].prog = prog;
	return 0;
}

/* The first claim of an object before idx, as a sequential run saw it. */
static const struct metric_claim *claimed(const struct loader_ctx *ctx,
					  const char *metric, size_t idx)
{
	const struct metric_claim *c, *first = NULL;

	for (c = ctx->claims; c < ctx->claims + ctx->nclaims; c++)
		if (c->idx < idx && (!first || c->idx < first->idx) &&
		    kstats_metric_same(c->metric, metric))
			first = c;
	return first;
}

static bool share_metric(const struct kstats_objmeta *a, const struct kstats_objmeta *b)
{
	size_t i, j;

	for (i = 0; i < a->nhists; i++)
		for (j = 0; j < b->nhists; j++)
			if (kstats_metric_same(a->hists[i].metric, b->hists[j].metric))
				return true;
	return false;
}

/* 0, or the object's outcome set: a metric twice, or claimed by another. */
static int metrics_check(struct obj_load *l)
{
	const struct kstats_hist_meta *h = l->meta.hists, *o;
	struct loader_ctx *ctx = l->ctx;
	const struct metric_claim *c;
	struct metric_turn *t;
	size_t i;
	int ret = 0;

	pthread_mutex_lock(&ctx->lock);
	/* Until no earlier object can still claim l's metrics. */
	for (t = ctx->turns; t < ctx->turns + l->idx; t++)
		while (!t->done && (!t->meta || share_metric(t->meta, &l->meta)))
			pthread_cond_wait(&ctx->turn_done, &ctx->lock);
	for (i = 0; !ret && i < l->meta.nhists; i++) {
		for (o = h; o < &h[i] && !kstats_metric_same(o->metric, h[i].metric); o++)
			;
		if (o < &h[i]) {
			set_outcome(l->res, KSTATS_FAILED_OBJECT, "maps %s and %s both declare "
				    "metric %s; rebuild it with one", o->map, h[i].map,
				    h[i].metric);
			ret = -EEXIST;
		} else if ((c = claimed(l->ctx, h[i].metric, l->idx))) {
			set_outcome(l->res, KSTATS_SKIPPED_DUPLICATE_METRIC, "metric %s is "
				    "exported by object %s, first in sorted order; remove "
				    "%s or disable one of the two", h[i].metric, c->obj,
				    l->res->path);
			ret = -EEXIST;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/* After its turn: a loaded or still attached object's metrics are its own. */
static void metrics_claim(struct obj_load *l)
{
	struct loader_ctx *ctx = l->ctx;
	struct metric_claim *grown = NULL, *c;
	bool attached = false;
	size_t i;

	for (i = 0; i < l->res->nprogs; i++)
		attached |= l->res->progs[i].prog_id != 0;
	pthread_mutex_lock(&ctx->lock);
	/* Out of memory: the next object with a claimed name may load too. */
	if ((l->res->outcome == KSTATS_LOADED || attached) && l->meta.nhists)
		grown = realloc(ctx->claims, (ctx->nclaims + l->meta.nhists) * sizeof(*grown));
	for (i = 0; grown && i < l->meta.nhists; i++) {
		ctx->claims = grown;
		c = &grown[ctx->nclaims++];
		memcpy(c->metric, l->meta.hists[i].metric, sizeof(c->metric));
		snprintf(c->obj, sizeof(c->obj), "%s", l->res->name);
		c->idx = l->idx;
	}
	ctx->turns[l->idx].done = true;
	pthread_cond_broadcast(&ctx->turn_done);
	pthread_mutex_unlock(&ctx->lock);
}

static void log_tail(const char *log, char *out, size_t len)
{
	const char *end = log + strlen(log), *start;
	int lines = 0;
	char *p;

	while (end > log && end[-1] == '\n')
		end--;
	start = end;
	while (start > log && lines < LOG_TAIL_LINES && end - start < LOG_TAIL_CHARS)
		if (*--start == '\n')
			lines++;
	if (*start == '\n')
		start++;
	snprintf(out, len, "%.*s", (int)(end - start), start);
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

/* A limit of this process or machine: no variant would load better. */
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
	char tail[LOG_TAIL_CHARS + 1] = "";
	struct prog_plan *pl;
	size_t i;
	int ret, bad;

	for (i = 0; i < l->res->nprogs; i++) {
		pl = &l->pl[i];
		bpf_program__set_autoload(pl->prog, pl->chosen);
		/* Written only when a load fails: only its first byte touched now. */
		pl->log = pl->chosen ? malloc(VERIFIER_LOG_SIZE) : NULL;
		if (pl->log) {
			*pl->log = 0;
			bpf_program__set_log_buf(pl->prog, pl->log, VERIFIER_LOG_SIZE);
		}
	}
	log_capture(l->libbpf_err, sizeof(l->libbpf_err));
	ret = bpf_object__load(l->obj);
	l->created_boot_ns = kstats_clock_ns(CLOCK_BOOTTIME);
	l->created_real_ns = kstats_clock_ns(CLOCK_REALTIME);
	if (ret && limit_hit(ret)) {
		set_outcome(l->res, KSTATS_FAILED_OBJECT, "load: %s: raise %s; libbpf: %s",
			    strerror(-ret), limit_hit(ret), l->libbpf_err);
	} else if (ret && (bad = failed_prog(l)) < 0) {
		set_outcome(l->res, KSTATS_FAILED_OBJECT, "load: %s; libbpf: %s",
			    strerror(-ret), l->libbpf_err);
	} else if (ret) {
		pl = &l->pl[bad];
		if (pl->log && *pl->log)
			log_tail(pl->log, tail, sizeof(tail));
		pl->rejected = true;
		l->res->progs[bad].outcome = KSTATS_FAILED_VERIFIER;
		snprintf(l->res->progs[bad].reason, LOADER_REASON_LEN, "load: %s; %s: %s",
			 strerror(-ret), *tail ? "verifier" : "libbpf",
			 *tail ? tail : l->libbpf_err);
		ret = -EAGAIN;
	}
	for (i = 0; i < l->res->nprogs; i++) {
		free(l->pl[i].log);
		l->pl[i].log = NULL;
	}
	return ret;
}

/* Loads, dropping rejected variants one at a time; returns the outcome. */
static enum kstats_outcome load_loop(struct obj_load *l)
{
	struct bpf_map *map;
	enum kstats_outcome o;
	size_t attempt;
	int ret;

	/* One more for the attempt that made check_deferred() run. */
	for (attempt = 0; attempt <= l->res->nprogs + 1; attempt++) {
		if (attempt) {
			bpf_object__close(l->obj);
			if (open_object(l))	/* l->obj: the new open, or NULL */
				return KSTATS_FAILED_OBJECT;
		}
		o = choose_variants(l);
		if (o != KSTATS_LOADED && check_deferred(l))
			o = choose_variants(l);
		if (o != KSTATS_LOADED)
			return o;
		/* .rodata/.bss belong to one load: never pinned, never reused. */
		bpf_object__for_each_map(map, l->obj)
			if (!bpf_map__is_internal(map) && (o = prepare_map(l, map)) != KSTATS_LOADED)
				return o;
		ret = try_load(l);
		if (!ret)
			return KSTATS_LOADED;
		if (check_deferred(l))
			continue;
		if (ret != -EAGAIN)
			return KSTATS_FAILED_OBJECT;
	}
	return KSTATS_FAILED_VERIFIER;	/* not reached: each try rejects one */
}

static void unpin(const char *path)
{
	if (unlink(path) && errno != ENOENT)
		log_msg(LOG_WARNING, "warning: cannot unpin %s: %m", path);
}

/* Not loaded: maps pinned by earlier runs keep id and times; programs show what is attached. */
static void finish_not_loaded(struct obj_load *l)
{
	struct kstats_status_obj *res = l->res;
	const struct kstats_status_obj *o = kstats_status_obj(l->ctx->prev, res->name);
	struct kstats_status_map *m;
	size_t i;
	int fd;

	/* A clean skip stops the object: links and program pins go; a failure leaves it. */
	for (i = 0; !outcome_failed(res->outcome) && i < res->nprogs; i++)
		if (*res->progs[i].link_pin)
			unpin(res->progs[i].link_pin);
	for (i = 0; !outcome_failed(res->outcome) && i < res->npins; i++)
		if (is_pin_kind(res->pins[i], "link_") || is_pin_kind(res->pins[i], "prog_"))
			unpin(res->pins[i]);
	for (i = 0; o && i < o->nmaps; i++)
		if (*o->maps[i].name)
			add_map(res, o->maps[i].name, l->ctx);
	for (i = 0; i < l->meta.nmaps; i++)
		add_map(res, l->meta.maps[i].name, l->ctx);
	for (i = 0; i < res->nmaps;) {
		m = &res->maps[i];
		fd = owns_pin(res, m->pin) ? pin_open(m->pin) : -1;
		if (fd < 0) {
			free(m->name), free(m->pin), free(m->key_type), free(m->value_type);
			memmove(m, m + 1, (--res->nmaps - i) * sizeof(*m));
			continue;
		}
		m->map_id = kstats_fd_obj_id(fd);
		m->reused = true;
		prev_map_created(l->ctx, res->name, m->name, m->map_id,
				 &m->created_boot_ns, &m->created_real_ns);
		prev_map_types(l->ctx, res->name, m->name, m->map_id, m->key_type, m->value_type);
		close(fd);
		i++;
	}
	for (i = 0; i < res->nprogs; i++) {
		struct kstats_status_prog *p = &res->progs[i];
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);

		if (p->outcome == KSTATS_LOADED) {
			p->outcome = res->outcome;
			snprintf(p->reason, LOADER_REASON_LEN, "not loaded: the object is %s",
				 kstats_outcome_name(res->outcome));
		}
		fd = owns_pin(res, p->link_pin) ? pin_open(p->link_pin) : -1;
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			p->link_pin[0] = 0;
		p->prog_id = *p->link_pin ? info.prog_id : 0;
		len = strlen(p->reason);
		if (p->prog_id && (outcome_failed(p->outcome) || p->outcome == KSTATS_LOADED))
			snprintf(p->reason + len, LOADER_REASON_LEN - len, "%sprevious program %u "
				 "stays attached", len ? "; " : "", p->prog_id);
		if (fd >= 0)
			close(fd);
	}
}

static int read_meta(struct obj_load *l)
{
	int ret = kstats_objmeta_read_mem(l->elf, l->elf_len, l->res->path, &l->meta,
					  l->res->reason, LOADER_REASON_LEN);

	if (ret)
		l->res->outcome = KSTATS_FAILED_OBJECT;
	else
		l->res->critical = l->meta.obj.flags & KSTATS_OBJ_CRITICAL;
	return ret;
}

/* An object skipped unopened, with outcome o: its programs as its metadata lists them. */
static enum kstats_outcome skip_unopened(struct obj_load *l, enum kstats_outcome o,
					 const char *why)
{
	struct kstats_status_obj *res = l->res;
	const struct kstats_prog_meta *pm;
	struct kstats_status_prog *p;
	size_t i;

	set_outcome(res, o, "%s", why);
	res->progs = calloc(l->meta.nprogs ? l->meta.nprogs : 1, sizeof(*res->progs));
	for (i = 0; res->progs && i < l->meta.nprogs && !prog_init(&res->progs[i]); i++) {
		pm = &l->meta.progs[i];
		p = &res->progs[res->nprogs++];
		snprintf(p->name, KSTATS_NAME_LEN, "%s", pm->name);
		snprintf(p->attach, KSTATS_NAME_LEN, "%s", pm->attach);
		snprintf(p->attach_type, LOADER_TYPE_LEN, "%s", variant_name(pm->variant));
		p->outcome = res->outcome;
		snprintf(p->reason, LOADER_REASON_LEN, "%s", res->reason);
		if (kstats_pin_path(p->link_pin, LOADER_PATH_LEN, l->ctx->pin_dir,
				    "link", res->name, p->name))
			p->link_pin[0] = 0;
	}
	return o;
}

static enum kstats_outcome run_object(struct obj_load *l)
{
	struct kstats_status_obj *res = l->res;
	char fix[KSTATS_NAME_LEN], why[128];

	if (object_name_check(res->name, fix, sizeof(fix)))
		return set_outcome(res, KSTATS_SKIPPED_OBJECT_NAME, "object name %s is not "
				   "letters and digits after a letter, so its pin names could "
				   "be another object's; rename the file to %s.bpf", res->name,
				   fix);
	if (read_object(l))
		return res->outcome;
	if (is_disabled(l->ctx, res->name)) {
		read_meta(l);	/* only to list its programs */
		return skip_unopened(l, KSTATS_SKIPPED_DISABLED, l->ctx->disable_all ?
				     "disabled by disable = all" : "disabled by configuration");
	}
	/* Code anyone but root could have written never reaches the kernel. */
	if (l->untrusted)
		return KSTATS_FAILED_OBJECT;
	if (read_meta(l))
		return res->outcome;
	pthread_mutex_lock(&l->ctx->lock);
	l->ctx->turns[l->idx].meta = &l->meta;	/* later objects that share no metric go on */
	pthread_cond_broadcast(&l->ctx->turn_done);
	pthread_mutex_unlock(&l->ctx->lock);
	if (!kver_in(l->ctx->kver, l->meta.obj.min_kver, l->meta.obj.max_kver, why,
		     sizeof(why)))
		return skip_unopened(l, KSTATS_SKIPPED_KERNEL_VERSION, why);
	/* After the opens: a corrupt copy is FAILED_OBJECT, not a duplicate. */
	if (probe_open(l) || open_object(l) || init_progs(l) || metrics_check(l))
		return res->outcome;
	return load_loop(l);
}

/* A bad name becomes one no good one can have: with a '.', which bpffs refuses. */
static int name_object(struct kstats_status_obj *res)
{
	const char *base = strrchr(res->path, '/');
	size_t n;

	base = base ? base + 1 : res->path;
	n = strlen(base) - 4;	/* the scan lists only names ending in .bpf */
	if (n && !kstats_obj_name(res->path, res->name, KSTATS_NAME_LEN) &&
	    !strchr(res->name, '.'))
		return 0;
	snprintf(res->name, KSTATS_NAME_LEN, "%.*s%s",
		 (int)(n < KSTATS_NAME_LEN ? n : KSTATS_NAME_LEN - 4), base,
		 n >= KSTATS_NAME_LEN ? "..." : "");
	if (!n)
		set_outcome(res, KSTATS_FAILED_OBJECT, "%s: an object needs a name before "
			    ".bpf; rename it", res->path);
	else if (n >= KSTATS_NAME_LEN)
		set_outcome(res, KSTATS_FAILED_OBJECT, "object name is %zu bytes, the limit "
			    "is %d; rename it", n, KSTATS_NAME_LEN - 1);
	else
		set_outcome(res, KSTATS_FAILED_OBJECT, "object name %s has a '.', which "
			    "bpffs refuses in pin names; rename it", res->name);
	return -EINVAL;
}

void load_object(struct loader_ctx *ctx, size_t idx, const char *path,
		 struct kstats_status_obj *res)
{
	struct obj_load l = { .ctx = ctx, .idx = idx, .res = res };
	int ret;

	snprintf(res->path, LOADER_PATH_LEN, "%s", path);	/* obj_init() made res */
	if (!name_object(res)) {
		adopt_prev_pins(ctx, res);
		res->outcome = run_object(&l);
		if (res->outcome == KSTATS_LOADED)
			publish(&l);
		if (res->outcome != KSTATS_LOADED) {
			finish_not_loaded(&l);
		} else if ((ret = copy_path(ctx, res->name, res->copy, LOADER_PATH_LEN) ?:
				  kstats_file_replace(res->copy, l.elf, l.elf_len, 0644))) {
			/* Readers decode pinned maps with the bytes loaded, not a newer file. */
			log_msg(LOG_WARNING, "warning: cannot write %s: %s; after an upgrade "
				"that changes its maps, kstats cannot read them", res->copy,
				strerror(-ret));
			*res->copy = 0;
		}
		prune_pins(res);
	}
	metrics_claim(&l);	/* on every path: later objects may wait for it */
	if (!l.probed)
		probe_skip();
	bpf_object__close(l.obj);
	log_capture(NULL, 0);	/* l.libbpf_err ends with this frame */
	free(l.pl);
	free(l.elf);
	kstats_objmeta_free(&l.meta);
}
