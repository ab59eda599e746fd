// SPDX-License-Identifier: GPL-2.0
/*
 * kstats status: what the loader did (from its status file) and what the
 * kernel holds now: per program the run count and cost, per map its fill,
 * memlock and drops.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hist.h"
#include "kstats.h"
#include "kstats_meta.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "kstats_reader.h"
#include "status.h"

#define STATS_SYSCTL "/proc/sys/kernel/bpf_stats_enabled"

struct status_opts {
	const char *status_file;
	double stats_secs;		/* 0: no measuring window */
	bool json;
};

struct prog_live {
	bool have;			/* bpf_prog_info was read */
	int err;			/* else why not */
	bool detached;			/* its link pin is gone */
	uint64_t run_cnt, run_time_ns, misses;
};

struct map_live {
	bool have;
	int err;
	__u32 type, max_entries, id;
	bool counted;			/* entries counted (hash-like maps) */
	uint64_t entries, memlock;
	bool has_drops;
	uint64_t drops;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats status [--status-file FILE] [--stats SEC] [--json]\n"
		"Per object and program: loaded or skipped and why, the attach type,\n"
		"run count and average ns per run; per map: entries used of max,\n"
		"memlock bytes, and drops of event streams.\n\n"
		"  --status-file FILE  loader status (default: " KSTATS_DEFAULT_STATUS_FILE ")\n"
		"  --stats SEC         measure run counts for SEC seconds with BPF\n"
		"                      run-time stats on (BPF_ENABLE_STATS: the kernel\n"
		"                      turns them off again when kstats exits; the\n"
		"                      kernel.bpf_stats_enabled sysctl is not changed)\n"
		"  --json              the status file, annotated with the live values\n"
		"  -h, --help          this text\n\n"
		"Exit status: 0 ok, 1 an object failed to load (or runtime error),\n"
		"2 bad usage, 3 no status (run kstats-loader), 5 permission denied.\n");
}

