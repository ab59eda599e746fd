// SPDX-License-Identifier: GPL-2.0
/*
 * kstats pull against the running kernel: the real loader pins the real
 * objects into a private pin dir; events come from real compaction (the
 * attached programs) and from BPF_PROG_TEST_RUN of the objects' raw_tp
 * programs, loaded with libbpf onto the same pinned maps.  Atoms are
 * decoded with the generated protobuf-c code and compared, per key and
 * bucket, with what the maps hold.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kstats_pins.h"
#include "kstats_reader.h"
#include "kmain.h"
#include "ktest.h"
#include "pull.h"
#include "hist.h"
#include "hooks.h"

#define MAX_RUNNERS 8
#define MAX_PROGS 32
#define MAX_TALLIES 1024
#define KILLED (128 + SIGKILL)
#define MAX_METRICS 64

/* A histogram of the objects that has an atom: found, never listed. */
struct metric {
	char obj[KSTATS_OBJ_LEN], map[KSTATS_LABEL_LEN];
	int32_t atom_id;
};

static struct metric metrics[MAX_METRICS];
static size_t nmetrics;
static int32_t compaction_atom_id;

static void load_metrics(const char *obj_dir)
{
	const ProtobufCFieldDescriptor *f;
	struct kstats_snapshot cat;
	char err[KSTATS_ERR_LEN];
	size_t i;

	assert_int_equal(kstats_snapshot_init(&cat, obj_dir, err, sizeof(err)), 0);
	for (nmetrics = 0, i = 0; i < cat.nhists && nmetrics < MAX_METRICS; i++) {
		f = atom_field_of(&kernelstats__atom__descriptor, cat.hists[i].metric);
		if (!f)
			continue;
		snprintf(metrics[nmetrics].obj, KSTATS_OBJ_LEN, "%s", cat.hists[i].obj);
		snprintf(metrics[nmetrics].map, KSTATS_LABEL_LEN, "%s", cat.hists[i].map);
		metrics[nmetrics++].atom_id = (int32_t)f->id;
	}
	kstats_snapshot_free(&cat);
	f = atom_field_of(&kernelstats__atom__descriptor, "CompactionDuration");
	assert_non_null(f);
	compaction_atom_id = (int32_t)f->id;
}

struct tally {
	int32_t atom_id;
	int64_t key;
	uint64_t sum[PULL_NR_BUCKETS];
};

static struct {
	struct ktest t;
	char tmp[128], state_dir[160], out_dir[160], status[160], log[160];
	struct bpf_object *runners[MAX_RUNNERS];
	size_t nrunners;
	int prog_fds[MAX_PROGS];
	char prog_names[MAX_PROGS][64];
	size_t nprogs;
	uint64_t loaded_from, loaded_to;	/* boot-time ns around the loader */
} e;

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ---- events: raw_tp copies of the objects' programs on the pinned maps ---- */

static void close_runners(void)
{
	while (e.nrunners)
		bpf_object__close(e.runners[--e.nrunners]);
	e.nprogs = 0;
}

static int open_runner(const struct metric *pm)
{
	char path[512], pin[512];
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_map *map;

	if (snprintf(path, sizeof(path), "%s/%s.bpf", e.t.obj_dir, pm->obj) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	obj = bpf_object__open_file(path, NULL);
	if (!obj)
		return -errno;
	bpf_object__for_each_map(map, obj) {
		kstats_pin_path(pin, sizeof(pin), e.t.pin_dir, "map", pm->obj,
				bpf_map__name(map));
		bpf_map__set_pin_path(map, pin);
	}
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, !strncmp(bpf_program__section_name(prog),
							 "raw_tp/", 7));
	if (bpf_object__load(obj)) {
		bpf_object__close(obj);
		return -EINVAL;
	}
	e.runners[e.nrunners++] = obj;
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog) || e.nprogs == MAX_PROGS)
			continue;
		e.prog_fds[e.nprogs] = bpf_program__fd(prog);
		snprintf(e.prog_names[e.nprogs++], 64, "%s", bpf_program__section_name(prog));
	}
	return 0;
}

/* Every loaded object whose histogram is pinned, with its programs sorted. */
static void open_runners(void)
{
	char pin[512];
	size_t i, j;

	close_runners();
	for (i = 0; i < nmetrics && e.nrunners < MAX_RUNNERS; i++) {
		kstats_pin_path(pin, sizeof(pin), e.t.pin_dir, "map", metrics[i].obj,
				metrics[i].map);
		if (!access(pin, F_OK))
			assert_int_equal(open_runner(&metrics[i]), 0);
	}
	assert_true(e.nprogs > 0);
	for (i = 1; i < e.nprogs; i++)	/* insertion sort: begin before end */
		for (j = i; j > 0 && strcmp(e.prog_names[j - 1], e.prog_names[j]) > 0; j--) {
			char name[64];
			int fd = e.prog_fds[j];

			memcpy(name, e.prog_names[j], 64);
			memcpy(e.prog_names[j], e.prog_names[j - 1], 64);
			memcpy(e.prog_names[j - 1], name, 64);
			e.prog_fds[j] = e.prog_fds[j - 1];
			e.prog_fds[j - 1] = fd;
		}
}

/* passes x (every raw_tp program once, sorted): one compaction per pass. */
static void fire(int passes)
{
	__u64 args[12] = { 0 };
	size_t i;

	while (passes--)
		for (i = 0; i < e.nprogs; i++) {
			LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = args,
				    .ctx_size_in = sizeof(args));

			assert_int_equal(bpf_prog_test_run_opts(e.prog_fds[i], &run), 0);
		}
}

