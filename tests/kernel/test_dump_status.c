// SPDX-License-Identifier: GPL-2.0
/*
 * kstats status against real loaded programs and pinned maps.  The loader
 * loads compaction.bpf and the test object dumpLabels.bpf into a private
 * pin dir; the test writes the loader status file itself (the consumer side
 * of the contract in btfreader/kstats_status.h) from what the kernel holds: the real
 * program ids, map pins and link pins.  Run counts come from real
 * compaction events while `kstats status --stats` has BPF stats on.
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
#include <sys/wait.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_telemetry.h"
#include "dumptest.h"
#include "kmain.h"
#include "kstats_pins.h"

static struct dumptest d;
static char status_file[512];

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static char *append(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
	return buf;
}

static __u32 pin_id(const char *pin, bool prog)
{
	struct bpf_prog_info pi = {};
	struct bpf_map_info mi = {};
	__u32 len = prog ? sizeof(pi) : sizeof(mi);
	int fd = bpf_obj_get(pin);
	__u32 id = 0;

	if (fd < 0)
		return 0;
	if (!bpf_obj_get_info_by_fd(fd, prog ? (void *)&pi : (void *)&mi, &len))
		id = prog ? pi.id : mi.id;
	close(fd);
	return id;
}

/* One variant of a tracepoint handler: loaded when its prog pin exists. */
static void add_prog(char *buf, size_t len, const char *obj, const char *fn,
		     const char *type, const char *tp, bool first)
{
	char section[128], pin[512], link[512];
	__u32 id;

	snprintf(section, sizeof(section), "%s/%s", type, tp);
	kstats_pin_path(pin, sizeof(pin), d.kt.pin_dir, "prog", obj, section);
	kstats_pin_path(link, sizeof(link), d.kt.pin_dir, "link", obj, fn);
	id = pin_id(pin, true);
	append(buf, len, "%s{\"name\":\"%s\",\"section\":\"%s\",\"attach\":\"%s\","
	       "\"attach_type\":\"%s\",\"outcome\":\"%s\",\"reason\":\"%s\","
	       "\"prog_id\":%u,\"link_pin\":\"%s\"}", first ? "" : ",", fn, section, tp,
	       type, id ? "LOADED" : "SKIPPED_VARIANT", id ? "" : "a preferred variant is loaded",
	       id, id ? link : "");
}

static void add_map(char *buf, size_t len, const char *obj, const char *map, bool first)
{
	char pin[512];

	kstats_pin_path(pin, sizeof(pin), d.kt.pin_dir, "map", obj, map);
	append(buf, len, "%s{\"name\":\"%s\",\"pin\":\"%s\",\"map_id\":%u,\"reused\":false,"
	       "\"created_boottime_ns\":1,\"created_realtime_ns\":1}", first ? "" : ",",
	       map, pin, pin_id(pin, false));
}

static void add_object(char *buf, size_t len, const char *name, const char *outcome,
		       const char *reason, bool first)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s.bpf", d.kt.obj_dir, name);
	append(buf, len, "%s{\"name\":\"%s\",\"path\":\"%s\",\"outcome\":\"%s\","
	       "\"reason\":\"%s\",\"critical\":false,\"programs\":[", first ? "" : ",",
	       name, path, outcome, reason);
}

/* The status the loader would write for what is loaded now. */
static int write_status(const char *path, const char *release, const char *extra)
{
	static char buf[16384];

	snprintf(buf, sizeof(buf), "{\"version\":1,\"kernel_release\":\"%s\",\"objects\":[",
		 release);
	add_object(buf, sizeof(buf), "compaction", "LOADED", "", true);
	add_prog(buf, sizeof(buf), "compaction", "on_compaction_begin", "tp_btf",
		 "mm_compaction_begin", true);
	add_prog(buf, sizeof(buf), "compaction", "on_compaction_begin_raw", "raw_tp",
		 "mm_compaction_begin", false);
	add_prog(buf, sizeof(buf), "compaction", "on_compaction_end", "tp_btf",
		 "mm_compaction_end", false);
	add_prog(buf, sizeof(buf), "compaction", "on_compaction_end_raw", "raw_tp",
		 "mm_compaction_end", false);
	append(buf, sizeof(buf), "],\"maps\":[");
	add_map(buf, sizeof(buf), "compaction", "compaction_start_map", true);
	add_map(buf, sizeof(buf), "compaction", "compaction_duration_map", false);
	append(buf, sizeof(buf), "]}");
	add_object(buf, sizeof(buf), "dumpLabels", "LOADED", "", false);
	add_prog(buf, sizeof(buf), "dumpLabels", "on_dump_never", "tp_btf",
		 "suspend_resume", true);
	append(buf, sizeof(buf), "],\"maps\":[");
	add_map(buf, sizeof(buf), "dumpLabels", "dump_state_map", true);
	add_map(buf, sizeof(buf), "dumpLabels", "dump_events_ringbuf", false);
	add_map(buf, sizeof(buf), "dumpLabels", "dump_events_drops", false);
	append(buf, sizeof(buf), "]}");
	add_object(buf, sizeof(buf), "cma", "SKIPPED_NO_ATTACH_POINT",
		   "no attach point for cma_alloc_start in this kernel", false);
	append(buf, sizeof(buf), "],\"maps\":[]}%s]}\n", extra ? extra : "");
	return ktest_write_file(path, buf);
}