static int read_stats_sysctl(void)
{
	FILE *f = fopen(STATS_SYSCTL, "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * The program by id (needs CAP_SYS_ADMIN), else by its prog_ pin: the one
 * the status names, or the one next to its link pin.
 */
static int prog_fd(struct json_object *p, const char *obj)
{
	char dir[PATH_MAX], pin[PATH_MAX];
	const char *link = kstats_jstr(p, "link_pin"), *section = kstats_jstr(p, "section");
	__u32 id = (__u32)kstats_jint(p, "prog_id");
	int fd = bpf_prog_get_fd_by_id(id), err = -errno;

	if (fd >= 0)
		return fd;
	snprintf(pin, sizeof(pin), "%s", kstats_jstr(p, "prog_pin"));
	if (!*pin && *link && *section) {
		snprintf(dir, sizeof(dir), "%s", link);
		if (kstats_pin_path(pin, sizeof(pin), dirname(dir), "prog", obj, section))
			return err;
	}
	fd = *pin ? bpf_obj_get(pin) : -1;
	return fd >= 0 ? fd : err;
}

static void prog_probe(struct json_object *p, const char *obj, struct prog_live *pl)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	const char *link = kstats_jstr(p, "link_pin");
	int fd;

	memset(pl, 0, sizeof(*pl));
	if (kstats_jint(p, "prog_id") <= 0)
		return;		/* not loaded: nothing to ask the kernel */
	pl->detached = *link && access(link, F_OK) && errno == ENOENT;
	fd = prog_fd(p, obj);
	if (fd < 0) {
		pl->err = fd;
		return;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		pl->err = -errno;
	} else {
		pl->have = true;
		pl->run_cnt = info.run_cnt;
		pl->run_time_ns = info.run_time_ns;
		pl->misses = info.recursion_misses;
	}
	close(fd);
}

static uint64_t fdinfo_memlock(int fd)
{
	char path[64], line[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static bool hash_like(__u32 type)
{
	return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_LRU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static uint64_t count_entries(int fd, __u32 key_size, __u32 max)
{
	char *a = calloc(2, key_size ?: 1), *prev = NULL, *next = a;
	uint64_t n = 0;

	if (!a)
		return 0;
	while (n <= max && !bpf_map_get_next_key(fd, prev, next)) {
		n++;
		prev = next;
		next = next == a ? a + key_size : a;
	}
	free(a);
	return n;
}

/* Sum of every value leaf of every entry, read generically. */
static int sum_values(const char *obj_path, const char *map, const char *pin,
		      uint64_t *sum)
{
	struct kstats_map_opts mo = { .obj_path = obj_path, .map_name = map, .pin_path = pin };
	char err[KSTATS_ERR_LEN];
	struct kstats_map *m = NULL;
	int64_t *rows = NULL;
	size_t nrows, r, c;
	int ret = kstats_map_open(&mo, &m, err, sizeof(err));

	if (!ret)
		ret = kstats_read_rows(m, &rows, &nrows, err, sizeof(err));
	for (*sum = 0, r = 0; !ret && r < nrows; r++)
		for (c = kstats_map_nkey_cols(m); c < kstats_map_ncols(m); c++)
			*sum = kstats_add_sat(*sum, (uint64_t)rows[r * kstats_map_ncols(m) + c]);
	free(rows);
	kstats_map_close(m);
	return ret;
}

static void map_probe(struct json_object *mp, struct map_live *ml)
{
	LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = BPF_F_RDONLY);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_obj_get_opts(kstats_jstr(mp, "pin"), &opts);

	memset(ml, 0, sizeof(*ml));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ml->err = -errno;
		if (fd >= 0)
			close(fd);
		return;
	}
	ml->have = true;
	ml->type = info.type;
	ml->id = info.id;
	ml->max_entries = info.max_entries;
	ml->memlock = fdinfo_memlock(fd);
	ml->counted = hash_like(info.type);
	if (ml->counted)
		ml->entries = count_entries(fd, info.key_size, info.max_entries);
	close(fd);
}

static const char *map_pin(struct json_object *o, const char *name)
{
	struct json_object *maps = kstats_jarr(o, "maps");
	size_t i;

	for (i = 0; maps && i < json_object_array_length(maps); i++)
		if (!strcmp(kstats_jstr(json_object_array_get_idx(maps, i), "name"), name))
			return kstats_jstr(json_object_array_get_idx(maps, i), "pin");
	return "";
}

/*
 * Drops are counted for event streams (.kstats.streams): the records their
 * ring buffer had no room for, shown on the ring buffer and on the counter.
 */
static void stream_drops(struct json_object *o, const struct kstats_objmeta *meta,
			 const char *map, struct map_live *ml)
{
	const char *path = kstats_jstr(o, "path"), *pin;
	size_t i;

	for (i = 0; i < meta->nstreams; i++) {
		const struct kstats_stream_meta *st = &meta->streams[i];

		if (strcmp(map, st->ringbuf) && strcmp(map, st->drops))
			continue;
		pin = map_pin(o, st->drops);
		ml->has_drops = *pin && !sum_values(path, st->drops, pin, &ml->drops);
		return;
	}
}

/* Live values of one map of object o. */
static void map_live_read(struct json_object *o, const struct kstats_objmeta *meta,
			  struct json_object *mp, struct map_live *ml)
{
	map_probe(mp, ml);
	if (ml->have)
		stream_drops(o, meta, kstats_jstr(mp, "name"), ml);
}

/* The object's metadata, empty when its file cannot be read. */
static void object_meta(struct json_object *o, struct kstats_objmeta *meta)
{
	char err[512];

	if (kstats_objmeta_read(kstats_jstr(o, "path"), meta, err, sizeof(err)))
		memset(meta, 0, sizeof(*meta));
}

/* A table whose column widths follow its cells; the last column is free. */
#define TABLE_COLS 8
#define CELL_LEN 96

struct table {
	size_t ncols, nrows;
	char (*cells)[TABLE_COLS][CELL_LEN];
};

static char *table_row(struct table *t)
{
	void *c = realloc(t->cells, (t->nrows + 1) * sizeof(*t->cells));

	if (!c)
		return NULL;
	t->cells = c;
	memset(t->cells[t->nrows], 0, sizeof(*t->cells));
	return t->cells[t->nrows++][0];
}

static void table_print(FILE *f, struct table *t, const char *indent)
{
	size_t w[TABLE_COLS] = {}, r, c;

	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++)
			if (kstats_display_width(t->cells[r][c]) > w[c])
				w[c] = kstats_display_width(t->cells[r][c]);
	for (r = 0; r < t->nrows; r++) {
		size_t last = 0;

		for (c = 0; c < t->ncols; c++)
			last = *t->cells[r][c] ? c : last;
		fputs(indent, f);
		for (c = 0; c < last; c++)
			kstats_put_padded(f, t->cells[r][c], w[c] + 2, false);
		fprintf(f, "%s\n", t->cells[r][last]);
	}
	free(t->cells);
	t->cells = NULL;
	t->nrows = 0;
}

#define CELL(t, c, ...) snprintf((t)->cells[(t)->nrows - 1][c], CELL_LEN, __VA_ARGS__)

static void table_header(struct table *t, const char *const *names)
{
	size_t c;

	if (!table_row(t))
		return;
	for (c = 0; c < t->ncols && names[c]; c++)
		CELL(t, c, "%s", names[c]);
}

static void fmt_ns(char *buf, size_t len, double ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%.0fns", ns);
	else
		kstats_fmt_value(buf, len, ns / 1000, KSTATS_UNIT_USEC);
}

static const char *probe_error(int err)
{
	return err == -EPERM || err == -EACCES ? "permission denied" :
	       err == -ENOENT ? "gone" : strerror(-err);
}

static void prog_row(struct table *t, struct json_object *p, const struct prog_live *pl)
{
	char avg[32];

	if (!table_row(t))
		return;
	CELL(t, 0, "%s", kstats_jstr(p, "name"));
	CELL(t, 1, "%s", kstats_jstr(p, "attach"));
	CELL(t, 2, "%s", *kstats_jstr(p, "attach_type") ? kstats_jstr(p, "attach_type") : "-");
	CELL(t, 3, "%s%s", kstats_jstr(p, "outcome"), pl->detached ? ",DETACHED" : "");
	if (pl->have && pl->run_cnt) {
		fmt_ns(avg, sizeof(avg), (double)pl->run_time_ns / (double)pl->run_cnt);
		CELL(t, 4, "%llu", (unsigned long long)pl->run_cnt);
		CELL(t, 5, "%s", avg);
		CELL(t, 6, "%llu", (unsigned long long)pl->misses);
	} else {
		CELL(t, 4, "%s", pl->have ? "0" : pl->err ? probe_error(pl->err) : "-");
		CELL(t, 5, "-");
		CELL(t, 6, "%s", pl->have ? "0" : "-");
	}
	CELL(t, 7, "%s", kstats_jstr(p, "reason"));
}

static void map_row(struct table *t, struct json_object *mp, const struct map_live *ml)
{
	char mem[32];

	if (!table_row(t))
		return;
	CELL(t, 0, "%s", kstats_jstr(mp, "name"));
	if (!ml->have) {
		CELL(t, 1, "%s", probe_error(ml->err));
		return;
	}
	CELL(t, 1, "%s", libbpf_bpf_map_type_str(ml->type) ?: "?");
	if (ml->counted) {
		CELL(t, 2, "%llu/%u", (unsigned long long)ml->entries, ml->max_entries);
		CELL(t, 3, "%.1f%%", ml->max_entries ? 100.0 * (double)ml->entries /
			 ml->max_entries : 0);
	} else {
		CELL(t, 2, "%u", ml->max_entries);
		CELL(t, 3, "-");
	}
	kstats_fmt_value(mem, sizeof(mem), (double)ml->memlock, KSTATS_UNIT_BYTES);
	CELL(t, 4, "%s", mem);
	CELL(t, 5, ml->has_drops ? "%llu" : "-", (unsigned long long)ml->drops);
	if (kstats_jint(mp, "map_id") && kstats_jint(mp, "map_id") != ml->id)
		CELL(t, 6, "recreated since the loader ran (id %u, was %lld)", ml->id,
		     (long long)kstats_jint(mp, "map_id"));
	else
		CELL(t, 6, "%s", kstats_jbool(mp, "reused") ? "reused from an earlier load" : "");
}

/* Live values of every program, in status-file order. */
static struct prog_live *probe_progs(struct json_object *objs, size_t *n)
{
	struct prog_live *pl = NULL, *grown;
	size_t i, j;

	*n = 0;
	for (i = 0; i < json_object_array_length(objs); i++) {
		struct json_object *o = json_object_array_get_idx(objs, i);
		struct json_object *progs = kstats_jarr(o, "programs");

		for (j = 0; progs && j < json_object_array_length(progs); j++) {
			grown = realloc(pl, (*n + 1) * sizeof(*pl));
			if (!grown)
				break;
			pl = grown;
			prog_probe(json_object_array_get_idx(progs, j), kstats_jstr(o, "name"),
				   &pl[(*n)++]);
		}
	}
	return pl;
}

struct status_view {
	struct json_object *st;
	struct prog_live *progs;
	size_t nprogs;
	double window;			/* seconds the run counts cover; 0: since load */
	int stats_enabled;		/* the sysctl, -1 unknown */
	bool perm_denied, failed;
};

static void window_delta(struct prog_live *after, const struct prog_live *before, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		after[i].run_cnt -= before[i].run_cnt;
		after[i].run_time_ns -= before[i].run_time_ns;
		after[i].misses -= before[i].misses;
	}
}

