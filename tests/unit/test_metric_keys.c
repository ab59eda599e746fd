// SPDX-License-Identifier: GPL-2.0
/* The shared key mappings of include/kstats_keys.h and the name-id hash. */
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "bpf_telemetry.h"
#include "kstats_keys.h"
#include "metrics.h"

/* Both sides of every doc/design.md band edge, and the extremes. */
static void test_process_state_band_edges(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < mt_adj_band_edges_len; i++)
		assert_int_equal(kstats_process_state_from_adj(mt_adj_band_edges[i].adj),
				 mt_adj_band_edges[i].state);
	assert_int_equal(kstats_process_state_from_adj(INT_MIN), KSTATS_PROCESS_STATE_NATIVE);
	assert_int_equal(kstats_process_state_from_adj(-1001), KSTATS_PROCESS_STATE_NATIVE);
	assert_int_equal(kstats_process_state_from_adj(INT_MAX), KSTATS_PROCESS_STATE_CACHED);
}

/* BPF compares whole KSTATS_SUSPEND_ACTION_MAX-byte words: every name must
 * be set, NUL-terminated within the row, and unique. */
static void test_suspend_phase_names(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < KSTATS_SUSPEND_PHASE_COUNT; i++) {
		const char *name = kstats_suspend_phase_names[i];

		assert_true(name[0]);
		assert_true(strnlen(name, KSTATS_SUSPEND_ACTION_MAX) < KSTATS_SUSPEND_ACTION_MAX);
		for (j = 0; j < i; j++)
			assert_string_not_equal(name, kstats_suspend_phase_names[j]);
	}
	assert_int_equal(KSTATS_SUSPEND_ACTION_MAX % 8, 0);
	assert_string_equal(kstats_suspend_phase_names[KSTATS_SUSPEND_PHASE_DPM_SUSPEND_NOIRQ],
			    "dpm_suspend_noirq");
	assert_string_equal(kstats_suspend_phase_names[KSTATS_SUSPEND_PHASE_CPU_OFF], "CPU_OFF");
}

/* FNV-1a 32-bit reference values, and the bound on the bytes hashed. */
static void test_name_hash(void **state)
{
	char longname[2 * KSTATS_NAME_MAX];

	(void)state;
	assert_int_equal(bpf_telemetry_name_hash("", 32), 0x811c9dc5u);
	assert_int_equal(bpf_telemetry_name_hash("a", 32), 0xe40c292cu);
	assert_int_equal(bpf_telemetry_name_hash("foobar", 32), 0xbf9cf968u);
	assert_int_equal(bpf_telemetry_name_hash("foobar", 3),
			 bpf_telemetry_name_hash("foo", 32));
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	assert_int_equal(bpf_telemetry_name_hash(longname, KSTATS_NAME_MAX),
			 bpf_telemetry_name_hash(longname + KSTATS_NAME_MAX - 1,
						 KSTATS_NAME_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_process_state_band_edges),
		cmocka_unit_test(test_suspend_phase_names),
		cmocka_unit_test(test_name_hash),
	};

	return cmocka_run_group_tests_name("metric_keys", tests, NULL, NULL);
}
