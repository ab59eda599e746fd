// SPDX-License-Identifier: GPL-2.0
/* kstats dump's outputs: shared histogram arithmetic, bcc-style ASCII, JSON ("kstats.dump/1"),
 * Prometheus text 0.0.4 and OpenMetrics 1.0, and the Prometheus rules. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <json-c/json.h>
#include <json-c/printbuf.h>

#include "hist.h"
#include "kstats.h"
#include "kstats_meta.h"

#define LAST_BUCKET (BPF_TELEMETRY_NR_BUCKETS - 1)

/* An id this build does not know gets the plain count unit. */
static const struct kstats_unit_info *kstats_unit_or_count(unsigned int id)
{
	return kstats_unit(id) ?: kstats_unit(KSTATS_UNIT_COUNT);
}

uint64_t kstats_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t kstats_bucket_lo(unsigned int i)
{
	return i ? 1ull << i : 0;
}

uint64_t kstats_bucket_hi(unsigned int i)
{
	return i >= LAST_BUCKET ? UINT64_MAX : (1ull << (i + 1)) - 1;
}

/*
 * The value at rank q * count, interpolated linearly inside its bucket's
 * [lo, hi + 1) as Prometheus' histogram_quantile() does.  A rank in the
 * open last bucket gives that bucket's lower bound.
 */
static double quantile(const uint64_t *b, uint64_t count, double q, bool *open)
{
	double rank = q * (double)count, cum = 0;
	unsigned int i;

	*open = false;
	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++) {
		double lo = (double)kstats_bucket_lo(i);
		double width = i ? lo : 2;

		if (!b[i] || cum + (double)b[i] < rank) {
			cum += (double)b[i];
			continue;
		}
		if (i == LAST_BUCKET) {
			*open = true;
			return lo;
		}
		return lo + width * (rank - cum) / (double)b[i];
	}
	return 0;
}

void kstats_hist_stats(const uint64_t *b, struct kstats_hist_stats *st)
{
	unsigned int i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++) {
		st->count = kstats_add_sat(st->count, b[i]);
		st->total_min += (double)b[i] * (double)kstats_bucket_lo(i);
		if (i < LAST_BUCKET)
			st->total_max += (double)b[i] * (double)kstats_bucket_hi(i);
	}
	if (b[LAST_BUCKET])
		st->total_max = -1;
	if (!st->count)
		return;
	st->p50 = quantile(b, st->count, 0.50, &st->p50_open);
	st->p99 = quantile(b, st->count, 0.99, &st->p99_open);
}

void kstats_fmt_value(char *buf, size_t len, double v, const struct kstats_unit_info *u)
{
	size_t i = 0;

	/* Round first, so 999.96µs prints as 1ms, not as 1000µs. */
	while (i + 1 < u->nsteps) {
		char probe[32];
		double shown;

		snprintf(probe, sizeof(probe), "%.4g", v);
		sscanf(probe, "%lf", &shown);
		if (shown < u->step)
			break;
		v /= u->step;
		i++;
	}
	snprintf(buf, len, "%.4g%s", v, u->steps[i]);
}

void kstats_fmt_bucket(char *lo, char *hi, size_t len, unsigned int i,
		       const struct kstats_unit_info *u, const char *inf)
{
	kstats_fmt_value(lo, len, (double)kstats_bucket_lo(i), u);
	if (i == LAST_BUCKET)
		snprintf(hi, len, "%s", inf);
	else
		kstats_fmt_value(hi, len, (double)kstats_bucket_hi(i) + 1, u);
}

size_t kstats_display_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

void kstats_put_padded(FILE *f, const char *s, size_t width, bool right)
{
	size_t w = kstats_display_width(s);

	if (!right)
		fputs(s, f);
	for (; w < width; w++)
		fputc(' ', f);
	if (right)
		fputs(s, f);
}

/*
 * bcc-style: zero rows outside the non-zero buckets are elided (--all shows all
 * 32); column widths follow the data, so no count up to 2^64 - 1 breaks them.
 */
#define BAR_WIDTH 40

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