static int measure(struct status_view *v, struct json_object *objs, double secs)
{
	struct timespec ts = kstats_timespec(secs);
	struct prog_live *before;
	size_t n;
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd < 0) {
		int ret = -errno;

		fprintf(stderr, "kstats status: --stats: cannot enable BPF run-time stats: %s; "
			"needs CAP_SYS_ADMIN (root)\n", strerror(errno));
		return ret;
	}
	before = probe_progs(objs, &n);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	v->progs = probe_progs(objs, &v->nprogs);
	close(fd);
	if (before && v->progs && n == v->nprogs)
		window_delta(v->progs, before, n);
	free(before);
	v->window = secs;
	return 0;
}

static void print_object(FILE *f, struct status_view *v, struct json_object *o,
			 size_t *prog_idx)
{
	struct json_object *progs = kstats_jarr(o, "programs"), *maps = kstats_jarr(o, "maps");
	struct table t = { .ncols = 8 };
	struct kstats_objmeta meta;
	struct map_live ml;
	size_t j;

	fprintf(f, "\n%s  %s%s%s%s\n", kstats_jstr(o, "name"), kstats_jstr(o, "outcome"),
		*kstats_jstr(o, "reason") ? ": " : "", kstats_jstr(o, "reason"),
		kstats_jbool(o, "critical") ? " (critical)" : "");
	if (progs && json_object_array_length(progs)) {
		table_header(&t, (const char *const[]){ "program", "attach", "type", "outcome",
			"runs", "avg/run", "missed", NULL });
		for (j = 0; j < json_object_array_length(progs); j++, (*prog_idx)++)
			if (*prog_idx < v->nprogs)
				prog_row(&t, json_object_array_get_idx(progs, j),
					 &v->progs[*prog_idx]);
		table_print(f, &t, "  ");
	}
	if (!maps || !json_object_array_length(maps))
		return;
	t.ncols = 7;
	table_header(&t, (const char *const[]){ "map", "type", "entries", "fill", "memlock",
		"drops", NULL });
	object_meta(o, &meta);
	for (j = 0; j < json_object_array_length(maps); j++) {
		map_live_read(o, &meta, json_object_array_get_idx(maps, j), &ml);
		v->perm_denied |= ml.err == -EPERM || ml.err == -EACCES;
		map_row(&t, json_object_array_get_idx(maps, j), &ml);
	}
	kstats_objmeta_free(&meta);
	table_print(f, &t, "  ");
}

