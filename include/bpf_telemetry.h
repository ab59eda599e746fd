/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The telemetry contract: the log2 accumulator, the one bucket function
 * shared by BPF programs and userspace, and the map/program macros.
 * See doc/design.md, "Buckets".
 */
#ifndef KSTATS_BPF_TELEMETRY_H
#define KSTATS_BPF_TELEMETRY_H

#include "kstats_keys.h"
#include "kstats_meta.h"

#define BPF_TELEMETRY_NR_BUCKETS 32
#define BPF_TELEMETRY_INVALID_BUCKET 0xffffffffu

struct bpf_telemetry_accumulator {
	__u64 buckets[BPF_TELEMETRY_NR_BUCKETS];
};

/* bucket(v) = 0 for v <= 1, else min(floor(log2(v)), 31). */
static inline __u32 bpf_telemetry_bucket(__u64 v)
{
	__u32 x, b = 0;

	if (v >= (1ull << 31))
		return BPF_TELEMETRY_NR_BUCKETS - 1;
	x = (__u32)v;
	if (x >> 16) { x >>= 16; b += 16; }
	if (x >> 8) { x >>= 8; b += 8; }
	if (x >> 4) { x >>= 4; b += 4; }
	if (x >> 2) { x >>= 2; b += 2; }
	if (x >> 1)
		b += 1;
	return b;
}

/*
 * Id of a CMA pool or dma-buf exporter name: FNV-1a (32 bit) of its bytes up
 * to the NUL, at most len.  The same function runs in BPF and in userspace.
 */
static inline __u32 bpf_telemetry_name_hash(const char *s, __u32 len)
{
	__u32 h = 2166136261u, i;

	for (i = 0; i < len && s[i]; i++) {
		h ^= (__u8)s[i];
		h *= 16777619u;
	}
	return h;
}

#ifdef __bpf__
#include <bpf/bpf_helpers.h>

#define __KSTATS_META(sec, var) \
	static const volatile var __attribute__((section(sec), used))

/* A start-time map: private to the object (root:root 0600). */
#define DEFINE_BPF_MAP(mname, TYPE, KeyT, ValueT, entries) \
	DEFINE_BPF_MAP_UGM(mname, TYPE, KeyT, ValueT, entries, root, root, 0600)

/* An output map readable by group gid (doc/design.md: root:kstats 0440). */
#define DEFINE_BPF_MAP_GRO(mname, TYPE, KeyT, ValueT, entries, gid) \
	DEFINE_BPF_MAP_UGM(mname, TYPE, KeyT, ValueT, entries, root, gid, 0440)

/* The same with map_flags, e.g. BPF_F_NO_PREALLOC for sparse output maps. */
#define DEFINE_BPF_MAP_GRO_F(mname, TYPE, KeyT, ValueT, entries, gid, flg) \
	DEFINE_BPF_MAP_UGMF(mname, TYPE, KeyT, ValueT, entries, root, gid, 0440, flg)

#define DEFINE_BPF_MAP_UGM(mname, TYPE, KeyT, ValueT, entries, usr, grp, md) \
	DEFINE_BPF_MAP_UGMF(mname, TYPE, KeyT, ValueT, entries, usr, grp, md, 0)