/* Unpins the links: only test runs change the maps from now on. */
static void detach(void)
{
	char pattern[512];
	glob_t g;
	size_t i;

	snprintf(pattern, sizeof(pattern), "%s/link_*", e.t.pin_dir);
	assert_int_equal(glob(pattern, 0, NULL, &g), 0);	/* the loader pins links */
	for (i = 0; i < g.gl_pathc; i++)
		assert_int_equal(unlink(g.gl_pathv[i]), 0);
	globfree(&g);
}

static void load(void)
{
	e.loaded_from = boot_ns();
	assert_int_equal(ktest_run_loader(&e.t, NULL), 0);
	e.loaded_to = boot_ns();
	open_runners();
}

/* ---- running kstats pull ---- */

/* KSTATS_CLOCK for the next pulls; NULL: the real clocks. */
static const char *pull_clock;

/*
 * The shipped kstats, or the test build with the hooks (mk/pull_hooks.mk)
 * when a pull needs a crash point, a boot id or a clock of its own.
 */
static int spawn_pull(const char *fault, const char *boot_id, const char *const *extra)
{
	bool hooked = fault || boot_id || pull_clock;
	char kstats[300];
	const char *argv[40] = { kstats, "pull", "--obj-dir", e.t.obj_dir,
				 "--pin-dir", e.t.pin_dir, "--state-dir", e.state_dir,
				 "--out-dir", e.out_dir, "--status-file", e.status,
				 "--max-age", "0", "--max-files", "0", "--max-bytes", "0" };
	int argc = 18;
	pid_t pid;

	snprintf(kstats, sizeof(kstats), "%s/%s", e.t.build, hooked ? "hooks/kstats" : "kstats");
	while (extra && *extra && argc < 39)
		argv[argc++] = *extra++;
	pid = fork();
	if (pid)
		return pid;
	int null = open("/dev/null", O_WRONLY);
	int log = open(e.log, O_WRONLY | O_CREAT | O_APPEND, 0600);

	dup2(null, STDOUT_FILENO);
	dup2(log, STDERR_FILENO);
	unsetenv("KSTATS_FAULT");
	unsetenv("KSTATS_BOOT_ID");
	unsetenv("KSTATS_CLOCK");
	if (fault)
		setenv("KSTATS_FAULT", fault, 1);
	if (boot_id)
		setenv("KSTATS_BOOT_ID", boot_id, 1);
	if (pull_clock)
		setenv("KSTATS_CLOCK", pull_clock, 1);
	execv(kstats, (char *const *)argv);
	_exit(127);
}

static int run_pull(const char *fault, const char *boot_id, const char *const *extra)
{
	return ktest_loader_status(spawn_pull(fault, boot_id, extra));
}

static int pull_ok(void)
{
	return run_pull(NULL, NULL, NULL);
}

static bool log_has(const char *needle)
{
	char buf[16384];

	return ktest_read_file(e.log, buf, sizeof(buf)) >= 0 && strstr(buf, needle);
}

static void clear_log(void)
{
	unlink(e.log);
}

/* ---- atoms ---- */

static Kernelstats__AtomList *load_atoms(const char *path)
{
	static uint8_t buf[1 << 20];
	Kernelstats__AtomList *list;
	FILE *f = fopen(path, "rb");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_true(n < sizeof(buf));
	list = kernelstats__atom_list__unpack(NULL, n, buf);
	assert_non_null(list);
	return list;
}

static const ProtobufCMessage *payload_of(const Kernelstats__Atom *a)
{
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field(&kernelstats__atom__descriptor,
							a->payload_case);

	assert_non_null(f);
	return *(ProtobufCMessage *const *)((const char *)a + f->offset);
}

/* The payload's key (its first numeric or enum field; 0 if none) and buckets. */
static int64_t atom_key(const ProtobufCMessage *p, const int32_t **buckets)
{
	const ProtobufCFieldDescriptor *f;
	int64_t key = 0;
	bool keyed = false;
	unsigned int i;

	for (i = 0; i < p->descriptor->n_fields; i++) {
		const char *base = (const char *)p;

		f = &p->descriptor->fields[i];
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			assert_int_equal(*(const size_t *)(base + f->quantifier_offset),
					 PULL_NR_BUCKETS);
			*buckets = *(int32_t *const *)(base + f->offset);
		} else if (!keyed && f->type != PROTOBUF_C_TYPE_STRING) {
			assert_true(*(const protobuf_c_boolean *)(base + f->quantifier_offset));
			key = f->type == PROTOBUF_C_TYPE_UINT32 ?
			      (int64_t)*(const uint32_t *)(base + f->offset) :
			      (int64_t)*(const int32_t *)(base + f->offset);
			keyed = true;
		}
	}
	return key;
}

static struct tally *tally_of(struct tally *t, size_t *n, int32_t id, int64_t key)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (t[i].atom_id == id && t[i].key == key)
			return &t[i];
	assert_true(*n < MAX_TALLIES);
	memset(&t[*n], 0, sizeof(t[*n]));
	t[*n].atom_id = id;
	t[*n].key = key;
	return &t[(*n)++];
}

/* Sums every atom in the atoms dir per atom id, key and bucket. */
static size_t tally_atoms(struct tally *t, size_t *files)
{
	char pattern[256];
	size_t n = 0, i, j, b;
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/atoms-*.pb", e.out_dir);
	*files = 0;
	if (glob(pattern, 0, NULL, &g))
		return 0;
	for (i = 0; i < g.gl_pathc; i++) {
		Kernelstats__AtomList *list = load_atoms(g.gl_pathv[i]);

		for (j = 0; j < list->n_atom; j++) {
			const int32_t *buckets = NULL;
			int64_t key = atom_key(payload_of(list->atom[j]), &buckets);
			struct tally *ta = tally_of(t, &n, list->atom[j]->atom_id, key);

			assert_non_null(buckets);
			for (b = 0; b < PULL_NR_BUCKETS; b++) {
				assert_true(buckets[b] >= 0);
				ta->sum[b] += (uint64_t)buckets[b];
			}
		}
		kernelstats__atom_list__free_unpacked(list, NULL);
	}
	*files = g.gl_pathc;
	globfree(&g);
	return n;
}