static void print_header(FILE *f, const struct status_opts *so, struct status_view *v)
{
	const char *rel = kstats_jstr(v->st, "kernel_release");
	struct utsname u;

	fprintf(f, "loader status %s, kernel %s\n", so->status_file, *rel ? rel : "?");
	if (!uname(&u) && strcmp(u.release, rel))
		fprintf(f, "warning: the status is from kernel %s but %s is running; "
			KSTATS_FIX_LOAD "\n", rel, u.release);
	if (v->window)
		fprintf(f, "runs and avg/run: the last %gs (BPF run-time stats on meanwhile)\n",
			v->window);
	else if (v->stats_enabled == 1)
		fprintf(f, "runs and avg/run: since load (kernel.bpf_stats_enabled=1)\n");
	else
		fprintf(f, "runs and avg/run: counted only while BPF run-time stats are on "
			"(kernel.bpf_stats_enabled=%d); kstats status --stats 5 measures 5s\n",
			v->stats_enabled);
}

static void print_status(FILE *f, const struct status_opts *so, struct status_view *v)
{
	struct json_object *objs = kstats_jarr(v->st, "objects");
	size_t i, prog_idx = 0;

	print_header(f, so, v);
	for (i = 0; i < json_object_array_length(objs); i++)
		print_object(f, v, json_object_array_get_idx(objs, i), &prog_idx);
}

static struct json_object *json_u64(bool have, uint64_t v)
{
	return have ? json_object_new_uint64(v) : NULL;
}

static void annotate_prog(struct json_object *p, const struct prog_live *pl)
{
	bool runs = pl->have && pl->run_cnt;

	json_object_object_add(p, "run_cnt", json_u64(pl->have, pl->run_cnt));
	json_object_object_add(p, "run_time_ns", json_u64(pl->have, pl->run_time_ns));
	json_object_object_add(p, "avg_ns", runs ? json_object_new_double(
		(double)pl->run_time_ns / (double)pl->run_cnt) : NULL);
	json_object_object_add(p, "recursion_misses", json_u64(pl->have, pl->misses));
	json_object_object_add(p, "detached", json_object_new_boolean(pl->detached));
	json_object_object_add(p, "probe_error", pl->err ?
			       json_object_new_string(probe_error(pl->err)) : NULL);
}

