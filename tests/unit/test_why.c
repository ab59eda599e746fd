// SPDX-License-Identifier: GPL-2.0
/*
 * The one "why not loaded" (btfreader/tool.c) and the one parser of
 * command-line numbers (btfreader/tool.c) that the loader, kstats status
 * and kstats dump share (issue 28).  Each case where two of the old copies
 * disagreed is here, with the rule that won.  No kernel needed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kstats_tool.h"

static const char *why(enum kstats_outcome outcome, const char *reason, bool critical,
		       char *buf, size_t len)
{
	struct kstats_status_obj o = { .name = "x", .path = "", .outcome = outcome,
				       .reason = (char *)reason, .critical = critical };

	return kstats_why(&o, buf, len);
}

static void test_why_line_and_fix(void **state)
{
	char buf[KSTATS_WHY_LEN];

	(void)state;
	/* A skip is this kernel's doing: no fix, as dump said. */
	assert_string_equal(why(KSTATS_SKIPPED_NO_ATTACH_POINT, "no tracepoint", false,
				buf, sizeof(buf)), "");
	assert_string_equal(buf, "SKIPPED_NO_ATTACH_POINT: no tracepoint");
	assert_string_equal(why(KSTATS_FAILED_VERIFIER, "load: E2BIG", false, buf, sizeof(buf)),
			    KSTATS_FIX_STATUS);
	assert_string_equal(buf, "FAILED_VERIFIER: load: E2BIG");
	/* LOADED, yet its map is not pinned: gone since; the loader recreates it. */
	assert_string_equal(why(KSTATS_LOADED, "", false, buf, sizeof(buf)), KSTATS_FIX_LOAD);
	assert_string_equal(buf, "LOADED");
	/* Not in the status (or no status): what kstats sees itself. */
	assert_string_equal(kstats_why(NULL, buf, sizeof(buf)), KSTATS_FIX_LOAD);
	assert_string_equal(buf, "its map is not pinned");
}

/*
 * The loader said "FAILED_VERIFIER: why [critical]" and kstats status
 * "FAILED_VERIFIER: why (critical)"; a reason-less outcome was "OUTCOME: "
 * in the loader.  Both now print kstats status' form.
 */
static void test_why_critical_and_no_reason(void **state)
{
	char buf[KSTATS_WHY_LEN];

	(void)state;
	why(KSTATS_FAILED_VERIFIER, "mark_read 0", true, buf, sizeof(buf));
	assert_string_equal(buf, "FAILED_VERIFIER: mark_read 0 (critical)");
	why(KSTATS_SKIPPED_DISABLED, "", false, buf, sizeof(buf));
	assert_string_equal(buf, "SKIPPED_DISABLED");
	why(KSTATS_FAILED_PIN, "", true, buf, sizeof(buf));
	assert_string_equal(buf, "FAILED_PIN (critical)");
}

static void test_why_truncates(void **state)
{
	char buf[16];

	(void)state;
	why(KSTATS_FAILED_VERIFIER, "a very long verifier log tail", false, buf, sizeof(buf));
	assert_string_equal(buf, "FAILED_VERIFIER");
}

static int seconds(const char *arg, double max, double *secs)
{
	char err[128];
	int ret = kstats_parse_seconds("--interval", arg, max, secs, err, sizeof(err));

	if (ret) {
		char want[128];

		snprintf(want, sizeof(want), "--interval takes seconds in (0, %g], not '%s'",
			 max, arg);
		assert_string_equal(err, want);
	}
	return ret;
}

static void test_seconds(void **state)
{
	double s;

	(void)state;
	assert_int_equal(seconds("5", 86400, &s), 0);
	assert_true(s == 5);
	assert_int_equal(seconds("0.3", 86400, &s), 0);	/* kstats: fractions allowed */
	assert_true(s == 0.3);
	assert_int_equal(seconds("86400", 86400, &s), 0);
	assert_int_equal(seconds("86400.5", 86400, &s), -EINVAL);
	assert_int_equal(seconds("3601", 3600, &s), -EINVAL);
	/* The loader took 0 (and "0" waits not at all); kstats refused it. */
	assert_int_equal(seconds("0", 86400, &s), -EINVAL);
	assert_int_equal(seconds("0.0", 86400, &s), -EINVAL);
	/* strtod took these in kstats; the loader's strtoul refused them. */
	assert_int_equal(seconds("1e3", 86400, &s), -EINVAL);
	assert_int_equal(seconds("0x10", 86400, &s), -EINVAL);
	assert_int_equal(seconds(" 5", 86400, &s), -EINVAL);
	assert_int_equal(seconds("+5", 86400, &s), -EINVAL);
	assert_int_equal(seconds("inf", 86400, &s), -EINVAL);
	assert_int_equal(seconds("nan", 86400, &s), -EINVAL);
	/* Both refused these. */
	assert_int_equal(seconds("", 86400, &s), -EINVAL);
	assert_int_equal(seconds("-1", 86400, &s), -EINVAL);
	assert_int_equal(seconds("5s", 86400, &s), -EINVAL);
	assert_int_equal(seconds("5.", 86400, &s), -EINVAL);
	assert_int_equal(seconds(".5", 86400, &s), -EINVAL);
	assert_int_equal(seconds("1.2.3", 86400, &s), -EINVAL);
}

static void test_count(void **state)
{
	char err[128];
	uint64_t n;

	(void)state;
	assert_int_equal(kstats_parse_count("--count", "12", UINT64_MAX, &n, err,
					    sizeof(err)), 0);
	assert_true(n == 12);
	assert_int_equal(kstats_parse_count("--count", "18446744073709551615", UINT64_MAX,
					    &n, err, sizeof(err)), 0);
	assert_true(n == UINT64_MAX);
	/* strtol clamped this to LONG_MAX without a word. */
	assert_int_equal(kstats_parse_count("--count", "18446744073709551616", UINT64_MAX,
					    &n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--count takes a positive number, not "
			    "'18446744073709551616'");
	assert_int_equal(kstats_parse_count("--count", "-1", UINT64_MAX, &n, err,
					    sizeof(err)), -EINVAL);
	assert_string_equal(err, "--count takes a positive number, not '-1'");
	assert_int_equal(kstats_parse_count("--count", "+5", UINT64_MAX, &n, err,
					    sizeof(err)), -EINVAL);
	assert_int_equal(kstats_parse_count("--count", "0", UINT64_MAX, &n, err,
					    sizeof(err)), -EINVAL);
	assert_int_equal(kstats_parse_count("--queue", "17", 16, &n, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "--queue takes a positive number up to 16, not '17'");
}

static void test_strtou64(void **state)
{
	const char *rest;
	uint64_t v;

	(void)state;
	assert_int_equal(kstats_strtou64("50M", &v, &rest), 0);
	assert_true(v == 50);
	assert_string_equal(rest, "M");
	assert_int_equal(kstats_strtou64("M", &v, &rest), -EINVAL);
	assert_int_equal(kstats_strtou64("99999999999999999999", &v, &rest), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_why_line_and_fix),
		cmocka_unit_test(test_why_critical_and_no_reason),
		cmocka_unit_test(test_why_truncates),
		cmocka_unit_test(test_seconds),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_strtou64),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
