// SPDX-License-Identifier: GPL-2.0
/*
 * kstats pull: reads every registered histogram map, turns per-key,
 * per-bucket deltas against the state into atoms, appends them to the
 * atoms directory and updates the state (DESIGN.md "Atoms and deltas").
 *
 * Crash safety: pull N first writes its new state as state.pending, then
 * atoms-N.pb, then renames state.pending over state.  Every step is a
 * durable rename, so at start a pending state whose atoms file exists is
 * promoted (pull N finished), and one without it is dropped (pull N never
 * emitted; its counts are still in the maps).  A crash anywhere loses and
 * duplicates nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <json-c/json.h>

#include "hist.h"
#include "kstats.h"
#include "kstats_fileio.h"
#include "kstats_pins.h"
#include "kstats_reader.h"
#include "registry.h"
#include "status.h"

#define DEFAULT_STATE_DIR "/var/lib/kernelstats/state"
#define STATE_FILE "state"
#define PENDING_FILE "state.pending"
#define READ_ATTEMPTS 3

struct pull_opts {
	const char *obj_dir, *pin_dir, *state_dir, *out_dir, *status_file;
	uint64_t max_age_s, max_files, max_bytes;
	unsigned int lock_timeout_s;
	bool verbose;
};

struct pull_run {
	const struct pull_opts *o;
	struct pull_state old, new;
	bool lost;			/* state was corrupt: moved aside */
	bool boot_changed;
	char boot_id[64];
	uint64_t pull_id;
	struct atom_slot **atoms;
	size_t natoms, cap;
	json_object *status;		/* loader status, NULL if none */
	bool status_read;
	unsigned int maps_read, maps_failed, maps_denied;
};

/* One registered map, read. */
struct metric_read {
	int64_t *rows;
	size_t nrows, ncols, nkey;
	unsigned int width;		/* bytes per counter */
	uint32_t map_id;
	uint64_t end_boot, end_real;
	struct kstats_names *names;	/* NULL: ids have no names */
};

/* ---- clock, boot id ---- */

static bool fixed_clock;
static uint64_t fixed_boot_ns, fixed_real_ns;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void now_ns(uint64_t *boot, uint64_t *real)
{
	*boot = fixed_clock ? fixed_boot_ns : clock_ns(CLOCK_BOOTTIME);
	*real = fixed_clock ? fixed_real_ns : clock_ns(CLOCK_REALTIME);
}

/* ---- the atoms directory ---- */

static int atoms_file_id(const char *name, uint64_t *id)
{
	int n = 0;

	return sscanf(name, "atoms-%" SCNu64 ".pb%n", id, &n) == 1 &&
	       !name[n] && name[6] >= '0' && name[6] <= '9' ? 0 : -EINVAL;
}

int kstats_atoms_filter(const struct dirent *d)
{
	uint64_t id;

	return !atoms_file_id(d->d_name, &id);
}

static int atoms_name(char *buf, size_t len, uint64_t pull_id)
{
	return snprintf(buf, len, "atoms-%010" PRIu64 ".pb", pull_id);
}

