// SPDX-License-Identifier: GPL-2.0
/*
 * bench/jni: one pinned hash map of N telemetry accumulators (u32 key,
 * 32 x u64 value: compaction.bpf's map as a hash), read by the C reader
 * (kstats_map_read into int64 rows) and by Java (KernelTelemetryReader,
 * bench/jni/ReadBench.java), in alternating rounds; medians and the ratio
 * Java / C.
 *
 * Usage: jni_bench BUILD_DIR [--entries N] [--repeat R] [--rounds K]   (root)
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_telemetry.h"
#include "kstats_pins.h"
#include "kstats_reader.h"

#define MAX_TIMES 4096

struct times {
	double ms[MAX_TIMES];
	int n;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * compaction.bpf's histogram map, made a hash of entries and created alone
 * (no program loads), so that it has the object's BTF.
 */
static int create_map_fd(const char *obj_path, __u32 entries)
{
	struct bpf_object *obj = bpf_object__open_file(obj_path, NULL);
	struct bpf_program *prog;
	struct bpf_map *map;
	int ret;

	if (!obj)
		return -errno;
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, false);
	map = bpf_object__find_map_by_name(obj, "compaction_duration_map");
	ret = map ? 0 : -ENOENT;
	ret = ret ?: bpf_map__set_type(map, BPF_MAP_TYPE_HASH);
	ret = ret ?: bpf_map__set_max_entries(map, entries);
	ret = ret ?: bpf_object__load(obj);
	if (!ret)
		ret = dup(bpf_map__fd(map));
	ret = ret == -1 ? -errno : ret;
	bpf_object__close(obj);
	return ret;
}

/* libbpf's notes on the object's .kstats.* sections are no news here. */
static int warnings_only(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int fill_and_pin(int fd, __u32 entries, const char *pin)
{
	struct bpf_telemetry_accumulator *vals = calloc(entries, sizeof(*vals));
	__u32 *keys = calloc(entries, sizeof(*keys)), count = entries, k, b;
	int ret = -ENOMEM;

	if (keys && vals) {
		for (k = 0; k < entries; k++) {
			keys[k] = k * 7919;
			for (b = 0; b < BPF_TELEMETRY_NR_BUCKETS; b++)
				vals[k].buckets[b] = k + b;
		}
		ret = bpf_map_update_batch(fd, keys, vals, &count, NULL) ? -errno : 0;
		ret = ret ?: (bpf_obj_pin(fd, pin) ? -errno : 0);
	}
	free(keys);
	free(vals);
	return ret;
}

static int time_c(const char *pin, __u32 entries, int repeat, struct times *t)
{
	struct kstats_map_opts mo = { .pin_path = pin };
	char err[KSTATS_ERR_LEN] = "";
	struct kstats_map *m = NULL;
	int64_t *rows = NULL;
	size_t n = 0;
	int ret, i;
	double t0;

	ret = kstats_map_open(&mo, &m, err, sizeof(err));
	if (!ret)
		rows = calloc(kstats_map_max_rows(m), kstats_map_ncols(m) * sizeof(*rows));
	ret = ret ?: rows ? 0 : -ENOMEM;
	for (i = -10; !ret && i < repeat; i++) {	/* 10 warm-up reads */
		t0 = now_ms();
		ret = kstats_map_read(m, rows, kstats_map_max_rows(m), &n, err, sizeof(err));
		if (i >= 0 && t->n < MAX_TIMES)
			t->ms[t->n++] = now_ms() - t0;
		ret = ret ?: n == entries ? 0 : -EIO;
	}
	if (ret)
		fprintf(stderr, "jni_bench: C read: %s\n", *err ? err : strerror(-ret));
	free(rows);
	kstats_map_close(m);
	return ret;
}

static void add_times(struct times *t, char *line)
{
	char *tok, *save;

	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (t->n < MAX_TIMES)
			t->ms[t->n++] = strtod(tok, NULL);
}

/* One JVM: ReadBench prints "into <ms>..." and "new <ms>...". */
static int time_java(const char *build, const char *pin, __u32 entries, int repeat,
		     struct times *into, struct times *fresh)
{
	static char line[1 << 16];
	char cmd[8192];
	FILE *p;
	int got = 0;

	snprintf(cmd, sizeof(cmd), "java -XX:-UsePerfData -Dkstats.jni.library=%s/libkstats_jni.so "
		 "-cp %s/kstats.jar:%s/bench/jni/classes ReadBench %s %u %d",
		 build, build, build, pin, entries, repeat);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "into ", 5))
			add_times(into, line + 5), got++;
		else if (!strncmp(line, "new ", 4))
			add_times(fresh, line + 4), got++;
	}
	if (!p || pclose(p) || got != 2) {
		fprintf(stderr, "jni_bench: %s failed\n", cmd);
		return -EIO;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(struct times *t)
{
	qsort(t->ms, t->n, sizeof(t->ms[0]), cmp_double);
	return t->n ? t->ms[t->n / 2] : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "entries", required_argument, NULL, 'e' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "rounds", required_argument, NULL, 'k' },
		{},
	};
	static struct times c, into, fresh;
	char build[1024], obj[1100], dir[128], pin[160];
	int repeat = 101, rounds = 5, ret = 0, fd, o, i;
	__u32 entries = 10000;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'e': entries = strtoul(optarg, NULL, 0); break;
		case 'r': repeat = atoi(optarg); break;
		case 'k': rounds = atoi(optarg); break;
		default: return 2;
		}
	}
	if (optind != argc - 1 || !realpath(argv[optind], build) || !entries || repeat < 1 ||
	    rounds < 1 || (long)repeat * rounds > MAX_TIMES) {
		fprintf(stderr, "usage: jni_bench BUILD_DIR [--entries N] [--repeat R] [--rounds K]"
			" (R x K <= %d)\n", MAX_TIMES);
		return 2;
	}
	libbpf_set_print(warnings_only);
	snprintf(obj, sizeof(obj), "%s/bpf/compaction.bpf", build);
	snprintf(dir, sizeof(dir), "%s/kernelstats-bench-%d-jni", KSTATS_BPFFS, (int)getpid());
	snprintf(pin, sizeof(pin), "%s/map", dir);
	if (mkdir(dir, 0700)) {
		fprintf(stderr, "jni_bench: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	fd = create_map_fd(obj, entries);
	ret = fd < 0 ? fd : fill_and_pin(fd, entries, pin);
	if (ret)
		fprintf(stderr, "jni_bench: a %u-entry map: %s\n", entries, strerror(-ret));
	for (i = 0; !ret && i < rounds; i++) {
		ret = time_c(pin, entries, repeat, &c);
		ret = ret ?: time_java(build, pin, entries, repeat, &into, &fresh);
	}
	if (!ret) {
		double mc = median(&c), mi = median(&into), mf = median(&fresh);

		printf("# %u-entry hash map, u32 key, 32 x u64 value; median of %d x %d reads, ms\n",
		       entries, rounds, repeat);
		printf("%-34s %8.3f\n", "C kstats_map_read", mc);
		printf("%-34s %8.3f %6.2fx\n", "Java read(long[]) (caller's array)", mi, mi / mc);
		printf("%-34s %8.3f %6.2fx\n", "Java read() (new array)", mf, mf / mc);
	}
	if (fd >= 0)
		close(fd);
	unlink(pin);
	rmdir(dir);
	return ret ? 1 : 0;
}
