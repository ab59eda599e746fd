/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the metric tests: a metric object loaded with only its raw_tp
 * (or kprobe) programs, driven by BPF_PROG_TEST_RUN with synthetic
 * tracepoint arguments; kernel memory for pointer arguments; kernel struct
 * layouts from vmlinux BTF; the process's oom_score_adj.
 */
#ifndef KSTATS_TEST_METRICS_H
#define KSTATS_TEST_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <linux/types.h>

#include "bpf_telemetry.h"

struct bpf_object;

/* The build tree (KSTATS_BUILD, else "build"). */
const char *mt_build(void);

struct mt_obj {
	struct bpf_object *obj;
};

/* Loads <build>/bpf/<name>.bpf with only the programs whose section starts
 * with sec_prefix ("raw_tp/", "kprobe/").  Nothing is attached. */
int mt_obj_open(struct mt_obj *o, const char *name, const char *sec_prefix);
void mt_obj_close(struct mt_obj *o);
int mt_map_fd(const struct mt_obj *o, const char *map);

/*
 * <build>/tests/bpf/clocked_<name>.bpf (or any test object by its name):
 * raw_tp programs on test_clock_map, the clock tests/bpf/test_clock.h gives
 * bpf_ktime_get_ns() (MT_CLOCK_MONO) and bpf_ktime_get_boot_ns().
 */
int mt_test_obj_open(struct mt_obj *o, const char *name);
enum mt_clock { MT_CLOCK_MONO, MT_CLOCK_BOOT };
int mt_clock_set(const struct mt_obj *o, enum mt_clock clk, __u64 ns);

/* One BPF_PROG_TEST_RUN of prog with ctx = args (the tracepoint's args). */
int mt_run(const struct mt_obj *o, const char *prog, const __u64 *args,
	   size_t nargs);

/* The accumulator of key in map; all zero when the key is absent. */
int mt_hist(const struct mt_obj *o, const char *map, __u32 key,
	    struct bpf_telemetry_accumulator *acc);
/*
 * 0 when acc holds exactly one event, in a bucket from bucket(lo_us) - 1 to
 * bucket(hi_us) + 1: lo_us is the sleep the handler's interval contains, hi_us
 * the time from before its begin run to after its end run.
 */
int mt_bucket_between(const struct bpf_telemetry_accumulator *acc,
		      uint64_t lo_us, uint64_t hi_us);
/* Per bucket, the sum over every key of map. */
int mt_hist_sum(const struct mt_obj *o, const char *map,
		struct bpf_telemetry_accumulator *sum);
/* Sum over every bucket of key, or of every key. */
int mt_key_total(const struct mt_obj *o, const char *map, __u32 key,
		 uint64_t *total);
/* The test fails unless map holds want events in all (cmocka). */
void mt_expect_total(const struct mt_obj *o, const char *map, uint64_t want);
/* The bucket of the only event in acc; -1 unless acc holds exactly one. */
int mt_single_bucket(const struct bpf_telemetry_accumulator *acc);

uint64_t mt_clock_ns(clockid_t clk);
/* Sleeps about us microseconds; returns the time it took on clk, in us. */
uint64_t mt_sleep_us(clockid_t clk, unsigned int us);
uint64_t mt_us_since(clockid_t clk, uint64_t t0_ns);

/* The id BPF gives a name that collides with no other. */
static inline __u32 mt_name_hash(const char *s)
{
	return bpf_telemetry_name_hash(s, KSTATS_NAME_MAX);
}

/* The name dict holds for id; -ENOENT when none. */
int mt_dict_name(const struct mt_obj *o, const char *dict, __u32 id,
		 struct kstats_name *name);

/* oom_score_adj values at both edges of every doc/design.md band. */
struct mt_adj_case {
	int adj;
	enum kstats_process_state state;
};

extern const struct mt_adj_case mt_adj_band_edges[];
extern const size_t mt_adj_band_edges_len;

/* Kernel memory (tests/bpf/kmem.c): bytes copied in get a kernel address. */
#define MT_KMEM_SIZE 4096

struct mt_kmem {
	struct mt_obj obj;	/* tests/bpf/kmem.bpf */
	int fd;
	__u64 kaddr;
	size_t used;
	unsigned char page[MT_KMEM_SIZE];
};

int mt_kmem_open(struct mt_kmem *k);
void mt_kmem_close(struct mt_kmem *k);
/* Copies data in (8-byte aligned); its kernel address, or 0 when full. */
__u64 mt_kmem_put(struct mt_kmem *k, const void *data, size_t len);
__u64 mt_kmem_str(struct mt_kmem *k, const char *s);

/* Byte offset of member in the running kernel's struct type, or -errno. */
int mt_btf_member_offset(const char *type, const char *member);
/* Byte size of the running kernel's struct type, or -errno. */
int mt_btf_struct_size(const char *type);

int mt_get_oom_score_adj(int *adj);
int mt_set_oom_score_adj(int adj);

/* An object's raw_tp programs plus kernel memory for their arguments. */
struct mt_env {
	const char *name;	/* the object, for mt_env_setup */
	struct mt_obj obj;
	struct mt_kmem kmem;
};

int mt_env_open(struct mt_env *e, const char *name);
void mt_env_close(struct mt_env *e);
/* Test fixtures: mt_env_open and mt_env_close of the struct mt_env *state. */
int mt_env_setup(void **state);
int mt_env_teardown(void **state);

struct CMUnitTest;
/*
 * A metric test's main(): ktest_main, each of the n tests run between setup
 * and teardown with state.
 */
int mt_main(const char *name, struct CMUnitTest *tests, size_t n,
	    int (*setup)(void **state), int (*teardown)(void **state), void *state);
#define MT_MAIN(name, tests, setup, teardown, state) \
	mt_main(name, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown, state)

#endif /* KSTATS_TEST_METRICS_H */