static uint64_t max_atoms_id(const char *out_dir)
{
	struct dirent **ents;
	uint64_t id, max = 0;
	int n, i;

	n = scandir(out_dir, &ents, kstats_atoms_filter, alphasort);
	for (i = 0; i < n; i++) {
		if (!atoms_file_id(ents[i]->d_name, &id) && id > max)
			max = id;
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	return max;
}

static bool atoms_exist(const char *out_dir, uint64_t pull_id)
{
	char name[64], path[4096];

	atoms_name(name, sizeof(name), pull_id);
	snprintf(path, sizeof(path), "%s/%s", out_dir, name);
	return !access(path, F_OK);
}

/* Temp files of an interrupted pull (".NAME.tmp"), safe to drop under the lock. */
static void remove_temps(const char *dir)
{
	struct dirent *d;
	char path[4096];
	DIR *dp = opendir(dir);
	size_t n;

	if (!dp)
		return;
	while ((d = readdir(dp))) {
		n = strlen(d->d_name);
		if (d->d_name[0] != '.' || n < 5 || strcmp(d->d_name + n - 4, ".tmp"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		unlink(path);
	}
	closedir(dp);
}

static int apply_retention(const struct pull_opts *o)
{
	struct dirent **ents;
	struct stat *st;
	uint64_t total = 0, removed_bytes = 0;
	time_t now = time(NULL);
	char path[4096];
	int n, i, removed = 0, ret = 0;

	n = scandir(o->out_dir, &ents, kstats_atoms_filter, alphasort);
	if (n < 0)
		return -errno;
	st = calloc(n ? n : 1, sizeof(*st));
	if (!st) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", o->out_dir, ents[i]->d_name);
		if (!stat(path, &st[i]))
			total += st[i].st_size;
	}
	/* Oldest first; the newest file is always kept. */
	for (i = 0; i < n - 1; i++) {
		bool too_many = o->max_files && (uint64_t)(n - removed) > o->max_files;
		bool too_big = o->max_bytes && total > o->max_bytes;
		bool too_old = o->max_age_s && now > st[i].st_mtime &&
			       (uint64_t)(now - st[i].st_mtime) > o->max_age_s;

		if (!too_many && !too_big && !too_old)
			break;
		snprintf(path, sizeof(path), "%s/%s", o->out_dir, ents[i]->d_name);
		if (unlink(path)) {
			ret = -errno;
			break;
		}
		total -= st[i].st_size;
		removed_bytes += st[i].st_size;
		removed++;
	}
	if (removed) {
		fprintf(stderr, "kstats pull: retention removed %d atom file(s), %" PRIu64
			" bytes (--max-age/--max-files/--max-bytes)\n", removed, removed_bytes);
		kstats_fsync_dir(o->out_dir);
	}
out:
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	free(st);
	return ret;
}

/* ---- lock ---- */

static int take_lock(const struct pull_opts *o, int *out)
{
	struct timespec pause = { 0, 100 * 1000000L };
	uint64_t deadline = clock_ns(CLOCK_MONOTONIC) + o->lock_timeout_s * 1000000000ull;
	char path[4096], pid[32] = "";
	int fd, n;

	snprintf(path, sizeof(path), "%s/lock", o->state_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0) {
		n = -errno;
		fprintf(stderr, "kstats pull: cannot open %s: %s\n", path, strerror(errno));
		return n;
	}
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			n = -errno;
			fprintf(stderr, "kstats pull: lock %s: %s\n", path, strerror(errno));
			close(fd);
			return n;
		}
		if (clock_ns(CLOCK_MONOTONIC) >= deadline) {
			n = pread(fd, pid, sizeof(pid) - 1, 0);
			pid[n > 0 ? n : 0] = 0;
			pid[strcspn(pid, "\n")] = 0;
			fprintf(stderr, "kstats pull: another pull (pid %s) holds %s; gave up "
				"after %us (raise --lock-timeout)\n", *pid ? pid : "?", path,
				o->lock_timeout_s);
			close(fd);
			return -EBUSY;
		}
		nanosleep(&pause, NULL);
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, n, 0) != n)
		fprintf(stderr, "kstats pull: warning: cannot record pid in %s\n", path);
	*out = fd;
	return 0;
}

/* ---- state: load, reconcile an interrupted pull ---- */

static int move_aside(const char *dir, const char *name, const char *why)
{
	char from[4096], to[4096];

	snprintf(from, sizeof(from), "%s/%s", dir, name);
	snprintf(to, sizeof(to), "%s/%s.corrupt-%" PRIu64, dir, name,
		 (uint64_t)(clock_ns(CLOCK_REALTIME) / 1000000000ull));
	if (rename(from, to)) {
		fprintf(stderr, "kstats pull: %s is corrupt (%s) and cannot be moved "
			"aside: %s; remove it\n", from, why, strerror(errno));
		return -errno;
	}
	fprintf(stderr, "kstats pull: %s is corrupt (%s); moved to %s\n", from, why, to);
	return kstats_fsync_dir(dir);
}

static int load_one(const char *dir, const char *name, struct pull_state *st)
{
	char path[4096], err[256] = "";
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ret = state_load(path, st, err, sizeof(err));
	if (ret == -EBADMSG) {
		ret = move_aside(dir, name, err);
		return ret ? ret : -EBADMSG;
	}
	if (ret && ret != -ENOENT)
		fprintf(stderr, "kstats pull: cannot read %s: %s\n", path, err);
	return ret;
}

static int reconcile(struct pull_run *r)
{
	const char *dir = r->o->state_dir;
	struct pull_state pend;
	int ret = load_one(dir, PENDING_FILE, &pend);

	if (ret == -ENOENT || ret == -EBADMSG)
		return 0;
	if (ret)
		return ret;
	if (pend.pull_id > r->old.pull_id && atoms_exist(r->o->out_dir, pend.pull_id)) {
		ret = durable_rename(dir, PENDING_FILE, STATE_FILE);
		if (!ret) {
			if (r->o->verbose)
				fprintf(stderr, "kstats pull: completed interrupted pull %" PRIu64
					"\n", pend.pull_id);
			pull_fault("promoted");
			state_free(&r->old);
			r->old = pend;
			r->lost = false;
			return 0;
		}
	} else {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, PENDING_FILE);
		ret = unlink(path) ? -errno : kstats_fsync_dir(dir);
		if (!ret)
			pull_fault("discarded");
	}
	state_free(&pend);
	return ret;
}

