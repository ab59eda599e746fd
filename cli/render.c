// SPDX-License-Identifier: GPL-2.0
/* kstats dump's outputs: shared histogram arithmetic, bcc-style ASCII, JSON ("kstats.dump/1");
 * the exposition formats and the rules are prom.c's. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <json-c/json.h>
#include <json-c/printbuf.h>

#include "hist.h"
#include "kstats.h"
#include "kstats_meta.h"

const struct kstats_unit_info *kstats_unit_or_count(unsigned int id)
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

/* The value at rank q * count, interpolated linearly inside its bucket's [lo, hi + 1) as
 * Prometheus' histogram_quantile() does; in the open last bucket, its lower bound. */
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
		*open = i == LAST_BUCKET;
		return *open ? lo : lo + width * (rank - cum) / (double)b[i];
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

	fprintf(f, "%s%*s%s", right ? "" : s, (int)(w < width ? width - w : 0), "", right ? s : "");
}

/* bcc-style: zero rows outside the non-zero buckets are elided (--all shows all 32);
 * column widths follow the data, so no count up to 2^64 - 1 breaks them. */
#define BAR "****************************************"
#define BAR_WIDTH (sizeof(BAR) - 1)

/* Series s of h (h NULL: no title) as rows and a summary; false: no rows to show. */
static bool print_hist(FILE *f, const uint64_t *b, const struct kstats_unit_info *u,
		       bool all, const struct kstats_hist *h, const struct kstats_series *s)
{
	char lo[32], hi[32], num[24];
	unsigned int i, n, first = 0, last = LAST_BUCKET;
	size_t wlo = 0, whi = 0, wcount;
	struct kstats_hist_stats st;
	uint64_t max = 0;

	while (!all && first < LAST_BUCKET && !b[first])
		first++;
	while (!all && last > first && !b[last])
		last--;
	if (!all && !b[first])
		return false;
	if (h)
		fprintf(f, "\n%s", h->metric);
	for (i = 0; h && i < h->nlabels; i++) {
		fputs(i ? ", " : "  ", f);
		if (kstats_label_is_node(h->label[i]))
			fprintf(f, "node %s", s->value[i]);
		else
			fprintf(f, "%s = %s", h->label[i], s->value[i]);
	}
	if (h)
		fputc('\n', f);
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
		fprintf(f, " : %-*" PRIu64 " |%.*s%*s|\n", (int)wcount, b[i], (int)n, BAR,
			(int)(BAR_WIDTH - n), "");
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
	kstats_fmt_value(hi, sizeof(hi), st.total_max, u);
	fprintf(f, st.total_max < 0 ? ", total >=%s\n" : ", total %s..%s\n", lo, hi);
	return true;
}

void print_log2_hist(FILE *f, const uint64_t *b, const struct kstats_unit_info *u)
{
	if (!print_hist(f, b, u, false, NULL, NULL))
		fprintf(f, "    no events\n");
}

int kstats_render_ascii(FILE *f, const struct kstats_snapshot *s,
			const struct kstats_render_opts *o)
{
	const char *where = KSTATS_FIX_STATUS;
	char when[32], why[KSTATS_WHY_LEN];
	size_t i, j, missing = 0;
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
		/* Where to look: kstats status, or the loader to run when it does not name an
		 * object (or its map is gone). */
		if (!h->loaded) {
			missing++;
			if (!strcmp(kstats_why(o->status ? kstats_status_obj(o->status, h->obj) :
					       NULL, why, sizeof(why)), KSTATS_FIX_LOAD))
				where = KSTATS_FIX_LOAD;
			continue;
		}
		for (j = 0; j < h->nseries; j++)
			shown |= print_hist(f, h->series[j].buckets, u, o->all, h, &h->series[j]);
		if (!shown)
			fprintf(f, "\n%s  no events%s\n", h->metric, s->is_delta ? "" : " yet");
	}
	if (missing)
		fprintf(f, "\nnot loaded:");
	for (i = 0; missing && i < s->nhists; i++)
		if (s->hists[i].selected && !s->hists[i].loaded && !s->hists[i].read_err)
			fprintf(f, " %s", s->hists[i].metric);
	if (missing)
		fprintf(f, " (%s)\n", where);
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
	size_t i, j;

	for (i = 0; i < s->nhists; i++) {
		const struct kstats_hist *h = &s->hists[i];
		struct json_object *m, *labels, *hists, *so;

		if (!h->selected)
			continue;
		if (!h->loaded) {
			json_object_array_add(h->read_err ? unreadable : missing,
					      json_object_new_string(h->metric));
			continue;
		}
		json_object_array_add(metrics, m = json_object_new_object());
		labels = flat_array();
		hists = json_object_new_array();
		for (j = 0; j < h->nlabels; j++)
			json_object_array_add(labels, json_object_new_string(h->label[j]));
		for (j = 0; j < h->nseries; j++)
			if ((so = series_obj(h, &h->series[j], o->all)))
				json_object_array_add(hists, so);
		json_object_object_add(m, "metric", json_object_new_string(h->metric));
		json_object_object_add(m, "object", json_object_new_string(h->obj));
		json_object_object_add(m, "map", json_object_new_string(h->map));
		json_object_object_add(m, "unit",
				       json_object_new_string(kstats_unit_or_count(h->unit)->name));
		json_object_object_add(m, "labels", labels);
		json_object_object_add(m, "histograms", hists);
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