#define DEFINE_BPF_MAP_UGMF(mname, TYPE, KeyT, ValueT, entries, usr, grp, md, flg) \
	struct {							\
		__uint(type, BPF_MAP_TYPE_##TYPE);			\
		__uint(max_entries, entries);				\
		__uint(map_flags, flg);					\
		__type(key, KeyT);					\
		__type(value, ValueT);					\
	} mname SEC(".maps");						\
	__KSTATS_MAP_META(mname, #mname, usr, grp, md)

/* The loader's record of map mname: its owner and mode once pinned. */
#define __KSTATS_MAP_META(mname, name_str, usr, grp, md)		\
	__KSTATS_META(KSTATS_SEC_MAPS, struct kstats_map_meta)		\
	__kstats_map_##mname = {					\
		.name = name_str, .uid = #usr, .gid = #grp, .mode = md,	\
		.version = KSTATS_META_VERSION,				\
	}

/* Declares that map holds bpf_telemetry_accumulator values of metric. */
#define DEFINE_BPF_HISTOGRAM(mname, metric_name, unit_id) \
	__DEFINE_BPF_HISTOGRAM(mname, metric_name, unit_id, "", "")

/* The same, with the key's id resolved through dictionary map names. */
#define DEFINE_BPF_HISTOGRAM_NAMED(mname, metric_name, unit_id, names) \
	__DEFINE_BPF_HISTOGRAM(mname, metric_name, unit_id, #names, "")

/*
 * The same, with the key's __u32 (ARRAY keys must be plain ints in BTF)
 * labelled by the enumerators of enum tag, which is kept in the object's BTF.
 */
#define DEFINE_BPF_HISTOGRAM_ENUM(mname, metric_name, unit_id, tag)	\
	__KSTATS_META(KSTATS_SEC_TYPES, enum tag) __kstats_keyenum_##mname; \
	__DEFINE_BPF_HISTOGRAM(mname, metric_name, unit_id, "", #tag)

#define __DEFINE_BPF_HISTOGRAM(mname, metric_name, unit_id, names, tag) \
	__KSTATS_META(KSTATS_SEC_HISTS, struct kstats_hist_meta)	\
	__kstats_hist_##mname = {					\
		.map = #mname, .metric = metric_name, .names_map = names, \
		.key_enum = tag, .unit = unit_id,			\
		.version = KSTATS_META_VERSION,				\
	}

#define __KSTATS_PROG_META(fn, attach_pt, usr, grp, var, kmin, kmax, flg) \
	__KSTATS_META(KSTATS_SEC_PROGS, struct kstats_prog_meta)	\
	__kstats_prog_##fn = {						\
		.name = #fn, .attach = attach_pt, .uid = #usr,		\
		.gid = #grp, .mode = 0440, .variant = var,		\
		.min_kver = kmin, .max_kver = kmax, .flags = flg,	\
		.version = KSTATS_META_VERSION,				\
	}

/*
 * One program in section sec; the caller writes the parameter list and body:
 *	DEFINE_BPF_PROG("tp_btf/foo", root, kstats, on_foo)(__u64 *ctx) { ... }
 */
#define DEFINE_BPF_PROG_KVER_OPT(sec, usr, grp, fn, kmin, kmax, flg)	\
	__KSTATS_PROG_META(fn, sec, usr, grp, KSTATS_VARIANT_OTHER,	\
			   kmin, kmax, flg);				\
	SEC(sec) int fn

#define DEFINE_BPF_PROG(sec, usr, grp, fn) \
	DEFINE_BPF_PROG_KVER_OPT(sec, usr, grp, fn, 0, KSTATS_KVER_INF, 0)

/*
 * A tracepoint handler built twice from one body: as tp_btf (preferred) and
 * as raw_tp (fn##_raw), which the loader falls back to and tests run with
 * BPF_PROG_TEST_RUN.  The body must therefore read pointer arguments with
 * CO-RE probe reads, never by direct dereference.
 *	DEFINE_BPF_TRACEPOINT(mm_compaction_end, root, kstats, on_end)(__u64 *ctx)
 */
#define DEFINE_BPF_TRACEPOINT_KVER_OPT(tp, usr, grp, fn, kmin, kmax, flg) \
	static __always_inline int fn##_body(__u64 *ctx);		\
	__KSTATS_PROG_META(fn, #tp, usr, grp, KSTATS_VARIANT_TP_BTF,	\
			   kmin, kmax, flg);				\
	SEC("tp_btf/" #tp) int fn(__u64 *ctx) { return fn##_body(ctx); } \
	__KSTATS_PROG_META(fn##_raw, #tp, usr, grp, KSTATS_VARIANT_RAW_TP, \
			   kmin, kmax, flg);				\
	SEC("raw_tp/" #tp) int fn##_raw(__u64 *ctx) { return fn##_body(ctx); } \
	static __always_inline int fn##_body

#define DEFINE_BPF_TRACEPOINT(tp, usr, grp, fn) \
	DEFINE_BPF_TRACEPOINT_KVER_OPT(tp, usr, grp, fn, 0, KSTATS_KVER_INF, 0)

/* A handler the object loads without where the kernel lacks tp. */
#define DEFINE_BPF_TRACEPOINT_OPT(tp, usr, grp, fn) \
	DEFINE_BPF_TRACEPOINT_KVER_OPT(tp, usr, grp, fn, 0, KSTATS_KVER_INF, \
				       KSTATS_PROG_OPTIONAL)

/*
 * Object-wide: kernels [kmin, kmax) only, and flags such as
 * KSTATS_OBJ_CRITICAL (kstats-loader exits 1 when this object fails).
 *	DEFINE_BPF_OBJECT(KSTATS_OBJ_CRITICAL);
 */
#define DEFINE_BPF_OBJECT_KVER(kmin, kmax, flg)				\
	__KSTATS_META(KSTATS_SEC_OBJ, struct kstats_obj_meta)		\
	__kstats_obj = {						\
		.min_kver = kmin, .max_kver = kmax, .flags = flg,	\
		.version = KSTATS_META_VERSION,				\
	}

#define DEFINE_BPF_OBJECT(flg) DEFINE_BPF_OBJECT_KVER(0, KSTATS_KVER_INF, flg)

/*
 * Per-thread start times live in task local storage, not in a hash keyed by
 * tid: no hashing, no preallocated table to fill, freed when the task exits
 * (bench/handlers: about 0.6x the cost of the hash-map pattern).
 */
#define DEFINE_BPF_TASK_START_MAP(mname) \
	DEFINE_BPF_MAP_UGMF(mname, TASK_STORAGE, int, __u64, 0, root, root, \
			    0600, BPF_F_NO_PREALLOC)

/* What kstats_take_elapsed_ns() gives when no start time was set. */
#define KSTATS_NO_START (~0ull)

/* Sets *start (0 = none) unless a start is already set. */
static __always_inline void kstats_save_first_start(__u64 *start)
{
	if (start && !*start)
		*start = bpf_ktime_get_ns();
}

/* Clears *start; returns now - *start in ns, or KSTATS_NO_START. */
static __always_inline __u64 kstats_take_elapsed_ns(__u64 *start, __u64 now)
{
	__u64 begin;

	if (!start || !*start)
		return KSTATS_NO_START;
	begin = *start;
	*start = 0;
	return now > begin ? now - begin : 0;
}

/* The microsecond bucket of an elapsed time, or the invalid bucket. */
static __always_inline __u32 kstats_elapsed_bucket(__u64 ns)
{
	if (ns == KSTATS_NO_START)
		return BPF_TELEMETRY_INVALID_BUCKET;
	return bpf_telemetry_bucket(ns / 1000);
}

#define __TASK_START(map, flags) \
	bpf_task_storage_get(&(map), bpf_get_current_task_btf(), 0, flags)

#define SAVE_FIRST_TASK_START_TIME(map) \
	kstats_save_first_start(__TASK_START(map, BPF_LOCAL_STORAGE_GET_F_CREATE))

/* Clears the thread's start time; returns the ns since, or KSTATS_NO_START. */
#define TAKE_TASK_ELAPSED_NS(map) \
	kstats_take_elapsed_ns(__TASK_START(map, 0), bpf_ktime_get_ns())

/* Clears the thread's start time; returns the microsecond bucket. */
#define GET_TASK_LATENCY_BUCKET(map) \
	kstats_elapsed_bucket(TAKE_TASK_ELAPSED_NS(map))

/*
 * A kprobe on func, as the last-resort variant of attach point attach_pt
 * (the tracepoint variants' name), so the loader picks one per kernel:
 *	DEFINE_BPF_KPROBE(dma_buf_export, dma_buf_export, root, kstats,
 *			  on_export_kprobe)(struct pt_regs *ctx) { ... }
 */
#define DEFINE_BPF_KPROBE_KVER_OPT(func, attach_pt, usr, grp, fn, kmin, kmax, flg) \
	__KSTATS_PROG_META(fn, #attach_pt, usr, grp, KSTATS_VARIANT_KPROBE, \
			   kmin, kmax, flg);				\
	SEC("kprobe/" #func) int fn

#define DEFINE_BPF_KPROBE(func, attach_pt, usr, grp, fn) \
	DEFINE_BPF_KPROBE_KVER_OPT(func, attach_pt, usr, grp, fn, 0,	\
				   KSTATS_KVER_INF, 0)

/* Overwrites: for spans whose begin the kernel may emit without an end. */
#define SAVE_START_TIME_AT(map, key, now) ({				\
	__u64 __start = (now);						\
	bpf_map_update_elem(&(map), (key), &__start, BPF_ANY);		\
})

/*
 * Start times in an ARRAY of slots (0 = none), for small fixed key spaces
 * such as nodes: no hash update/delete per event.  Only for keys whose begin
 * and end cannot race (one kswapd thread per node).
 */
#define SAVE_FIRST_SLOT_START_TIME(map, key) \
	kstats_save_first_start(bpf_map_lookup_elem(&(map), (key)))

#define GET_SLOT_LATENCY_BUCKET(map, key)				\
	kstats_elapsed_bucket(kstats_take_elapsed_ns(			\
		bpf_map_lookup_elem(&(map), (key)), bpf_ktime_get_ns()))

#define SAVE_FIRST_START_TIME_AT(map, key, now) ({			\
	__u64 __start = (now);						\
	bpf_map_update_elem(&(map), (key), &__start, BPF_NOEXIST);	\
})

