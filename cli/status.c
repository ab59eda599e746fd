// SPDX-License-Identifier: GPL-2.0
/* kstats status: the loader's status file and what the kernel holds now; a health check. */
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
#include <json-c/json.h>

#include "hist.h"
#include "kstats.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"

struct prog_live {
	bool have;			/* bpf_prog_info was read */
	int err;			/* else why not */
	bool detached;			/* its link pin is gone */
	uint64_t run_cnt, run_time_ns, misses;
};

struct map_live {
	bool have;
	int err;
	bool root_only;			/* denied, as its mode says it must be */
	__u32 type, max_entries, id;
	bool counted;			/* entries counted (hash-like maps) */
	uint64_t entries, memlock;
	bool has_drops;
	uint64_t drops;
};

struct status_view {
	const char *status_file;
	struct kstats_status st;
	struct prog_live *progs;	/* every program, in status-file order */
	size_t nprogs;
	double window;			/* --stats SEC; 0: counts since load */
	int stats_enabled;		/* the sysctl, -1 unknown */
	bool perm_denied;
	unsigned int maps_gone;		/* maps of loaded objects whose pin is gone */
	const char *gone_example;
};

/* By id (needs CAP_SYS_ADMIN), else by its prog_ pin: named, or next to its link pin. */
static int prog_fd(const struct kstats_status_prog *p, const char *obj)
{
	char dir[PATH_MAX], pin[PATH_MAX];
	int fd = bpf_prog_get_fd_by_id(p->prog_id), err = -errno;

	if (fd >= 0)
		return fd;
	snprintf(pin, sizeof(pin), "%s", p->prog_pin);
	if (!*pin && *p->link_pin && *p->section) {
		snprintf(dir, sizeof(dir), "%s", p->link_pin);
		if (kstats_pin_path(pin, sizeof(pin), dirname(dir), "prog", obj, p->section))
			return err;
	}
	fd = *pin ? bpf_obj_get(pin) : -1;
	return fd >= 0 ? fd : err;
}

/* since: an earlier probe, its counts subtracted; NULL: counts since load. */
static struct prog_live *probe_progs(const struct kstats_status *st, size_t *n,
				     const struct prog_live *since)
{
	struct prog_live *pl, *l;
	size_t i, j;
	int fd;

	for (*n = 0, i = 0; i < st->nobjs; i++)
		*n += st->objs[i].nprogs;
	pl = l = calloc(*n + 1, sizeof(*pl));
	for (i = 0; pl && i < st->nobjs; i++) {
		for (j = 0; j < st->objs[i].nprogs; j++, l++) {
			const struct kstats_status_prog *p = &st->objs[i].progs[j];
			const struct prog_live *b = since ? &since[l - pl] : &(struct prog_live){};
			struct bpf_prog_info info = {};
			__u32 len = sizeof(info);

			if (!p->prog_id)
				continue;
			l->detached = *p->link_pin && access(p->link_pin, F_OK) && errno == ENOENT;
			fd = prog_fd(p, st->objs[i].name);
			l->have = fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len);
			l->err = l->have ? 0 : fd < 0 ? fd : -errno;
			l->run_cnt = l->have ? info.run_cnt - b->run_cnt : 0;
			l->run_time_ns = l->have ? info.run_time_ns - b->run_time_ns : 0;
			l->misses = l->have ? info.recursion_misses - b->misses : 0;
			if (fd >= 0)
				close(fd);
		}
	}
	*n = pl ? *n : 0;
	return pl;
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

/* Drops of event streams: records their ring buffer had no room for (on both maps). */
static void probe_map(struct status_view *v, const struct kstats_status_obj *o,
		      const struct kstats_objmeta *meta,
		      const struct kstats_status_map *mp, struct map_live *ml)
{
	const struct kstats_map_meta *mm = kstats_objmeta_map(meta, mp->name);
	LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = BPF_F_RDONLY);
	const struct kstats_status_map *d;
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_obj_get_opts(mp->pin, &opts);
	size_t i;
	bool denied;

	memset(ml, 0, sizeof(*ml));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ml->err = -errno;
	} else {
		ml->have = true;
		ml->type = info.type;
		ml->id = info.id;
		ml->max_entries = info.max_entries;
		ml->memlock = fdinfo_memlock(fd);
		ml->counted = info.type == BPF_MAP_TYPE_HASH || info.type == BPF_MAP_TYPE_LRU_HASH ||
			      info.type == BPF_MAP_TYPE_PERCPU_HASH ||
			      info.type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
		if (ml->counted)
			ml->entries = count_entries(fd, info.key_size, info.max_entries);
	}
	if (fd >= 0)
		close(fd);
	for (i = 0; ml->have && i < meta->nstreams; i++) {
		const struct kstats_stream_meta *st = &meta->streams[i];

		if (strcmp(mp->name, st->ringbuf) && strcmp(mp->name, st->drops))
			continue;
		d = kstats_status_obj_map(o, st->drops);
		ml->has_drops = d && *d->pin &&
				!sum_values(o->path, st->drops, d->pin, &ml->drops);
		break;
	}
	denied = ml->err == -EPERM || ml->err == -EACCES;
	/* A root-only map (a start map) is not for readers: skipped, no failure. */
	ml->root_only = denied && mm && !(mm->mode & 0044) && geteuid();
	v->perm_denied |= denied && !ml->root_only;
	/* A loaded object's map must be there: its pin gone is a broken pipeline. */
	if (ml->err == -ENOENT && o->outcome == KSTATS_LOADED) {
		v->maps_gone++;
		v->gone_example = mp->pin;
	}
}