static int kernel_release(char *buf, size_t len)
{
	ssize_t n = ktest_read_file("/proc/sys/kernel/osrelease", buf, len);

	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int setup(void **state)
{
	static const char *const objs[] = { "bpf/compaction.bpf",
					    "tests/bpf/dumpLabels.bpf", NULL };
	int ncpus = libbpf_num_possible_cpus();
	__u64 drops[1024] = { 40 };
	__u32 k0 = 0, i;
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS] = { [3] = 1 };
	char rel[128];

	(void)state;
	if (dt_init(&d, "status", objs) || kernel_release(rel, sizeof(rel)))
		return -1;
	for (i = 1; i <= 3; i++)
		if (dt_map_update(&d, "dumpLabels", "dump_state_map", &i, b))
			return -1;
	/* Per-CPU drop counts: 40 on the first CPU and 2 on the last. */
	if (ncpus <= 0 || ncpus > 1024)
		return -1;
	drops[ncpus - 1] += 2;
	if (dt_map_update(&d, "dumpLabels", "dump_events_drops", &k0, drops))
		return -1;
	dt_path(&d, "loader-status.json", status_file, sizeof(status_file));
	return write_status(status_file, rel, NULL);
}

static int teardown(void **state)
{
	(void)state;
	dt_fini(&d);
	return 0;
}

/* The line of out that starts (after indentation) with word. */
static const char *line_of(const char *out, const char *word, char *buf, size_t len)
{
	const char *p = out;
	size_t wl = strlen(word);

	while ((p = strstr(p, word))) {
		const char *bol = p;

		while (bol > out && bol[-1] == ' ')
			bol--;
		if ((bol == out || bol[-1] == '\n') && (p[wl] == ' ' || p[wl] == '\n')) {
			snprintf(buf, len, "%.*s", (int)strcspn(p, "\n"), p);
			return buf;
		}
		p += wl;
	}
	return NULL;
}

static void assert_words(const char *line, const char *const *words)
{
	assert_non_null(line);
	for (; *words; words++) {
		if (!strstr(line, *words))
			fprintf(stderr, "'%s' lacks '%s'\n", line, *words);
		assert_non_null(strstr(line, *words));
	}
}

static void test_status_ascii(void **state)
{
	char line[512];
	struct dt_result r;

	(void)state;
	assert_int_equal(dt_run(&d, &r, false, ARGS("status", "--status-file", status_file)), 0);
	if (r.status)
		fprintf(stderr, "%s", r.err);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\ncompaction  LOADED\n"));
	assert_non_null(strstr(r.out, "\ncma  SKIPPED_NO_ATTACH_POINT: no attach point for "
				      "cma_alloc_start in this kernel\n"));
	assert_words(line_of(r.out, "on_compaction_end", line, sizeof(line)),
		     ARGS("mm_compaction_end", "tp_btf", "LOADED"));
	assert_words(line_of(r.out, "on_compaction_end_raw", line, sizeof(line)),
		     ARGS("raw_tp", "SKIPPED", "a preferred variant is loaded"));
	assert_words(line_of(r.out, "compaction_duration_map", line, sizeof(line)),
		     ARGS(" array ", " 1 ", " -  "));
	assert_words(line_of(r.out, "dump_state_map", line, sizeof(line)),
		     ARGS(" hash ", " 3/16 ", " 18.8% "));
	assert_words(line_of(r.out, "dump_events_drops", line, sizeof(line)),
		     ARGS(" percpu_array ", " 1 ", " 42"));
	assert_words(line_of(r.out, "dump_events_ringbuf", line, sizeof(line)),
		     ARGS(" ringbuf ", " 65536 ", " 42"));
	assert_words(line_of(r.out, "program", line, sizeof(line)),
		     ARGS("attach", "type", "outcome", "runs", "avg/run"));
	dt_result_free(&r);
}

