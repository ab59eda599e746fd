// SPDX-License-Identifier: GPL-2.0
/*
 * One metric name is exported once.  compaction.bpf and a copy of it named
 * Compaction.bpf both declare CompactionDuration: the loader loads the first
 * in sorted order and skips the other with its reason (kstats status shows
 * it); dump --prometheus passes promtool with one family per name; pull
 * writes one CompactionDuration atom.  compaction's map, pinned by the run
 * before the copy arrived, stays pinned as an older loader's would, so the
 * consumers' own rule is exercised too.  An object declaring one name for
 * two maps is FAILED_OBJECT.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "bpf_telemetry.h"
#include "dumptest.h"
#include "kmain.h"
#include "kstats_pins.h"

#define MAP "compaction_duration_map"
#define FAMILY "# TYPE kstats_compaction_duration_seconds_bucket untyped\n"

static struct dumptest d;
static char run_status[512];

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static bool pinned(const char *kind, const char *obj, const char *name)
{
	char path[512];

	kstats_pin_path(path, sizeof(path), d.kt.pin_dir, kind, obj, name);
	return !access(path, F_OK);
}

static size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (; (text = strstr(text, needle)); text += strlen(needle))
		n++;
	return n;
}

static int put(const char *obj, uint64_t count)
{
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS] = { [20] = count };
	__u32 key = 0;

	return dt_map_update(&d, obj, MAP, &key, b);
}

/* compaction loaded alone first; then its copy Compaction.bpf arrives. */
static int setup(void **state)
{
	static const char *const objs[] = { "bpf/compaction.bpf", NULL };
	char target[512], link[512], cwd[256];

	(void)state;
	if (dt_init(&d, "metric", objs) || !getcwd(cwd, sizeof(cwd)))
		return -1;
	snprintf(target, sizeof(target), "%s%s%s/bpf/compaction.bpf",
		 *d.kt.build == '/' ? "" : cwd, *d.kt.build == '/' ? "" : "/", d.kt.build);
	snprintf(link, sizeof(link), "%s/Compaction.bpf", d.kt.obj_dir);
	if (symlink(target, link))
		return -1;
	snprintf(run_status, sizeof(run_status), "/tmp/%s-run/loader-status.json",
		 strrchr(d.kt.pin_dir, '/') + 1);
	return ktest_run_loader(&d.kt, NULL) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	dt_fini(&d);
	return 0;
}

static void run_ok(struct dt_result *r, const char *const *args)
{
	assert_int_equal(dt_run(&d, r, false, args), 0);
	if (r->status)
		fprintf(stderr, "kstats %s: %s%s", args[0], r->out, r->err);
	assert_int_equal(r->status, 0);
}

/* Old: both loaded. */
static void test_loader_loads_one(void **state)
{
	struct dt_result r;

	(void)state;
	/* "Compaction" sorts before "compaction": it loads, the other is skipped. */
	assert_true(pinned("link", "Compaction", "on_compaction_end"));
	assert_false(pinned("link", "compaction", "on_compaction_end"));
	assert_true(pinned("map", "compaction", MAP));	/* counts kept */
	run_ok(&r, ARGS("status", "--status-file", run_status));
	assert_non_null(strstr(r.out, "compaction  SKIPPED_DUPLICATE_METRIC: metric "
				      "CompactionDuration is exported by object Compaction"));
	assert_non_null(strstr(r.out, "Compaction  LOADED"));
	dt_result_free(&r);

	/* A re-run decides the same way. */
	assert_int_equal(ktest_run_loader(&d.kt, NULL), 0);
	assert_true(pinned("link", "Compaction", "on_compaction_end"));
	assert_false(pinned("link", "compaction", "on_compaction_end"));
}