/* The map's rows: key column 0 and 32 buckets each. */
static size_t map_rows(const struct metric *pm, int64_t **rows)
{
	char obj[512], pin[512], err[KSTATS_ERR_LEN] = "";
	struct kstats_map_opts o = { .obj_path = obj, .map_name = pm->map, .pin_path = pin };
	struct kstats_map *m = NULL;
	size_t nrows = 0;

	snprintf(obj, sizeof(obj), "%s/%s.bpf", e.t.obj_dir, pm->obj);
	kstats_pin_path(pin, sizeof(pin), e.t.pin_dir, "map", pm->obj, pm->map);
	*rows = NULL;
	if (access(pin, F_OK))
		return 0;
	assert_int_equal(kstats_map_open(&o, &m, err, sizeof(err)), 0);
	assert_int_equal(kstats_map_ncols(m), 1 + PULL_NR_BUCKETS);
	*rows = calloc(kstats_map_max_rows(m), kstats_map_ncols(m) * sizeof(**rows));
	assert_non_null(*rows);
	assert_int_equal(kstats_map_read(m, *rows, kstats_map_max_rows(m), &nrows,
					 err, sizeof(err)), 0);
	kstats_map_close(m);
	return nrows;
}

/*
 * Per registered metric, key and bucket: the atoms' sum equals the map's
 * cumulative count.  Returns the number of compaction events counted.
 */
static uint64_t assert_conserved(void)
{
	static struct tally t[MAX_TALLIES];
	uint64_t compactions = 0;
	size_t nt, files, i, r, b;

	nt = tally_atoms(t, &files);
	for (i = 0; i < nmetrics; i++) {
		const struct metric *pm = &metrics[i];
		int64_t *rows;
		size_t nrows = map_rows(pm, &rows), matched = 0;

		for (r = 0; r < nrows; r++) {
			const int64_t *row = rows + r * (1 + PULL_NR_BUCKETS);
			struct tally *ta = tally_of(t, &nt, pm->atom_id, row[0]);

			for (b = 0; b < PULL_NR_BUCKETS; b++) {
				if (ta->sum[b] != (uint64_t)row[1 + b])
					fail_msg("%s key %lld bucket %zu: atoms sum %llu, map %lld",
						 pm->map, (long long)row[0], b,
						 (unsigned long long)ta->sum[b],
						 (long long)row[1 + b]);
				if (pm->atom_id == compaction_atom_id)
					compactions += ta->sum[b];
			}
			matched++;
		}
		for (r = 0; r < nt; r++)	/* atoms of keys the map does not have */
			if (t[r].atom_id == pm->atom_id)
				matched--;
		if (matched)
			fail_msg("%s: %zu rows, %zu more than the keys of its atoms",
				 pm->map, nrows, matched);
		free(rows);
	}
	return compactions;
}

static void assert_no_temps(void)
{
	char pattern[256];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/.*.tmp", e.out_dir);
	assert_int_not_equal(glob(pattern, 0, NULL, &g), 0);
	snprintf(pattern, sizeof(pattern), "%s/.*.tmp", e.state_dir);
	assert_int_not_equal(glob(pattern, 0, NULL, &g), 0);
}

/* The newest atoms file, decoded. */
static Kernelstats__AtomList *last_atoms(void)
{
	char pattern[256];
	Kernelstats__AtomList *list;
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/atoms-*.pb", e.out_dir);
	assert_int_equal(glob(pattern, 0, NULL, &g), 0);
	list = load_atoms(g.gl_pathv[g.gl_pathc - 1]);
	globfree(&g);
	return list;
}

static const Kernelstats__Atom *compaction_atom(const Kernelstats__AtomList *list)
{
	size_t i;

	for (i = 0; i < list->n_atom; i++)
		if (list->atom[i]->atom_id == compaction_atom_id)
			return list->atom[i];
	fail_msg("no CompactionDuration atom in the last pull");
	return NULL;
}

static uint64_t compaction_total(void)
{
	uint64_t total;

	assert_int_equal(ktest_hist_total(&e.t, "compaction", "compaction_duration_map",
					  &total), 0);
	return total;
}

static uint32_t compaction_map_id(void)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char pin[512];
	int fd;

	kstats_pin_path(pin, sizeof(pin), e.t.pin_dir, "map", "compaction",
			"compaction_duration_map");
	fd = bpf_obj_get(pin);
	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	close(fd);
	return info.id;
}

static uint64_t atom_total(const Kernelstats__Atom *a)
{
	const int32_t *buckets = NULL;
	uint64_t total = 0;
	int b;

	atom_key(payload_of(a), &buckets);
	for (b = 0; b < PULL_NR_BUCKETS; b++)
		total += (uint64_t)buckets[b];
	return total;
}

/* Test runs only from here on (links unpinned), after a first pull. */
static void quiet_start(int passes)
{
	open_runners();
	detach();
	fire(passes);
	assert_int_equal(pull_ok(), 0);
}

/* ---- fixtures ---- */

