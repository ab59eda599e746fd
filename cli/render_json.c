// SPDX-License-Identifier: GPL-2.0
/* JSON output (json-c); the schema "kstats.dump/1" is documented in kstats(1). */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <json-c/json.h>
#include <json-c/printbuf.h>

#include "hist.h"

#define SCHEMA "kstats.dump/1"

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

static struct json_object *time_obj(const struct kstats_snapshot *s)
{
	struct json_object *t = json_object_new_object();
	char iso[40];
	struct tm tm;

	gmtime_r(&s->realtime.tv_sec, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_object_add(t, "realtime_ns", json_object_new_uint64(ts_ns(&s->realtime)));
	json_object_object_add(t, "boottime_ns", json_object_new_uint64(ts_ns(&s->boottime)));
	json_object_object_add(t, "iso8601", json_object_new_string(iso));
	return t;
}

static struct json_object *interval_obj(const struct kstats_snapshot *s)
{
	struct json_object *t = json_object_new_object();
	uint64_t from = ts_ns(&s->since_boottime), to = ts_ns(&s->boottime);

	json_object_object_add(t, "seconds", json_num((double)(to - from) / 1e9));
	json_object_object_add(t, "since_realtime_ns",
			       json_object_new_uint64(ts_ns(&s->since_realtime)));
	json_object_object_add(t, "since_boottime_ns", json_object_new_uint64(from));
	return t;
}

static void add_quantile(struct json_object *o, const char *name,
			 const char *open_name, const struct kstats_hist_stats *st,
			 double v, bool open)
{
	json_object_object_add(o, name, st->count ? json_num(v) : NULL);
	json_object_object_add(o, open_name, json_object_new_boolean(open));
}

static struct json_object *series_obj(const struct kstats_hist *h,
				      const struct kstats_series *s)
{
	struct json_object *o = json_object_new_object();
	struct json_object *labels = json_object_new_object();
	struct json_object *key = flat_array();
	struct json_object *b = flat_array();
	struct kstats_hist_stats st;
	size_t i;

	kstats_hist_stats(s->buckets, &st);
	for (i = 0; i < h->nlabels; i++) {
		json_object_object_add(labels, h->label[i], json_object_new_string(s->value[i]));
		json_object_array_add(key, json_object_new_int64(s->key[i]));
	}
	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
		json_object_array_add(b, json_object_new_uint64(s->buckets[i]));
	json_object_object_add(o, "labels", labels);
	json_object_object_add(o, "key", key);
	json_object_object_add(o, "count", json_object_new_uint64(st.count));
	add_quantile(o, "p50", "p50_lower_bound", &st, st.p50, st.p50_open);
	add_quantile(o, "p99", "p99_lower_bound", &st, st.p99, st.p99_open);
	json_object_object_add(o, "total_min", json_num(st.total_min));
	json_object_object_add(o, "total_max", st.total_max < 0 ? NULL : json_num(st.total_max));
	json_object_object_add(o, "buckets", b);
	return o;
}

static bool series_empty(const struct kstats_series *s)
{
	unsigned int i;

	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
		if (s->buckets[i])
			return false;
	return true;
}

static struct json_object *metric_obj(const struct kstats_hist *h, bool all)
{
	struct json_object *o = json_object_new_object();
	struct json_object *labels = flat_array();
	struct json_object *hists = json_object_new_array();
	size_t i;

	for (i = 0; i < h->nlabels; i++)
		json_object_array_add(labels, json_object_new_string(h->label[i]));
	for (i = 0; i < h->nseries; i++)
		if (all || !h->nlabels || !series_empty(&h->series[i]))
			json_object_array_add(hists, series_obj(h, &h->series[i]));
	json_object_object_add(o, "metric", json_object_new_string(h->metric));
	json_object_object_add(o, "object", json_object_new_string(h->obj));
	json_object_object_add(o, "map", json_object_new_string(h->map));
	json_object_object_add(o, "unit", json_object_new_string(kstats_unit_name(h->unit)));
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
	json_object_object_add(root, "schema", json_object_new_string(SCHEMA));
	json_object_object_add(root, "time", time_obj(s));
	json_object_object_add(root, "interval", s->is_delta ? interval_obj(s) : NULL);
	json_object_object_add(root, "metrics", metrics);
	json_object_object_add(root, "not_loaded", missing);
	json_object_object_add(root, "unreadable", unreadable);
	fprintf(f, "%s\n", json_object_to_json_string_ext(root, flags));
	json_object_put(root);
	return ferror(f) ? -EIO : 0;
}