#define SAVE_FIRST_START_TIME(map, key) \
	SAVE_FIRST_START_TIME_AT(map, key, bpf_ktime_get_ns())

/*
 * Looks up and deletes the start time; returns the microsecond bucket.  Only
 * the caller whose delete succeeds counts: two ends racing on one key would
 * otherwise both count the same start.
 */
#define GET_LATENCY_BUCKET_AT(map, key, now) ({				\
	__u32 __bucket = BPF_TELEMETRY_INVALID_BUCKET;			\
	__u64 __now = (now);						\
	__u64 *__start = bpf_map_lookup_elem(&(map), (key));		\
	if (__start) {							\
		__u64 __begin = *__start;				\
		if (!bpf_map_delete_elem(&(map), (key)))		\
			__bucket = bpf_telemetry_bucket(__now > __begin ? \
				(__now - __begin) / 1000 : 0);		\
	}								\
	__bucket;							\
})

#define GET_LATENCY_BUCKET(map, key) \
	GET_LATENCY_BUCKET_AT(map, key, bpf_ktime_get_ns())

/* Creates a zeroed entry when absent (hash maps), then adds atomically. */
#define INCREMENT_ACCUMULATOR(map, key, bucket) ({			\
	__u32 __b = (bucket);						\
	struct bpf_telemetry_accumulator *__acc;			\
	if (__b < BPF_TELEMETRY_NR_BUCKETS) {				\
		__acc = bpf_map_lookup_elem(&(map), (key));		\
		if (!__acc) {						\
			struct bpf_telemetry_accumulator __zero = {};	\
			bpf_map_update_elem(&(map), (key), &__zero,	\
					    BPF_NOEXIST);		\
			__acc = bpf_map_lookup_elem(&(map), (key));	\
		}							\
		if (__acc)						\
			__sync_fetch_and_add(&__acc->buckets[__b], 1);	\
	}								\
})

