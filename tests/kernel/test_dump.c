// SPDX-License-Identifier: GPL-2.0
/*
 * kstats dump against real pinned maps: the loader loads the test object
 * tests/bpf/dumpLabels.bpf into a private pin dir, the test writes known
 * accumulator values with bpf_map_update_elem, and the output of the real
 * kstats binary is compared with tests/golden/dump and validated by jq and
 * promtool.
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
#include <sys/wait.h>
#include <cmocka.h>

#include "bpf_telemetry.h"
#include "dumptest.h"
#include "kmain.h"
#include "kstats_keys.h"

#define OBJ "dumpLabels"
#define P40 (1ll << 40)

static struct dumptest d;
static char status_file[512];

struct pair_key {
	__u32 node_id;
	__u32 state;
};

static int put_hist(const char *map, const void *key, const int64_t *pairs)
{
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS];

	dt_buckets(b, pairs);
	return dt_map_update(&d, OBJ, map, key, b);
}

static int put_name(__u32 id, const char *name)
{
	struct kstats_name n = {};

	snprintf(n.name, sizeof(n.name), "%s", name);
	return dt_map_update(&d, OBJ, "dump_pool_names_map", &id, &n);
}

/* The fixture every golden file shows. */
static int write_fixture(void)
{
	__u32 fg = KSTATS_PROCESS_STATE_FOREGROUND, cached = KSTATS_PROCESS_STATE_CACHED;
	__u32 native = KSTATS_PROCESS_STATE_NATIVE, unknown = 42, zero = 0, one = 1;
	__u32 pool1 = 1, pool2 = 2, pool3 = 3, phase = KSTATS_SUSPEND_PHASE_DPM_SUSPEND;
	struct pair_key pk = { 1, KSTATS_PROCESS_STATE_FOREGROUND };
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS] = { [14] = 2 };
	int ret = 0;

	ret |= put_hist("dump_state_map", &fg, (int64_t[]){ 3, 5, 4, 10, 6, 2, -1 });
	ret |= put_hist("dump_state_map", &cached, (int64_t[]){ 10, 1, -1 });
	ret |= put_hist("dump_state_map", &native, (int64_t[]){ -1 });
	ret |= put_hist("dump_state_map", &unknown, (int64_t[]){ 0, 3, -1 });
	ret |= dt_map_update(&d, "dumpEnum", "dump_phase_map", &phase, b);
	ret |= put_hist("dump_node_map", &zero, (int64_t[]){ 11, 3, 12, 1, -1 });
	ret |= put_hist("dump_node_map", &one, (int64_t[]){ 0, 7, -1 });
	ret |= put_hist("dump_pair_map", &pk, (int64_t[]){ 2, 1, -1 });
	ret |= put_hist("dump_pool_map", &pool1, (int64_t[]){ 12, 4, 20, 1, -1 });
	ret |= put_hist("dump_pool_map", &pool2, (int64_t[]){ 15, 2, -1 });
	ret |= put_hist("dump_pool_map", &pool3, (int64_t[]){ 30, 1, 31, 1, -1 });
	ret |= put_name(1, "reserved");
	ret |= put_name(2, "a \"b\"\\c");
	ret |= put_hist("dump_total_map", &zero,
			(int64_t[]){ 5, P40, 6, 2 * P40 + 12345, 7, 1ll << 62, 31, 3, -1 });
	return ret;
}

static int setup(void **state)
{
	static const char *const objs[] = { "tests/bpf/" OBJ ".bpf", "tests/bpf/dumpEnum.bpf",
					    NULL };
	char buf[512];

	(void)state;
	if (dt_init(&d, "dump", objs) || write_fixture())
		return -1;
	/* Known to the catalog but never loaded: its maps are not pinned. */
	if (dt_add_object(&d, "bpf/compaction.bpf"))
		return -1;
	dt_path(&d, "loader-status.json", status_file, sizeof(status_file));
	snprintf(buf, sizeof(buf),
		 "{\"version\":1,\"kernel_release\":\"x\",\"objects\":[{\"name\":\"compaction\","
		 "\"path\":\"x\",\"outcome\":\"SKIPPED_NO_ATTACH_POINT\",\"reason\":"
		 "\"no attach point for mm_compaction_begin in this kernel\",\"critical\":false,"
		 "\"programs\":[],\"maps\":[]}]}\n");
	return ktest_write_file(status_file, buf);
}

