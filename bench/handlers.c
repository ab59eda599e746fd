// SPDX-License-Identifier: GPL-2.0
/*
 * Handler cost: each metric's begin and end handlers (raw_tp form) under
 * BPF_PROG_TEST_RUN, interleaved with the libbpf-tools-style reference, the
 * physical floor (bench/bpf/floor_handlers.c: two clock reads, two
 * start-slot operations, one add) and an empty program run twice (the
 * floor of any pair) in the same run.
 *
 * The kernel rejects .repeat and .duration for raw_tp test runs (EINVAL), so
 * each run is one syscall and the in-kernel time comes from bpf_stats
 * (run_time_ns/run_cnt of bpf_prog_info), which excludes syscall overhead.
 * A sample is a round of begin+end pairs; ratios are taken per round and
 * printed as bench/lib/bstat.h RESULT lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bstat.h"

#define ROUNDS 21		/* the most; bench/handlers BUILD [ROUNDS] */
#define PAIRS_PER_ROUND 100000	/* >= 100 ms of syscalls per case per round */
#define STATS_SYSCTL "/proc/sys/kernel/bpf_stats_enabled"

struct pair {
	const char *label;
	int begin_fd, end_fd;
	double ns[ROUNDS];
};

static int run_once(int fd)
{
	__u64 args[6] = {};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args,
		    .ctx_size_in = sizeof(args));

	return bpf_prog_test_run_opts(fd, &opts) ? -errno : 0;
}

static __u64 run_time_ns(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.run_time_ns;
}

static __u64 pair_time_ns(const struct pair *p)
{
	/* The empty pair runs one program twice: its counters hold both runs. */
	return run_time_ns(p->begin_fd) + (p->end_fd != p->begin_fd ? run_time_ns(p->end_fd) : 0);
}

static int sample(struct pair *p, int round)
{
	__u64 before = pair_time_ns(p);
	int i, ret = 0;

	for (i = 0; i < PAIRS_PER_ROUND && !ret; i++) {
		ret = run_once(p->begin_fd);
		if (!ret)
			ret = run_once(p->end_fd);
	}
	p->ns[round] = (double)(pair_time_ns(p) - before) / PAIRS_PER_ROUND;
	return ret;
}

/* Sets kernel.bpf_stats_enabled; returns the previous value or -errno. */
static int set_bpf_stats(int on)
{
	FILE *f = fopen(STATS_SYSCTL, "r+");
	int old = -1;

	if (!f)
		return -errno;
	if (fscanf(f, "%d", &old) != 1 || fseek(f, 0, SEEK_SET) ||
	    fprintf(f, "%d\n", on) < 0) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : old;
}

static int prog_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	return p ? bpf_program__fd(p) : -ENOENT;
}

static struct bpf_object *open_load(const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);

	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "bench: cannot load %s: %s\n", path, strerror(errno));
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

/* Our begin/end handlers, the reference's and the floor's, per metric. */
static const struct metric {
	const char *name, *key, *obj, *begin, *end, *ref_begin, *ref_end, *floor;
} metrics[] = {
	{ "CompactionDuration", "compaction", "compaction", "on_compaction_begin_raw",
	  "on_compaction_end_raw", "ref_compaction_begin", "ref_compaction_end", "task" },
	{ "KswapdLatency", "kswapd", "kswapd", "on_kswapd_wake_raw", "on_kswapd_sleep_raw",
	  "ref_kswapd_wake", "ref_kswapd_sleep", "slot" },
	{ "DirectReclaimLatency", "direct_reclaim", "directReclaim",
	  "on_direct_reclaim_begin_raw", "on_direct_reclaim_end_raw", "ref_reclaim_begin",
	  "ref_reclaim_end", "task" },
};

#define NR_METRICS (sizeof(metrics) / sizeof(metrics[0]))
/* Per metric: reference, ours, floor; then the empty pair. */
#define NR_PAIRS (3 * NR_METRICS + 1)
#define EMPTY (NR_PAIRS - 1)

