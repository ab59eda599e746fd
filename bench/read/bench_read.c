// SPDX-License-Identifier: GPL-2.0
/*
 * bench/read: reading a hash map of telemetry accumulators (u32 key,
 * 32 x u64 value) of N entries, side by side in one run (rounds in which the
 * modes take turns read by read, shuffled, each mode warmed first):
 *   reader      libkstats kstats_map_read: rows decoded to int64
 *   batch-all   one bare BPF_MAP_LOOKUP_BATCH for the whole map
 *   batch-K     bare BPF_MAP_LOOKUP_BATCH calls of K entries (4096, 2048, 1024,
 *               512, 256) until ENOENT; the reader sizes its own calls by the L2
 *   walk        a bare get_next_key + lookup loop (what most tools do)
 * "Fastest batch" is the bare strategy with the lowest median; the reader
 * is compared with it round by round.  Then, process against process,
 * both printing the map as JSON:
 *   kstats      `kstats read --pin PATH --json`
 *   bpftool     `bpftool map dump pinned PATH -j`
 * The bpf() calls of one kstats read process are counted with strace -c.
 * Prints bench/lib/bstat.h RESULT lines.
 *
 * Usage: bench_read KSTATS [--entries N[,N...]] [--rounds R] [--cpu-time]
 *                   [--in-process] [--profile] [--chunk K]   (root)
 *   --cpu-time: in-process modes timed by this thread's CPU time (user +
 *   kernel), not wall time: steadier on a machine others are using.
 *   --in-process: no process rounds.
 *   --profile: one reader read and one whole-map batch per size, untimed,
 *   for callgrind (bench/read/profile.sh).
 *   --chunk K: one more mode, reader_chunk, the reader asking for K entries
 *   per batch call (how the reader's call sizes were chosen).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
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
#include "bstat.h"
#include "kstats_pins.h"
#include "kstats_reader.h"
#include "map_internal.h"	/* struct kstats_map: syscalls */

#define MAX_SIZES 8
#define MAX_ROUNDS 64
#define PROC_ROUNDS 9		/* a 65k-entry JSON dump by bpftool takes 1.5 s */
#define ROUND_S 0.2		/* measured work per mode per round, at least */

enum mode { READER, BATCH_ALL, BATCH_4096, BATCH_2048, BATCH_1024, BATCH_512, BATCH_256,
	    WALK, READER_CHUNK, NR_INPROC, KSTATS = NR_INPROC, BPFTOOL, NR_MODES };

static const char *const mode_names[NR_MODES] = {
	"reader", "batch_all", "batch_4096", "batch_2048", "batch_1024", "batch_512",
	"batch_256", "walk", "reader_chunk", "kstats_process", "bpftool_process",
};
static const unsigned int chunk[NR_INPROC] = { [BATCH_4096] = 4096, [BATCH_2048] = 2048,
						[BATCH_1024] = 1024, [BATCH_512] = 512,
						[BATCH_256] = 256 };


struct bench {
	char pin[256];
	const char *kstats;
	unsigned int entries;
	int fd;
	struct kstats_map *reader;
	/* Each mode writes its own buffers: none finds the ones the mode
	 * before it just wrote in the cache. */
	int64_t *rows[NR_INPROC];	/* the reader's */
	void *keys[NR_INPROC], *vals[NR_INPROC];	/* bare modes' */
};

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

static int open_reader(struct bench *b)
{
	struct kstats_map_opts o = { .pin_path = b->pin };
	char err[KSTATS_ERR_LEN];
	int ret = kstats_map_open(&o, &b->reader, err, sizeof(err));

	if (ret)
		fprintf(stderr, "bench_read: %s\n", err);
	return ret;
}

static unsigned int reader_chunk;	/* --chunk: entries per call of reader_chunk */

/* per: entries per batch call, 0: the reader's own choice. */
static int run_reader(struct bench *b, enum mode m, unsigned int per)
{
	char err[KSTATS_ERR_LEN];
	size_t n;
	int ret;

	b->reader->chunk = per;
	ret = kstats_map_read(b->reader, b->rows[m], kstats_map_max_rows(b->reader), &n, err,
			      sizeof(err));
	if (ret || n != b->entries) {
		fprintf(stderr, "bench_read: read %zu of %u: %s\n", n, b->entries, err);
		return ret ?: -EIO;
	}
	return 0;
}

/* Bare batch calls of per entries each (0: the whole map), nothing decoded.
 * Not inlined: bench/read/profile.sh counts it by name. */