static int load_state(struct pull_run *r)
{
	int ret;

	remove_temps(r->o->state_dir);
	remove_temps(r->o->out_dir);
	ret = load_one(r->o->state_dir, STATE_FILE, &r->old);
	if (ret == -EBADMSG) {
		r->lost = true;
		fprintf(stderr, "kstats pull: re-baselining every map from its creation "
			"(atoms flagged reset)\n");
	} else if (ret && ret != -ENOENT) {
		return ret;
	}
	ret = reconcile(r);
	if (ret)
		return ret;
	r->boot_changed = *r->old.boot_id && strcmp(r->old.boot_id, r->boot_id);
	r->pull_id = r->old.pull_id;
	if (max_atoms_id(r->o->out_dir) > r->pull_id)
		r->pull_id = max_atoms_id(r->o->out_dir);
	r->pull_id++;
	return 0;
}

/* ---- map creation time: loader status, else program load time ---- */

/* Only the maps' creation times are used: any release's status file will do. */
static json_object *loader_status(struct pull_run *r)
{
	if (!r->status_read) {
		r->status_read = true;
		r->status = json_object_from_file(r->o->status_file);
		if (!r->status && access(r->o->status_file, F_OK) == 0)
			fprintf(stderr, "kstats pull: warning: %s does not parse: %s; using "
				"program load times\n", r->o->status_file,
				json_util_get_last_err());
	}
	return r->status;
}

static bool status_created(struct pull_run *r, uint32_t map_id, uint64_t *boot,
			   uint64_t *real)
{
	json_object *objs = kstats_jarr(loader_status(r), "objects"), *maps, *m;
	size_t i, j;

	for (i = 0; objs && i < json_object_array_length(objs); i++) {
		maps = kstats_jarr(json_object_array_get_idx(objs, i), "maps");
		for (j = 0; maps && j < json_object_array_length(maps); j++) {
			m = json_object_array_get_idx(maps, j);
			if (kstats_jint(m, "map_id") != map_id ||
			    kstats_jint(m, "created_boottime_ns") <= 0)
				continue;
			*boot = kstats_jint(m, "created_boottime_ns");
			*real = kstats_jint(m, "created_realtime_ns") > 0 ?
				kstats_jint(m, "created_realtime_ns") : 0;
			return true;
		}
	}
	return false;
}

/* Earliest load time (boot-time ns) of a pinned program of obj using map_id. */
static bool prog_created(const char *pin_dir, const char *obj, uint32_t map_id,
			 uint64_t *boot)
{
	char pattern[4096];
	glob_t g;
	size_t i;
	bool found = false;

	if (kstats_pin_path(pattern, sizeof(pattern) - 1, pin_dir, "prog", obj, "*"))
		return false;
	if (glob(pattern, 0, NULL, &g))
		return false;
	for (i = 0; i < g.gl_pathc; i++) {
		LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = BPF_F_RDONLY);
		__u32 ids[64], len, k;
		struct bpf_prog_info info;
		int fd = bpf_obj_get_opts(g.gl_pathv[i], &opts);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		info.nr_map_ids = 64;
		info.map_ids = (__u64)(unsigned long)ids;
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			for (k = 0; k < info.nr_map_ids && k < 64; k++)
				if (ids[k] == map_id && (!found || info.load_time < *boot)) {
					*boot = info.load_time;
					found = true;
				}
		}
		close(fd);
	}
	globfree(&g);
	return found;
}

static void creation_time(struct pull_run *r, const struct pull_metric *pm,
			  const struct metric_read *mr, uint64_t *boot, uint64_t *real)
{
	const char *how = "the loader status";

	*real = 0;
	if (!status_created(r, mr->map_id, boot, real)) {
		how = "its programs' load time";
		if (!prog_created(r->o->pin_dir, pm->obj, mr->map_id, boot)) {
			how = "boot (creation time unknown)";
			*boot = 0;
		}
	}
	if (*boot > mr->end_boot)
		*boot = mr->end_boot;
	if (!*real)
		*real = mr->end_real - (mr->end_boot - *boot);
	if (r->o->verbose)
		fprintf(stderr, "kstats pull: %s/%s: map id %u, window starts at %s\n",
			pm->obj, pm->map, mr->map_id, how);
}