static int teardown(void **state)
{
	(void)state;
	dt_fini(&d);
	return 0;
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define DUMP(...) ARGS("dump", "--obj-dir", d.kt.obj_dir, "--pin-dir", d.kt.pin_dir, \
		       "--status-file", status_file, __VA_ARGS__)

static void run_ok(struct dt_result *r, const char *const *args)
{
	assert_int_equal(dt_run(&d, r, false, args), 0);
	if (r->status)
		fprintf(stderr, "kstats: %s", r->err);
	assert_int_equal(r->status, 0);
}

static void test_ascii_golden(void **state)
{
	struct dt_result r;

	(void)state;
	run_ok(&r, DUMP("--obj-dir", d.kt.obj_dir));
	assert_int_equal(dt_golden("all.txt", r.out), 0);
	dt_result_free(&r);
}

static void test_ascii_all_buckets(void **state)
{
	struct dt_result r;

	(void)state;
	run_ok(&r, DUMP("--all", "TestStateLatency"));
	assert_int_equal(dt_golden("state_all.txt", r.out), 0);
	dt_result_free(&r);
}

/* Columns of a UTF-8 line ("µs" takes one). */
static size_t columns(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Every row of a histogram block has the same width: nothing overflows. */
static void test_huge_counts(void **state)
{
	const uint64_t total = (uint64_t)P40 + 2 * P40 + 12345 + (1ull << 62) + 3;
	uint64_t huge[BPF_TELEMETRY_NR_BUCKETS] = { [1] = UINT64_MAX, [2] = 5 };
	char want[64], *line, *save = NULL;
	size_t width = 0;
	struct dt_result r;
	__u32 key = KSTATS_PROCESS_STATE_UNSPECIFIED;

	(void)state;
	run_ok(&r, DUMP("TestSystemWide"));
	snprintf(want, sizeof(want), "count %llu,", (unsigned long long)total);
	assert_non_null(strstr(r.out, want));
	assert_non_null(strstr(r.out, " 4611686018427387904 |****************************************|"));
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, " -> "))
			continue;
		if (!width)
			width = columns(line);
		assert_int_equal(columns(line), width);
	}
	assert_true(width > 0);
	dt_result_free(&r);
	run_ok(&r, DUMP("--json", "TestSystemWide"));
	snprintf(want, sizeof(want), "\"count\": %llu,", (unsigned long long)total);
	assert_non_null(strstr(r.out, want));
	dt_result_free(&r);

	/* The sum of 2^64 - 1 and more saturates instead of wrapping. */
	assert_int_equal(dt_map_update(&d, OBJ, "dump_state_map", &key, huge), 0);
	run_ok(&r, DUMP("--prometheus", "TestStateLatency"));
	assert_non_null(strstr(r.out, "kstats_test_state_latency_seconds_count"
				      "{process_state=\"UNSPECIFIED\"} 18446744073709551615\n"));
	dt_result_free(&r);
	run_ok(&r, DUMP("TestStateLatency"));
	assert_non_null(strstr(r.out, "count 18446744073709551615,"));
	assert_non_null(strstr(r.out, ": 18446744073709551615 |****************************************|"));
	dt_result_free(&r);
	assert_int_equal(dt_map_delete(&d, OBJ, "dump_state_map", &key), 0);
}

/* cmd (a jq or promtool check) with input on stdin passes, or fails. */
static void check_sh(const char *cmd, const char *input, bool pass)
{
	struct dt_result r;

	assert_true(input && *input);	/* jq -e passes on empty input */
	assert_int_equal(dt_sh(cmd, input, &r), 0);
	if (pass && r.status)
		fprintf(stderr, "%s: %s%s\n", cmd, r.out, r.err);
	if (pass)
		assert_int_equal(r.status, 0);
	else
		assert_int_not_equal(r.status, 0);
	dt_result_free(&r);
}

