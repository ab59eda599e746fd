// SPDX-License-Identifier: GPL-2.0
/*
 * kstats dump --prometheus/--openmetrics (cli/render.c) on a
 * snapshot built in memory: every le bound pinned, tied to the kernel's
 * bucket function, and Prometheus' histogram_quantile() over the rendered
 * buckets equal to kstats' own p50/p99.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "hist.h"
#include "kstats_meta.h"

#define NB BPF_TELEMETRY_NR_BUCKETS

/* Bucket i's le: latencies 2^(i+1) us in seconds, sizes 2^(i+1) - 1 bytes. */
static const char *const le_seconds[NB] = {
	"0.000002", "0.000004", "0.000008", "0.000016", "0.000032", "0.000064",
	"0.000128", "0.000256", "0.000512", "0.001024", "0.002048", "0.004096",
	"0.008192", "0.016384", "0.032768", "0.065536", "0.131072", "0.262144",
	"0.524288", "1.048576", "2.097152", "4.194304", "8.388608", "16.777216",
	"33.554432", "67.108864", "134.217728", "268.435456", "536.870912",
	"1073.741824", "2147.483648", "+Inf",
};
static const char *const le_bytes[NB] = {
	"1", "3", "7", "15", "31", "63", "127", "255", "511", "1023", "2047",
	"4095", "8191", "16383", "32767", "65535", "131071", "262143", "524287",
	"1048575", "2097151", "4194303", "8388607", "16777215", "33554431",
	"67108863", "134217727", "268435455", "536870911", "1073741823",
	"2147483647", "+Inf",
};

static struct kstats_series lat_series, size_series;
static struct kstats_hist hists[2];
static struct kstats_snapshot snap = { .hists = hists, .nhists = 2 };

static void set_buckets(const uint64_t *b)
{
	memcpy(lat_series.buckets, b, sizeof(lat_series.buckets));
	memcpy(size_series.buckets, b, sizeof(size_series.buckets));
}

static int setup(void **state)
{
	uint64_t b[NB];
	unsigned int i;

	(void)state;
	for (i = 0; i < NB; i++)
		b[i] = i + 1;
	set_buckets(b);
	strcpy(hists[0].metric, "CompactionDuration");
	strcpy(hists[0].obj, "compaction");
	strcpy(hists[0].map, "compaction_map");
	hists[0].unit = KSTATS_UNIT_USEC;
	hists[0].series = &lat_series;
	strcpy(hists[1].metric, "DmabufRequestSizes");
	strcpy(hists[1].obj, "dmabuf");
	strcpy(hists[1].map, "dmabuf_map");
	hists[1].unit = KSTATS_UNIT_BYTES;
	hists[1].nlabels = 1;
	strcpy(hists[1].label[0], "exporter");
	strcpy(size_series.value[0], "sys\"heap");
	hists[1].series = &size_series;
	for (i = 0; i < 2; i++) {
		hists[i].selected = hists[i].loaded = true;
		hists[i].nseries = 1;
	}
	return 0;
}

static char *render(bool openmetrics)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(kstats_render_prometheus(f, &snap, openmetrics), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* The le values of name's _bucket lines, in order; returns how many. */
static int les_of(const char *text, const char *name, char les[][32], double *cum)
{
	size_t nl = strlen(name);
	const char *p;
	int n = 0;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *le, *end;

		if (strncmp(p, name, nl) || strncmp(p + nl, "_bucket{", 8))
			continue;
		le = strstr(p, "le=\"");
		assert_non_null(le);
		end = strchr(le + 4, '"');
		assert_true(n < NB && end - le - 4 < 32);
		memcpy(les[n], le + 4, (size_t)(end - le - 4));
		les[n][end - le - 4] = 0;
		cum[n++] = strtod(strchr(end, ' ') + 1, NULL);
	}
	return n;
}

static void test_every_le(void **state)
{
	char *out = render(false), les[NB][32];
	double cum[NB];
	unsigned int i;

	(void)state;
	assert_int_equal(les_of(out, "kstats_compaction_duration_seconds", les, cum), NB);
	for (i = 0; i < NB; i++)
		assert_string_equal(les[i], le_seconds[i]);
	assert_int_equal(les_of(out, "kstats_dmabuf_request_sizes_bytes", les, cum), NB);
	for (i = 0; i < NB; i++)
		assert_string_equal(les[i], le_bytes[i]);
	assert_true(cum[NB - 1] == NB * (NB + 1) / 2);
	free(out);
}

/*
 * The last whole microsecond the kernel puts in bucket i, plus the 999 ns
 * truncation dropped, is below le; the first of bucket i + 1 is not.
 */
