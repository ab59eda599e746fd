// SPDX-License-Identifier: GPL-2.0
/*
 * kstats-loader and its environment: a missing bpffs (unmounted only inside
 * a private mount namespace, so nobody else's pins notice), the status file
 * and completion flag, /dev/kmsg at boot, exit codes, concurrent runs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <syslog.h>
#include <linux/magic.h>
#include <cmocka.h>

#include "kstats_meta.h"
#include "kstats_pins.h"
#include "kmain.h"
#include "ltest.h"

#define TB(name) "tests/bpf/loader_" name ".bpf"

static int setup(void **state)
{
	return ltest_setup(state, 'e', true);
}

static bool is_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* In a child, in a private mount namespace without bpffs: the loader mounts it. */
static int load_without_bpffs(struct ltest *t)
{
	char link[512];

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 10;
	while (is_bpffs(KSTATS_BPFFS))
		if (umount2(KSTATS_BPFFS, MNT_DETACH))
			return 11;
	if (ltest_run(t, NULL))
		return 12;
	if (!is_bpffs(KSTATS_BPFFS))
		return 13;
	kstats_pin_path(link, sizeof(link), t->kt.pin_dir, "link", "compaction",
			"on_compaction_end");
	return access(link, F_OK) ? 14 : 0;
}

static void test_mounts_missing_bpffs(void **state)
{
	struct ltest *t = *state;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(load_without_bpffs(t));
	assert_int_equal(ktest_loader_status(pid), 0);
	/* The namespace, its bpffs and the pins in it died with the child. */
	assert_int_equal(ltest_run(t, "--disable", "all", NULL), 0);
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "SKIPPED_DISABLED");
	assert_true(is_bpffs(KSTATS_BPFFS));
}

static void assert_keys(struct json_object *o, const char *const *keys,
			const enum json_type *types)
{
	struct json_object *v;

	for (; *keys; keys++, types++) {
		if (!json_object_object_get_ex(o, *keys, &v))
			fail_msg("missing key %s", *keys);
		if (!json_object_is_type(v, *types))
			fail_msg("key %s has type %s", *keys,
				 json_type_to_name(json_object_get_type(v)));
	}
}

static void assert_status_schema(struct json_object *st)
{
	static const char *const top[] = {
		"version", "kernel_release", "kernel_version", "boot_id",
		"started_boottime_ns", "finished_boottime_ns", "obj_dir", "pin_dir",
		"objects", NULL };
	static const enum json_type top_t[] = {
		json_type_int, json_type_string, json_type_int, json_type_string,
		json_type_int, json_type_int, json_type_string, json_type_string,
		json_type_array };
	static const char *const obj[] = {
		"name", "path", "outcome", "reason", "critical", "programs", "maps",
		"pins", NULL };
	static const enum json_type obj_t[] = {
		json_type_string, json_type_string, json_type_string, json_type_string,
		json_type_boolean, json_type_array, json_type_array, json_type_array };
	static const char *const prog[] = {
		"name", "section", "attach", "attach_type", "outcome", "reason",
		"prog_id", "link_pin", "prog_pin", "kept", NULL };
	static const enum json_type prog_t[] = {
		json_type_string, json_type_string, json_type_string, json_type_string,
		json_type_string, json_type_string, json_type_int, json_type_string,
		json_type_string, json_type_boolean };
	static const char *const map[] = {
		"name", "pin", "map_id", "reused", "created_boottime_ns",
		"created_realtime_ns", NULL };
	static const enum json_type map_t[] = {
		json_type_string, json_type_string, json_type_int, json_type_boolean,
		json_type_int, json_type_int };
	struct json_object *objs, *o, *arr;
	size_t i, j;

	assert_keys(st, top, top_t);
	objs = json_object_object_get(st, "objects");
	for (i = 0; i < json_object_array_length(objs); i++) {
		o = json_object_array_get_idx(objs, i);
		assert_keys(o, obj, obj_t);
		arr = json_object_object_get(o, "programs");
		for (j = 0; j < json_object_array_length(arr); j++)
			assert_keys(json_object_array_get_idx(arr, j), prog, prog_t);
		arr = json_object_object_get(o, "maps");
		for (j = 0; j < json_object_array_length(arr); j++)
			assert_keys(json_object_array_get_idx(arr, j), map, map_t);
	}
}

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, len, f));
	fclose(f);
}

static uint32_t uname_kver(const char *release)
{
	unsigned int v[3] = { 0, 0, 0 };

	assert_true(sscanf(release, "%u.%u.%u", &v[0], &v[1], &v[2]) >= 2);
	return KSTATS_KVER(v[0], v[1], v[2] > 255 ? 255 : v[2]);
}

