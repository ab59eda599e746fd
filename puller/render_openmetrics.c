// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus text exposition (format 0.0.4, what node_exporter's textfile
 * collector reads).  Per DESIGN.md bucket i is le = 2^(i+1) - 1 in the base
 * unit (seconds or bytes) and the last bucket is le="+Inf"; _bucket series
 * are cumulative.  No _sum: log2 buckets do not record it, and a guess would
 * make rate(_sum)/rate(_count) look exact when it is not.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hist.h"
#include "kstats_meta.h"

#define LAST_BUCKET (BPF_TELEMETRY_NR_BUCKETS - 1)

/* CompactionDuration -> kstats_compaction_duration_seconds */
static void prom_name(char *buf, size_t len, const struct kstats_hist *h)
{
	const char *m = h->metric, *suffix = kstats_unit_or_count(h->unit)->prom_suffix;
	size_t n = (size_t)snprintf(buf, len, "kstats_"), i, sl = strlen(suffix);

	for (i = 0; m[i] && n + 2 < len; i++) {
		unsigned char c = (unsigned char)m[i];
		bool word = i && isupper(c) &&
			    (islower((unsigned char)m[i - 1]) || isdigit((unsigned char)m[i - 1]) ||
			     (m[i + 1] && islower((unsigned char)m[i + 1])));

		if (word && buf[n - 1] != '_')
			buf[n++] = '_';
		buf[n++] = isalnum(c) ? (char)tolower(c) : '_';
	}
	buf[n] = 0;
	if (n < sl || strcmp(buf + n - sl, suffix))
		snprintf(buf + n, len - n, "%s", suffix);
}

/* Exact decimal of the bucket bound / 10^prom_shift: 4095 us -> "0.004095". */
static void fmt_le(char *buf, size_t len, unsigned int i, unsigned int unit)
{
	unsigned int shift = kstats_unit_or_count(unit)->prom_shift, k;
	uint64_t v = kstats_bucket_hi(i), scale = 1;
	size_t n;

	if (i == LAST_BUCKET) {
		snprintf(buf, len, "+Inf");
		return;
	}
	for (k = 0; k < shift; k++)
		scale *= 10;
	if (!shift) {
		snprintf(buf, len, "%" PRIu64, v);
		return;
	}
	snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64, v / scale, (int)shift, v % scale);
	n = strlen(buf);
	while (buf[n - 1] == '0')
		buf[--n] = 0;
	if (buf[n - 1] == '.')
		buf[--n] = 0;
}

static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void put_labels(FILE *f, const struct kstats_hist *h,
		       const struct kstats_series *s, const char *le)
{
	size_t i;

	if (!h->nlabels && !le)
		return;
	fputc('{', f);
	for (i = 0; i < h->nlabels; i++) {
		fprintf(f, "%s%s=\"", i ? "," : "", h->label[i]);
		put_escaped(f, s->value[i]);
		fputc('"', f);
	}
	if (le)
		fprintf(f, "%sle=\"%s\"", h->nlabels ? "," : "", le);
	fputc('}', f);
}

static void put_series(FILE *f, const char *name, const struct kstats_hist *h,
		       const struct kstats_series *s)
{
	uint64_t cum = 0;
	char le[32];
	unsigned int i;

	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++) {
		cum = kstats_add_sat(cum, s->buckets[i]);
		fmt_le(le, sizeof(le), i, h->unit);
		fprintf(f, "%s_bucket", name);
		put_labels(f, h, s, le);
		fprintf(f, " %" PRIu64 "\n", cum);
	}
	fprintf(f, "%s_count", name);
	put_labels(f, h, s, NULL);
	fprintf(f, " %" PRIu64 "\n", cum);
}

static void put_hist(FILE *f, const struct kstats_hist *h)
{
	char name[160];
	size_t i;

	prom_name(name, sizeof(name), h);
	fprintf(f, "# HELP %s %s: log2 histogram of %s from %s/%s; "
		"le is each bucket's inclusive upper bound; no _sum (not recorded)\n",
		name, h->metric, kstats_unit_or_count(h->unit)->prom_help,
		h->obj, h->map);
	fprintf(f, "# TYPE %s histogram\n", name);
	for (i = 0; i < h->nseries; i++)
		put_series(f, name, h, &h->series[i]);
}

int kstats_render_openmetrics(FILE *f, const struct kstats_snapshot *s)
{
	size_t i;

	for (i = 0; i < s->nhists; i++)
		if (s->hists[i].selected && s->hists[i].loaded)
			put_hist(f, &s->hists[i]);
	fprintf(f, "# HELP kstats_metric_loaded 1 when the metric's map is pinned "
		"(kstats-loader loaded its object), else 0\n"
		"# TYPE kstats_metric_loaded gauge\n");
	for (i = 0; i < s->nhists; i++) {
		const struct kstats_hist *h = &s->hists[i];

		if (!h->selected)
			continue;
		fputs("kstats_metric_loaded{metric=\"", f);
		put_escaped(f, h->metric);
		fputs("\",object=\"", f);
		put_escaped(f, h->obj);
		fprintf(f, "\"} %d\n", h->loaded);
	}
	return ferror(f) ? -EIO : 0;
}