static void test_le_matches_bucket_function(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i + 1 < NB; i++) {
		double le_us = strtod(le_seconds[i], NULL) * 1e6;
		uint64_t last = (2ull << i) - 1;

		assert_int_equal(bpf_telemetry_bucket(last), i);
		assert_int_equal(bpf_telemetry_bucket(last + 1), i + 1);
		assert_true((double)last + 0.999 < le_us && (double)(last + 1) >= le_us - 1e-6);
		assert_int_equal(strtoull(le_bytes[i], NULL, 10), last);
	}
}

/* Prometheus' bucketQuantile(): linear inside (previous le, le]. */
static double histogram_quantile(double q, char les[][32], const double *cum, int n)
{
	double rank = q * cum[n - 1], lo = 0, prev = 0;
	int i;

	for (i = 0; i < n && cum[i] < rank; i++)
		;
	if (!strcmp(les[i], "+Inf"))
		return strtod(les[i - 1], NULL);
	if (i) {
		lo = strtod(les[i - 1], NULL);
		prev = cum[i - 1];
	}
	return lo + (strtod(les[i], NULL) - lo) * (rank - prev) / (cum[i] - prev);
}

static void check_quantiles(const uint64_t *b)
{
	char *out, les[NB][32];
	struct kstats_hist_stats st;
	double cum[NB], got;
	int n;

	set_buckets(b);
	out = render(false);
	n = les_of(out, "kstats_compaction_duration_seconds", les, cum);
	kstats_hist_stats(b, &st);
	got = histogram_quantile(0.5, les, cum, n) * 1e6;
	assert_true(got > st.p50 * (1 - 1e-9) && got < st.p50 * (1 + 1e-9));
	got = histogram_quantile(0.99, les, cum, n) * 1e6;
	assert_true(got > st.p99 * (1 - 1e-9) && got < st.p99 * (1 + 1e-9));
	free(out);
}

static void test_quantiles_equal_kstats(void **state)
{
	const uint64_t low[NB] = { [0] = 3, [1] = 1, [4] = 7, [5] = 2 };
	const uint64_t spread[NB] = { [3] = 5, [4] = 10, [6] = 2, [20] = 1 };
	const uint64_t open[NB] = { [2] = 1, [NB - 1] = 200 };
	uint64_t b[NB];
	unsigned int i;

	(void)state;
	check_quantiles(low);
	check_quantiles(spread);
	check_quantiles(open);		/* both in +Inf: 2^31 us */
	for (i = 0; i < NB; i++)
		b[i] = i + 1;
	check_quantiles(b);
}

/* A sample line (not a comment) of a _sum series. */
static bool has_sum_series(const char *text)
{
	const char *p;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t n = strcspn(p, "{ \n");

		if (*p != '#' && n >= 4 && !strncmp(p + n - 4, "_sum", 4))
			return true;
	}
	return false;
}

static void test_prometheus_has_no_histogram_or_sum(void **state)
{
	char *out = render(false);

	(void)state;
	assert_non_null(strstr(out, "# TYPE kstats_compaction_duration_seconds_bucket untyped\n"));
	assert_non_null(strstr(out, "# TYPE kstats_compaction_duration_seconds_count untyped\n"));
	assert_non_null(strstr(out, "\nkstats_dmabuf_request_sizes_bytes_count{exporter=\"sys\\\"heap\"} 528\n"));
	assert_null(strstr(out, " histogram\n"));
	assert_false(has_sum_series(out));
	assert_null(strstr(out, "# EOF"));
	free(out);
}

static void test_openmetrics(void **state)
{
	char *out = render(true);
	size_t len = strlen(out);

	(void)state;
	assert_non_null(strstr(out, "# TYPE kstats_compaction_duration_seconds histogram\n"
				    "# UNIT kstats_compaction_duration_seconds seconds\n"));
	assert_non_null(strstr(out, "\nkstats_compaction_duration_seconds_bucket{le=\"+Inf\"} 528\n"));
	assert_null(strstr(out, "_count"));	/* only beside a _sum */
	assert_false(has_sum_series(out));
	assert_true(len > 6 && !strcmp(out + len - 6, "# EOF\n"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_every_le, setup),
		cmocka_unit_test(test_le_matches_bucket_function),
		cmocka_unit_test_setup(test_quantiles_equal_kstats, setup),
		cmocka_unit_test_setup(test_prometheus_has_no_histogram_or_sum, setup),
		cmocka_unit_test_setup(test_openmetrics, setup),
	};

	return cmocka_run_group_tests_name("prom_render", tests, NULL, NULL);
}
