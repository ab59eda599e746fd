// SPDX-License-Identifier: GPL-2.0
/*
 * The real loader on the built-in metric objects, in a private pin dir:
 * objects whose tracepoints this kernel has are attached through tp_btf and
 * their maps read back through libkstats; objects without any attach point
 * (cma, dmabuf here) are skipped cleanly, leaving no pins.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/btf.h>

#include "kstats_pins.h"
#include "kmain.h"
#include "ktest.h"

static struct ktest t;

static int setup(void **state)
{
	return ktest_loader_up(state, &t, "metrics");
}

static bool pinned(const char *kind, const char *obj, const char *name)
{
	char path[512];

	kstats_pin_path(path, sizeof(path), t.pin_dir, kind, obj, name);
	return !access(path, F_OK);
}

static bool kernel_has_tracepoint(const char *tp)
{
	struct btf *btf = btf__load_vmlinux_btf();
	char name[128];
	bool found;

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	found = btf && btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return found;
}

static void test_attached_through_tp_btf(void **state)
{
	static const struct { const char *obj, *map, *prog, *section; } cases[] = {
		{ "kswapd", "kswapd_latency_map", "on_kswapd_wake",
		  "tp_btf/mm_vmscan_kswapd_wake" },
		{ "kswapd", "kswapd_latency_map", "on_kswapd_sleep",
		  "tp_btf/mm_vmscan_kswapd_sleep" },
		{ "directReclaim", "direct_reclaim_latency_map",
		  "on_direct_reclaim_begin", "tp_btf/mm_vmscan_direct_reclaim_begin" },
		{ "directReclaim", "direct_reclaim_latency_map",
		  "on_direct_reclaim_end", "tp_btf/mm_vmscan_direct_reclaim_end" },
		{ "suspendResume", "suspend_resume_latency_map", "on_suspend_resume",
		  "tp_btf/suspend_resume" },
	};
	uint64_t total;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(pinned("link", cases[i].obj, cases[i].prog));
		assert_true(pinned("prog", cases[i].obj, cases[i].section));
		assert_true(pinned("map", cases[i].obj, cases[i].map));
		assert_int_equal(ktest_hist_total(&t, cases[i].obj, cases[i].map, &total), 0);
	}
}

static void test_absent_hooks_skip_cleanly(void **state)
{
	bool cma = kernel_has_tracepoint("cma_alloc_start");
	bool dmabuf = kernel_has_tracepoint("dma_buf_export") ||
		      !access("/sys/bus/event_source/devices/kprobe", F_OK);

	(void)state;
	if (cma && dmabuf)
		skip();
	if (!cma) {
		assert_false(pinned("map", "cma", "cma_alloc_latency_map"));
		assert_false(pinned("link", "cma", "on_cma_alloc_start"));
	}
	if (!dmabuf) {
		assert_false(pinned("map", "dmabuf", "dmabuf_request_sizes_map"));
		assert_false(pinned("link", "dmabuf", "on_dma_buf_export_kprobe"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attached_through_tp_btf),
		cmocka_unit_test(test_absent_hooks_skip_cleanly),
	};

	return KTEST_MAIN("metrics_loader", tests, setup, ktest_teardown);
}