/* Old: two HELP and TYPE lines for one family; promtool failed. */
static void test_dump_exports_once(void **state)
{
	static const char *const dump[] = { "dump", "--prometheus", "--obj-dir", d.kt.obj_dir,
					    "--pin-dir", d.kt.pin_dir, "--status-file",
					    run_status, NULL };
	struct dt_result r;

	(void)state;
	assert_int_equal(put("compaction", 1000), 0);
	assert_int_equal(put("Compaction", 7), 0);
	run_ok(&r, dump);
	assert_int_equal(count_of(r.out, FAMILY), 1);
	assert_non_null(strstr(r.out, "from Compaction/" MAP));
	assert_non_null(strstr(r.err, "warning: metric CompactionDuration is declared by "
				      "objects Compaction and compaction; showing Compaction's"));
	if (dt_have("promtool")) {
		struct dt_result p;

		assert_int_equal(dt_sh("promtool check metrics", r.out, &p), 0);
		if (p.status)
			fprintf(stderr, "promtool: %s%s", p.out, p.err);
		assert_int_equal(p.status, 0);
		dt_result_free(&p);
	}
	dt_result_free(&r);
}

/* Pins of an older loader that loaded both: the first in sorted order. */
static void test_dump_without_status(void **state)
{
	char missing[512];
	struct dt_result r;

	(void)state;
	dt_path(&d, "no-status.json", missing, sizeof(missing));
	run_ok(&r, ARGS("dump", "--prometheus", "--obj-dir", d.kt.obj_dir, "--pin-dir",
			d.kt.pin_dir, "--status-file", missing));
	assert_int_equal(count_of(r.out, FAMILY), 1);
	assert_non_null(strstr(r.out, "from Compaction/" MAP));
	dt_result_free(&r);
}

/* Old: two CompactionDuration atoms for the same events. */
static void test_pull_one_atom(void **state)
{
	char state_dir[512], out_dir[512];
	struct dt_result r;

	(void)state;
	dt_path(&d, "state", state_dir, sizeof(state_dir));
	dt_path(&d, "atoms", out_dir, sizeof(out_dir));
	assert_int_equal(mkdir(state_dir, 0700), 0);
	assert_int_equal(mkdir(out_dir, 0700), 0);
	assert_int_equal(put("compaction", 1000), 0);
	assert_int_equal(put("Compaction", 7), 0);
	run_ok(&r, ARGS("pull", "--obj-dir", d.kt.obj_dir, "--pin-dir", d.kt.pin_dir,
			"--status-file", run_status, "--state-dir", state_dir, "--out-dir",
			out_dir));
	dt_result_free(&r);
	run_ok(&r, ARGS("atoms", "--out-dir", out_dir));
	if (count_of(r.out, "CompactionDuration (atom") != 1)
		fprintf(stderr, "kstats atoms: %s%s", r.out, r.err);
	assert_int_equal(count_of(r.out, "CompactionDuration (atom"), 1);
	/* Compaction's 7 events of 1 to 2 s are exported, not compaction's 1000. */
	assert_non_null(strstr(r.out, "-> 2.097s : 7 "));
	assert_null(strstr(r.out, ": 1000 "));
	dt_result_free(&r);
}

/* Old: loaded, exporting TestDupLatency twice. */
static void test_one_object_two_maps(void **state)
{
	struct dt_result r;

	(void)state;
	assert_int_equal(dt_add_object(&d, "tests/bpf/loaderDupMetric.bpf"), 0);
	assert_int_equal(ktest_run_loader(&d.kt, NULL), 0);
	assert_false(pinned("map", "loaderDupMetric", "dup_a_map"));
	run_ok(&r, ARGS("status", "--status-file", run_status));
	assert_non_null(strstr(r.out, "loaderDupMetric  FAILED_OBJECT: maps dup_a_map and "
				      "dup_b_map both declare metric test_dup_latency"));
	dt_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loader_loads_one),
		cmocka_unit_test(test_dump_exports_once),
		cmocka_unit_test(test_dump_without_status),
		cmocka_unit_test(test_pull_one_atom),
		cmocka_unit_test(test_one_object_two_maps),
	};

	return KTEST_MAIN("loader_metric", tests, setup, teardown);
}
