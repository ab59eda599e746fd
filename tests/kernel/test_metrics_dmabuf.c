// SPDX-License-Identifier: GPL-2.0
/*
 * DmabufRequestSizes in the running kernel.  This kernel has no dma_buf
 * tracepoints and no kprobes, so the raw_tp handler runs under
 * BPF_PROG_TEST_RUN with ctx[0] pointing at a fake struct dma_buf in real
 * kernel memory (tests/bpf/kmem.c), laid out from this kernel's BTF: the
 * CO-RE reads of ->exp_name and ->size are the ones under test.  The kprobe
 * variant is loaded (verifier and CO-RE against struct dma_buf_export_info)
 * but cannot be attached here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kstats_objmeta.h"
#include "metrics.h"

#define MAP "dmabuf_request_sizes_map"
#define NAMES "dmabuf_exporter_names_map"

static struct mt_env env = { .name = "dmabuf" };

/* A struct dma_buf with only the fields the handler reads set. */
static __u64 fake_dma_buf(const char *exp_name, __u64 size)
{
	int len = mt_btf_struct_size("dma_buf");
	int name_off = mt_btf_member_offset("dma_buf", "exp_name");
	int size_off = mt_btf_member_offset("dma_buf", "size");
	__u64 name = mt_kmem_str(&env.kmem, exp_name);
	unsigned char buf[MT_KMEM_SIZE] = {};

	assert_true(len > 0 && len <= (int)sizeof(buf));
	assert_true(name_off >= 0 && size_off >= 0 && name);
	memcpy(buf + name_off, &name, sizeof(name));
	memcpy(buf + size_off, &size, sizeof(size));
	return mt_kmem_put(&env.kmem, buf, len);
}

static void export(__u64 dmabuf)
{
	__u64 args[1] = { dmabuf };

	assert_true(dmabuf);
	assert_int_equal(mt_run(&env.obj, "on_dma_buf_export_raw", args, 1), 0);
}

static void test_sizes_per_exporter(void **state)
{
	static const __u64 sizes[] = { 3, 4096, 4096 * 3, 1 << 20, 3ull << 32 };
	struct bpf_telemetry_accumulator acc;
	struct kstats_name name;
	__u32 id = mt_name_hash("system");
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		export(fake_dma_buf("system", sizes[i]));
	export(fake_dma_buf("udmabuf", 8192));
	assert_int_equal(mt_hist(&env.obj, MAP, id, &acc), 0);
	assert_int_equal(acc.buckets[1], 1);	/* 3 */
	assert_int_equal(acc.buckets[12], 1);	/* 4096 */
	assert_int_equal(acc.buckets[13], 1);	/* 12288 */
	assert_int_equal(acc.buckets[20], 1);	/* 1 MiB */
	assert_int_equal(acc.buckets[31], 1);	/* 12 GiB saturates */
	assert_int_equal(mt_hist(&env.obj, MAP, mt_name_hash("udmabuf"), &acc), 0);
	assert_int_equal(mt_single_bucket(&acc), 13);
	assert_int_equal(mt_dict_name(&env.obj, NAMES, id, &name), 0);
	assert_string_equal(name.name, "system");
}

/* A NULL exp_name reads as "" rather than failing the event. */
static void test_unreadable_name_counts_as_empty(void **state)
{
	struct bpf_telemetry_accumulator acc;
	int size_off = mt_btf_member_offset("dma_buf", "size");
	unsigned char buf[MT_KMEM_SIZE] = {};
	__u64 size = 1 << 16;

	(void)state;
	memcpy(buf + size_off, &size, sizeof(size));
	export(mt_kmem_put(&env.kmem, buf, mt_btf_struct_size("dma_buf")));
	assert_int_equal(mt_hist(&env.obj, MAP, mt_name_hash(""), &acc), 0);
	assert_int_equal(mt_single_bucket(&acc), 16);
}

/* The loader picks one of three variants of one attach point. */
static void test_hook_chain_metadata(void **state)
{
	static const struct { const char *prog; __u32 variant; } chain[] = {
		{ "on_dma_buf_export", KSTATS_VARIANT_TP_BTF },
		{ "on_dma_buf_export_raw", KSTATS_VARIANT_RAW_TP },
		{ "on_dma_buf_export_kprobe", KSTATS_VARIANT_KPROBE },
	};
	const struct kstats_prog_meta *pm;
	struct kstats_objmeta meta;
	char path[512], err[256];
	size_t i;

	(void)state;
	snprintf(path, sizeof(path), "%s/bpf/dmabuf.bpf", mt_build());
	assert_int_equal(kstats_objmeta_read(path, &meta, err, sizeof(err)), 0);
	assert_int_equal(meta.nprogs, 3);
	for (i = 0; i < 3; i++) {
		pm = kstats_objmeta_prog(&meta, chain[i].prog);
		assert_non_null(pm);
		assert_string_equal(pm->attach, "dma_buf_export");
		assert_int_equal(pm->variant, chain[i].variant);
	}
	kstats_objmeta_free(&meta);
}

static void test_kprobe_variant_passes_verifier(void **state)
{
	struct mt_obj kp;

	(void)state;
	assert_int_equal(mt_obj_open(&kp, "dmabuf", "kprobe/"), 0);
	mt_obj_close(&kp);
}

int main(void)
{
	struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_per_exporter),
		cmocka_unit_test(test_unreadable_name_counts_as_empty),
		cmocka_unit_test(test_hook_chain_metadata),
		cmocka_unit_test(test_kprobe_variant_passes_verifier),
	};

	return MT_MAIN("dmabuf", tests, mt_env_setup, mt_env_teardown, &env);
}
