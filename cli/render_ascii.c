// SPDX-License-Identifier: GPL-2.0
/*
 * bcc-style log2 histograms.  Each row is [lo, hi) in a unit that fits;
 * zero rows before the first and after the last non-zero bucket are
 * elided (--all shows all 32).  Column widths follow the data, so counts
 * up to 2^64 - 1 never break the layout.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hist.h"
#include "kstats.h"
#include "kstats_meta.h"
#include "kstats_tool.h"

#define BAR_WIDTH 40
#define LAST_BUCKET (BPF_TELEMETRY_NR_BUCKETS - 1)

static void range(unsigned int i, unsigned int unit, char *lo, char *hi, size_t len)
{
	kstats_fmt_value(lo, len, (double)kstats_bucket_lo(i), unit);
	if (i == LAST_BUCKET)
		snprintf(hi, len, "inf");
	else
		kstats_fmt_value(hi, len, (double)kstats_bucket_hi(i) + 1, unit);
}

static void print_bar(FILE *f, uint64_t count, uint64_t max)
{
	char bar[BAR_WIDTH + 1];
	unsigned int n = max ? (unsigned int)((long double)count * BAR_WIDTH / max) : 0;

	memset(bar, '*', n);
	memset(bar + n, ' ', BAR_WIDTH - n);
	bar[BAR_WIDTH] = 0;
	fprintf(f, "|%s|", bar);
}

static void print_rows(FILE *f, const uint64_t *b, unsigned int unit,
		       unsigned int first, unsigned int last)
{
	char lo[32], hi[32], num[24];
	size_t wlo = 0, whi = 0, wcount;
	uint64_t max = 0;
	unsigned int i;

	for (i = first; i <= last; i++) {
		range(i, unit, lo, hi, sizeof(lo));
		wlo = wlo > kstats_display_width(lo) ? wlo : kstats_display_width(lo);
		whi = whi > kstats_display_width(hi) ? whi : kstats_display_width(hi);
		max = b[i] > max ? b[i] : max;
	}
	wcount = (size_t)snprintf(num, sizeof(num), "%" PRIu64, max);
	wcount = wcount > 8 ? wcount : 8;
	kstats_put_padded(f, kstats_unit_or_count(unit)->axis, 4 + wlo + 4 + whi, true);
	fprintf(f, " : %-*s distribution\n", (int)wcount, "count");
	for (i = first; i <= last; i++) {
		range(i, unit, lo, hi, sizeof(lo));
		fputs("    ", f);
		kstats_put_padded(f, lo, wlo, true);
		fputs(" -> ", f);
		kstats_put_padded(f, hi, whi, false);
		fprintf(f, " : %-*" PRIu64 " ", (int)wcount, b[i]);
		print_bar(f, b[i], max);
		fputc('\n', f);
	}
}

static void print_quantile(FILE *f, const char *name, double v, bool open,
			   unsigned int unit)
{
	char buf[32];

	kstats_fmt_value(buf, sizeof(buf), v, unit);
	fprintf(f, ", %s %s%s", name, open ? ">=" : "~", buf);
}

static void print_summary(FILE *f, const uint64_t *b, unsigned int unit)
{
	struct kstats_hist_stats st;
	char lo[32], hi[32];

	kstats_hist_stats(b, &st);
	fprintf(f, "    count %" PRIu64, st.count);
	if (st.count) {
		print_quantile(f, "p50", st.p50, st.p50_open, unit);
		print_quantile(f, "p99", st.p99, st.p99_open, unit);
	}
	kstats_fmt_value(lo, sizeof(lo), st.total_min, unit);
	if (st.total_max < 0) {
		fprintf(f, ", total >=%s\n", lo);
	} else {
		kstats_fmt_value(hi, sizeof(hi), st.total_max, unit);
		fprintf(f, ", total %s..%s\n", lo, hi);
	}
}

static void print_title(FILE *f, const struct kstats_hist *h,
			const struct kstats_series *s)
{
	size_t i;

	fprintf(f, "\n%s", h->metric);
	for (i = 0; i < h->nlabels; i++) {
		fputs(i ? ", " : "  ", f);
		if (kstats_label_is_node(h->label[i]))
			fprintf(f, "node %s", s->value[i]);
		else
			fprintf(f, "%s = %s", h->label[i], s->value[i]);
	}
	fputc('\n', f);
}

/* The rows to show: first to last non-zero bucket, all 32 with all. */
static bool shown_rows(const uint64_t *b, bool all, unsigned int *first,
		       unsigned int *last)
{
	unsigned int i;
	bool any = false;

	*first = 0;
	*last = LAST_BUCKET;
	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS && !all; i++) {
		if (!b[i])
			continue;
		*first = any ? *first : i;
		*last = i;
		any = true;
	}
	return any || all;
}