/* Reads a kernel string into a zeroed name; a failed read gives "". */
static __always_inline void kstats_name_read(struct kstats_name *n,
					     const void *kstr)
{
	__builtin_memset(n, 0, sizeof(*n));
	bpf_probe_read_kernel_str(n->name, sizeof(n->name), kstr);
}

static __always_inline bool kstats_name_equal(const struct kstats_name *a,
					      const struct kstats_name *b)
{
	__u32 i;

	for (i = 0; i < sizeof(a->name); i++)
		if (a->name[i] != b->name[i])
			return false;
	return true;
}

#define KSTATS_NAME_PROBES 4

/*
 * The id of name in the id -> name dictionary dict: its hash, or after a
 * collision the next of KSTATS_NAME_PROBES slots that is free or holds the
 * same name.  Ids stay exact: userspace resolves them through dict.  A full
 * dictionary gives an id that dict cannot resolve, shown as a number.
 */
static __always_inline __u32 kstats_name_id(void *dict,
					    const struct kstats_name *name)
{
	__u32 hash = bpf_telemetry_name_hash(name->name, sizeof(name->name));
	struct kstats_name *cur;
	__u32 id, i;

	for (i = 0; i < KSTATS_NAME_PROBES; i++) {
		id = hash + i;
		cur = bpf_map_lookup_elem(dict, &id);
		if (!cur) {
			bpf_map_update_elem(dict, &id, name, BPF_NOEXIST);
			cur = bpf_map_lookup_elem(dict, &id);
		}
		if (!cur || kstats_name_equal(cur, name))
			return id;
	}
	return hash;
}

#endif /* __bpf__ */
#endif /* KSTATS_BPF_TELEMETRY_H */