/* Nothing half-written is left: no temp file, no temp pin. */
static void assert_no_temp_files(const char *dir, const char *prefix)
{
	struct dirent *d;
	DIR *dp = opendir(dir);

	assert_non_null(dp);
	while ((d = readdir(dp)))
		if (strstr(d->d_name, prefix))
			fail_msg("%s/%s left behind", dir, d->d_name);
	closedir(dp);
}

static void test_status_file(void **state)
{
	struct ltest *t = *state;
	uint64_t boot0, boot1, real0, real1, started, finished, created;
	struct json_object *st, *map, *objs;
	char flag[512], line[128];
	struct utsname u;

	assert_int_equal(ltest_add(t, TB("count"), "zzLast"), 0);
	assert_int_equal(ltest_add(t, TB("notp"), "aaFirst"), 0);
	boot0 = now_ns(CLOCK_BOOTTIME);
	real0 = now_ns(CLOCK_REALTIME);
	assert_int_equal(ltest_run(t, NULL), 0);
	boot1 = now_ns(CLOCK_BOOTTIME);
	real1 = now_ns(CLOCK_REALTIME);
	st = t->status;
	assert_non_null(st);
	assert_status_schema(st);
	assert_int_equal(ltest_u64(st, "version"), 1);
	assert_int_equal(uname(&u), 0);
	assert_string_equal(ltest_str(st, "kernel_release"), u.release);
	assert_int_equal(ltest_u64(st, "kernel_version"), uname_kver(u.release));
	read_line("/proc/sys/kernel/random/boot_id", line, sizeof(line));
	line[strcspn(line, "\n")] = 0;
	assert_string_equal(ltest_str(st, "boot_id"), line);
	assert_string_equal(ltest_str(st, "pin_dir"), t->kt.pin_dir);
	assert_string_equal(ltest_str(st, "obj_dir"), t->kt.obj_dir);
	started = ltest_u64(st, "started_boottime_ns");
	finished = ltest_u64(st, "finished_boottime_ns");
	assert_true(boot0 <= started && started <= finished && finished <= boot1);

	/* Objects in sorted order, whatever the directory order. */
	objs = json_object_object_get(st, "objects");
	assert_int_equal(json_object_array_length(objs), 3);
	assert_string_equal(ltest_str(json_object_array_get_idx(objs, 0), "name"), "aaFirst");
	assert_string_equal(ltest_str(json_object_array_get_idx(objs, 1), "name"), "compaction");
	assert_string_equal(ltest_str(json_object_array_get_idx(objs, 2), "name"), "zzLast");

	map = ltest_named(ltest_obj(t, "zzLast"), "maps", "rename_count_map");
	created = ltest_u64(map, "created_boottime_ns");
	assert_true(started <= created && created <= finished);
	created = ltest_u64(map, "created_realtime_ns");
	assert_true(real0 <= created && created <= real1);
	assert_false(json_object_get_boolean(json_object_object_get(map, "reused")));

	snprintf(flag, sizeof(flag), "%s/progs_loaded", t->run_dir);
	read_line(flag, line, sizeof(line));
	assert_string_equal(line, "1\n");
	assert_no_temp_files(t->run_dir, ".tmp");
	assert_no_temp_files(t->kt.pin_dir, "tmp_");
}

static void test_boot_logs_to_kmsg(void **state)
{
	struct ltest *t = *state;
	char name[64], line[96];
	int fd;

	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		skip();	/* no readable /dev/kmsg */
	assert_true(lseek(fd, 0, SEEK_END) >= 0);
	snprintf(name, sizeof(name), "kmsg%d", (int)getpid());
	assert_int_equal(ltest_add(t, TB("count"), name), 0);
	assert_int_equal(ltest_run(t, "--boot", NULL), 0);
	snprintf(line, sizeof(line), "%-16s LOADED", name);
	assert_true(ltest_kmsg_has(fd, line));
	close(fd);
	/* Without --boot, nothing goes there. */
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	assert_true(fd >= 0 && lseek(fd, 0, SEEK_END) >= 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_false(ltest_kmsg_has(fd, line));
	close(fd);
}

/* A failed object is a warning at boot, whatever outcome failed it. */
static void test_boot_failure_warns(void **state)
{
	struct ltest *t = *state;
	char name[64], line[96], rec[2048];
	int fd, level = -1;
	ssize_t n;

	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		skip();	/* no readable /dev/kmsg */
	assert_true(lseek(fd, 0, SEEK_END) >= 0);
	snprintf(name, sizeof(name), "kbad%d", (int)getpid());
	assert_int_equal(ltest_add_bytes(t, name, "garbage", 7), 0);
	assert_int_equal(ltest_run(t, "--boot", NULL), 0);
	snprintf(line, sizeof(line), "%-16s FAILED_OBJECT", name);
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;	/* overwritten records: read on */
		rec[n] = 0;
		if (strstr(rec, "kstats-loader[") && strstr(rec, line))
			level = atoi(rec) & 7;	/* "<facility*8+level>,seq,...;text" */
	}
	close(fd);
	assert_int_equal(level, LOG_WARNING);
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fclose(f);
}