/* Series s of h (h NULL: no title) as rows and a summary; false: no rows to show. */
static bool print_hist(FILE *f, const uint64_t *b, const struct kstats_unit_info *u,
		       bool all, const struct kstats_hist *h, const struct kstats_series *s)
{
	char lo[32], hi[32], num[24], bar[BAR_WIDTH + 1];
	unsigned int i, n, first = 0, last = LAST_BUCKET;
	size_t wlo = 0, whi = 0, wcount;
	struct kstats_hist_stats st;
	uint64_t max = 0;
	bool any = false;

	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS && !all; i++) {
		if (!b[i])
			continue;
		first = any ? first : i;
		last = i;
		any = true;
	}
	if (!any && !all)
		return false;
	if (h)
		print_title(f, h, s);
	for (i = first; i <= last; i++) {
		kstats_fmt_bucket(lo, hi, sizeof(lo), i, u, "inf");
		wlo = wlo > kstats_display_width(lo) ? wlo : kstats_display_width(lo);
		whi = whi > kstats_display_width(hi) ? whi : kstats_display_width(hi);
		max = b[i] > max ? b[i] : max;
	}
	wcount = (size_t)snprintf(num, sizeof(num), "%" PRIu64, max);
	wcount = wcount > 8 ? wcount : 8;
	kstats_put_padded(f, u->axis, 4 + wlo + 4 + whi, true);
	fprintf(f, " : %-*s distribution\n", (int)wcount, "count");
	for (i = first; i <= last; i++) {
		kstats_fmt_bucket(lo, hi, sizeof(lo), i, u, "inf");
		fputs("    ", f);
		kstats_put_padded(f, lo, wlo, true);
		fputs(" -> ", f);
		kstats_put_padded(f, hi, whi, false);
		n = max ? (unsigned int)((long double)b[i] * BAR_WIDTH / max) : 0;
		memset(bar, '*', n);
		memset(bar + n, ' ', BAR_WIDTH - n);
		bar[BAR_WIDTH] = 0;
		fprintf(f, " : %-*" PRIu64 " |%s|\n", (int)wcount, b[i], bar);
	}
	kstats_hist_stats(b, &st);
	fprintf(f, "    count %" PRIu64, st.count);
	if (st.count) {
		kstats_fmt_value(lo, sizeof(lo), st.p50, u);
		kstats_fmt_value(hi, sizeof(hi), st.p99, u);
		fprintf(f, ", p50 %s%s, p99 %s%s", st.p50_open ? ">=" : "~", lo,
			st.p99_open ? ">=" : "~", hi);
	}
	kstats_fmt_value(lo, sizeof(lo), st.total_min, u);
	if (st.total_max < 0) {
		fprintf(f, ", total >=%s\n", lo);
	} else {
		kstats_fmt_value(hi, sizeof(hi), st.total_max, u);
		fprintf(f, ", total %s..%s\n", lo, hi);
	}
	return true;
}

void print_log2_hist(FILE *f, const uint64_t *b, const struct kstats_unit_info *u)
{
	if (!print_hist(f, b, u, false, NULL, NULL))
		fprintf(f, "    no events\n");
}

/* The metrics not loaded, and where to look: kstats status, or the loader to run
 * when it does not name an object (or its map is gone). */
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
	char when[32];
	struct tm tm;

	if (s->is_delta) {
		localtime_r(&s->realtime.tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		fprintf(f, "\n%s  events in the last %.2fs\n", when,
			(double)(s->boottime.tv_sec - s->since_boottime.tv_sec) +
			(double)(s->boottime.tv_nsec - s->since_boottime.tv_nsec) / 1e9);
	}
	for (i = 0; i < s->nhists; i++) {
		const struct kstats_hist *h = &s->hists[i];
		const struct kstats_unit_info *u = kstats_unit_or_count(h->unit);
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
			shown |= print_hist(f, h->series[j].buckets, u, o->all, h, &h->series[j]);
		if (!shown)
			fprintf(f, "\n%s  no events%s\n", h->metric, s->is_delta ? "" : " yet");
	}
	if (missing)
		print_not_loaded(f, s, o->status);
	return ferror(f) ? -EIO : 0;
}

/* Integers print exactly; interpolated values with 6 significant digits. */
static struct json_object *json_num(double v)
{
	char buf[32];

	if (v > -9e15 && v < 9e15 && (double)(long long)v == v)
		snprintf(buf, sizeof(buf), "%lld", (long long)v);
	else
		snprintf(buf, sizeof(buf), "%.6g", v);
	return json_object_new_double_s(v, buf);
}