/* ---- reading a registered map ---- */

/*
 * The reader already falls back to the map's own BTF when the object is
 * missing or its types differ; the map's own BTF is also tried when the
 * object fails otherwise (it no longer defines the map, its BTF is bad).
 * The object's error is the one reported.
 */
static int read_rows(const struct pull_opts *o, const char *obj, const char *map,
		     const char *pin, struct kstats_map **m, int64_t **rows,
		     size_t *nrows, char *err, size_t errlen)
{
	char obj_path[4096], own_err[KSTATS_ERR_LEN];
	struct kstats_map_opts mo = { .obj_path = obj_path, .map_name = map,
				      .pin_path = pin };
	int ret;

	snprintf(obj_path, sizeof(obj_path), "%s/%s.bpf", o->obj_dir, obj);
	ret = kstats_map_open(&mo, m, err, errlen);
	if (ret && ret != -ENOENT) {
		mo.obj_path = NULL;
		if (!kstats_map_open(&mo, m, own_err, sizeof(own_err)))
			ret = 0;
	}
	return ret ?: kstats_read_rows(*m, rows, nrows, err, errlen);
}

static int check_layout(struct kstats_map *m, struct metric_read *mr,
			char *err, size_t errlen)
{
	size_t i;

	mr->ncols = kstats_map_ncols(m);
	mr->nkey = kstats_map_nkey_cols(m);
	if (mr->ncols - mr->nkey != PULL_NR_BUCKETS || !mr->nkey ||
	    mr->nkey > PULL_MAX_KEY_COLS) {
		snprintf(err, errlen, "not a %d-bucket histogram with 1..%d key columns",
			 PULL_NR_BUCKETS, PULL_MAX_KEY_COLS);
		return -EINVAL;
	}
	mr->width = kstats_map_column(m, mr->nkey)->size;
	for (i = mr->nkey; i < mr->ncols; i++)
		if (kstats_map_column(m, i)->size != mr->width ||
		    kstats_map_column(m, i)->is_signed) {
			snprintf(err, errlen, "bucket counters are not one unsigned width");
			return -EINVAL;
		}
	return 0;
}

/* Map read with its id the same before and after (no reload in between). */
static int read_metric(const struct pull_opts *o, const struct pull_metric *pm,
		       const char *pin, struct metric_read *mr, char *err, size_t errlen)
{
	struct kstats_map *m = NULL;
	uint32_t id_after;
	int ret = -EAGAIN, attempt;

	for (attempt = 0; attempt < READ_ATTEMPTS && ret == -EAGAIN; attempt++) {
		kstats_map_close(m);
		m = NULL;
		free(mr->rows);
		mr->rows = NULL;
		ret = read_rows(o, pm->obj, pm->map, pin, &m, &mr->rows, &mr->nrows,
				err, errlen);
		now_ns(&mr->end_boot, &mr->end_real);
		if (m)
			mr->map_id = kstats_map_id(m);
		if (!ret && (kstats_pin_map_id(pin, &id_after) || id_after != mr->map_id))
			ret = -EAGAIN;
	}
	if (ret == -EAGAIN)
		snprintf(err, errlen, "map was replaced while being read, %d times",
			 READ_ATTEMPTS);
	if (!ret)
		ret = check_layout(m, mr, err, errlen);
	kstats_map_close(m);
	return ret;
}

/* The id -> name dictionary; a missing or unreadable one only loses names. */
static void read_names(const struct pull_run *r, const struct pull_metric *pm,
		       struct metric_read *mr)
{
	char obj_path[4096], err[KSTATS_ERR_LEN] = "";

	if (!pm->names_map)
		return;
	snprintf(obj_path, sizeof(obj_path), "%s/%s.bpf", r->o->obj_dir, pm->obj);
	if (kstats_names_read(obj_path, pm->obj, pm->names_map, r->o->pin_dir,
			      &mr->names, err, sizeof(err)) && r->o->verbose)
		fprintf(stderr, "kstats pull: %s/%s: names unavailable: %s\n",
			pm->obj, pm->names_map, err);
}

/* ---- deltas into atoms ---- */

struct window {
	uint64_t start_boot, start_real, end_boot, end_real;
	bool reset;
};

