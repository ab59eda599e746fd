// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only streams for tests/kernel/test_stream*.c and bench/stream, fed
 * with BPF_PROG_TEST_RUN (repeat: one record per run).  Each record carries
 * its producer-side sequence number, so the tests can name every loss.
 */
#include "vmlinux.h"
#include "bpf_stream.h"

struct flood_record {
	struct kstats_stream_hdr hdr;
	__u64 seq;		/* per stream, 0, 1, 2... over every attempt */
	__u32 cpu;
	__s32 neg;		/* -(seq % 1000): proves signed decoding */
};

/* kstats watch's formatting: a bool, and a string with bytes it escapes. */
struct fields_record {
	struct kstats_stream_hdr hdr;
	bool on;
	char name[8];
};

DEFINE_BPF_MAP(flood_seq_map, ARRAY, __u32, __u64, 2);
/* Deliberately small: 64 KiB, the least on every page size, holds 2048 records. */
DEFINE_BPF_STREAM(flood, flood_record, 64 * 1024, root);
/* Large enough that no test fills it. */
DEFINE_BPF_STREAM(burst, flood_record, 16 << 20, root);
DEFINE_BPF_STREAM(fields, fields_record, 64 * 1024, root);

static __always_inline __u64 next_seq(__u32 stream)
{
	__u64 *n = bpf_map_lookup_elem(&flood_seq_map, &stream);

	/* One BPF_PROG_TEST_RUN at a time, on one CPU: no race. */
	return n ? (*n)++ : 0;
}

/*
 * One attempted record of stream sname per run.  flags 0 is
 * BPF_STREAM_SUBMIT's adaptive wakeup; bench/stream fills the ring with
 * BPF_RB_NO_WAKEUP and wakes the reader with the last record
 * (BPF_RB_FORCE_WAKEUP), so it times a drain without thread start-up.
 */
#define FLOOD_PROG(fn, sname, idx, flags)				\
	SEC("xdp") int fn(struct xdp_md *ctx)				\
	{								\
		__u64 seq = next_seq(idx);				\
		struct flood_record *r = BPF_STREAM_RESERVE(sname);	\
									\
		if (r) {						\
			r->seq = seq;					\
			r->cpu = bpf_get_smp_processor_id();		\
			r->neg = -(__s32)(seq % 1000);			\
			bpf_ringbuf_submit(r, flags);			\
		}							\
		return XDP_PASS;					\
	}

FLOOD_PROG(flood_small, flood, 0, 0)
FLOOD_PROG(flood_burst, burst, 1, 0)
FLOOD_PROG(flood_burst_quiet, burst, 1, BPF_RB_NO_WAKEUP)
FLOOD_PROG(flood_burst_wake, burst, 1, BPF_RB_FORCE_WAKEUP)

/* One record: on, and name a, TAB, b, backslash (shown as a\x09b\x5c). */
SEC("xdp") int fields_one(struct xdp_md *ctx)
{
	struct fields_record *r = BPF_STREAM_RESERVE(fields);

	if (r) {
		r->on = true;
		__builtin_memset(r->name, 0, sizeof(r->name));
		r->name[0] = 'a';
		r->name[1] = '\t';
		r->name[2] = 'b';
		r->name[3] = '\\';
		BPF_STREAM_SUBMIT(fields, r);
	}
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