static __attribute__((noinline)) int run_batch(struct bench *b, enum mode m)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 done = 0, count, per = chunk[m];
	__u64 token_in, token_out;
	int ret;

	do {
		count = per ? per : b->entries + 1;
		ret = bpf_map_lookup_batch(b->fd, done ? &token_in : NULL, &token_out,
					   (char *)b->keys[m] + (size_t)done * 4,
					   (char *)b->vals[m] + (size_t)done * 256, &count, &opts);
		done += count;
		token_in = token_out;
	} while (!ret);
	return errno == ENOENT && done == b->entries ? 0 : -EIO;
}

static int run_walk(struct bench *b)
{
	__u32 *keys = b->keys[WALK], n = 0;
	char *vals = b->vals[WALK];

	while (n < b->entries &&
	       !bpf_map_get_next_key(b->fd, n ? &keys[n - 1] : NULL, &keys[n])) {
		if (bpf_map_lookup_elem(b->fd, &keys[n], vals + (size_t)n * 256))
			break;
		n++;
	}
	/* The end is known only when get_next_key says ENOENT. */
	if (n == b->entries && !bpf_map_get_next_key(b->fd, &keys[n - 1], &keys[0]))
		n++;
	return n == b->entries ? 0 : -EIO;
}

/* argv with stdout to /dev/null (or strace -c into out first); 0 if it exits 0. */
static int spawn(char *const *argv, const char *strace_out)
{
	const char *args[16] = { "strace", "-f", "-c", "-o", strace_out, "--" };
	pid_t pid = fork();
	int status, n = 6, null;

	if (pid < 0)
		return -errno;
	if (!pid) {
		null = open("/dev/null", O_WRONLY);
		dup2(null, STDOUT_FILENO);
		if (!strace_out)
			execvp(argv[0], argv);
		while (*argv && n < 15)
			args[n++] = *argv++;
		execvp("strace", (char *const *)args);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

static int run_process(struct bench *b, enum mode m, const char *strace_out)
{
	char *const kstats[] = { (char *)b->kstats, "read", "--pin", b->pin, "--json", NULL };
	char *const tool[] = { "bpftool", "map", "dump", "pinned", b->pin, "-j", NULL };

	return spawn(m == KSTATS ? kstats : tool, strace_out);
}

static int run_mode(struct bench *b, enum mode m)
{
	switch (m) {
	case READER: return run_reader(b, m, 0);
	case READER_CHUNK: return run_reader(b, m, reader_chunk);
	case WALK: return run_walk(b);
	case KSTATS: case BPFTOOL: return run_process(b, m, NULL);
	default: return run_batch(b, m);
	}
}

/* bpf() calls of argv's whole process, from strace -c -f. */
static long bpf_calls(struct bench *b, enum mode m)
{
	char out[] = "/tmp/kstats-bench-strace-XXXXXX", line[256], name[64];
	unsigned long calls, found = 0;
	int fd = mkstemp(out);
	FILE *f;

	if (fd < 0)
		return -errno;
	close(fd);
	if (run_process(b, m, out))
		return unlink(out), -EIO;
	f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f)) {
		/* "% time seconds usecs/call calls [errors] syscall" */
		char *last = strrchr(line, ' ');
		double pct, secs;
		unsigned long usecs;

		if (last && sscanf(line, "%lf %lf %lu %lu", &pct, &secs, &usecs, &calls) == 4 &&
		    sscanf(last + 1, "%63s", name) == 1 && !strcmp(name, "bpf"))
			found = calls;
	}
	if (f)
		fclose(f);
	unlink(out);
	return (long)found;
}

static bool cpu_time;	/* --cpu-time: this thread's CPU time, for a busy machine */
static int proc_rounds = PROC_ROUNDS;	/* --in-process: 0 */
static bool profile;	/* --profile: one read of each, untimed */