static void annotate_map(struct json_object *mp, const struct map_live *ml)
{
	json_object_object_add(mp, "map_type", ml->have ?
			       json_object_new_string(libbpf_bpf_map_type_str(ml->type) ?: "?") : NULL);
	json_object_object_add(mp, "live_map_id", json_u64(ml->have, ml->id));
	json_object_object_add(mp, "max_entries", json_u64(ml->have, ml->max_entries));
	json_object_object_add(mp, "entries", json_u64(ml->counted, ml->entries));
	json_object_object_add(mp, "fill_percent", ml->counted && ml->max_entries ?
			       json_object_new_double(100.0 * (double)ml->entries /
						      ml->max_entries) : NULL);
	json_object_object_add(mp, "memlock_bytes", json_u64(ml->have, ml->memlock));
	json_object_object_add(mp, "drops", json_u64(ml->has_drops, ml->drops));
	json_object_object_add(mp, "probe_error", ml->err ?
			       json_object_new_string(probe_error(ml->err)) : NULL);
}

static void annotate(struct status_view *v)
{
	struct json_object *objs = kstats_jarr(v->st, "objects");
	struct map_live ml;
	size_t i, j, k = 0;
	struct utsname u;

	for (i = 0; i < json_object_array_length(objs); i++) {
		struct json_object *o = json_object_array_get_idx(objs, i);
		struct json_object *progs = kstats_jarr(o, "programs");
		struct json_object *maps = kstats_jarr(o, "maps");
		struct kstats_objmeta meta;

		for (j = 0; progs && j < json_object_array_length(progs); j++, k++)
			if (k < v->nprogs)
				annotate_prog(json_object_array_get_idx(progs, j), &v->progs[k]);
		object_meta(o, &meta);
		for (j = 0; maps && j < json_object_array_length(maps); j++) {
			map_live_read(o, &meta, json_object_array_get_idx(maps, j), &ml);
			v->perm_denied |= ml.err == -EPERM || ml.err == -EACCES;
			annotate_map(json_object_array_get_idx(maps, j), &ml);
		}
		kstats_objmeta_free(&meta);
	}
	json_object_object_add(v->st, "running_kernel_release",
			       uname(&u) ? NULL : json_object_new_string(u.release));
	json_object_object_add(v->st, "bpf_stats_enabled", json_object_new_int(v->stats_enabled));
	json_object_object_add(v->st, "stats_window_seconds",
			       v->window ? json_object_new_double(v->window) : NULL);
}

static bool any_failed(struct json_object *st)
{
	struct json_object *objs = kstats_jarr(st, "objects");
	size_t i;

	for (i = 0; i < json_object_array_length(objs); i++)
		if (!strncmp(kstats_jstr(json_object_array_get_idx(objs, i), "outcome"),
			     "FAILED", 6))
			return true;
	return false;
}

static int parse_args(int argc, char **argv, struct status_opts *so)
{
	static const struct option opts[] = {
		{ "status-file", required_argument, NULL, 's' },
		{ "stats", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': so->status_file = optarg; break;
		case 'j': so->json = true; break;
		case 'S':
			if (kstats_parse_seconds("status", "--stats", optarg, 3600, &so->stats_secs))
				return -EINVAL;
			break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kstats status: unexpected argument '%s'; see --help\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int cmd_status(int argc, char **argv)
{
	struct status_opts so = { .status_file = KSTATS_DEFAULT_STATUS_FILE };
	struct status_view v = {};
	struct json_object *objs;
	char err[1024];
	int ret = parse_args(argc, argv, &so);

	if (ret)
		return ret > 0 ? KSTATS_EXIT_OK : KSTATS_EXIT_USAGE;
	ret = kstats_status_load(so.status_file, &v.st, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "kstats status: %s\n", err);
		return kstats_exit_code(ret);
	}
	objs = kstats_jarr(v.st, "objects");
	v.stats_enabled = read_stats_sysctl();
	if (so.stats_secs)
		ret = measure(&v, objs, so.stats_secs);
	else
		v.progs = probe_progs(objs, &v.nprogs);
	if (!ret) {
		if (so.json) {
			annotate(&v);
			printf("%s\n", json_object_to_json_string_ext(v.st,
				JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
				JSON_C_TO_STRING_NOSLASHESCAPE));
		} else {
			print_status(stdout, &so, &v);
		}
		if (v.perm_denied)
			fprintf(stderr, "kstats status: some maps could not be opened: "
				"permission denied; " KSTATS_FIX_PERM "\n");
		ret = v.perm_denied ? -EACCES : any_failed(v.st) ? -EIO : 0;
	}
	free(v.progs);
	json_object_put(v.st);
	return kstats_exit_code(ret);
}