static const char *probe_error(int err, bool root_only)
{
	return root_only ? "root-only" : err == -EPERM || err == -EACCES ?
	       "permission denied" : err == -ENOENT ? "gone" : strerror(-err);
}

/* Rows of cells under a header (f NULL: none): the columns as wide as their cells, the
 * last one free. */
#define TABLE_COLS 8
#define CELL_LEN 96

typedef char row_t[TABLE_COLS][CELL_LEN];

static void table_print(FILE *f, const char *const *head, row_t *rows, size_t n)
{
	size_t w[TABLE_COLS] = {}, r, c, last;

	for (c = 0; head[c]; c++)
		snprintf(rows[0][c], CELL_LEN, "%s", head[c]);
	for (r = 0; r <= n; r++)
		for (c = 0; c < TABLE_COLS; c++)
			if (kstats_display_width(rows[r][c]) > w[c])
				w[c] = kstats_display_width(rows[r][c]);
	for (r = 0; f && n && r <= n; r++) {
		for (last = 0, c = 0; c < TABLE_COLS; c++)
			last = *rows[r][c] ? c : last;
		fputs("  ", f);
		for (c = 0; c < last; c++)
			kstats_put_padded(f, rows[r][c], w[c] + 2, false);
		fprintf(f, "%s\n", rows[r][last]);
	}
}

#define CELL(c, ...) snprintf(row[c], CELL_LEN, __VA_ARGS__)

static struct json_object *json_u64(bool have, uint64_t v)
{
	return have ? json_object_new_uint64(v) : NULL;
}

/* p's table row, and its live values into its JSON. */
static void prog_row(char (*row)[CELL_LEN], const struct kstats_status_prog *p,
		     const struct prog_live *pl)
{
	double ns = pl->run_cnt ? (double)pl->run_time_ns / (double)pl->run_cnt : 0;

	json_object_object_add(p->json, "run_cnt", json_u64(pl->have, pl->run_cnt));
	json_object_object_add(p->json, "run_time_ns", json_u64(pl->have, pl->run_time_ns));
	json_object_object_add(p->json, "avg_ns", pl->have && pl->run_cnt ?
			       json_object_new_double(ns) : NULL);
	json_object_object_add(p->json, "recursion_misses", json_u64(pl->have, pl->misses));
	json_object_object_add(p->json, "detached", json_object_new_boolean(pl->detached));
	json_object_object_add(p->json, "probe_error", pl->err ?
			       json_object_new_string(probe_error(pl->err, false)) : NULL);
	CELL(0, "%s", p->name);
	CELL(1, "%s", p->attach);
	CELL(2, "%s", *p->attach_type ? p->attach_type : "-");
	CELL(3, "%s%s", kstats_outcome_name(p->outcome), pl->detached ? ",DETACHED" : "");
	if (pl->have && pl->run_cnt) {
		if (ns < 1000)
			CELL(5, "%.0fns", ns);
		else
			kstats_fmt_value(row[5], CELL_LEN, ns / 1000,
					 kstats_unit(KSTATS_UNIT_USEC));
		CELL(4, "%llu", (unsigned long long)pl->run_cnt);
		CELL(6, "%llu", (unsigned long long)pl->misses);
	} else {
		CELL(4, "%s", pl->have ? "0" : pl->err ? probe_error(pl->err, false) : "-");
		CELL(5, "-");
		CELL(6, "%s", pl->have ? "0" : "-");
	}
	CELL(7, "%s", p->reason);
}

