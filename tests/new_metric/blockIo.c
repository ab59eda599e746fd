// SPDX-License-Identifier: GPL-2.0
/*
 * BlockIoLatency: block_rq_issue -> block_rq_complete per request, keyed by
 * the request's operation.  tests/sh/test_pull_new_metric.sh adds it to a
 * copy of the tree as bpfprogs/blockIo.c, the way doc/writing-a-metric.md
 * says: this file and one proto message are the whole change.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include "bpf_telemetry.h"

#define BLOCK_IO_MAX_INFLIGHT 4096	/* requests in flight at once */
#define BLOCK_IO_REQ_OP_MASK 0xff	/* the kernel's REQ_OP_MASK (REQ_OP_BITS 8) */

/* Key of block_io_latency_map; BlockIoLatency.Op mirrors it. */
enum block_io_op {
	BLOCK_IO_OP_OTHER = 0,
	BLOCK_IO_OP_READ = 1,
	BLOCK_IO_OP_WRITE = 2,
	BLOCK_IO_OP_FLUSH = 3,
	BLOCK_IO_OP_DISCARD = 4,
	BLOCK_IO_OP_COUNT,
};

/* Start times keyed by the request: issue and completion run on any CPU. */
DEFINE_BPF_MAP(block_io_start_map, HASH, __u64, __u64, BLOCK_IO_MAX_INFLIGHT);
DEFINE_BPF_MAP_GRO(block_io_latency_map, ARRAY, __u32,
		   struct bpf_telemetry_accumulator, BLOCK_IO_OP_COUNT, kstats);
DEFINE_BPF_HISTOGRAM_ENUM(block_io_latency_map, "BlockIoLatency",
			  KSTATS_UNIT_USEC, block_io_op);

static __always_inline __u32 op_of(struct request *rq)
{
	switch (BPF_CORE_READ(rq, cmd_flags) & BLOCK_IO_REQ_OP_MASK) {
	case REQ_OP_READ:
		return BLOCK_IO_OP_READ;
	case REQ_OP_WRITE:
		return BLOCK_IO_OP_WRITE;
	case REQ_OP_FLUSH:
		return BLOCK_IO_OP_FLUSH;
	case REQ_OP_DISCARD:
		return BLOCK_IO_OP_DISCARD;
	default:
		return BLOCK_IO_OP_OTHER;
	}
}

/* block_rq_issue(struct request *rq) */
DEFINE_BPF_TRACEPOINT(block_rq_issue, root, kstats, on_block_rq_issue)
(__u64 *ctx)
{
	__u64 rq = ctx[0];

	SAVE_FIRST_START_TIME(block_io_start_map, &rq);
	return 0;
}

/* block_rq_complete(struct request *rq, blk_status_t error, unsigned int nr_bytes) */
DEFINE_BPF_TRACEPOINT(block_rq_complete, root, kstats, on_block_rq_complete)
(__u64 *ctx)
{
	__u64 rq = ctx[0];
	__u32 bucket = GET_LATENCY_BUCKET(block_io_start_map, &rq);
	__u32 op;

	if (bucket == BPF_TELEMETRY_INVALID_BUCKET)
		return 0;
	op = op_of((struct request *)rq);
	INCREMENT_ACCUMULATOR(block_io_latency_map, &op, bucket);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
