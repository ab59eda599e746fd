// SPDX-License-Identifier: GPL-2.0
/* Maps only, no programs: layouts and map types for the reader's tests. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "reader_layouts.h"

#define MAP(mname, TYPE, KeyT, ValueT, entries)		\
	struct {					\
		__uint(type, BPF_MAP_TYPE_##TYPE);	\
		__uint(max_entries, entries);		\
		__type(key, KeyT);			\
		__type(value, ValueT);			\
	} mname SEC(".maps")

MAP(small_map, HASH, struct rd_small_key, struct rd_small_value, 256);
MAP(flags_map, HASH, enum rd_color, struct rd_flags_value, 16);
MAP(name_map, HASH, __u32, struct rd_name_value, 16);
MAP(nested_map, HASH, struct rd_nested_key, struct rd_nested_value, 16);
MAP(holes_map, ARRAY, __u32, struct rd_holes_value, RD_ARRAY_ENTRIES);
MAP(full_map, HASH, __u32, struct rd_count_value, RD_FULL_ENTRIES);
MAP(big_map, HASH, __u32, struct rd_count_value, RD_BIG_ENTRIES);
MAP(lru_map, LRU_HASH, __u32, struct rd_count_value, 128);
MAP(pcpu_hash_map, PERCPU_HASH, __u32, struct rd_percpu_value, 16);
MAP(lru_pcpu_map, LRU_PERCPU_HASH, __u32, struct rd_percpu_value, 128);
MAP(pcpu_array_map, PERCPU_ARRAY, __u32, __u64, RD_ARRAY_ENTRIES);
MAP(pcpu_odd_map, PERCPU_ARRAY, __u32, struct rd_odd_value, RD_ARRAY_ENTRIES);
MAP(churn_map, HASH, __u32, struct rd_churn_value, 1024);
MAP(pcpu_churn_map, PERCPU_HASH, __u32, struct rd_churn_value, 1024);
MAP(clash_map, HASH, struct rd_id_key, struct rd_id_value, 4);
MAP(union_map, HASH, __u32, struct rd_union_value, 4);
MAP(bits_map, HASH, __u32, struct rd_bits_value, 4);

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);	/* every page size's (bpf_stream.h) */
} ring_map SEC(".maps");

char LICENSE[] SEC("license") = "GPL";