static bool print_series(FILE *f, const struct kstats_hist *h,
			 const struct kstats_series *s, bool all)
{
	unsigned int first, last;

	if (!shown_rows(s->buckets, all, &first, &last))
		return false;
	print_title(f, h, s);
	print_rows(f, s->buckets, h->unit, first, last);
	print_summary(f, s->buckets, h->unit);
	return true;
}

void print_log2_hist(FILE *f, const uint64_t *b, unsigned int unit)
{
	unsigned int first, last;

	if (!shown_rows(b, false, &first, &last)) {
		fprintf(f, "    no events\n");
		return;
	}
	print_rows(f, b, unit, first, last);
	print_summary(f, b, unit);
}

static void print_interval(FILE *f, const struct kstats_snapshot *s)
{
	double secs = (double)(s->boottime.tv_sec - s->since_boottime.tv_sec) +
		      (double)(s->boottime.tv_nsec - s->since_boottime.tv_nsec) / 1e9;
	char when[32];
	struct tm tm;

	localtime_r(&s->realtime.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(f, "\n%s  events in the last %.2fs\n", when, secs);
}

/*
 * The metrics not loaded, and where their reasons are: kstats status, or,
 * when it does not name an object (or its map is gone), the loader to run.
 */
static void print_not_loaded(FILE *f, const struct kstats_snapshot *s,
			     const struct kstats_status *st)
{
	const char *where = KSTATS_FIX_STATUS;
	char why[KSTATS_WHY_LEN];
	size_t i;

	fprintf(f, "\nnot loaded:");
	for (i = 0; i < s->nhists; i++) {
		const struct kstats_hist *h = &s->hists[i];

		if (!h->selected || h->loaded || h->read_err)
			continue;
		fprintf(f, " %s", h->metric);
		if (!strcmp(kstats_why(st ? kstats_status_obj(st, h->obj) : NULL, why,
				       sizeof(why)), KSTATS_FIX_LOAD))
			where = KSTATS_FIX_LOAD;
	}
	fprintf(f, " (%s)\n", where);
}

int kstats_render_ascii(FILE *f, const struct kstats_snapshot *s,
			const struct kstats_render_opts *o)
{
	size_t i, j, missing = 0;

	if (s->is_delta)
		print_interval(f, s);
	for (i = 0; i < s->nhists; i++) {
		const struct kstats_hist *h = &s->hists[i];
		bool shown = false;

		if (!h->selected)
			continue;
		if (h->read_err) {
			fprintf(f, "\n%s  unreadable: %s (kstats dump said why)\n", h->metric,
				strerror(-h->read_err));
			continue;
		}
		if (!h->loaded) {
			missing++;
			continue;
		}
		for (j = 0; j < h->nseries; j++)
			shown |= print_series(f, h, &h->series[j], o->all);
		if (!shown)
			fprintf(f, "\n%s  no events%s\n", h->metric, s->is_delta ? "" : " yet");
	}
	if (missing)
		print_not_loaded(f, s, o->status);
	return ferror(f) ? -EIO : 0;
}
