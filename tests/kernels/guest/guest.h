/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kstats-guest: the test driver that runs as the lab guest's only program.
 * Every test prints one "@@ PASS|FAIL|SKIP: <test>..." line on the console,
 * which the host (tests/kernels/run.sh) counts.  A test that needs a metric
 * runs only when its object was built and the loader pinned its map.
 */
#ifndef KSTATS_GUEST_H
#define KSTATS_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf_telemetry.h"

#define LAB_MAX_OBJS 32
#define LAB_MAX_KEYS 64

struct lab_outcome {
	char obj[64];
	char outcome[40];	/* LOADED, SKIPPED_..., FAILED_... */
	char reason[256];
};

struct lab {
	const char *obj_dir;
	const char *pin_dir;
	const char *tools_dir;
	struct lab_outcome outcomes[LAB_MAX_OBJS];
	size_t noutcomes;
};

void lab_result(const char *verdict, const char *test, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void lab_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool lab_failed(void);
const struct lab_outcome *lab_outcome_of(const struct lab *lab, const char *obj);
#define lab_pass(test, ...) lab_result("PASS", test, __VA_ARGS__)
#define lab_fail(test, ...) lab_result("FAIL", test, __VA_ARGS__)
#define lab_skip(test, ...) lab_result("SKIP", test, __VA_ARGS__)

/*
 * 0 when obj is loaded and its map pinned; otherwise prints the test's SKIP
 * (or FAIL) line with the reason and returns -1.
 */
int lab_require(const struct lab *lab, const char *test, const char *obj,
		const char *map);
/* 'y', 'm' or 'n' (not set) for CONFIG_<...> in /boot/config; 0 without it. */
char lab_config(const char *option);
int lab_write(const char *path, const char *s);
/* Runs argv[0] from the tools dir; its stdout (up to len) into out. */
int lab_run_tool(const struct lab *lab, const char *const *argv, char *out,
		 size_t len);

/* A histogram map's non-zero rows, by their first key column. */
struct hist {
	size_t nkeys;
	int64_t keys[LAB_MAX_KEYS];
	uint64_t buckets[LAB_MAX_KEYS][BPF_TELEMETRY_NR_BUCKETS];
};

int hist_read(const struct lab *lab, const char *obj, const char *map,
	      struct hist *h);
uint64_t hist_key_total(const struct hist *h, int64_t key);
uint64_t hist_bucket_total(const struct hist *h, unsigned int bucket);
uint64_t hist_total(const struct hist *h);
/* after - before, per key and bucket; -EINVAL if a count went down. */
int hist_delta(const struct hist *before, const struct hist *after,
	       struct hist *delta);
/* The name the object's id -> struct kstats_name dictionary gives id. */
int hist_name(const struct lab *lab, const char *obj, const char *map,
	      int64_t id, char *name, size_t len);

/* A private tracefs instance, recording with the monotonic clock. */
struct trace {
	char dir[160];
};

struct trace_event {
	int pid;
	uint64_t ns;
	const char *name;	/* "mm_vmscan_kswapd_wake" */
	const char *args;	/* the event's formatted fields */
};

typedef void (*trace_cb)(const struct trace_event *ev, void *arg);

int trace_start(struct trace *tr, const char *tag, const char *const *events);
void trace_stop(struct trace *tr);
/* Calls cb for every recorded event, oldest first. */
int trace_each(const struct trace *tr, trace_cb cb, void *arg);

/* Events named event (of pid, or any when pid < 0) within [from, to]. */
long trace_count(const struct trace *tr, const char *event, int pid,
		 uint64_t from_ns, uint64_t to_ns);

/* Begin/end pairs per key, counted the way the BPF programs count them. */
#define TRACE_MAX_PAIRS 64

struct trace_pair {
	char key[48];
	bool seen, open;
	bool ambiguous;		/* first event was an end: one more may count */
	long pairs;
};

struct trace_pairs {
	size_t n;
	struct trace_pair k[TRACE_MAX_PAIRS];
};

void pairs_mark(struct trace_pairs *p, const char *key, bool begin);
const struct trace_pair *pairs_get(const struct trace_pairs *p, const char *key);
/* A count matches pairs, or pairs + 1 when the first event was an end. */
bool pairs_match(const struct trace_pair *k, uint64_t count);

/* The tests; each prints its own result lines. */
void test_compaction(const struct lab *lab);
void test_reclaim(const struct lab *lab);
void test_suspend(const struct lab *lab);
void test_dmabuf(const struct lab *lab);
void test_cma(const struct lab *lab);
void test_pull(const struct lab *lab);

#endif /* KSTATS_GUEST_H */