/* mp probed: its table row, and its live values into its JSON. */
static void map_row(char (*row)[CELL_LEN], struct status_view *v,
		    const struct kstats_status_obj *o, const struct kstats_objmeta *meta,
		    const struct kstats_status_map *mp)
{
	const char *type;
	struct map_live ml;

	probe_map(v, o, meta, mp, &ml);
	type = libbpf_bpf_map_type_str(ml.type) ?: "?";
	json_object_object_add(mp->json, "map_type", ml.have ? json_object_new_string(type) : NULL);
	json_object_object_add(mp->json, "live_map_id", json_u64(ml.have, ml.id));
	json_object_object_add(mp->json, "max_entries", json_u64(ml.have, ml.max_entries));
	json_object_object_add(mp->json, "entries", json_u64(ml.counted, ml.entries));
	json_object_object_add(mp->json, "fill_percent", ml.counted && ml.max_entries ?
			       json_object_new_double(100.0 * (double)ml.entries /
						      ml.max_entries) : NULL);
	json_object_object_add(mp->json, "memlock_bytes", json_u64(ml.have, ml.memlock));
	json_object_object_add(mp->json, "drops", json_u64(ml.has_drops, ml.drops));
	json_object_object_add(mp->json, "probe_error", ml.err ?
			       json_object_new_string(probe_error(ml.err, ml.root_only)) : NULL);
	CELL(0, "%s", mp->name);
	if (!ml.have) {
		CELL(1, "%s", probe_error(ml.err, ml.root_only));
		return;
	}
	CELL(1, "%s", type);
	if (ml.counted) {
		CELL(2, "%llu/%u", (unsigned long long)ml.entries, ml.max_entries);
		CELL(3, "%.1f%%", ml.max_entries ? 100.0 * (double)ml.entries /
		     ml.max_entries : 0);
	} else {
		CELL(2, "%u", ml.max_entries);
		CELL(3, "-");
	}
	kstats_fmt_value(row[4], CELL_LEN, (double)ml.memlock, kstats_unit(KSTATS_UNIT_BYTES));
	CELL(5, ml.has_drops ? "%llu" : "-", (unsigned long long)ml.drops);
	if (mp->map_id && mp->map_id != ml.id)
		CELL(6, "recreated since the loader ran (id %u, was %u)", ml.id, mp->map_id);
	else
		CELL(6, "%s", mp->reused ? "reused from an earlier load" : "");
}

static void show(FILE *f, struct status_view *v, bool json)
{
	static const char *const prog_cols[] = { "program", "attach", "type", "outcome",
		"runs", "avg/run", "missed", NULL };
	static const char *const map_cols[] = { "map", "type", "entries", "fill",
		"memlock", "drops", NULL };
	const char *rel = v->st.kernel_release;
	struct kstats_objmeta meta;
	char why[KSTATS_WHY_LEN];
	size_t i, j, k = 0;
	struct utsname u;
	bool have_u = !uname(&u);
	struct timespec shipped;
	long waiting = ship_waiting("/var/lib/kernelstats/state", NULL, &shipped);
	char when[32];

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", gmtime(waiting < 0 ? &(time_t){ 0 } :
		 &shipped.tv_sec));
	if (!json) {
		fprintf(f, "loader status %s, kernel %s\n", v->status_file, *rel ? rel : "?");
		if (waiting >= 0)
			fprintf(f, "kstats ship: last acknowledged %s UTC, %ld atoms wait\n",
				when, waiting);
		if (have_u && strcmp(u.release, rel))
			fprintf(f, "warning: the status is from kernel %s but %s is running; "
				KSTATS_FIX_LOAD "\n", rel, u.release);
		if (v->window)
			fprintf(f, "runs and avg/run: the last %gs (BPF run-time stats on "
				"meanwhile)\n", v->window);
		else if (v->stats_enabled == 1)
			fprintf(f, "runs and avg/run: since load (kernel.bpf_stats_enabled=1)\n");
		else
			fprintf(f, "runs and avg/run: counted only while BPF run-time stats are "
				"on (kernel.bpf_stats_enabled=%d); kstats status --stats 5 "
				"measures 5s\n", v->stats_enabled);
	}
	for (i = 0; i < v->st.nobjs; i++) {
		const struct kstats_status_obj *o = &v->st.objs[i];
		row_t *rows = calloc((o->nprogs > o->nmaps ? o->nprogs : o->nmaps) + 1,
				     sizeof(*rows));

		if (!rows)
			break;
		kstats_why(o, why, sizeof(why));
		if (!json)
			fprintf(f, "\n%s  %s\n", o->name, why);
		for (j = 0; j < o->nprogs && k < v->nprogs; j++, k++)
			prog_row(rows[j + 1], &o->progs[j], &v->progs[k]);
		table_print(json ? NULL : f, prog_cols, rows, j);
		if (!o->nmaps || kstats_objmeta_read(o->path, &meta, why, sizeof(why)))
			memset(&meta, 0, sizeof(meta));
		memset(rows, 0, (o->nmaps + 1) * sizeof(*rows));
		for (j = 0; j < o->nmaps; j++)
			map_row(rows[j + 1], v, o, &meta, &o->maps[j]);
		kstats_objmeta_free(&meta);
		table_print(json ? NULL : f, map_cols, rows, j);
		free(rows);
	}
	if (!json)
		return;
	json_object_object_add(v->st.json, "running_kernel_release",
			       have_u ? json_object_new_string(u.release) : NULL);
	json_object_object_add(v->st.json, "bpf_stats_enabled",
			       json_object_new_int(v->stats_enabled));
	json_object_object_add(v->st.json, "ship_last_success_utc", waiting < 0 ? NULL :
			       json_object_new_string(when));
	json_object_object_add(v->st.json, "ship_atoms_waiting", waiting < 0 ? NULL :
			       json_object_new_int64(waiting));
	json_object_object_add(v->st.json, "stats_window_seconds",
			       v->window ? json_object_new_double(v->window) : NULL);
	fprintf(f, "%s\n", json_object_to_json_string_ext(v->st.json, JSON_C_TO_STRING_PRETTY |
		JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
}

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
		"Exit status (a health check): 0 ok, 1 an object failed to load (or\n"
		"runtime error), 2 bad usage, 3 no status, or a map of a loaded object\n"
		"is gone (" KSTATS_FIX_LOAD "), 5 permission denied.  An object whose\n"
		"file is bad (FAILED_OBJECT, not critical) is a warning, not a failure.\n");
}