static void test_exit_codes(void **state)
{
	struct ltest *t = *state;
	char flag[512], not_bpffs[256], nothing[256];

	assert_int_equal(ltest_run(t, "--no-such-option", NULL), 2);
	assert_int_equal(ltest_run(t, "stray", NULL), 2);
	assert_int_equal(ltest_run(t, "--kver", "6", NULL), 2);

	/* A stale flag from an earlier run goes first thing. */
	assert_int_equal(ltest_run(t, NULL), 0);
	snprintf(flag, sizeof(flag), "%s/progs_loaded", t->run_dir);
	assert_int_equal(access(flag, F_OK), 0);
	snprintf(not_bpffs, sizeof(not_bpffs), "%s/not-bpffs", t->dir);
	assert_int_equal(ltest_run(t, "--pin-dir", not_bpffs, NULL), 3);
	assert_true(ltest_output_has(t, "is not on a bpffs"));
	assert_int_equal(access(flag, F_OK), -1);
	assert_true(strstr(ltest_str(t->status, "error"), "bpffs") != NULL);

	assert_int_equal(ltest_run(t, NULL), 0);
	snprintf(nothing, sizeof(nothing), "%s/no-such-dir", t->dir);
	assert_int_equal(ltest_run(t, "--obj-dir", nothing, NULL), 3);
	assert_true(ltest_output_has(t, "cannot read object directory"));
	assert_int_equal(access(flag, F_OK), -1);
	/* Nothing was touched, and the pins of the earlier run stay known. */
	assert_true(strstr(ltest_str(t->status, "error"), "object directory") != NULL);
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "LOADED");

	touch(flag);
	assert_int_equal(ltest_run(t, "--run-dir", "/proc/kstats-no-such-dir", NULL), 3);
	assert_true(ltest_output_has(t, "--run-dir"));
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A damaged status file is survived, and never makes us touch other files. */
static void test_damaged_status_file(void **state)
{
	struct ltest *t = *state;
	char text[2048], victim[256];

	assert_int_equal(ltest_run(t, NULL), 0);
	snprintf(victim, sizeof(victim), "%s/victim", t->dir);
	write_text(victim, "keep me\n");
	snprintf(text, sizeof(text),
		 "{\"version\": 1, \"pin_dir\": \"%s\", \"objects\": [7, "
		 "{\"name\": \"compaction\", \"pins\": \"x\", \"maps\": [1, {\"name\": null}]}, "
		 "{\"name\": \"gone\", \"pins\": [\"%s\", \"%s/../x\", null]}]}",
		 t->kt.pin_dir, victim, t->kt.pin_dir);
	write_text(t->status_path, text);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "LOADED");

	write_text(t->status_path, text);
	assert_int_equal(ltest_run(t, "--unload", NULL), 0);
	assert_int_equal(access(victim, F_OK), 0);

	write_text(t->status_path, "{ not json");
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_true(ltest_output_has(t, "ignoring unreadable"));
}

/* Two loaders at once on one pin dir: one waits; one program attached. */
static void test_concurrent_runs(void **state)
{
	struct ltest *t = *state;
	pid_t pids[2];
	int i;

	assert_int_equal(ltest_add(t, TB("count"), "lc"), 0);
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (!pids[i])
			_exit(ltest_run(t, NULL));
	}
	for (i = 0; i < 2; i++)
		assert_int_equal(ktest_loader_status(pids[i]), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_int_equal(ltest_links_using_map(ltest_u64(ltest_named(ltest_obj(t, "lc"),
			 "maps", "rename_count_map"), "map_id")), 1);
	assert_true(json_object_get_boolean(json_object_object_get(
		ltest_named(ltest_obj(t, "lc"), "programs", "on_rename"), "kept")));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, ltest_teardown)
	const struct CMUnitTest tests[] = {
		T(test_mounts_missing_bpffs),
		T(test_status_file),
		T(test_boot_logs_to_kmsg),
		T(test_boot_failure_warns),
		T(test_exit_codes),
		T(test_concurrent_runs),
		T(test_damaged_status_file),
	};

	return KTEST_MAIN("loader_env", tests, NULL, NULL);
}
