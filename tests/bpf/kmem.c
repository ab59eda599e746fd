// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel memory for tests: kmem_map's value is a page that userspace fills
 * with fake kernel objects (strings, a struct dma_buf, ...), and kmem_addr
 * reports its kernel address.  Handlers under test then read those objects
 * with their real CO-RE probe reads.  Reporting a kernel address needs
 * CAP_PERFMON or CAP_SYS_ADMIN (the verifier's pointer-leak rule): root only.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define KMEM_SIZE 4096

struct kmem_page {
	char bytes[KMEM_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kmem_page);
} kmem_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} kmem_addr_map SEC(".maps");

SEC("raw_tp/kmem_addr")
int kmem_addr(__u64 *ctx)
{
	__u32 key = 0;
	struct kmem_page *page = bpf_map_lookup_elem(&kmem_map, &key);
	__u64 *out = bpf_map_lookup_elem(&kmem_addr_map, &key);

	if (page && out)
		*out = (__u64)page;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