static int floor_fd(struct bpf_object *obj, const char *kind, const char *end)
{
	char name[64];

	snprintf(name, sizeof(name), "floor_%s_%s", kind, end);
	return prog_fd(obj, name);
}

static int open_all(const char *build, struct bpf_object *objs[NR_METRICS + 2],
		    struct pair *pairs)
{
	struct bpf_object *ref, *floor_;
	char path[512];
	size_t i;

	snprintf(path, sizeof(path), "%s/bench/bpf/ref_handlers.bpf", build);
	ref = objs[NR_METRICS] = open_load(path);
	snprintf(path, sizeof(path), "%s/bench/bpf/floor_handlers.bpf", build);
	floor_ = objs[NR_METRICS + 1] = open_load(path);
	if (!ref || !floor_)
		return -1;
	pairs[EMPTY] = (struct pair){ "empty", prog_fd(ref, "empty"), prog_fd(ref, "empty"), {} };
	for (i = 0; i < NR_METRICS; i++) {
		const struct metric *m = &metrics[i];

		snprintf(path, sizeof(path), "%s/bpf/%s.bpf", build, m->obj);
		objs[i] = open_load(path);
		if (!objs[i])
			return -1;
		pairs[3 * i] = (struct pair){ "ref", prog_fd(ref, m->ref_begin),
					      prog_fd(ref, m->ref_end), {} };
		pairs[3 * i + 1] = (struct pair){ "ours", prog_fd(objs[i], m->begin),
						  prog_fd(objs[i], m->end), {} };
		pairs[3 * i + 2] = (struct pair){ "floor", floor_fd(floor_, m->floor, "begin"),
						  floor_fd(floor_, m->floor, "end"), {} };
	}
	return 0;
}

static void print_results(struct pair *pairs, int rounds)
{
	char key[96];
	size_t i, k;

	printf("# handlers: %d rounds x %d begin+end pairs; ns per pair, in-kernel\n",
	       rounds, PAIRS_PER_ROUND);
	for (i = 0; i < NR_METRICS; i++) {
		struct pair *p = &pairs[3 * i];

		snprintf(key, sizeof(key), "handlers.%s.ours_vs_ref", metrics[i].key);
		bstat_ratio(key, p[1].ns, p[0].ns, rounds);
		snprintf(key, sizeof(key), "handlers.%s.ours_vs_floor", metrics[i].key);
		bstat_ratio(key, p[1].ns, p[2].ns, rounds);
		for (k = 0; k < 3; k++) {
			snprintf(key, sizeof(key), "handlers.%s.%s", metrics[i].key, p[k].label);
			bstat_result(key, "ns", p[k].ns, rounds);
		}
	}
	bstat_result("handlers.empty_pair", "ns", pairs[EMPTY].ns, rounds);
}

int main(int argc, char **argv)
{
	const char *build = argc > 1 ? argv[1] : "build";
	int rounds = argc > 2 ? atoi(argv[2]) : ROUNDS;
	struct bpf_object *objs[NR_METRICS + 2] = {};
	struct pair pairs[NR_PAIRS];
	int r, ret = 1, old_stats;
	size_t i;

	if (rounds < 1 || rounds > ROUNDS) {
		fprintf(stderr, "Usage: bench/handlers BUILD [ROUNDS 1..%d]\n", ROUNDS);
		return 2;
	}
	if (open_all(build, objs, pairs))
		goto out;
	old_stats = set_bpf_stats(1);
	if (old_stats < 0) {
		fprintf(stderr, "bench: cannot enable %s: %s\n", STATS_SYSCTL,
			strerror(-old_stats));
		goto out;
	}
	for (r = 0; r < rounds && ret > 0; r++)
		for (i = 0; i < NR_PAIRS; i++)
			if (sample(&pairs[i], r)) {
				fprintf(stderr, "bench: test run: %s\n", strerror(errno));
				ret = -1;
				break;
			}
	set_bpf_stats(old_stats);
	if (ret < 0)
		goto out;
	print_results(pairs, rounds);
	ret = 0;
out:
	for (i = 0; i < NR_METRICS + 2; i++)
		bpf_object__close(objs[i]);
	return ret;
}
