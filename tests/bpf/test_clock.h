/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A clock the test sets, for exact latency edges: a test object includes
 * this, then a production source (tests/bpf/clocked_*.c), so the very same
 * handler and header code runs with bpf_ktime_get_ns() and
 * bpf_ktime_get_boot_ns() read from test_clock_map instead of the kernel.
 * Nothing in bpfprogs/ or include/ changes.
 */
#ifndef KSTATS_TEST_CLOCK_H
#define KSTATS_TEST_CLOCK_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* Keys of test_clock_map: tests/lib/metrics.h enum mt_clock. */
#define TEST_CLOCK_MONO 0
#define TEST_CLOCK_BOOT 1

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} test_clock_map SEC(".maps");

static __always_inline __u64 test_clock_read(__u32 clk)
{
	__u64 *now = bpf_map_lookup_elem(&test_clock_map, &clk);

	return now ? *now : 0;
}

/* After bpf_helpers.h: its declarations keep their names, calls read the map. */
#define bpf_ktime_get_ns() test_clock_read(TEST_CLOCK_MONO)
#define bpf_ktime_get_boot_ns() test_clock_read(TEST_CLOCK_BOOT)

#endif