static int setup(void **state)
{
	(void)state;
	memset(&e, 0, sizeof(e));
	if (ktest_init(&e.t, "pull"))
		return -1;
	if (ktest_tmpdir(e.tmp, sizeof(e.tmp), "pull"))
		return -1;
	snprintf(e.state_dir, sizeof(e.state_dir), "%s/state", e.tmp);
	snprintf(e.out_dir, sizeof(e.out_dir), "%s/atoms", e.tmp);
	snprintf(e.status, sizeof(e.status), "%s/loader-status.json", e.tmp);
	snprintf(e.log, sizeof(e.log), "%s/pull.log", e.tmp);
	e.loaded_from = boot_ns();
	if (ktest_run_loader(&e.t, NULL))
		return -1;
	e.loaded_to = boot_ns();
	load_metrics(e.t.obj_dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close_runners();
	ktest_fini(&e.t);
	ktest_rm_tree(e.tmp);
	return 0;
}

/* ---- tests ---- */

/* The first pull's window starts at the map's creation (program load time). */
static void test_first_pull_window(void **state)
{
	Kernelstats__AtomList *list;
	const Kernelstats__Atom *a;

	(void)state;
	quiet_start(2);
	list = last_atoms();
	a = compaction_atom(list);
	assert_false(a->reset);
	assert_true(a->window_start_boottime_ns >= e.loaded_from);
	assert_true(a->window_start_boottime_ns <= e.loaded_to);
	assert_true(a->window_end_boottime_ns > a->window_start_boottime_ns);
	assert_int_equal(atom_total(a), compaction_total());
	kernelstats__atom_list__free_unpacked(list, NULL);
}

static void kill_at(const char *point, const char *needs)
{
	int status;

	if (!strcmp(needs, "quiet")) {
		detach();
		assert_int_equal(pull_ok(), 0);	/* takes what came before */
		status = run_pull(point, NULL, NULL);
		assert_int_equal(ktest_run_loader(&e.t, NULL), 0);	/* re-attach */
	} else {
		fire(1);
		assert_int_equal(ktest_compact_memory(), 0);
		if (!strncmp(needs, "after:", 6))
			assert_int_equal(run_pull(needs + 6, NULL, NULL), KILLED);
		status = run_pull(point, NULL, NULL);
	}
	if (status != KILLED)
		fail_msg("fault point %s (needs %s): pull exited %d, not killed",
			 point, needs, status);
}

/*
 * Real compaction and test runs between many pulls, a SIGKILL at every
 * fault point the puller has, each followed by a normal pull: the atoms
 * still add up to exactly what the maps counted.
 */
static void test_conservation_across_kills(void **state)
{
	unsigned int points = 0, i;
	uint64_t counted;
	size_t nt, files;

	(void)state;
	open_runners();
	for (i = 0; i < 3; i++) {
		assert_int_equal(ktest_compact_memory(), 0);
		fire(2);
		assert_int_equal(pull_ok(), 0);
	}
	for (i = 0; i < kstats_nfault_points; i++) {
		kill_at(kstats_fault_points[i].name, kstats_fault_points[i].needs);
		fire(1);
		assert_int_equal(pull_ok(), 0);
		assert_no_temps();
		points++;
	}
	assert_true(points >= 10);
	detach();
	assert_int_equal(pull_ok(), 0);
	counted = assert_conserved();
	assert_true(counted >= 3 * 2 + points);	/* the test runs alone */
	nt = tally_atoms((struct tally[MAX_TALLIES]){}, &files);
	assert_true(nt > 0);
	assert_true(files >= 3 + points);
}

/* Unload (rm -rf the pins) and reload: full value, reset, window at creation. */
static void test_reload_resets(void **state)
{
	Kernelstats__AtomList *list;
	const Kernelstats__Atom *a;
	char status[512];
	uint32_t id;
	FILE *f;

	(void)state;
	quiet_start(3);

	close_runners();
	ktest_fini(&e.t);
	load();
	detach();
	fire(2);
	assert_int_equal(pull_ok(), 0);
	list = last_atoms();
	a = compaction_atom(list);
	assert_true(a->reset);
	assert_int_equal(atom_total(a), compaction_total());
	assert_true(a->window_start_boottime_ns >= e.loaded_from);
	assert_true(a->window_start_boottime_ns <= e.loaded_to);
	kernelstats__atom_list__free_unpacked(list, NULL);

	/* Again, with the loader's status naming the new map's creation time. */
	close_runners();
	ktest_fini(&e.t);
	load();
	detach();
	id = compaction_map_id();
	snprintf(status, sizeof(status),
		 "{\"version\":1,\"objects\":[{\"name\":\"compaction\",\"maps\":[{\"name\":"
		 "\"compaction_duration_map\",\"pin\":\"x\",\"map_id\":%u,"
		 "\"created_boottime_ns\":1000,\"created_realtime_ns\":5000}]}]}", id);
	f = fopen(e.status, "w");
	assert_non_null(f);
	fputs(status, f);
	fclose(f);
	fire(1);
	assert_int_equal(pull_ok(), 0);
	list = last_atoms();
	a = compaction_atom(list);
	assert_true(a->reset);
	assert_int_equal(a->window_start_boottime_ns, 1000);
	/* A creation at wall clock 5000 ns is a step: in the atom, not a window of years. */
	assert_true(a->has_wall_clock_step_ns);
	assert_int_equal(a->window_start_realtime_ns - a->wall_clock_step_ns, 5000);
	assert_int_equal(a->window_end_realtime_ns - a->window_start_realtime_ns,
			 a->window_end_boottime_ns - a->window_start_boottime_ns);
	assert_int_equal(atom_total(a), compaction_total());
	kernelstats__atom_list__free_unpacked(list, NULL);
}

/* A new boot id: everything the maps hold, flagged reset; then deltas again. */
static void test_new_boot_id(void **state)
{
	static const char *fake = "00000000-0000-4000-8000-00000000b007";
	Kernelstats__AtomList *list;
	const Kernelstats__Atom *a;

	(void)state;
	quiet_start(2);
	fire(1);
	assert_int_equal(run_pull(NULL, fake, NULL), 0);
	list = last_atoms();
	a = compaction_atom(list);
	assert_true(a->reset);
	assert_string_equal(a->boot_id, fake);
	assert_int_equal(atom_total(a), compaction_total());
	kernelstats__atom_list__free_unpacked(list, NULL);

	fire(1);
	assert_int_equal(run_pull(NULL, fake, NULL), 0);
	list = last_atoms();
	a = compaction_atom(list);
	assert_false(a->reset);
	assert_int_equal(atom_total(a), 1);
	kernelstats__atom_list__free_unpacked(list, NULL);
}

static void corrupt_state(bool truncate_it)
{
	char path[256];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/state", e.state_dir);
	assert_int_equal(stat(path, &st), 0);
	if (truncate_it) {
		assert_int_equal(truncate(path, st.st_size / 2), 0);
		return;
	}
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "#", 1, st.st_size - 10), 1);
	close(fd);
}