static unsigned long long fd_memlock(const char *obj, const char *map)
{
	char pin[512], path[64], line[256];
	unsigned long long v = 0;
	FILE *f;
	int fd;

	kstats_pin_path(pin, sizeof(pin), d.kt.pin_dir, "map", obj, map);
	fd = bpf_obj_get(pin);
	assert_true(fd >= 0);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	close(fd);
	return v;
}

/* Every output of the jq filter on json is true, and there is one. */
#define jq_true(json, filter) assert_int_equal(dt_jq_all(filter, json), 0)

static void test_status_json(void **state)
{
	char filter[512];
	struct dt_result r;

	(void)state;
	if (!dt_have("jq"))
		skip();
	assert_int_equal(dt_run(&d, &r, false, ARGS("status", "--json", "--status-file",
						     status_file)), 0);
	assert_int_equal(r.status, 0);
	jq_true(r.out, ".version == 1 and (.bpf_stats_enabled | type == \"number\")");
	snprintf(filter, sizeof(filter), ".objects[] | select(.name == \"dumpLabels\") | .maps[] "
		 "| select(.name == \"dump_state_map\") | .memlock_bytes == %llu and "
		 ".entries == 3 and .max_entries == 16 and .fill_percent == 18.75",
		 fd_memlock("dumpLabels", "dump_state_map"));
	jq_true(r.out, filter);
	jq_true(r.out, "[.objects[1].maps[] | select(.name | startswith(\"dump_events_\")) | "
		".drops] == [42, 42]");
	jq_true(r.out, ".objects[0].maps[0].drops == null");
	jq_true(r.out, "[.objects[0].programs[] | select(.outcome == \"LOADED\") | "
		"(.run_cnt | type) == \"number\" and .detached == false] | length == 2 and all");
	/* The filter can fail: no program is named so. */
	{
		struct dt_result jq;

		assert_int_equal(dt_sh("jq -s -e '[.[] | .objects[].programs[] | "
				       "select(.name == \"nonexistent\")] | length > 0 and all'",
				       r.out, &jq), 0);
		assert_int_not_equal(jq.status, 0);
		dt_result_free(&jq);
	}
	dt_result_free(&r);
}