static double now_s(enum mode m)
{
	struct timespec ts;

	if (!cpu_time || m >= NR_INPROC)
		return bstat_now_s();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool mode_on(enum mode m)
{
	return m != READER_CHUNK || reader_chunk;
}

/*
 * ms per read of each in-process mode, one round: the modes take turns
 * read by read, in a new random order each turn (seeded by the round, each
 * mode warmed first), until each has ROUND_S measured.  A slow stretch of
 * this VM (from milliseconds to seconds) then lands on every mode alike
 * instead of on whichever one it fell in; a read mostly finds the caches as
 * a random other mode left them (a fixed order measured a few per cent for
 * or against a mode by what ran before it), as a pull finds them.  Only the
 * slowest modes' last reads (the walk's) run back to back.
 */
static int time_inproc_round(struct bench *b, double t[NR_MODES][MAX_ROUNDS], int r)
{
	double spent[NR_INPROC] = { 0 }, t0;
	unsigned int reps[NR_INPROC] = { 0 }, seed = r;
	int order[NR_INPROC], i, m, ret = 0;
	bool busy = true;

	for (m = 0; !ret && m < NR_INPROC; m++)
		ret = mode_on(m) ? run_mode(b, m) : 0;
	while (!ret && busy) {
		busy = false;
		bstat_shuffle(order, NR_INPROC, &seed);
		for (i = 0; !ret && i < NR_INPROC; i++) {
			m = order[i];
			if (!mode_on(m) || spent[m] >= ROUND_S)
				continue;
			t0 = now_s(m);
			ret = run_mode(b, m);
			spent[m] += now_s(m) - t0;
			reps[m]++;
			busy = true;
		}
	}
	for (m = 0; m < NR_INPROC; m++)
		if (reps[m])
			t[m][r] = spent[m] * 1e3 / reps[m];
	return ret;
}

/* ms per process run: runs until ROUND_S of them is measured. */
static int time_process(struct bench *b, enum mode m, double *t)
{
	unsigned int reps = 0;
	double t0, now;
	int ret = 0;

	t0 = now_s(m);
	do {
		ret = run_mode(b, m);
		reps++;
		now = now_s(m);
	} while (!ret && now - t0 < ROUND_S);
	*t = (now - t0) * 1e3 / reps;
	return ret;
}

/*
 * Only after all in-process rounds: a process's exit leaves kernel work
 * (freeing, RCU) that would land on the in-process modes.
 */
static int time_process_rounds(struct bench *b, double t[NR_MODES][MAX_ROUNDS], int rounds)
{
	unsigned int seed = 0;
	int order[NR_MODES - NR_INPROC], r, i, ret = 0;

	for (r = 0; !ret && r < rounds && r < proc_rounds; r++) {
		bstat_shuffle(order, NR_MODES - NR_INPROC, &seed);
		for (i = 0; !ret && i < NR_MODES - NR_INPROC; i++)
			ret = time_process(b, NR_INPROC + order[i], &t[NR_INPROC + order[i]][r]);
	}
	return ret;
}

/* The bare batch strategy with the lowest median: the one to beat. */
static enum mode fastest_batch(double t[NR_MODES][MAX_ROUNDS], int rounds)
{
	double med, best_med = 0, v[MAX_ROUNDS];
	enum mode m, best = BATCH_ALL;

	for (m = BATCH_ALL; m < WALK; m++) {
		memcpy(v, t[m], rounds * sizeof(*v));
		med = bstat_median(v, rounds);
		if (m == BATCH_ALL || med < best_med) {
			best = m;
			best_med = med;
		}
	}
	return best;
}

static void print_results(struct bench *b, double t[NR_MODES][MAX_ROUNDS], int rounds)
{
	enum mode best = fastest_batch(t, rounds);
	char key[96];
	int m, proc = rounds < proc_rounds ? rounds : proc_rounds;

	printf("RESULT\tread.%u.fastest_batch\tmode\t%s\n", b->entries, mode_names[best]);
	snprintf(key, sizeof(key), "read.%u.reader_vs_fastest_batch", b->entries);
	bstat_ratio(key, t[READER], t[best], rounds);
	snprintf(key, sizeof(key), "read.%u.batch_512_vs_fastest_batch", b->entries);
	bstat_ratio(key, t[BATCH_512], t[best], rounds);
	snprintf(key, sizeof(key), "read.%u.reader_vs_batch_512", b->entries);
	bstat_ratio(key, t[READER], t[BATCH_512], rounds);
	snprintf(key, sizeof(key), "read.%u.walk_vs_reader", b->entries);
	bstat_ratio(key, t[WALK], t[READER], rounds);
	snprintf(key, sizeof(key), "read.%u.bpftool_vs_kstats_process", b->entries);
	if (proc)
		bstat_ratio(key, t[BPFTOOL], t[KSTATS], proc);
	if (reader_chunk) {
		snprintf(key, sizeof(key), "read.%u.reader_chunk_%u_vs_reader", b->entries,
			 reader_chunk);
		bstat_ratio(key, t[READER_CHUNK], t[READER], rounds);
	}
	for (m = 0; m < (proc ? NR_MODES : NR_INPROC); m++) {
		if (m == READER_CHUNK && !reader_chunk)
			continue;
		snprintf(key, sizeof(key), "read.%u.%s", b->entries, mode_names[m]);
		bstat_result(key, "ms", t[m], m < NR_INPROC ? rounds : proc);
	}
	run_reader(b, READER, 0);	/* the calls of the reader's own choice */
	printf("RESULT\tread.%u.reader_bpf_calls\tn\t%u\n", b->entries,
	       b->reader->syscalls);
	printf("RESULT\tread.l2_bytes\tB\t%ld\n", sysconf(_SC_LEVEL2_CACHE_SIZE));
	if (proc)
		printf("RESULT\tread.%u.kstats_process_bpf_calls\tn\t%ld\n", b->entries,
		       bpf_calls(b, KSTATS));
}

static int alloc_buffers(struct bench *b)
{
	int m;

	for (m = 0; m < NR_INPROC; m++) {
		if (!mode_on(m))
			continue;
		if (m == READER || m == READER_CHUNK) {
			b->rows[m] = calloc(b->entries, 33 * sizeof(int64_t));
			if (!b->rows[m])
				return -ENOMEM;
			continue;
		}
		b->keys[m] = calloc(b->entries + 1, 4);
		b->vals[m] = calloc(b->entries + 1, 256);
		if (!b->keys[m] || !b->vals[m])
			return -ENOMEM;
	}
	return 0;
}

static void free_buffers(struct bench *b)
{
	int m;

	for (m = 0; m < NR_INPROC; m++) {
		free(b->rows[m]);
		free(b->keys[m]);
		free(b->vals[m]);
		b->rows[m] = NULL;
		b->keys[m] = b->vals[m] = NULL;
	}
}

static void bench_teardown(struct bench *b)
{
	kstats_map_close(b->reader);
	b->reader = NULL;
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
	free_buffers(b);
	unlink(b->pin);
}

/* A new map and new buffers: new kernel and user memory for a round. */
static int bench_setup(struct bench *b, const char *dir)
{
	int ret = create_map(b, dir);

	if (ret)
		return ret;
	b->fd = bpf_obj_get(b->pin);
	ret = b->fd < 0 ? -errno : alloc_buffers(b);
	return ret ?: open_reader(b);
}

/*
 * Each in-process round reads a map of its own into buffers of its own:
 * where the map's elements and the buffers land in memory moves a mode's
 * time by a few per cent for a whole process, so with one map per run
 * two runs differed by more than either's rounds did.
 */
static int bench_size(const char *dir, unsigned int entries, int rounds, const char *kstats)
{
	struct bench b = { .entries = entries, .kstats = kstats, .fd = -1 };
	static double t[NR_MODES][MAX_ROUNDS];
	int r, ret = 0;

	for (r = 0; !profile && !ret && r < rounds; r++) {
		ret = bench_setup(&b, dir) ?: time_inproc_round(&b, t, r);
		bench_teardown(&b);
	}
	ret = ret ?: bench_setup(&b, dir);
	if (!ret && profile)
		ret = run_mode(&b, READER) ?: run_mode(&b, BATCH_ALL);
	else if (!ret)
		ret = time_process_rounds(&b, t, rounds);
	if (!ret && !profile)
		print_results(&b, t, rounds);
	bench_teardown(&b);
	if (ret)
		fprintf(stderr, "bench_read: %u entries failed: %s\n", entries, strerror(-ret));
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "entries", required_argument, NULL, 'e' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "cpu-time", no_argument, NULL, 'c' },
		{ "in-process", no_argument, NULL, 'i' },
		{ "profile", no_argument, NULL, 'p' },
		{ "chunk", required_argument, NULL, 'k' },
		{},
	};
	unsigned int sizes[MAX_SIZES] = { 10000, 65536 }, nsizes = 2, i;
	char dir[128], err[256] = "", *tok, *save;
	int c, rounds = 11, ret = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'e')
			for (nsizes = 0, tok = strtok_r(optarg, ",", &save);
			     tok && nsizes < MAX_SIZES; tok = strtok_r(NULL, ",", &save))
				sizes[nsizes++] = strtoul(tok, NULL, 0);
		else if (c == 'r')
			rounds = atoi(optarg);
		else if (c == 'c')
			cpu_time = true;
		else if (c == 'i')
			proc_rounds = 0;
		else if (c == 'p')
			profile = true;
		else if (c == 'k')
			reader_chunk = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (optind != argc - 1 || rounds < 1 || rounds > MAX_ROUNDS || !nsizes) {
		fprintf(stderr, "Usage: bench_read KSTATS [--entries N[,N...]] [--rounds 1..%d] "
			"[--cpu-time] [--in-process] [--profile] [--chunk K]\n",
			MAX_ROUNDS);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/kernelstats-bench-%d", KSTATS_BPFFS, (int)getpid());
	if (kstats_ensure_bpffs(dir, err, sizeof(err)) || (mkdir(dir, 0700) && errno != EEXIST)) {
		fprintf(stderr, "bench_read: %s: %s\n", dir, *err ? err : strerror(errno));
		return 1;
	}
	printf("# read: hash map, u32 key, 256-byte value (32 x u64); %d rounds "
	       "(processes: %d)\n", rounds, rounds < proc_rounds ? rounds : proc_rounds);
	for (i = 0; i < nsizes && !ret; i++)
		ret = bench_size(dir, sizes[i], rounds, argv[optind]);
	rmdir(dir);
	return ret ? 1 : 0;
}