/* Short arrays (buckets, keys) on one line even in pretty output. */
static int one_line(struct json_object *a, struct printbuf *pb, int level, int flags)
{
	size_t i, n = json_object_array_length(a);

	(void)level;
	(void)flags;
	printbuf_strappend(pb, "[");
	for (i = 0; i < n; i++)
		sprintbuf(pb, "%s%s", i ? ", " : "",
			  json_object_to_json_string_ext(json_object_array_get_idx(a, i),
							 JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
	printbuf_strappend(pb, "]");
	return 0;
}

static struct json_object *flat_array(void)
{
	struct json_object *a = json_object_new_array();

	json_object_set_serializer(a, one_line, NULL, NULL);
	return a;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

/* Series s of h; NULL when it is empty and all is not asked for (a keyed h). */
static struct json_object *series_obj(const struct kstats_hist *h,
				      const struct kstats_series *s, bool all)
{
	struct json_object *o, *labels, *key, *b;
	struct kstats_hist_stats st;
	size_t i;

	kstats_hist_stats(s->buckets, &st);
	if (!st.count && h->nlabels && !all)
		return NULL;
	o = json_object_new_object();
	labels = json_object_new_object();
	key = flat_array();
	b = flat_array();
	for (i = 0; i < h->nlabels; i++) {
		json_object_object_add(labels, h->label[i], json_object_new_string(s->value[i]));
		json_object_array_add(key, json_object_new_int64(s->key[i]));
	}
	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
		json_object_array_add(b, json_object_new_uint64(s->buckets[i]));
	json_object_object_add(o, "labels", labels);
	json_object_object_add(o, "key", key);
	json_object_object_add(o, "count", json_object_new_uint64(st.count));
	json_object_object_add(o, "p50", st.count ? json_num(st.p50) : NULL);
	json_object_object_add(o, "p50_lower_bound", json_object_new_boolean(st.p50_open));
	json_object_object_add(o, "p99", st.count ? json_num(st.p99) : NULL);
	json_object_object_add(o, "p99_lower_bound", json_object_new_boolean(st.p99_open));
	json_object_object_add(o, "total_min", json_num(st.total_min));
	json_object_object_add(o, "total_max", st.total_max < 0 ? NULL : json_num(st.total_max));
	json_object_object_add(o, "buckets", b);
	return o;
}

static struct json_object *metric_obj(const struct kstats_hist *h, bool all)
{
	struct json_object *o = json_object_new_object();
	struct json_object *labels = flat_array();
	struct json_object *hists = json_object_new_array(), *so;
	size_t i;

	for (i = 0; i < h->nlabels; i++)
		json_object_array_add(labels, json_object_new_string(h->label[i]));
	for (i = 0; i < h->nseries; i++)
		if ((so = series_obj(h, &h->series[i], all)))
			json_object_array_add(hists, so);
	json_object_object_add(o, "metric", json_object_new_string(h->metric));
	json_object_object_add(o, "object", json_object_new_string(h->obj));
	json_object_object_add(o, "map", json_object_new_string(h->map));
	json_object_object_add(o, "unit", json_object_new_string(kstats_unit_or_count(h->unit)->name));
	json_object_object_add(o, "labels", labels);
	json_object_object_add(o, "histograms", hists);
	return o;
}

int kstats_render_json(FILE *f, const struct kstats_snapshot *s,
		       const struct kstats_render_opts *o, bool pretty)
{
	struct json_object *root = json_object_new_object();
	struct json_object *metrics = json_object_new_array();
	struct json_object *missing = flat_array(), *unreadable = flat_array();
	struct json_object *t = json_object_new_object(), *iv = NULL;
	uint64_t from = ts_ns(&s->since_boottime), to = ts_ns(&s->boottime);
	char iso[40];
	struct tm tm;
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE |
		    (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
			    : JSON_C_TO_STRING_PLAIN);
	size_t i;

	for (i = 0; i < s->nhists; i++) {
		const struct kstats_hist *h = &s->hists[i];

		if (!h->selected)
			continue;
		if (h->loaded)
			json_object_array_add(metrics, metric_obj(h, o->all));
		else
			json_object_array_add(h->read_err ? unreadable : missing,
					      json_object_new_string(h->metric));
	}
	gmtime_r(&s->realtime.tv_sec, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_object_add(t, "realtime_ns", json_object_new_uint64(ts_ns(&s->realtime)));
	json_object_object_add(t, "boottime_ns", json_object_new_uint64(to));
	json_object_object_add(t, "iso8601", json_object_new_string(iso));
	if (s->is_delta) {
		iv = json_object_new_object();
		json_object_object_add(iv, "seconds", json_num((double)(to - from) / 1e9));
		json_object_object_add(iv, "since_realtime_ns",
				       json_object_new_uint64(ts_ns(&s->since_realtime)));
		json_object_object_add(iv, "since_boottime_ns", json_object_new_uint64(from));
	}
	json_object_object_add(root, "schema", json_object_new_string("kstats.dump/1"));
	json_object_object_add(root, "time", t);
	json_object_object_add(root, "interval", iv);
	json_object_object_add(root, "metrics", metrics);
	json_object_object_add(root, "not_loaded", missing);
	json_object_object_add(root, "unreadable", unreadable);
	fprintf(f, "%s\n", json_object_to_json_string_ext(root, flags));
	json_object_put(root);
	return ferror(f) ? -EIO : 0;
}

/*
 * --prometheus: text 0.0.4, for node_exporter's textfile collector; --openmetrics:
 * OpenMetrics 1.0.  No _sum: log2 buckets do not record it, and node_exporter
 * re-exposes a TYPE histogram with "_sum 0", making the dashboards' mean
 * rate(_sum)/rate(_count) a false 0.  So the text declares _bucket and _count as
 * untyped families: passed through as they are, histogram_quantile() works on
 * the le label, and a mean finds no series instead of a wrong one.  OpenMetrics
 * allows a histogram without _sum (then without _count): a real one there.
 */

/* CompactionDuration -> kstats_compaction_duration_seconds */
static void prom_name(char *buf, size_t len, const char *m, const char *suffix)
{
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

/*
 * Bucket i's le in the exposed unit, the last bucket's "+Inf".  Latencies
 * are nanoseconds truncated to whole microseconds, so bucket i holds real
 * durations in [2^i, 2^(i+1)) us: le = 2^(i+1) us, as an exact decimal of
 * seconds ("0.000032").  Sizes and counts are whole numbers: le = 2^(i+1) - 1.
 */
static void prom_le(char *buf, size_t len, unsigned int i, unsigned int shift)
{
	unsigned int k;
	uint64_t top = 2ull << i, scale = 1;	/* 2^(i+1): the first value above bucket i */
	size_t n;

	if (i >= LAST_BUCKET) {
		snprintf(buf, len, "+Inf");
		return;
	}
	if (!shift) {
		snprintf(buf, len, "%" PRIu64, top - 1);
		return;
	}
	for (k = 0; k < shift; k++)
		scale *= 10;
	snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64, top / scale, (int)shift, top % scale);
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

static void put_buckets(FILE *f, const char *name, const struct kstats_hist *h,
			unsigned int shift, const struct kstats_series *s)
{
	uint64_t cum = 0;
	char le[32];
	unsigned int i;

	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++) {
		cum = kstats_add_sat(cum, s->buckets[i]);
		prom_le(le, sizeof(le), i, shift);
		fprintf(f, "%s_bucket", name);
		put_labels(f, h, s, le);
		fprintf(f, " %" PRIu64 "\n", cum);
	}
}

/* Two untyped families, name_bucket and name_count: see above. */
static void put_hist_prometheus(FILE *f, const char *name, const struct kstats_hist *h,
				const struct kstats_unit_info *u)
{
	struct kstats_hist_stats st;
	size_t i;

	fprintf(f, "# HELP %s_bucket %s: cumulative log2 buckets of %s from %s/%s; "
		"le is each bucket's upper bound; no _sum (not recorded)\n"
		"# TYPE %s_bucket untyped\n", name, h->metric, u->prom_help, h->obj, h->map, name);
	for (i = 0; i < h->nseries; i++)
		put_buckets(f, name, h, u->prom_shift, &h->series[i]);
	fprintf(f, "# HELP %s_count %s: number of events\n# TYPE %s_count untyped\n",
		name, h->metric, name);
	for (i = 0; i < h->nseries; i++) {
		kstats_hist_stats(h->series[i].buckets, &st);
		fprintf(f, "%s_count", name);
		put_labels(f, h, &h->series[i], NULL);
		fprintf(f, " %" PRIu64 "\n", st.count);
	}
}

/* OpenMetrics 1.0: _count only beside a _sum; the +Inf bucket counts. */
static void put_hist_openmetrics(FILE *f, const char *name, const struct kstats_hist *h,
				 const struct kstats_unit_info *u)
{
	size_t i;

	fprintf(f, "# TYPE %s histogram\n", name);
	if (*u->prom_suffix)	/* the UNIT must be the name's suffix: none for counts */
		fprintf(f, "# UNIT %s %s\n", name, u->prom_suffix + 1);
	fprintf(f, "# HELP %s %s: log2 histogram of %s from %s/%s; no _sum (not recorded)\n",
		name, h->metric, u->prom_help, h->obj, h->map);
	for (i = 0; i < h->nseries; i++)
		put_buckets(f, name, h, u->prom_shift, &h->series[i]);
}

/* One 0/1 gauge per selected metric: loaded is pinned (read or not) and attached. */
static void put_health(FILE *f, const struct kstats_snapshot *s, const char *gauge,
		       const char *help, bool read_error)
{
	size_t i;

	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", gauge, help, gauge);
	for (i = 0; i < s->nhists; i++) {
		const struct kstats_hist *h = &s->hists[i];

		if (!h->selected)
			continue;
		fprintf(f, "%s{metric=\"", gauge);
		put_escaped(f, h->metric);
		fputs("\",object=\"", f);
		put_escaped(f, h->obj);
		fprintf(f, "\"} %d\n", read_error ? !!h->read_err :
			(h->loaded || h->read_err) && !h->detached);
	}
}

int kstats_render_prometheus(FILE *f, const struct kstats_snapshot *s, bool openmetrics)
{
	char name[160];
	size_t i;

	for (i = 0; i < s->nhists; i++) {
		const struct kstats_hist *h = &s->hists[i];
		const struct kstats_unit_info *u = kstats_unit_or_count(h->unit);

		if (!h->selected || !h->loaded)
			continue;
		prom_name(name, sizeof(name), h->metric, u->prom_suffix);
		if (openmetrics)
			put_hist_openmetrics(f, name, h, u);
		else
			put_hist_prometheus(f, name, h, u);
	}
	put_health(f, s, "kstats_metric_loaded", "1 when kstats-loader loaded the "
		   "metric's object: its map pinned, its programs attached; else 0", false);
	put_health(f, s, "kstats_metric_read_error", "1 when this export could not "
		   "read the metric's map (kstats dump says why), else 0", true);
	if (s->pulled.tv_sec)
		fprintf(f, "# HELP kstats_pull_last_success_timestamp_seconds When kstats pull "
			"last committed a day's atoms (its state's mtime)\n# TYPE "
			"kstats_pull_last_success_timestamp_seconds gauge\n"
			"kstats_pull_last_success_timestamp_seconds %lld.%03ld\n",
			(long long)s->pulled.tv_sec, s->pulled.tv_nsec / 1000000);
	if (s->shipped.tv_sec)
		fprintf(f, "# HELP kstats_ship_atoms_waiting Atoms ClickHouse has not acknowledged\n"
			"# TYPE kstats_ship_atoms_waiting gauge\nkstats_ship_atoms_waiting %ld\n"
			"# HELP kstats_ship_last_success_timestamp_seconds When kstats ship last "
			"succeeded\n# TYPE kstats_ship_last_success_timestamp_seconds gauge\n"
			"kstats_ship_last_success_timestamp_seconds %lld\n", s->ship_waiting,
			(long long)s->shipped.tv_sec);
	if (openmetrics)
		fputs("# EOF\n", f);
	return ferror(f) ? -EIO : 0;
}

/*
 * kstats dump --rules: recording rules level:metric:operations, level "fleet"
 * or a key label, and alerts on the export's own gauges; none names a metric.
 */
#define RULE_WINDOW "5m"
#define P99_ALERT_SECONDS "1"

static const char *const rule_quantiles[] = { "0.5", "0.9", "0.99" };

static void put_record(FILE *f, const char *level, const char *name, const char *by)
{
	size_t q;

	fprintf(f, "      - record: %s:%s_bucket:rate" RULE_WINDOW "\n"
		"        expr: sum by (le%s%s) (rate(%s_bucket[" RULE_WINDOW "]))\n",
		level, name, *by ? ", " : "", by, name);
	for (q = 0; q < sizeof(rule_quantiles) / sizeof(*rule_quantiles); q++)
		fprintf(f, "      - record: %s:%s:quantile_rate" RULE_WINDOW "\n"
			"        expr: histogram_quantile(%s, %s:%s_bucket:rate" RULE_WINDOW ")\n"
			"        labels:\n          quantile: \"%s\"\n", level, name,
			rule_quantiles[q], level, name, rule_quantiles[q]);
}

static void put_alert(FILE *f, const char *alert, const char *expr, const char *wait,
		      const char *summary, const char *run)
{
	fprintf(f, "      - alert: %s\n        expr: %s\n        for: %s\n"
		"        labels:\n          severity: warning\n        annotations:\n"
		"          summary: '%s'\n          description: 'Run on {{ $labels.instance }}: %s'\n",
		alert, expr, wait, summary, run);
}

static void put_p99_alert(FILE *f, const struct kstats_hist *h, const char *name)
{
	char expr[512];

	snprintf(expr, sizeof(expr), "histogram_quantile(0.99, sum by (instance, le) "
		 "(rate(%s_bucket[" RULE_WINDOW "]))) > " P99_ALERT_SECONDS, name);
	fprintf(f, "      - alert: KstatsLatencyP99High\n        expr: %s\n        for: 15m\n"
		"        labels:\n          severity: warning\n          metric: %s\n"
		"        annotations:\n          summary: '%s p99 above " P99_ALERT_SECONDS
		" s on {{ $labels.instance }}'\n"
		"          description: 'Run on {{ $labels.instance }}: kstats dump --interval 60 "
		"%s (which keys, minute by minute)'\n", expr, h->metric, h->metric, h->metric);
}

int kstats_render_rules(FILE *f, const struct kstats_snapshot *s)
{
	char name[160];
	size_t i, l;

	fputs("# Generated by kstats dump --rules from the objects' metadata: do not edit\n"
	      "# (doc/fleet-export.md).\ngroups:\n  - name: kernelstats.recording\n"
	      "    rules:\n", f);
	for (i = 0; i < s->nhists; i++) {
		const struct kstats_hist *h = &s->hists[i];

		if (!h->selected)
			continue;
		prom_name(name, sizeof(name), h->metric, kstats_unit_or_count(h->unit)->prom_suffix);
		put_record(f, "fleet", name, "");
		for (l = 0; l < h->nlabels; l++)
			put_record(f, h->label[l], name, h->label[l]);
	}
	fputs("  - name: kernelstats.alerts\n    rules:\n", f);
	/* Stopped loading: a kernel without the attach point never loaded it. */
	put_alert(f, "KstatsMetricNotLoaded", "kstats_metric_loaded == 0 and "
		  "max_over_time(kstats_metric_loaded[1d]) == 1", "15m",
		  "{{ $labels.metric }} stopped loading on {{ $labels.instance }}",
		  "kstats status (why {{ $labels.object }} is not loaded), then "
		  "systemctl restart kernelstats-loader");
	put_alert(f, "KstatsMetricUnreadable", "kstats_metric_read_error == 1", "15m",
		  "the export cannot read {{ $labels.metric }} on {{ $labels.instance }}",
		  "journalctl -u kernelstats-textfile.service (why), kstats status");
	put_alert(f, "KstatsExportStale", "time() - node_textfile_mtime_seconds"
		  "{file=~\"(.*/)?kernelstats[.]prom\"} > 300", "5m",
		  "kernelstats.prom of {{ $labels.instance }} is older than 5 minutes",
		  "systemctl status kernelstats-textfile.timer kernelstats-textfile.service");
	put_alert(f, "KstatsPullLate", "time() - kstats_pull_last_success_timestamp_seconds"
		  " > 93600", "1h", "no daily pull succeeded on {{ $labels.instance }} "
		  "for over 26 hours", "journalctl -u kernelstats-pull.service, then "
		  "systemctl start kernelstats-pull.service");
	put_alert(f, "KstatsShipLate", "time() - kstats_ship_last_success_timestamp_seconds"
		  " > 93600", "1h", "{{ $labels.instance }} shipped no atoms to ClickHouse "
		  "for over 26 hours", "journalctl -u kernelstats-ship.service (the server "
		  "answer), kstats status");
	for (i = 0; i < s->nhists; i++) {
		const struct kstats_unit_info *u = kstats_unit_or_count(s->hists[i].unit);

		prom_name(name, sizeof(name), s->hists[i].metric, u->prom_suffix);
		if (s->hists[i].selected && u->prom_shift)
			put_p99_alert(f, &s->hists[i], name);
	}
	return ferror(f) ? -EIO : 0;
}