static int emit_atom(struct pull_run *r, const struct pull_metric *pm,
		     const struct window *w, const int64_t *key, const char *name,
		     const int32_t *buckets, unsigned int anomalies)
{
	struct atom_slot *s, **atoms;
	Kernelstats__Atom *a;

	if (r->natoms == r->cap) {
		atoms = realloc(r->atoms, (r->cap ? r->cap * 2 : 16) * sizeof(*atoms));
		if (!atoms)
			return -ENOMEM;
		r->atoms = atoms;
		r->cap = r->cap ? r->cap * 2 : 16;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	a = &s->atom;
	kernelstats__atom__init(a);
	memcpy(s->buckets, buckets, sizeof(s->buckets));
	pm->build(s, key, name);
	a->has_atom_id = a->has_pull_id = a->has_reset = a->has_anomalies = 1;
	a->has_window_start_realtime_ns = a->has_window_end_realtime_ns = 1;
	a->has_window_start_boottime_ns = a->has_window_end_boottime_ns = 1;
	a->atom_id = pm->atom_id;
	a->pull_id = r->pull_id;
	a->boot_id = r->boot_id;
	a->window_start_realtime_ns = w->start_real;
	a->window_end_realtime_ns = w->end_real;
	a->window_start_boottime_ns = w->start_boot;
	a->window_end_boottime_ns = w->end_boot;
	a->reset = w->reset;
	a->anomalies = anomalies;
	r->atoms[r->natoms++] = s;
	return 0;
}

/* One row: its atoms and its new baseline in k. */
static int process_row(struct pull_run *r, const struct pull_metric *pm,
		       const struct metric_read *mr, const struct window *w,
		       const struct pull_map_state *old, const int64_t *row,
		       struct pull_key *k)
{
	const struct pull_key *prev;
	const char *name;
	uint64_t cur[PULL_NR_BUCKETS];
	int32_t buckets[PULL_NR_BUCKETS];
	struct delta_key dk;
	size_t i;
	int ret;

	memset(k, 0, sizeof(*k));
	memcpy(k->key, row, mr->nkey * sizeof(*row));
	for (i = 0; i < PULL_NR_BUCKETS; i++)
		cur[i] = (uint64_t)row[mr->nkey + i];
	name = kstats_names_find(mr->names, k->key[0]) ?: "";
	prev = old ? state_find_key(old, k->key) : NULL;
	delta_begin(&dk, cur, prev ? prev->base : NULL, mr->width);
	while (delta_next_atom(&dk, buckets)) {
		ret = emit_atom(r, pm, w, k->key, name, buckets,
				dk.chunks == 1 ? dk.anomalies : 0);
		if (ret)
			return ret;
	}
	delta_new_base(&dk, cur, mr->width, k->base);
	return 0;
}

static int process_metric(struct pull_run *r, const struct pull_metric *pm,
			  const struct metric_read *mr)
{
	const struct pull_map_state *old = state_find_map(&r->old, pm->obj, pm->map);
	struct pull_map_state ms = { .map_id = mr->map_id, .nkey_cols = mr->nkey,
				     .start_boot_ns = mr->end_boot,
				     .start_real_ns = mr->end_real };
	struct window w = { .end_boot = mr->end_boot, .end_real = mr->end_real };
	bool same = old && !r->boot_changed && old->map_id == mr->map_id &&
		    old->nkey_cols == mr->nkey;
	size_t i;
	int ret = 0;

	if (same) {
		w.start_boot = old->start_boot_ns;
		w.start_real = old->start_real_ns;
	} else {
		creation_time(r, pm, mr, &w.start_boot, &w.start_real);
		w.reset = old || r->boot_changed || r->lost;
		old = NULL;
	}
	snprintf(ms.obj, sizeof(ms.obj), "%s", pm->obj);
	snprintf(ms.map, sizeof(ms.map), "%s", pm->map);
	ms.keys = calloc(mr->nrows ? mr->nrows : 1, sizeof(*ms.keys));
	if (!ms.keys)
		return -ENOMEM;
	for (i = 0; i < mr->nrows && !ret; i++) {
		ret = process_row(r, pm, mr, &w, old, mr->rows + i * mr->ncols,
				  &ms.keys[ms.nkeys]);
		/* An all-zero baseline is the same as none: keep the state small. */
		for (size_t b = 0; !ret && b < PULL_NR_BUCKETS; b++)
			if (ms.keys[ms.nkeys].base[b]) {
				ms.nkeys++;
				break;
			}
	}
	state_sort_keys(&ms);
	if (!ret)
		ret = state_add_map(&r->new, &ms);
	free(ms.keys);
	return ret;
}

/* A map that failed to read keeps its old baseline for the next pull. */
static int carry_over(struct pull_run *r, const struct pull_metric *pm)
{
	const struct pull_map_state *old = state_find_map(&r->old, pm->obj, pm->map);
	struct pull_map_state ms;
	int ret;

	if (!old)
		return 0;
	ms = *old;
	/* Map ids restart at boot: an old one must not match a map of this boot. */
	if (r->boot_changed)
		ms.map_id = 0;
	ms.keys = malloc((old->nkeys ? old->nkeys : 1) * sizeof(*ms.keys));
	if (!ms.keys)
		return -ENOMEM;
	memcpy(ms.keys, old->keys, old->nkeys * sizeof(*ms.keys));
	ret = state_add_map(&r->new, &ms);
	free(ms.keys);
	return ret;
}

/* A map that cannot be read keeps its baseline; the pull exits non-zero. */
static int map_failed(struct pull_run *r, const struct pull_metric *pm, int err,
		      char *msg, size_t len)
{
	if (!*msg)
		snprintf(msg, len, "%s", strerror(-err));
	kstats_add_fix(msg, len, err);
	fprintf(stderr, "kstats pull: %s/%s: %s\n", pm->obj, pm->map, msg);
	r->maps_failed++;
	r->maps_denied += err == -EPERM || err == -EACCES;
	return carry_over(r, pm);
}

static int pull_metric(struct pull_run *r, const struct pull_metric *pm)
{
	struct metric_read mr = {};
	char pin[4096], err[KSTATS_ERR_LEN] = "";
	int ret;

	ret = kstats_pin_path(pin, sizeof(pin), r->o->pin_dir, "map", pm->obj, pm->map);
	if (ret)
		return ret;
	/*
	 * A pin can be gone while its map lives on (a loader swap in
	 * progress): keep the baseline, or that map's next pull would emit
	 * again what was already emitted.
	 */
	if (access(pin, F_OK)) {
		if (errno != ENOENT)
			return map_failed(r, pm, -errno, err, sizeof(err));
		if (r->o->verbose)
			fprintf(stderr, "kstats pull: %s/%s: not pinned (object not loaded), "
				"skipped\n", pm->obj, pm->map);
		return carry_over(r, pm);
	}
	ret = read_metric(r->o, pm, pin, &mr, err, sizeof(err));
	if (ret) {
		ret = map_failed(r, pm, ret, err, sizeof(err));
		goto out;
	}
	r->maps_read++;
	read_names(r, pm, &mr);
	ret = process_metric(r, pm, &mr);
out:
	free(mr.rows);
	kstats_names_free(mr.names);
	return ret;
}

/* ---- commit ---- */

static int write_atoms(struct pull_run *r, char *name, size_t len)
{
	Kernelstats__AtomList list = KERNELSTATS__ATOM_LIST__INIT;
	Kernelstats__Atom **ptrs;
	uint8_t *buf = NULL;
	size_t i, size;
	int ret = -ENOMEM;

	ptrs = calloc(r->natoms, sizeof(*ptrs));
	if (!ptrs)
		return ret;
	for (i = 0; i < r->natoms; i++)
		ptrs[i] = &r->atoms[i]->atom;
	list.n_atom = r->natoms;
	list.atom = ptrs;
	size = kernelstats__atom_list__get_packed_size(&list);
	buf = malloc(size);
	if (buf) {
		kernelstats__atom_list__pack(&list, buf);
		atoms_name(name, len, r->pull_id);
		ret = durable_write(r->o->out_dir, name, buf, size, "atoms");
	}
	free(buf);
	free(ptrs);
	return ret;
}

static int commit(struct pull_run *r, char *atoms_file, size_t len)
{
	char *buf = NULL;
	size_t size;
	int ret;

	r->new.pull_id = r->pull_id;
	snprintf(r->new.boot_id, sizeof(r->new.boot_id), "%s", r->boot_id);
	ret = state_encode(&r->new, &buf, &size);
	if (ret)
		return ret;
	if (!r->natoms) {
		ret = durable_write(r->o->state_dir, STATE_FILE, buf, size, "state");
		goto out;
	}
	ret = durable_write(r->o->state_dir, PENDING_FILE, buf, size, "pending");
	if (ret)
		goto out;
	pull_fault("pending");
	ret = write_atoms(r, atoms_file, len);
	if (ret)
		goto out;
	pull_fault("atoms");
	ret = durable_rename(r->o->state_dir, PENDING_FILE, STATE_FILE);
out:
	free(buf);
	return ret;
}

/* ---- the command ---- */

static void run_free(struct pull_run *r)
{
	size_t i;

	for (i = 0; i < r->natoms; i++)
		free(r->atoms[i]);
	free(r->atoms);
	state_free(&r->old);
	state_free(&r->new);
	json_object_put(r->status);
}

static int pull(const struct pull_opts *o)
{
	struct pull_run r = { .o = o };
	char atoms_file[64] = "";
	size_t i;
	int ret, lock_fd = -1;

	ret = kstats_boot_id(r.boot_id, sizeof(r.boot_id));
	if (ret) {
		fprintf(stderr, "kstats pull: cannot read the boot id: %s\n", strerror(-ret));
		return KSTATS_EXIT_ERROR;
	}
	ret = take_lock(o, &lock_fd);
	if (ret)
		return ret == -EBUSY ? KSTATS_EXIT_BUSY : KSTATS_EXIT_ERROR;
	pull_fault("locked");
	ret = load_state(&r);
	if (ret) {
		ret = KSTATS_EXIT_ERROR;
		goto out;
	}
	for (i = 0; !ret && i < pull_nmetrics; i++)
		ret = pull_metric(&r, &pull_metrics[i]);
	if (ret) {
		fprintf(stderr, "kstats pull: %s\n", strerror(-ret));
		ret = KSTATS_EXIT_ERROR;
		goto out;
	}
	pull_fault("read");
	if (!r.maps_read && !r.maps_failed) {
		fprintf(stderr, "kstats pull: no registered map is pinned under %s; run "
			"kstats-loader\n", o->pin_dir);
		ret = KSTATS_EXIT_NOT_LOADED;
		goto out;
	}
	ret = commit(&r, atoms_file, sizeof(atoms_file));
	if (ret) {
		fprintf(stderr, "kstats pull: cannot write %s: %s\n",
			r.natoms ? "the atoms or the state" : "the state", strerror(-ret));
		ret = KSTATS_EXIT_ERROR;
		goto out;
	}
	pull_fault("committed");
	if (r.natoms)
		printf("kstats pull: pull %" PRIu64 ": %zu atoms from %u maps -> %s/%s\n",
		       r.pull_id, r.natoms, r.maps_read, o->out_dir, atoms_file);
	else
		printf("kstats pull: pull %" PRIu64 ": no new counts in %u maps\n",
		       r.pull_id, r.maps_read);
	apply_retention(o);
	if (!r.maps_failed)
		ret = KSTATS_EXIT_OK;
	else
		ret = r.maps_denied == r.maps_failed ? KSTATS_EXIT_PERM : KSTATS_EXIT_ERROR;
out:
	run_free(&r);
	close(lock_fd);
	return ret;
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"Usage: kstats pull [OPTIONS]\n"
		"Turn the counts every registered histogram gained since the last pull\n"
		"into atoms (proto/kernelstats_atoms.proto), appended to the atoms\n"
		"directory as atoms-<pull id>.pb, and update the state.  Crash-safe;\n"
		"one pull at a time.\n\n"
		"  --obj-dir DIR       objects (BTF) (default: " KSTATS_DEFAULT_OBJ_DIR ")\n"
		"  --pin-dir DIR       pinned maps (default: " KSTATS_DEFAULT_PIN_DIR ")\n"
		"  --state-dir DIR     state and lock (default: " DEFAULT_STATE_DIR ")\n"
		"  --out-dir DIR       atoms (default: " KSTATS_DEFAULT_ATOMS_DIR ")\n"
		"  --status-file FILE  loader status, for map creation times\n"
		"                      (default: " KSTATS_DEFAULT_STATUS_FILE ")\n"
		"  --max-age DUR       drop atom files older than DUR (30s, 12h, 7d; 0: "
		"never) (default 7d)\n"
		"  --max-files N       keep at most N atom files (0: no limit) (default 1000)\n"
		"  --max-bytes SIZE    keep at most SIZE bytes of atoms (50M, 1G; 0: no limit)\n"
		"                      (default 50M); the newest file is always kept\n"
		"  --lock-timeout SEC  wait this long for another pull (default 60)\n"
		"  -v, --verbose       notes on skipped maps and window starts\n"
		"  -h, --help          this text\n\n"
		"Exit status: 0 ok, 1 runtime error (a map unreadable, I/O), 2 bad usage,\n"
		"3 nothing pinned (run kstats-loader), 4 another pull holds the lock,\n"
		"5 every unreadable map was denied (needs CAP_BPF and group kstats).\n\n"
		"Testing: --fault POINT (or KSTATS_FAULT) SIGKILLs the pull at POINT\n"
		"(--list-faults); KSTATS_BOOT_ID overrides the boot id and\n"
		"KSTATS_CLOCK=BOOT_NS:REAL_NS fixes the clock.  Points:\n");
	for (i = 0; i < pull_nfault_points; i++)
		fprintf(f, "  %-16s %s\n", pull_fault_points[i].name,
			pull_fault_points[i].where);
}