static void assert_rebaselined(const char *why)
{
	Kernelstats__AtomList *list;
	const Kernelstats__Atom *a;
	char pattern[256];
	glob_t g;

	clear_log();
	fire(1);
	assert_int_equal(pull_ok(), 0);
	assert_true(log_has("is corrupt"));
	assert_true(log_has(why));
	assert_true(log_has("moved to"));
	snprintf(pattern, sizeof(pattern), "%s/state.corrupt-*", e.state_dir);
	assert_int_equal(glob(pattern, 0, NULL, &g), 0);
	globfree(&g);
	list = last_atoms();
	a = compaction_atom(list);
	assert_true(a->reset);
	assert_int_equal(atom_total(a), compaction_total());
	kernelstats__atom_list__free_unpacked(list, NULL);
}

/* Corrupt and truncated state: moved aside, re-baselined from creation. */
static void test_corrupt_state(void **state)
{
	(void)state;
	quiet_start(2);
	corrupt_state(false);
	assert_rebaselined("checksum mismatch");
	fire(1);
	assert_int_equal(pull_ok(), 0);
	corrupt_state(true);
	assert_rebaselined("truncated");
}

/*
 * State lost and the atoms directory empty (issue 49): the next pull's id is
 * still above what kstats ship recorded as acknowledged, else ship would skip
 * its atoms and the server would collapse them onto rows of old pulls.
 */
static void test_ids_above_shipped(void **state)
{
	Kernelstats__AtomList *list;
	char path[256];
	glob_t g;
	size_t i;
	FILE *f;

	(void)state;
	quiet_start(1);
	snprintf(path, sizeof(path), "%s/shipped", e.state_dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "41\n");
	assert_int_equal(fclose(f), 0);
	snprintf(path, sizeof(path), "%s/atoms-*.pb", e.out_dir);
	assert_int_equal(glob(path, 0, NULL, &g), 0);
	for (i = 0; i < g.gl_pathc; i++)
		assert_int_equal(unlink(g.gl_pathv[i]), 0);
	globfree(&g);
	snprintf(path, sizeof(path), "%s/state", e.state_dir);
	assert_int_equal(unlink(path), 0);
	fire(1);
	assert_int_equal(pull_ok(), 0);
	list = last_atoms();
	assert_true(list->n_atom > 0);
	assert_int_equal(list->atom[0]->pull_id, 42);
	kernelstats__atom_list__free_unpacked(list, NULL);
}

/* A held lock: the second pull waits --lock-timeout, then names the holder. */
static void test_lock_busy(void **state)
{
	static const char *const timeout[] = { "--lock-timeout", "1", NULL };
	char path[256], pid[32], expect[64];
	uint64_t t0;
	int fd;

	(void)state;
	assert_int_equal(pull_ok(), 0);	/* creates the state dir */
	snprintf(path, sizeof(path), "%s/lock", e.state_dir);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, pid, strlen(pid), 0), (ssize_t)strlen(pid));
	clear_log();
	t0 = boot_ns();
	assert_int_equal(run_pull(NULL, NULL, timeout), 4);
	assert_true(boot_ns() - t0 >= 1000000000ull);
	snprintf(expect, sizeof(expect), "another pull (pid %d) holds", (int)getpid());
	assert_true(log_has(expect));
	close(fd);
	assert_int_equal(run_pull(NULL, NULL, timeout), 0);
}

/* Pulls started at once while events keep coming: each waits its turn. */
static void test_concurrent_pulls(void **state)
{
	pid_t pids[4];
	size_t i;

	(void)state;
	open_runners();
	detach();
	fire(3);
	for (i = 0; i < 4; i++)
		pids[i] = spawn_pull(NULL, NULL, NULL);
	fire(5);
	for (i = 0; i < 4; i++)
		assert_int_equal(ktest_loader_status(pids[i]), 0);
	assert_int_equal(pull_ok(), 0);
	assert_int_equal(assert_conserved(), compaction_total());
	assert_int_equal(compaction_total() >= 8, true);
}