/* Every output of the jq filter on input is true, and there is one. */
#define check_jq(filter, input) assert_int_equal(dt_jq_all(filter, input), 0)

static void test_json_golden_and_schema(void **state)
{
	struct dt_result r, jq;

	(void)state;
	if (!dt_have("jq"))
		skip();
	run_ok(&r, DUMP("--json"));
	assert_int_equal(dt_sh("jq -S 'del(.time)'", r.out, &jq), 0);
	assert_int_equal(jq.status, 0);
	assert_int_equal(dt_golden("all.json", jq.out), 0);
	dt_result_free(&jq);
	check_sh("jq -e -f tests/golden/dump/schema.jq", r.out, true);
	/* The schema check can fail: a document with 31 buckets does. */
	check_sh("jq '.metrics[0].histograms[0].buckets |= .[1:]' | "
		 "jq -e -f tests/golden/dump/schema.jq", r.out, false);
	dt_result_free(&r);
}

/*
 * le of bucket i is 2^(i+1) us in seconds (latencies: whole microseconds of
 * truncated nanoseconds) or 2^(i+1) - 1 bytes; the last is +Inf.
 */
static void check_le_mapping(const char *text)
{
	char *copy = strdup(text), *line, *save = NULL;
	uint64_t prev = 0;
	int i = 0, series = 0;

	assert_non_null(copy);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *le = strstr(line, "le=\"");
		unsigned long long v;

		if (line[0] == '#' || !strstr(line, "_bucket{"))
			continue;
		assert_non_null(le);
		v = strtoull(strrchr(line, ' ') + 1, NULL, 10);
		if (i == BPF_TELEMETRY_NR_BUCKETS - 1) {
			assert_memory_equal(le + 4, "+Inf\"", 5);
		} else {
			double bound = strtod(le + 4, NULL), want = (double)(2ull << i);

			if (strstr(line, "_seconds_bucket"))
				want /= 1e6;
			else
				want -= 1;
			assert_true(bound >= want * (1 - 1e-12) && bound <= want * (1 + 1e-12));
		}
		assert_true(v >= prev);
		prev = v;
		if (++i == BPF_TELEMETRY_NR_BUCKETS) {
			i = 0;
			prev = 0;
			series++;
		}
	}
	free(copy);
	assert_int_equal(i, 0);
	assert_int_equal(series, 12 + KSTATS_SUSPEND_PHASE_COUNT - 1);
}

static void test_prometheus_golden_and_promtool(void **state)
{
	struct dt_result r;

	(void)state;
	run_ok(&r, DUMP("--prometheus"));
	assert_int_equal(dt_golden("all.prom", r.out), 0);
	check_le_mapping(r.out);
	if (!dt_have("promtool")) {
		dt_result_free(&r);
		skip();		/* Debian package prometheus; make deps installs it */
	}
	check_sh("promtool check metrics", r.out, true);
	/* promtool does reject a broken exposition (the check can fail). */
	check_sh("sed 's/_count{/_count {/;s/le=\"+Inf\"/le=+Inf/' | promtool check metrics",
		 r.out, false);
	dt_result_free(&r);
}

/* OpenMetrics 1.0, checked by the Python client's strict parser. */
static void test_openmetrics_parser(void **state)
{
	static const char parse[] = "/usr/bin/python3 -c 'import sys; "
		"from prometheus_client.openmetrics.parser import text_string_to_metric_families as p; "
		"print(sum(1 for _ in p(sys.stdin.read())))'";
	char broken[sizeof(parse) + 32];
	struct dt_result r;

	(void)state;
	if (dt_sh("/usr/bin/python3 -c 'import prometheus_client.openmetrics.parser'", NULL, &r) ||
	    r.status) {
		dt_result_free(&r);
		skip();		/* Debian package python3-prometheus-client; make deps installs it */
	}
	dt_result_free(&r);
	run_ok(&r, DUMP("--openmetrics"));
	check_le_mapping(r.out);
	check_sh(parse, r.out, true);
	/* The parser does reject what OpenMetrics forbids: no # EOF. */
	snprintf(broken, sizeof(broken), "sed '/^# EOF/d' | %s", parse);
	check_sh(broken, r.out, false);
	dt_result_free(&r);
}