static int parse_scaled(const char *s, const char *units, const uint64_t *scale,
			uint64_t *out)
{
	char *end;
	const char *u;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	if (*end) {
		u = strchr(units, *end);
		if (!u || end[1])
			return -EINVAL;
		if (v > UINT64_MAX / scale[u - units])
			return -ERANGE;
		v *= scale[u - units];
	}
	*out = v;
	return 0;
}

static int parse_duration(const char *s, uint64_t *out)
{
	static const uint64_t scale[] = { 1, 60, 3600, 86400 };

	return parse_scaled(s, "smhd", scale, out);
}

static int parse_size(const char *s, uint64_t *out)
{
	static const uint64_t scale[] = { 1024, 1ull << 20, 1ull << 30 };

	return parse_scaled(s, "KMG", scale, out);
}

static int parse_clock(const char *s)
{
	if (sscanf(s, "%" SCNu64 ":%" SCNu64, &fixed_boot_ns, &fixed_real_ns) != 2)
		return -EINVAL;
	fixed_clock = true;
	return 0;
}

static int bad_arg(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "kstats pull: %s '%s': expected %s\n", opt, val, want);
	return KSTATS_EXIT_USAGE;
}

int cmd_pull(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "obj-dir", required_argument, NULL, 'o' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "out-dir", required_argument, NULL, 'O' },
		{ "status-file", required_argument, NULL, 'S' },
		{ "max-age", required_argument, NULL, 'a' },
		{ "max-files", required_argument, NULL, 'n' },
		{ "max-bytes", required_argument, NULL, 'b' },
		{ "lock-timeout", required_argument, NULL, 't' },
		{ "fault", required_argument, NULL, 'f' },
		{ "list-faults", no_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct pull_opts o = {
		.obj_dir = KSTATS_DEFAULT_OBJ_DIR, .pin_dir = KSTATS_DEFAULT_PIN_DIR,
		.state_dir = DEFAULT_STATE_DIR, .out_dir = KSTATS_DEFAULT_ATOMS_DIR,
		.status_file = KSTATS_DEFAULT_STATUS_FILE, .max_age_s = 7 * 86400,
		.max_files = 1000, .max_bytes = 50ull << 20, .lock_timeout_s = 60,
	};
	const char *fault = getenv("KSTATS_FAULT"), *clk = getenv("KSTATS_CLOCK");
	uint64_t v;
	size_t i;
	int c, ret;

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': o.obj_dir = optarg; break;
		case 'p': o.pin_dir = optarg; break;
		case 's': o.state_dir = optarg; break;
		case 'O': o.out_dir = optarg; break;
		case 'S': o.status_file = optarg; break;
		case 'a':
			if (parse_duration(optarg, &o.max_age_s))
				return bad_arg("--max-age", optarg, "a duration like 7d");
			break;
		case 'n':
			if (parse_scaled(optarg, "", NULL, &o.max_files))
				return bad_arg("--max-files", optarg, "a file count");
			break;
		case 'b':
			if (parse_size(optarg, &o.max_bytes))
				return bad_arg("--max-bytes", optarg, "a size like 50M");
			break;
		case 't':
			if (parse_duration(optarg, &v) || v > 86400)
				return bad_arg("--lock-timeout", optarg, "seconds, at most 1d");
			o.lock_timeout_s = (unsigned int)v;
			break;
		case 'f': fault = optarg; break;
		case 'L':
			for (i = 0; i < pull_nfault_points; i++)
				printf("%s %s\n", pull_fault_points[i].name,
				       pull_fault_points[i].needs);
			return KSTATS_EXIT_OK;
		case 'v': o.verbose = true; break;
		case 'h': usage(stdout); return KSTATS_EXIT_OK;
		default: usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return bad_arg("argument", argv[optind], "no arguments; see --help");
	if (fault && *fault && pull_fault_set(fault))
		return bad_arg("--fault", fault, "a point from --list-faults");
	if (clk && *clk && parse_clock(clk))
		return bad_arg("KSTATS_CLOCK", clk, "BOOT_NS:REAL_NS");
	ret = kstats_mkdir_p(o.state_dir, 0750) ?: kstats_mkdir_p(o.out_dir, 0750);
	if (ret) {
		fprintf(stderr, "kstats pull: cannot create %s or %s: %s; pass --state-dir "
			"and --out-dir\n", o.state_dir, o.out_dir, strerror(-ret));
		return KSTATS_EXIT_ERROR;
	}
	return pull(&o);
}