static size_t count_atom_files(char *oldest, size_t len)
{
	char pattern[256];
	glob_t g;
	size_t n;

	snprintf(pattern, sizeof(pattern), "%s/atoms-*.pb", e.out_dir);
	if (glob(pattern, 0, NULL, &g))
		return 0;
	n = g.gl_pathc;
	if (oldest)
		snprintf(oldest, len, "%s", g.gl_pathv[0]);
	globfree(&g);
	return n;
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

/*
 * --max-files, --max-bytes and --max-age drop the oldest atom files; age is
 * up time (the boot clock), not the wall clock or mtimes.
 */
static void test_retention(void **state)
{
	static const char *const files3[] = { "--max-files", "3", NULL };
	static const char *const age[] = { "--max-age", "7d", NULL };
	const char *bytes[] = { "--max-bytes", NULL, NULL };
	struct timespec old[2] = { { time(NULL) - 10 * 86400, 0 },
				   { time(NULL) - 10 * 86400, 0 } };
	char oldest[512], path[600], max[32], clock[64];
	int i;

	(void)state;
	open_runners();
	detach();
	for (i = 0; i < 5; i++) {
		fire(1);
		assert_int_equal(pull_ok(), 0);
	}
	assert_int_equal(count_atom_files(NULL, 0), 5);
	fire(1);
	clear_log();
	assert_int_equal(run_pull(NULL, NULL, files3), 0);
	assert_int_equal(count_atom_files(oldest, sizeof(oldest)), 3);
	assert_true(log_has("retention removed 3"));
	assert_non_null(strstr(oldest, "atoms-0000000004.pb"));
	/* Room for atoms 5 and 6: 4 goes. */
	snprintf(path, sizeof(path), "%s/atoms-0000000005.pb", e.out_dir);
	i = file_size(path);
	snprintf(path, sizeof(path), "%s/atoms-0000000006.pb", e.out_dir);
	snprintf(max, sizeof(max), "%ld", (long)(i + file_size(path)));
	bytes[1] = max;
	assert_int_equal(run_pull(NULL, NULL, bytes), 0);	/* no events: no new file */
	assert_int_equal(count_atom_files(oldest, sizeof(oldest)), 2);
	assert_non_null(strstr(oldest, "atoms-0000000005.pb"));
	/* An mtime 10 days old ages nothing; 10 days of up time do. */
	assert_int_equal(utimensat(AT_FDCWD, oldest, old, 0), 0);
	assert_int_equal(run_pull(NULL, NULL, age), 0);
	assert_int_equal(count_atom_files(NULL, 0), 2);
	snprintf(clock, sizeof(clock), "%llu:%llu",
		 (unsigned long long)(boot_ns() + 10 * 86400000000000ull),
		 (unsigned long long)time(NULL) * 1000000000ull);
	pull_clock = clock;
	assert_int_equal(run_pull(NULL, NULL, age), 0);
	pull_clock = NULL;
	assert_int_equal(count_atom_files(oldest, sizeof(oldest)), 1);
	assert_non_null(strstr(oldest, "atoms-0000000006.pb"));
}

/* ---- hash keys and names, on cma-shaped maps (no cma tracepoints here) ---- */

static void set_pool(int fd, __u32 id, int bucket, __u64 count)
{
	struct bpf_telemetry_accumulator acc = {};

	bpf_map_lookup_elem(fd, &id, &acc);
	acc.buckets[bucket] = count;
	assert_int_equal(bpf_map_update_elem(fd, &id, &acc, BPF_ANY), 0);
}

static const Kernelstats__CmaAllocationLatency *
pool_atom(const Kernelstats__AtomList *list, uint32_t id, const Kernelstats__Atom **env)
{
	size_t i;

	for (i = 0; i < list->n_atom; i++) {
		const Kernelstats__Atom *a = list->atom[i];

		if (a->payload_case == KERNELSTATS__ATOM__PAYLOAD_CMA_ALLOCATION_LATENCY &&
		    a->cma_allocation_latency->pool_id == id) {
			if (env)
				*env = a;
			return a->cma_allocation_latency;
		}
	}
	return NULL;
}

static struct bpf_object *pin_cma_maps(int *acc_fd, int *names_fd)
{
	char path[512], pin[512];
	struct bpf_object *obj;
	struct bpf_map *map;

	snprintf(path, sizeof(path), "%s/tests/bpf/pull_cma_maps.bpf", e.t.build);
	obj = bpf_object__open_file(path, NULL);
	assert_non_null(obj);
	bpf_object__for_each_map(map, obj) {
		kstats_pin_path(pin, sizeof(pin), e.t.pin_dir, "map", "cma",
				bpf_map__name(map));
		assert_int_equal(bpf_map__set_pin_path(map, pin), 0);
	}
	assert_int_equal(bpf_object__load(obj), 0);
	*acc_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "cma_alloc_latency_map"));
	*names_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "cma_pool_names_map"));
	return obj;
}

/*
 * Keys appear and vanish between pulls; a vanished key that comes back
 * starts from 0 (no anomaly); ids resolve to names; a bucket that goes
 * backwards is an anomaly, re-based, never negative.
 */
