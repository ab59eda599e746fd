// SPDX-License-Identifier: GPL-2.0
/*
 * Handler cost: each metric's begin and end handlers (raw_tp form) under
 * BPF_PROG_TEST_RUN, interleaved with the libbpf-tools-style reference and
 * an empty program in the same run.
 *
 * The kernel rejects .repeat and .duration for raw_tp test runs (EINVAL), so
 * each run is one syscall and the in-kernel time comes from bpf_stats
 * (run_time_ns/run_cnt of bpf_prog_info), which excludes syscall overhead.
 * A sample is a round of begin+end pairs; we print medians over rounds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define ROUNDS 21
#define PAIRS_PER_ROUND 50000	/* 21 rounds: > 1e6 pairs per handler */
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
	return run_time_ns(p->begin_fd) + (p->end_fd >= 0 ? run_time_ns(p->end_fd) : 0);
}

static int sample(struct pair *p, int round)
{
	__u64 before = pair_time_ns(p);
	int i, ret = 0;

	for (i = 0; i < PAIRS_PER_ROUND && !ret; i++) {
		ret = run_once(p->begin_fd);
		if (!ret && p->end_fd >= 0)
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	qsort(v, ROUNDS, sizeof(*v), cmp_double);
	return v[ROUNDS / 2];
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

int main(int argc, char **argv)
{
	const char *build = argc > 1 ? argv[1] : "build";
	struct bpf_object *ours, *ref;
	char path[512];
	struct pair pairs[3];
	int r, i, ret = 1, old_stats;

	snprintf(path, sizeof(path), "%s/bpf/compaction.bpf", build);
	ours = open_load(path);
	snprintf(path, sizeof(path), "%s/bench/bpf/ref_compaction.bpf", build);
	ref = open_load(path);
	if (!ours || !ref)
		goto out;
	pairs[0] = (struct pair){ "empty raw_tp (floor)", prog_fd(ref, "empty"), -1, {} };
	pairs[1] = (struct pair){ "reference (libbpf-tools style)",
				  prog_fd(ref, "ref_begin"), prog_fd(ref, "ref_end"), {} };
	pairs[2] = (struct pair){ "kernelstats compaction",
				  prog_fd(ours, "on_compaction_begin_raw"),
				  prog_fd(ours, "on_compaction_end_raw"), {} };
	old_stats = set_bpf_stats(1);
	if (old_stats < 0) {
		fprintf(stderr, "bench: cannot enable %s: %s\n", STATS_SYSCTL,
			strerror(-old_stats));
		goto out;
	}
	for (r = 0; r < ROUNDS && ret > 0; r++)
		for (i = 0; i < 3; i++)
			if (sample(&pairs[i], r)) {
				fprintf(stderr, "bench: test run: %s\n", strerror(errno));
				ret = -1;
				break;
			}
	set_bpf_stats(old_stats);
	if (ret < 0)
		goto out;
	printf("%-34s %12s\n", "handler (begin+end pair)", "median ns");
	for (i = 0; i < 3; i++)
		printf("%-34s %12.1f\n", pairs[i].label, median(pairs[i].ns));
	printf("ratio ours/reference: %.2f\n", pairs[2].ns[ROUNDS / 2] / pairs[1].ns[ROUNDS / 2]);
	ret = 0;
out:
	bpf_object__close(ours);
	bpf_object__close(ref);
	return ret;
}
