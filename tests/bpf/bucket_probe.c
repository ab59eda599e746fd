// SPDX-License-Identifier: GPL-2.0
/* Runs the shared bucket function inside the kernel for tests/kernel. */
#include "vmlinux.h"
#include "bpf_telemetry.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bucket_out SEC(".maps");

SEC("raw_tp/bucket_probe")
int bucket_probe(__u64 *ctx)
{
	__u32 key = 0, bucket = bpf_telemetry_bucket(ctx[0]);

	bpf_map_update_elem(&bucket_out, &key, &bucket, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
