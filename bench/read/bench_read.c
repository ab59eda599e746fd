// SPDX-License-Identifier: GPL-2.0
/*
 * bench/read: reading a hash map of telemetry accumulators (u32 key,
 * 32 x u64 value) of N entries, five ways, in one run:
 *   batch        libkstats, BPF_MAP_LOOKUP_BATCH, rows decoded to int64
 *   batch-raw    the bare BPF_MAP_LOOKUP_BATCH syscall: the kernel's floor
 *   walk         a bare get_next_key + lookup loop (no decoding at all)
 *   reader-walk  libkstats forced onto its get_next_key fallback
 *   bpftool      `bpftool map dump pinned PATH -j` (a process per dump)
 * Times are medians of repeated runs (the in-process ones interleaved and
 * warmed); syscalls are counted by `strace -c -f` on one open + read in a
 * fresh process (process start included).
 *
 * Usage: bench_read [--entries N[,N...]] [--repeat R]   (root)
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "bpf_telemetry.h"
#include "kstats_pins.h"
#include "kstats_reader.h"

#define MAX_SIZES 8
#define NMODES 5
#define BPFTOOL_REPEAT 5	/* a 65k-entry JSON dump takes seconds */

struct bench {
	char pin[256];
	unsigned int entries;
	unsigned long walk_calls;	/* bpf() calls of the last bare walk */
	struct kstats_map *batch, *walker;
	int64_t *rows;
	void *keys, *vals;
};

static const char *const mode_names[NMODES] = {
	"batch", "batch-raw", "walk", "reader-walk", "bpftool",
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int create_map(struct bench *b, const char *dir)
{
	struct btf *btf = btf__new_empty();
	int u32 = btf__add_int(btf, "unsigned int", 4, 0);
	int u64 = btf__add_int(btf, "long long unsigned int", 8, 0);
	int arr = btf__add_array(btf, u32, u64, BPF_TELEMETRY_NR_BUCKETS);
	int acc = btf__add_struct(btf, "bpf_telemetry_accumulator",
				  sizeof(struct bpf_telemetry_accumulator));
	struct bpf_telemetry_accumulator v;
	int fd, ret;
	__u32 k, i;

	btf__add_field(btf, "buckets", arr, 0, 0);
	ret = btf__load_into_kernel(btf);
	if (ret) {
		btf__free(btf);
		return ret;
	}
	LIBBPF_OPTS(bpf_map_create_opts, mo, .btf_fd = btf__fd(btf),
		    .btf_key_type_id = u32, .btf_value_type_id = acc);
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "bench_read", 4, sizeof(v), b->entries, &mo);
	btf__free(btf);
	if (fd < 0)
		return -errno;
	for (k = 0; k < b->entries; k++) {
		for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
			v.buckets[i] = (__u64)k * i;
		if (bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST)) {
			ret = -errno;
			goto out;
		}
	}
	snprintf(b->pin, sizeof(b->pin), "%s/map_bench_%u", dir, b->entries);
	ret = bpf_obj_pin(fd, b->pin) ? -errno : 0;
out:
	close(fd);
	return ret;
}

static int open_reader(struct bench *b, bool no_batch, struct kstats_map **m)
{
	struct kstats_map_opts o = { .pin_path = b->pin, .no_batch = no_batch };
	char err[KSTATS_ERR_LEN];
	int ret = kstats_map_open(&o, m, err, sizeof(err));

	if (ret)
		fprintf(stderr, "bench_read: %s\n", err);
	return ret;
}

static int run_reader(struct bench *b, struct kstats_map *m)
{
	char err[KSTATS_ERR_LEN];
	size_t n;
	int ret = kstats_map_read(m, b->rows, kstats_map_max_rows(m), &n, err, sizeof(err));

	if (ret || n != b->entries) {
		fprintf(stderr, "bench_read: read %zu of %u: %s\n", n, b->entries, err);
		return ret ?: -EIO;
	}
	return 0;
}

/* The whole map in one syscall, nothing decoded. */
static int run_batch_raw(struct bench *b)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int fd = bpf_obj_get(b->pin), ret;
	__u32 count = b->entries + 1;
	__u64 token;

	if (fd < 0)
		return -errno;
	ret = bpf_map_lookup_batch(fd, NULL, &token, b->keys, b->vals, &count, &opts);
	close(fd);
	return ret == -ENOENT && count == b->entries ? 0 : -EIO;
}