static void test_keys_come_and_go(void **state)
{
	struct kstats_name reserved = { "reserved" }, camera = { "camera" };
	const Kernelstats__CmaAllocationLatency *p;
	const Kernelstats__Atom *env;
	Kernelstats__AtomList *list;
	struct bpf_object *obj;
	int acc, names;
	__u32 id;

	(void)state;
	detach();
	obj = pin_cma_maps(&acc, &names);
	id = 1;
	assert_int_equal(bpf_map_update_elem(names, &id, &reserved, BPF_ANY), 0);
	id = 2;
	assert_int_equal(bpf_map_update_elem(names, &id, &camera, BPF_ANY), 0);
	set_pool(acc, 1, 3, 5);
	set_pool(acc, 2, 0, 2);
	set_pool(acc, 3, 1, 1);
	assert_int_equal(pull_ok(), 0);
	list = last_atoms();
	p = pool_atom(list, 1, NULL);
	assert_non_null(p);
	assert_string_equal(p->pool_name, "reserved");
	assert_int_equal(p->n_duration_log2_buckets_micros, PULL_NR_BUCKETS);
	assert_int_equal(p->duration_log2_buckets_micros[3], 5);
	assert_string_equal(pool_atom(list, 2, NULL)->pool_name, "camera");
	assert_null(pool_atom(list, 3, NULL)->pool_name);	/* no name for id 3 */
	kernelstats__atom_list__free_unpacked(list, NULL);

	id = 2;
	assert_int_equal(bpf_map_delete_elem(acc, &id), 0);
	set_pool(acc, 1, 3, 7);
	set_pool(acc, 4, 2, 1);
	assert_int_equal(pull_ok(), 0);
	list = last_atoms();
	assert_int_equal(list->n_atom, 2);
	assert_int_equal(pool_atom(list, 1, NULL)->duration_log2_buckets_micros[3], 2);
	assert_int_equal(pool_atom(list, 4, NULL)->duration_log2_buckets_micros[2], 1);
	kernelstats__atom_list__free_unpacked(list, NULL);

	set_pool(acc, 2, 0, 1);		/* back, counting from 0 again */
	set_pool(acc, 1, 3, 6);		/* backwards */
	assert_int_equal(pull_ok(), 0);
	list = last_atoms();
	assert_int_equal(list->n_atom, 2);
	p = pool_atom(list, 2, &env);
	assert_int_equal(p->duration_log2_buckets_micros[0], 1);
	assert_int_equal(env->anomalies, 0);
	p = pool_atom(list, 1, &env);
	assert_int_equal(env->anomalies, 1);
	assert_int_equal(p->duration_log2_buckets_micros[3], 0);
	kernelstats__atom_list__free_unpacked(list, NULL);

	set_pool(acc, 1, 3, 8);		/* +2 over the re-based 6 */
	assert_int_equal(pull_ok(), 0);
	list = last_atoms();
	assert_int_equal(list->n_atom, 1);
	p = pool_atom(list, 1, &env);
	assert_int_equal(p->duration_log2_buckets_micros[3], 2);
	assert_int_equal(env->anomalies, 0);
	kernelstats__atom_list__free_unpacked(list, NULL);
	bpf_object__close(obj);
}

/*
 * Pool 1 at 5 pulled, then a pull (as boot boot_id, NULL: this boot) with
 * the map unpinned, then the same map pinned again and pool 1 at 7.
 */
static struct bpf_object *repin_after_unpinned_pull(const char *boot_id)
{
	struct bpf_object *obj;
	char pin[512];
	int acc, names;

	detach();
	obj = pin_cma_maps(&acc, &names);
	set_pool(acc, 1, 3, 5);
	assert_int_equal(pull_ok(), 0);
	kstats_pin_path(pin, sizeof(pin), e.t.pin_dir, "map", "cma",
			"cma_alloc_latency_map");
	assert_int_equal(unlink(pin), 0);
	assert_int_equal(run_pull(NULL, boot_id, NULL), 0);
	assert_int_equal(bpf_obj_pin(acc, pin), 0);
	set_pool(acc, 1, 3, 7);
	return obj;
}

/* Pool 1's bucket 3 and reset flag in the pull after repin_after_unpinned_pull. */
static void assert_pool1_after_repin(const char *boot_id, int bucket3, bool reset)
{
	const Kernelstats__Atom *env;
	Kernelstats__AtomList *list;

	assert_int_equal(run_pull(NULL, boot_id, NULL), 0);
	list = last_atoms();
	assert_int_equal(pool_atom(list, 1, &env)->duration_log2_buckets_micros[3], bucket3);
	assert_int_equal(env->reset, reset);
	kernelstats__atom_list__free_unpacked(list, NULL);
}

/*
 * A pin that vanishes while its map lives on (a loader swap in progress)
 * keeps the map's baseline: when the same map is pinned again, the next
 * pull emits only what it gained, not again what was already emitted.
 */
static void test_unpinned_map_keeps_baseline(void **state)
{
	struct bpf_object *obj;

	(void)state;
	obj = repin_after_unpinned_pull(NULL);
	assert_pool1_after_repin(NULL, 2, false);
	bpf_object__close(obj);
}

/*
 * A baseline kept across a reboot (the map was not pinned at the first pull
 * of the new boot) must not match a map of the new boot that got the same
 * id (ids restart at boot): that map's counts are all new, flagged reset.
 */
static void test_kept_baseline_across_boot(void **state)
{
	static const char *next_boot = "00000000-0000-4000-8000-00000000b008";
	struct bpf_object *obj;

	(void)state;
	obj = repin_after_unpinned_pull(next_boot);
	assert_pool1_after_repin(next_boot, 7, true);
	bpf_object__close(obj);
}

/*
 * Upgrade without loss.  tests/golden/pull_state_v1 is a state file written
 * by kstats pull of the release before generic atoms (commit 42944b4): its
 * loader pinned kswapd and compaction, their links were unpinned, bpftool
 * set kswapd node 0 to buckets 3=11, 31=2 and compaction to 0=5, 2=7, 10=3,
 * and it pulled with KSTATS_BOOT_ID=UPGRADE_BOOT_ID,
 * KSTATS_CLOCK=5000000000:1700000005000000000.  Here the file's map ids are
 * pointed at this run's maps (header CRC recomputed: "kernelstats-state 1
 * CRC32 LEN" + JSON), the maps hold the baselines plus known counts, and
 * the first pull must emit exactly those counts, in the old windows.
 */
#define UPGRADE_BOOT_ID "00000000-0000-4000-8000-0000000a0001"
#define UPGRADE_FIXTURE "tests/golden/pull_state_v1"

static uint32_t set_map(const char *obj, const char *map, const uint64_t *buckets)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0;
	char pin[512];
	int fd;

	kstats_pin_path(pin, sizeof(pin), e.t.pin_dir, "map", obj, map);
	fd = bpf_obj_get(pin);
	assert_true(fd >= 0);
	assert_int_equal(bpf_map_update_elem(fd, &key, buckets, BPF_ANY), 0);
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	close(fd);
	return info.id;
}

static void replace(char *body, const char *from, const char *to)
{
	char *at = strstr(body, from);

	assert_non_null(at);
	assert_true(strlen(to) <= strlen(from) + 8);
	memmove(at + strlen(to), at + strlen(from), strlen(at + strlen(from)) + 1);
	memcpy(at, to, strlen(to));
}