static void test_output_atomic(void **state)
{
	char path[600], dir[512], cmd[1400];
	struct dt_result r, file;
	struct stat before, after;

	(void)state;
	dt_path(&d, "textfile", dir, sizeof(dir));
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/kstats.prom", dir);
	assert_int_equal(ktest_write_file(path, "old\n"), 0);
	assert_int_equal(stat(path, &before), 0);
	run_ok(&r, DUMP("--prometheus", "--output", path));
	assert_string_equal(r.out, "");
	dt_result_free(&r);
	run_ok(&r, DUMP("--prometheus"));
	snprintf(cmd, sizeof(cmd), "cat %s; ls -A %s", path, dir);
	assert_int_equal(dt_sh(cmd, NULL, &file), 0);
	/* The new content, then exactly one directory entry: no temp left. */
	assert_memory_equal(file.out, r.out, strlen(r.out));
	assert_string_equal(file.out + strlen(r.out), "kstats.prom\n");
	assert_int_equal(stat(path, &after), 0);
	assert_int_not_equal(before.st_ino, after.st_ino);	/* renamed over */
	assert_int_equal(after.st_mode & 0777, 0644);
	dt_result_free(&file);
	dt_result_free(&r);

	snprintf(path, sizeof(path), "%s/missing-dir/kstats.prom", dir);
	assert_int_equal(dt_run(&d, &r, false, DUMP("--prometheus", "--output", path)), 0);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, "cannot write"));
	assert_non_null(strstr(r.err, "No such file or directory"));
	dt_result_free(&r);
}

static void test_filter(void **state)
{
	struct dt_result r;

	(void)state;
	run_ok(&r, DUMP("testnodelatency", "TestPoolSizes"));
	assert_non_null(strstr(r.out, "\nTestNodeLatency  node 0\n"));
	assert_non_null(strstr(r.out, "\nTestPoolSizes  dump_pool = reserved\n"));
	assert_null(strstr(r.out, "TestStateLatency"));
	assert_null(strstr(r.out, "not loaded"));
	dt_result_free(&r);
}

static void test_unknown_metric(void **state)
{
	struct dt_result r;

	(void)state;
	assert_int_equal(dt_run(&d, &r, false, DUMP("NoSuchMetric")), 0);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err, "kstats dump: unknown metric 'NoSuchMetric'; known metrics: "
			    "CompactionDuration, TestPhaseLatency, TestStateLatency, TestNodeLatency, "
			    "TestPairLatency, TestPoolSizes, TestSystemWide\n");
	assert_string_equal(r.out, "");
	dt_result_free(&r);
}