/* What bpftool and most tools do: one key, then one value, per entry. */
static int run_walk(struct bench *b)
{
	int fd = bpf_obj_get(b->pin);
	__u32 *keys = b->keys, n = 0;
	char *vals = b->vals;

	if (fd < 0)
		return -errno;
	b->walk_calls = 1;
	while (n < b->entries && !bpf_map_get_next_key(fd, n ? &keys[n - 1] : NULL, &keys[n])) {
		b->walk_calls += 2;
		if (bpf_map_lookup_elem(fd, &keys[n], vals + (size_t)n * 256))
			break;
		n++;
	}
	/* The end is known only when get_next_key says ENOENT. */
	if (n == b->entries && !bpf_map_get_next_key(fd, &keys[n - 1], &keys[0]))
		n++;
	close(fd);
	return n == b->entries ? 0 : -EIO;
}

static int run_bpftool(struct bench *b)
{
	const char *argv[] = { "bpftool", "map", "dump", "pinned", b->pin, "-j", NULL };
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -errno;
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

static int run_mode(struct bench *b, int mode)
{
	switch (mode) {
	case 0: return run_reader(b, b->batch);
	case 1: return run_batch_raw(b);
	case 2: return run_walk(b);
	case 3: return run_reader(b, b->walker);
	default: return run_bpftool(b);
	}
}

/* One read in this fresh process, for strace to count. */
static int run_once(const char *mode, const char *pin, unsigned int entries)
{
	struct bench b = { .entries = entries };
	int ret, m;

	snprintf(b.pin, sizeof(b.pin), "%s", pin);
	for (m = 0; m < NMODES - 1 && strcmp(mode, mode_names[m]); m++)
		;
	b.rows = calloc(entries, 33 * sizeof(*b.rows));
	b.keys = calloc(entries + 1, 4);
	b.vals = calloc(entries + 1, 256);
	if (!b.rows || !b.keys || !b.vals)
		return 1;
	ret = m == 0 ? open_reader(&b, false, &b.batch) :
	      m == 3 ? open_reader(&b, true, &b.walker) : 0;
	ret = ret ?: run_mode(&b, m);
	kstats_map_close(b.batch);
	kstats_map_close(b.walker);
	free(b.rows);
	free(b.keys);
	free(b.vals);
	return ret ? 1 : 0;
}

/* bpf() calls and all syscalls, from strace -c -f of argv. */
static int count_syscalls(char *const *argv, unsigned long *bpf, unsigned long *total)
{
	char out[] = "/tmp/kstats-bench-strace-XXXXXX", line[256], name[64];
	unsigned long calls;
	int fd = mkstemp(out), status;
	pid_t pid;
	FILE *f;

	if (fd < 0)
		return -errno;
	close(fd);
	pid = fork();
	if (!pid) {
		const char *args[16] = { "strace", "-f", "-c", "-o", out, "--" };
		int n = 6, null = open("/dev/null", O_WRONLY);

		while (*argv && n < 15)
			args[n++] = *argv++;
		dup2(null, STDOUT_FILENO);
		execvp("strace", (char *const *)args);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return unlink(out), -EIO;
	*bpf = *total = 0;
	f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f)) {
		/* "% time seconds usecs/call calls [errors] syscall" */
		char *last = strrchr(line, ' ');
		double pct, secs;
		unsigned long usecs;

		if (!last || sscanf(line, "%lf %lf %lu %lu", &pct, &secs, &usecs, &calls) != 4 ||
		    sscanf(last + 1, "%63s", name) != 1)
			continue;
		if (!strcmp(name, "bpf"))
			*bpf = calls;
		else if (!strcmp(name, "total"))
			*total = calls;
	}
	if (f)
		fclose(f);
	unlink(out);
	return *total ? 0 : -EIO;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* bpf() calls of the read alone (after open); 0 when unknown. */
static unsigned long read_calls(const struct bench *b, int mode)
{
	switch (mode) {
	case 0: return kstats_map_last_syscalls(b->batch);
	case 1: return 1;
	case 2: return b->walk_calls;
	case 3: return kstats_map_last_syscalls(b->walker);
	default: return 0;
	}
}

static int bench_size(const char *dir, unsigned int entries, int repeat, const char *self)
{
	struct bench b = { .entries = entries };
	int tool_repeat = repeat < BPFTOOL_REPEAT ? repeat : BPFTOOL_REPEAT;
	double times[NMODES][64], med[NMODES], t0;
	unsigned long bpf[NMODES], total[NMODES], calls[NMODES];
	char num[16];
	int m, r, ret;

	ret = create_map(&b, dir);
	if (ret) {
		fprintf(stderr, "bench_read: cannot create a %u-entry map: %s\n", entries,
			strerror(-ret));
		return ret;
	}
	b.rows = calloc(entries, 33 * sizeof(*b.rows));
	b.keys = calloc(entries + 1, 4);
	b.vals = calloc(entries + 1, 256);
	ret = !b.rows || !b.keys || !b.vals ? -ENOMEM : 0;
	ret = ret ?: open_reader(&b, false, &b.batch);
	ret = ret ?: open_reader(&b, true, &b.walker);
	/*
	 * The in-process modes interleaved, each warmed up first; bpftool's
	 * runs after them, since each of its processes evicts the caches the
	 * next in-process read would find warm.
	 */
	for (r = 0; !ret && r < repeat; r++)
		for (m = 0; !ret && m < NMODES - 1; m++) {
			ret = run_mode(&b, m);
			t0 = now_ms();
			ret = ret ?: run_mode(&b, m);
			times[m][r] = now_ms() - t0;
			calls[m] = read_calls(&b, m);
		}
	for (r = 0; !ret && r < tool_repeat; r++) {
		t0 = now_ms();
		ret = run_mode(&b, NMODES - 1);
		times[NMODES - 1][r] = now_ms() - t0;
	}
	calls[NMODES - 1] = 0;
	snprintf(num, sizeof(num), "%u", entries);
	for (m = 0; !ret && m < NMODES; m++) {
		char *const once[] = { (char *)self, "--once", (char *)mode_names[m], b.pin,
				       num, NULL };
		char *const tool[] = { "bpftool", "map", "dump", "pinned", b.pin, "-j", NULL };

		int runs = m == NMODES - 1 ? tool_repeat : repeat;

		qsort(times[m], runs, sizeof(double), cmp_double);
		med[m] = times[m][runs / 2];
		ret = count_syscalls(m == NMODES - 1 ? tool : once, &bpf[m], &total[m]);
	}
	for (m = 0; !ret && m < NMODES; m++) {
		printf("%-8u %-12s %10.2f %9.1fx ", entries, mode_names[m], med[m],
		       med[m] / med[0]);
		if (calls[m])
			printf("%10lu ", calls[m]);
		else
			printf("%10s ", "-");
		printf("%10lu %12lu\n", bpf[m], total[m]);
	}
	if (ret)
		fprintf(stderr, "bench_read: %u entries failed: %s\n", entries, strerror(-ret));
	kstats_map_close(b.batch);
	kstats_map_close(b.walker);
	free(b.rows);
	free(b.keys);
	free(b.vals);
	unlink(b.pin);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "entries", required_argument, NULL, 'e' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "once", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	unsigned int sizes[MAX_SIZES] = { 10000, 65536 }, nsizes = 2;
	char dir[128], err[256] = "", self[4096], *tok, *save;
	ssize_t len;
	int c, repeat = 11, ret = 0;
	unsigned int i;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			for (nsizes = 0, tok = strtok_r(optarg, ",", &save);
			     tok && nsizes < MAX_SIZES; tok = strtok_r(NULL, ",", &save))
				sizes[nsizes++] = strtoul(tok, NULL, 0);
			break;
		case 'r': repeat = atoi(optarg); break;
		case 'o':
			if (argc - optind != 3)
				return 2;
			return run_once(argv[optind], argv[optind + 1],
					strtoul(argv[optind + 2], NULL, 0));
		case 'h':
			printf("Usage: bench_read [--entries N[,N...]] [--repeat R]\n");
			return 0;
		default:
			return 2;
		}
	}
	if (repeat < 1 || repeat > 64 || !nsizes) {
		fprintf(stderr, "bench_read: --repeat 1..64, --entries N[,N...]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/kernelstats-bench-%d", KSTATS_BPFFS, (int)getpid());
	if (kstats_ensure_bpffs(dir, err, sizeof(err)) || (mkdir(dir, 0700) && errno != EEXIST)) {
		fprintf(stderr, "bench_read: %s: %s\n", dir, *err ? err : strerror(errno));
		return 1;
	}
	printf("# hash map, u32 key, 256-byte value (32 x u64); median of %d runs"
	       " (bpftool: %d), ms\n"
	       "# read_bpf: bpf() calls of the read itself; strace_bpf, strace_all: strace -c -f\n"
	       "# of one open + read in a fresh process (process start included)\n"
	       "%-8s %-12s %10s %10s %10s %10s %12s\n", repeat,
	       repeat < BPFTOOL_REPEAT ? repeat : BPFTOOL_REPEAT, "entries", "mode",
	       "median_ms", "vs_batch", "read_bpf", "strace_bpf", "strace_all");
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		return 1;
	self[len] = 0;
	for (i = 0; i < nsizes && !ret; i++)
		ret = bench_size(dir, sizes[i], repeat, self);
	rmdir(dir);
	return ret ? 1 : 0;
}