static void write_upgrade_state(uint32_t kswapd_id, uint32_t compaction_id)
{
	char buf[4096], *body, id[64], path[256];
	FILE *f;

	assert_true(ktest_read_file(UPGRADE_FIXTURE, buf, sizeof(buf) - 63) >= 0);
	body = strchr(buf, '\n') + 1;
	snprintf(id, sizeof(id), "\"map_id\":%u", kswapd_id);
	replace(body, "\"map_id\":814", id);
	snprintf(id, sizeof(id), "\"map_id\":%u", compaction_id);
	replace(body, "\"map_id\":812", id);
	assert_int_equal(mkdir(e.state_dir, 0750), 0);
	snprintf(path, sizeof(path), "%s/state", e.state_dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "kernelstats-state 1 %08lx %zu\n%s",
		crc32(0, (const Bytef *)body, strlen(body)), strlen(body), body);
	assert_int_equal(fclose(f), 0);
}

static const int32_t *atom_of(const Kernelstats__AtomList *list, int32_t atom_id,
			      const Kernelstats__Atom **env)
{
	const int32_t *buckets = NULL;
	size_t i;

	for (i = 0; i < list->n_atom; i++)
		if (list->atom[i]->atom_id == atom_id) {
			assert_null(buckets);	/* one key each */
			atom_key(payload_of(list->atom[i]), &buckets);
			*env = list->atom[i];
		}
	assert_non_null(buckets);
	return buckets;
}

static void test_upgrade_keeps_state(void **state)
{
	uint64_t kswapd[PULL_NR_BUCKETS] = { [3] = 11 + 1, [31] = 2 };
	uint64_t comp[PULL_NR_BUCKETS] = { [0] = 5 + 1, [2] = 7 + 4, [5] = 2, [10] = 3 };
	const int32_t *b;
	const Kernelstats__Atom *env;
	Kernelstats__AtomList *list;
	int32_t kswapd_atom = (int32_t)atom_field_of(&kernelstats__atom__descriptor,
						     "KswapdLatency")->id;

	(void)state;
	detach();
	write_upgrade_state(set_map("kswapd", "kswapd_latency_map", kswapd),
			    set_map("compaction", "compaction_duration_map", comp));
	assert_int_equal(run_pull(NULL, UPGRADE_BOOT_ID, NULL), 0);
	list = last_atoms();
	b = atom_of(list, compaction_atom_id, &env);
	assert_int_equal(b[0], 1);
	assert_int_equal(b[2], 4);
	assert_int_equal(b[5], 2);
	assert_int_equal(b[10], 0);
	assert_false(env->reset);
	assert_int_equal(env->window_start_boottime_ns, 5000000000ull);
	assert_int_equal(env->pull_id, 2);
	b = atom_of(list, kswapd_atom, &env);
	assert_int_equal(b[3], 1);
	assert_int_equal(b[31], 0);
	assert_false(env->reset);
	/* The fixture's wall clock is of 2023: a step, the old start kept in it. */
	assert_int_equal(env->window_start_realtime_ns - env->wall_clock_step_ns,
			 1700000005000000000ull);
	kernelstats__atom_list__free_unpacked(list, NULL);
}

/* Nothing pinned: exit 3 with the fix in the message, no state written. */
static void test_nothing_pinned(void **state)
{
	char state_file[256];

	(void)state;
	ktest_fini(&e.t);
	clear_log();
	assert_int_equal(pull_ok(), 3);
	assert_true(log_has("run kstats-loader"));
	snprintf(state_file, sizeof(state_file), "%s/state", e.state_dir);
	assert_int_not_equal(access(state_file, F_OK), 0);
}

/* One pull reads each object once (issue 48): the scan, the key check, the
 * maps and the names maps all read it through the library's catalog. */
static void test_object_read_once(void **state)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	char names[MAX_METRICS * 2][64];
	int opens[MAX_METRICS * 2] = { 0 }, ifd;
	size_t n = 0, i;
	ssize_t got;
	char *p;

	(void)state;
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(ifd >= 0);
	/* Closes between opens: two opens in a row would merge into one event. */
	assert_true(inotify_add_watch(ifd, e.t.obj_dir, IN_OPEN | IN_CLOSE) >= 0);
	assert_int_equal(pull_ok(), 0);
	while ((got = read(ifd, buf, sizeof(buf))) > 0)
		for (p = buf; p < buf + got; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (!(ev->mask & IN_OPEN) || !ev->len || !strstr(ev->name, ".bpf"))
				continue;
			for (i = 0; i < n && strcmp(names[i], ev->name); i++)
				;
			if (i == n && n < MAX_METRICS * 2)
				snprintf(names[n++], sizeof(names[0]), "%s", ev->name);
			if (i < n && ++opens[i] > 1)
				fail_msg("%s opened %d times in one pull", ev->name, opens[i]);
		}
	close(ifd);
	assert_true(n > 0);
}

/* libbpf warns about the .kstats.* metadata sections it rightly skips. */
static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN || strstr(fmt, "skipping unrecognized data section"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_first_pull_window),
		T(test_conservation_across_kills),
		T(test_reload_resets),
		T(test_new_boot_id),
		T(test_corrupt_state),
		T(test_ids_above_shipped),
		T(test_lock_busy),
		T(test_concurrent_pulls),
		T(test_retention),
		T(test_keys_come_and_go),
		T(test_unpinned_map_keeps_baseline),
		T(test_kept_baseline_across_boot),
		T(test_upgrade_keeps_state),
		T(test_nothing_pinned),
		T(test_object_read_once),
	};

	libbpf_set_print(libbpf_quiet);
	return KTEST_MAIN("pull", tests, NULL, NULL);
}