static void test_not_loaded(void **state)
{
	char empty[512], want[1024], failed[512];
	struct dt_result r;

	(void)state;
	assert_int_equal(dt_run(&d, &r, false, DUMP("CompactionDuration")), 0);
	assert_int_equal(r.status, 3);
	snprintf(want, sizeof(want), "kstats dump: CompactionDuration is not loaded under %s "
		 "(compaction: SKIPPED_NO_ATTACH_POINT: no attach point for mm_compaction_begin "
		 "in this kernel)\n", d.kt.pin_dir);
	assert_string_equal(r.err, want);
	dt_result_free(&r);

	/* A failed object: the status says more. */
	dt_path(&d, "failed-status.json", failed, sizeof(failed));
	assert_int_equal(ktest_write_file(failed, "{\"version\":1,\"objects\":[{\"name\":"
		"\"compaction\",\"outcome\":\"FAILED_VERIFIER\",\"reason\":\"load: E2BIG\"}]}"), 0);
	assert_int_equal(dt_run(&d, &r, false, ARGS("dump", "--obj-dir", d.kt.obj_dir,
		"--pin-dir", d.kt.pin_dir, "--status-file", failed, "CompactionDuration")), 0);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "(compaction: FAILED_VERIFIER: load: E2BIG); "
				      "see kstats status\n"));
	dt_result_free(&r);

	/* Without a status file the reason is what kstats sees itself. */
	assert_int_equal(dt_run(&d, &r, false, ARGS("dump", "--obj-dir", d.kt.obj_dir,
		"--pin-dir", d.kt.pin_dir, "--status-file", "/nonexistent",
		"CompactionDuration")), 0);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "(compaction: its map is not pinned); run kstats-loader\n"));
	dt_result_free(&r);

	/*
	 * The footer said "see kstats status" even with no status to see; it
	 * now names the fix the message above names (issue 28).
	 */
	assert_int_equal(dt_run(&d, &r, false, ARGS("dump", "--obj-dir", d.kt.obj_dir,
		"--pin-dir", d.kt.pin_dir, "--status-file", "/nonexistent")), 0);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\nnot loaded: CompactionDuration (run kstats-loader)\n"));
	dt_result_free(&r);

	/* A pin dir on bpffs that holds nothing. */
	snprintf(empty, sizeof(empty), "%s-empty", d.kt.pin_dir);
	assert_int_equal(mkdir(empty, 0755), 0);
	assert_int_equal(dt_run(&d, &r, false, ARGS("dump", "--obj-dir", d.kt.obj_dir,
		"--pin-dir", empty)), 0);
	rmdir(empty);
	assert_int_equal(r.status, 3);
	snprintf(want, sizeof(want), "kstats dump: no metric is loaded under %s; "
		 "run kstats-loader\n", empty);
	assert_string_equal(r.err, want);
	dt_result_free(&r);

	/* A pin dir that does not exist. */
	assert_int_equal(dt_run(&d, &r, false, ARGS("dump", "--obj-dir", d.kt.obj_dir,
		"--pin-dir", empty)), 0);
	assert_int_equal(r.status, 3);
	snprintf(want, sizeof(want), "kstats dump: nothing is loaded: %s does not exist; "
		 "run kstats-loader\n", empty);
	assert_string_equal(r.err, want);
	dt_result_free(&r);
}

static void test_bpffs_missing(void **state)
{
	char cmd[2048];
	struct dt_result r;

	(void)state;
	/* A pin dir that is a plain directory, not bpffs. */
	assert_int_equal(dt_run(&d, &r, false, ARGS("dump", "--obj-dir", d.kt.obj_dir,
		"--pin-dir", d.tmp)), 0);
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "is not on bpffs (bpffs is not mounted there); "
				      "run kstats-loader, which mounts it"));
	dt_result_free(&r);
	if (!dt_have("unshare"))
		skip();
	/* The real case: /sys/fs/bpf unmounted, in a private mount namespace. */
	snprintf(cmd, sizeof(cmd), "unshare -m sh -c 'umount -l /sys/fs/bpf || exit 77; "
		 "exec %s dump --obj-dir %s --pin-dir %s'", d.kstats, d.kt.obj_dir, d.kt.pin_dir);
	assert_int_equal(dt_sh(cmd, NULL, &r), 0);
	if (r.status == 77) {
		dt_result_free(&r);
		skip();
	}
	assert_int_equal(r.status, 3);
	assert_non_null(strstr(r.err, "kstats dump: bpffs is not mounted (no bpffs at "));
	assert_non_null(strstr(r.err, "run kstats-loader, which mounts it, or: "
				      "mount -t bpf bpf /sys/fs/bpf\n"));
	dt_result_free(&r);
}

static void test_permission(void **state)
{
	struct dt_result r;

	(void)state;
	if (!dt_have("setpriv"))
		skip();
	assert_int_equal(dt_run(&d, &r, true, DUMP("TestNodeLatency")), 0);
	assert_int_equal(r.status, 5);
	assert_non_null(strstr(r.err, "; needs CAP_BPF and group kstats\n"));
	assert_string_equal(r.out, "");
	dt_result_free(&r);
}

static void bump(__u32 key, int bucket, uint64_t by)
{
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS];

	assert_int_equal(dt_map_lookup(&d, OBJ, "dump_state_map", &key, b), 0);
	b[bucket] += by;
	assert_int_equal(dt_map_update(&d, OBJ, "dump_state_map", &key, b), 0);
}