/* Real compactions during a --stats window show up as runs. */
static void test_status_stats_window(void **state)
{
	char before[16], after[16];
	struct dt_result r, sysctl;
	int out, err, i, status;
	pid_t pid, done = 0;

	(void)state;
	if (!dt_have("jq"))
		skip();
	assert_int_equal(dt_sh("cat /proc/sys/kernel/bpf_stats_enabled", NULL, &sysctl), 0);
	snprintf(before, sizeof(before), "%s", sysctl.out);
	dt_result_free(&sysctl);
	pid = dt_spawn(&d, ARGS("status", "--json", "--stats", "2", "--status-file",
				status_file), &out, &err);
	assert_true(pid > 0);
	/* Compact until it exits: a loaded machine may start the window late. */
	for (i = 0; i < 300 && !(done = waitpid(pid, &status, WNOHANG)); i++) {
		assert_int_equal(ktest_compact_memory(), 0);
		usleep(100000);
	}
	assert_int_equal(done, pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	r.out = dt_read_all(out);
	r.err = NULL;
	assert_non_null(r.out);
	close(out);
	close(err);
	assert_int_equal(dt_sh("cat /proc/sys/kernel/bpf_stats_enabled", NULL, &sysctl), 0);
	snprintf(after, sizeof(after), "%s", sysctl.out);
	dt_result_free(&sysctl);
	assert_string_equal(before, after);	/* the sysctl is left alone */
	jq_true(r.out, ".stats_window_seconds == 2");
	jq_true(r.out, ".objects[0].programs[] | select(.name == \"on_compaction_end\" or "
		".name == \"on_compaction_end_raw\") | select(.outcome == \"LOADED\") | "
		".run_cnt >= 3 and .avg_ns > 0 and .run_time_ns > 0");
	/* The program that never fires ran 0 times in the window. */
	jq_true(r.out, ".objects[1].programs[0].run_cnt == 0");
	dt_result_free(&r);
}

static void expect(const char *const *args, bool as_nobody, int status, const char *msg)
{
	struct dt_result r;

	assert_int_equal(dt_run(&d, &r, as_nobody, args), 0);
	if (r.status != status || !strstr(r.err, msg))
		fprintf(stderr, "exit %d, stderr: %s", r.status, r.err);
	assert_int_equal(r.status, status);
	assert_non_null(strstr(r.err, msg));
	dt_result_free(&r);
}

static void test_status_errors(void **state)
{
	char path[512], want[600];

	(void)state;
	dt_path(&d, "nonexistent.json", path, sizeof(path));
	snprintf(want, sizeof(want), "kstats status: no loader status at %s; "
		 "run kstats-loader (or pass --status-file)\n", path);
	expect(ARGS("status", "--status-file", path), false, 3, want);

	dt_path(&d, "garbage.json", path, sizeof(path));
	assert_int_equal(ktest_write_file(path, "{\"version\": 1, \"objects\": [\n"), 0);
	expect(ARGS("status", "--status-file", path), false, 1,
	       "is not a loader status file: ");

	assert_int_equal(ktest_write_file(path, "{\"version\": 2, \"objects\": []}\n"), 0);
	expect(ARGS("status", "--status-file", path), false, 1,
	       "status version 2, this kstats reads version 1");

	if (!dt_have("setpriv"))
		skip();
	expect(ARGS("status", "--status-file", status_file), true, 5,
	       "kstats status: some maps could not be opened: permission denied; "
	       "needs CAP_BPF and group kstats\n");
	expect(ARGS("status", "--stats", "1", "--status-file", status_file), true, 5,
	       "cannot enable BPF run-time stats");
}

/* kstats status on a copy of the status file edited by sed_expr: exit 0. */
static void status_edited(const char *name, const char *sed_expr, struct dt_result *r)
{
	char path[512], cmd[1400];

	dt_path(&d, name, path, sizeof(path));
	snprintf(cmd, sizeof(cmd), "sed '%s' %s > %s", sed_expr, status_file, path);
	assert_int_equal(dt_sh(cmd, NULL, r), 0);
	assert_int_equal(r->status, 0);
	dt_result_free(r);
	assert_int_equal(dt_run(&d, r, false, ARGS("status", "--status-file", path)), 0);
	assert_int_equal(r->status, 0);
}

static void test_status_failed_and_stale(void **state)
{
	char path[512], line[512];
	struct dt_result r;

	(void)state;
	dt_path(&d, "failed.json", path, sizeof(path));
	assert_int_equal(write_status(path, "0.0.0-other",
		",{\"name\":\"dmabuf\",\"path\":\"x\",\"outcome\":\"FAILED_VERIFIER\","
		"\"reason\":\"load: Permission denied\",\"critical\":true,"
		"\"programs\":[],\"maps\":[{\"name\":\"gone_map\",\"pin\":\"/sys/fs/bpf/"
		"kernelstats-test-nonexistent/map_gone\"}]}"), 0);
	assert_int_equal(dt_run(&d, &r, false, ARGS("status", "--status-file", path)), 0);
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "\ndmabuf  FAILED_VERIFIER: load: Permission denied "
				      "(critical)\n"));
	assert_non_null(strstr(r.out, "warning: the status is from kernel 0.0.0-other but "));
	assert_non_null(strstr(r.out, " is running; run kstats-loader\n"));
	assert_non_null(strstr(r.out, "  gone_map  gone\n"));
	dt_result_free(&r);

	/* A map whose id differs from the loader's was recreated since. */
	status_edited("recreated.json",
		      "s/\\(\"dump_state_map\",[^}]*\"map_id\":\\)[0-9]*/\\11/", &r);
	assert_words(line_of(r.out, "dump_state_map", line, sizeof(line)),
		     ARGS("recreated since the loader ran (id ", ", was 1)"));
	dt_result_free(&r);
}

/* A link pin that is gone means the program is no longer attached. */
static void test_status_detached(void **state)
{
	char line[512];
	struct dt_result r;

	(void)state;
	status_edited("detached.json", "s/link_dumpLabels_on_dump_never/link_dumpLabels_gone/",
		      &r);
	assert_words(line_of(r.out, "on_dump_never", line, sizeof(line)),
		     ARGS(" LOADED,DETACHED "));
	/* The line is there, and its program is attached. */
	assert_words(line_of(r.out, "on_compaction_end", line, sizeof(line)),
		     ARGS("LOADED"));
	assert_null(strstr(line, "DETACHED"));
	dt_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_ascii),
		cmocka_unit_test(test_status_json),
		cmocka_unit_test(test_status_stats_window),
		cmocka_unit_test(test_status_errors),
		cmocka_unit_test(test_status_failed_and_stale),
		cmocka_unit_test(test_status_detached),
	};
	return KTEST_MAIN("status", tests, setup, teardown);
}
