// SPDX-License-Identifier: GPL-2.0
/*
 * DmabufRequestSizes: bytes of each dma-buf export, keyed by the exporter's
 * name id (dmabuf_exporter_names_map resolves it).  Hook chain, best first
 * (the loader keeps the first whose attach point exists):
 *   1. tp_btf/dma_buf_export: dma_buf:dma_buf_export(struct dma_buf *),
 *      which fires once the export succeeded;
 *   2. raw_tp/dma_buf_export: the same tracepoint without BTF;
 *   3. kprobe/dma_buf_export(const struct dma_buf_export_info *), for
 *      kernels without the tracepoint (6.1); it also sees failed exports.
 *      One object for every architecture: the argument register is read
 *      through CO-RE flavours of struct pt_regs, and the loading kernel's
 *      BTF decides which one exists (the other read is dead code there);
 *   4. none of them: the loader skips the object.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include "bpf_telemetry.h"

#define DMABUF_MAX_EXPORTERS 64	/* heaps and exporting drivers */

DEFINE_BPF_MAP_GRO_F(dmabuf_request_sizes_map, HASH, __u32,
		     struct bpf_telemetry_accumulator, DMABUF_MAX_EXPORTERS,
		     kstats, BPF_F_NO_PREALLOC);
DEFINE_BPF_MAP_GRO_F(dmabuf_exporter_names_map, HASH, __u32,
		     struct kstats_name, DMABUF_MAX_EXPORTERS, kstats,
		     BPF_F_NO_PREALLOC);
DEFINE_BPF_HISTOGRAM_NAMED(dmabuf_request_sizes_map, "DmabufRequestSizes",
			   KSTATS_UNIT_BYTES, dmabuf_exporter_names_map);

static __always_inline void count_export(const char *exp_name, __u64 size)
{
	struct kstats_name exporter;
	__u32 id;

	kstats_name_read(&exporter, exp_name);
	id = kstats_name_id(&dmabuf_exporter_names_map, &exporter);
	INCREMENT_ACCUMULATOR(dmabuf_request_sizes_map, &id,
			      bpf_telemetry_bucket(size));
}

DEFINE_BPF_TRACEPOINT(dma_buf_export, root, kstats, on_dma_buf_export)
(__u64 *ctx)
{
	struct dma_buf *dmabuf = (void *)ctx[0];

	if (!bpf_core_field_exists(struct dma_buf, exp_name) ||
	    !bpf_core_field_exists(struct dma_buf, size))
		return 0;
	count_export(BPF_CORE_READ(dmabuf, exp_name), BPF_CORE_READ(dmabuf, size));
	return 0;
}

/* Just the argument registers, matched by CO-RE against struct pt_regs. */
struct pt_regs___x86 {
	unsigned long di;
} __attribute__((preserve_access_index));

struct pt_regs___arm64 {
	__u64 regs[31];		/* in an anonymous union there */
} __attribute__((preserve_access_index));

/* On other architectures the di read fails to relocate: a failed load, not 0s. */
static __always_inline unsigned long kprobe_first_arg(struct pt_regs *ctx)
{
	if (bpf_core_field_exists(struct pt_regs___arm64, regs))
		return BPF_CORE_READ((struct pt_regs___arm64 *)ctx, regs[0]);
	return BPF_CORE_READ((struct pt_regs___x86 *)ctx, di);
}

DEFINE_BPF_KPROBE(dma_buf_export, dma_buf_export, root, kstats,
		  on_dma_buf_export_kprobe)
(struct pt_regs *ctx)
{
	const struct dma_buf_export_info *info = (void *)kprobe_first_arg(ctx);

	if (!bpf_core_field_exists(struct dma_buf_export_info, exp_name) ||
	    !bpf_core_field_exists(struct dma_buf_export_info, size))
		return 0;
	count_export(BPF_CORE_READ(info, exp_name), BPF_CORE_READ(info, size));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