/* Run counts over the v->window seconds from now. */
static int measure(struct status_view *v)
{
	struct timespec ts = kstats_timespec(v->window);
	struct prog_live *before;
	size_t n;
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd < 0) {
		fd = -errno;
		fprintf(stderr, "kstats status: --stats: cannot enable BPF run-time stats: %s; "
			"needs CAP_SYS_ADMIN (root)\n", strerror(-fd));
		return fd;
	}
	before = probe_progs(&v->st, &n, NULL);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	v->progs = probe_progs(&v->st, &v->nprogs, before);
	close(fd);
	free(before);
	return 0;
}

/* Denied or gone maps, then failed objects; a non-critical FAILED_OBJECT only warns. */
static int verdict(struct status_view *v)
{
	char why[KSTATS_WHY_LEN];
	bool failed = false;
	size_t i;

	if (v->perm_denied) {
		fprintf(stderr, "kstats status: some maps could not be opened: "
			"permission denied; %s\n", kstats_perm_fix());
		return -EACCES;
	}
	if (v->maps_gone) {
		fprintf(stderr, "kstats status: %u map(s) of loaded objects are gone (%s); "
			KSTATS_FIX_LOAD "\n", v->maps_gone, v->gone_example);
		return -ENOENT;
	}
	for (i = 0; i < v->st.nobjs; i++) {
		const struct kstats_status_obj *o = &v->st.objs[i];
		bool warn = o->outcome == KSTATS_FAILED_OBJECT && !o->critical;

		failed |= kstats_outcome_failed(o->outcome) && !warn;
		if (!warn)
			continue;
		kstats_why(o, why, sizeof(why));
		fprintf(stderr, "kstats status: warning: %s: %s; skipped (fix or remove %s)\n",
			o->name, why, o->path);
	}
	return failed ? -EIO : 0;
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "status-file", required_argument, NULL, 's' },
		{ "stats", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct status_view v = { .status_file = KSTATS_DEFAULT_STATUS_FILE,
				 .stats_enabled = -1 };
	bool json = false;
	char err[1024];
	int c, ret = 0;
	FILE *f;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': v.status_file = optarg; break;
		case 'j': json = true; break;
		case 'S':
			if (kstats_parse_seconds("--stats", optarg, 3600, &v.window,
						 err, sizeof(err))) {
				fprintf(stderr, "kstats status: %s\n", err);
				return KSTATS_EXIT_USAGE;
			}
			break;
		case 'h': usage(stdout); return KSTATS_EXIT_OK;
		default: usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kstats status: unexpected argument '%s'; see --help\n",
			argv[optind]);
		return KSTATS_EXIT_USAGE;
	}
	ret = kstats_status_read(v.status_file, &v.st, err, sizeof(err));
	if (ret) {
		kstats_add_fix(err, sizeof(err), ret);
		fprintf(stderr, "kstats status: %s\n", err);
		return kstats_exit_code(ret);
	}
	f = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");
	if (f && fscanf(f, "%d", &v.stats_enabled) != 1)
		v.stats_enabled = -1;
	if (f)
		fclose(f);
	if (v.window)
		ret = measure(&v);
	else
		v.progs = probe_progs(&v.st, &v.nprogs, NULL);
	if (!ret) {
		show(stdout, &v, json);
		ret = verdict(&v);
	}
	free(v.progs);
	kstats_status_free(&v.st);
	return kstats_exit_code(ret);
}