/* Two intervals, each showing exactly what was added during it. */
static void test_live_json(void **state)
{
	static char line1[65536], line2[65536], both[2 * 65536 + 2];
	char banner[256];
	int out, err;
	pid_t pid;

	(void)state;
	if (!dt_have("jq"))
		skip();
	pid = dt_spawn(&d, DUMP("--json", "--interval", "1", "--count", "2",
				"TestStateLatency", "TestNodeLatency"), &out, &err);
	assert_true(pid > 0);
	/* The banner comes after the baseline read. */
	assert_int_equal(dt_read_line(err, banner, sizeof(banner), 10000), 0);
	if (!strstr(banner, "every 1s interval"))
		fprintf(stderr, "kstats said: %s\n", banner);
	assert_non_null(strstr(banner, "every 1s interval"));
	bump(KSTATS_PROCESS_STATE_FOREGROUND, 3, 5);
	assert_int_equal(dt_read_line(out, line1, sizeof(line1), 10000), 0);
	bump(KSTATS_PROCESS_STATE_FOREGROUND, 4, 7);
	bump(KSTATS_PROCESS_STATE_CACHED, 10, 1);
	assert_int_equal(dt_read_line(out, line2, sizeof(line2), 10000), 0);
	assert_int_equal(ktest_loader_status(pid), 0);
	close(out);
	close(err);

	check_sh("jq -e -f tests/golden/dump/schema.jq", line1, true);
	check_sh("jq -e -f tests/golden/dump/schema.jq", line2, true);
	check_jq("(.interval.seconds > 0.9 and .interval.seconds < 5) and "
		"([.metrics[] | select(.metric == \"TestStateLatency\") | .histograms[]] == "
		"[{labels: {process_state: \"FOREGROUND\"}, key: [4], count: 5, p50: 12, "
		"p50_lower_bound: false, p99: 15.92, p99_lower_bound: false, total_min: 40, "
		"total_max: 75, buckets: ([range(32)] | map(if . == 3 then 5 else 0 end))}]) and "
		"([.metrics[] | select(.metric == \"TestNodeLatency\") | .histograms[]] == [])",
		 line1);
	check_jq("([.metrics[0].histograms[] | {l: .labels.process_state, b: .buckets}] == "
		"[{l: \"FOREGROUND\", b: ([range(32)] | map(if . == 4 then 7 else 0 end))}, "
		"{l: \"CACHED\", b: ([range(32)] | map(if . == 10 then 1 else 0 end))}])",
		 line2);
	/* The second window starts where the first ended. */
	snprintf(both, sizeof(both), "%s\n%s\n", line1, line2);
	check_sh("jq -s -e '.[1].interval.since_boottime_ns == .[0].time.boottime_ns'",
		 both, true);
}

static void test_live_ascii(void **state)
{
	struct dt_result r;
	const char *p;
	int stamps = 0;

	(void)state;
	run_ok(&r, DUMP("--interval", "0.3", "--count", "2", "TestNodeLatency"));
	for (p = r.out; (p = strstr(p, "  events in the last ")); p++)
		stamps++;
	assert_int_equal(stamps, 2);
	assert_non_null(strstr(r.out, "\nTestNodeLatency  no events\n"));
	/* "\n2024-05-01 12:00:00  events in the last 0.30s" */
	assert_int_equal(r.out[0], '\n');
	assert_true(r.out[5] == '-' && r.out[8] == '-' && r.out[11] == ' ' && r.out[14] == ':');
	dt_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ascii_golden),
		cmocka_unit_test(test_ascii_all_buckets),
		cmocka_unit_test(test_huge_counts),
		cmocka_unit_test(test_json_golden_and_schema),
		cmocka_unit_test(test_prometheus_golden_and_promtool),
		cmocka_unit_test(test_openmetrics_parser),
		cmocka_unit_test(test_output_atomic),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_unknown_metric),
		cmocka_unit_test(test_not_loaded),
		cmocka_unit_test(test_bpffs_missing),
		cmocka_unit_test(test_permission),
		cmocka_unit_test(test_live_json),
		cmocka_unit_test(test_live_ascii),
	};
	return KTEST_MAIN("dump", tests, setup, teardown);
}
