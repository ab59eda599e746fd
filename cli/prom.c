// SPDX-License-Identifier: GPL-2.0
/* kstats dump's exposition: Prometheus text 0.0.4, OpenMetrics 1.0, and the Prometheus rules. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "hist.h"

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
 * Bucket i's le in the exposed unit, the last bucket's "+Inf".  Latencies are nanoseconds
 * truncated to whole microseconds, so bucket i holds real durations in [2^i, 2^(i+1)) us:
 * le = 2^(i+1) us, an exact decimal of seconds ("0.000032"; a power of 2 ends in no 0).
 * Sizes and counts are whole numbers: le = 2^(i+1) - 1.
 */
static void prom_le(char *buf, size_t len, unsigned int i, unsigned int shift)
{
	uint64_t top = 2ull << i, scale = 1;	/* 2^(i+1): the first value above bucket i */
	unsigned int k;

	for (k = 0; k < shift; k++)
		scale *= 10;
	if (i >= LAST_BUCKET)
		snprintf(buf, len, "+Inf");
	else if (!shift)
		snprintf(buf, len, "%" PRIu64, top - 1);
	else
		snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64, top / scale, (int)shift, top % scale);
}

/* Exposition text (a label value, or HELP): \\, newline and, quoted, '"' escaped; a byte
 * not UTF-8 becomes the text \xNN (kstats_escape's form): valid whatever a name holds. */
static void put_text(FILE *f, const char *s, bool quoted)
{
	size_t n;

	for (; *s; s += n) {
		n = kstats_utf8_len(s);
		if (!n)
			fprintf(f, "\\\\x%02x", (unsigned char)*s);
		else if (*s == '\\' || (quoted && *s == '"'))
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fwrite(s, 1, n, f);
		n = n ?: 1;
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
		put_text(f, s->value[i], true);
		fputc('"', f);
	}
	if (le)
		fprintf(f, "%sle=\"%s\"", h->nlabels ? "," : "", le);
	fputc('}', f);
}

/*
 * The text: two untyped families, name_bucket and name_count (see above).
 * OpenMetrics 1.0: a histogram, _count only beside a _sum; the +Inf bucket counts.
 */
static void put_hist(FILE *f, const char *name, const struct kstats_hist *h,
		     const struct kstats_unit_info *u, bool om)
{
	const struct kstats_series *s;
	struct kstats_hist_stats st;
	uint64_t cum;
	char le[32];
	unsigned int i;

	if (om)
		fprintf(f, "# TYPE %s histogram\n", name);
	if (om && *u->prom_suffix)	/* the UNIT must be the name's suffix: none for counts */
		fprintf(f, "# UNIT %s %s\n", name, u->prom_suffix + 1);
	fprintf(f, "# HELP %s%s ", name, om ? "" : "_bucket");
	put_text(f, h->metric, om);
	fprintf(f, ": %s of %s from ", om ? "log2 histogram" : "cumulative log2 buckets",
		u->prom_help);
	put_text(f, h->obj, om);
	fputc('/', f);
	put_text(f, h->map, om);
	fprintf(f, "%s; no _sum (not recorded)\n", om ? "" : "; le is each bucket's upper bound");
	if (!om)
		fprintf(f, "# TYPE %s_bucket untyped\n", name);
	for (s = h->series; s < h->series + h->nseries; s++)
		for (cum = 0, i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++) {
			cum = kstats_add_sat(cum, s->buckets[i]);
			prom_le(le, sizeof(le), i, u->prom_shift);
			fprintf(f, "%s_bucket", name);
			put_labels(f, h, s, le);
			fprintf(f, " %" PRIu64 "\n", cum);
		}
	if (om)
		return;
	fprintf(f, "# HELP %s_count ", name);
	put_text(f, h->metric, false);
	fprintf(f, ": number of events\n# TYPE %s_count untyped\n", name);
	for (s = h->series; s < h->series + h->nseries; s++) {
		kstats_hist_stats(s->buckets, &st);
		fprintf(f, "%s_count", name);
		put_labels(f, h, s, NULL);
		fprintf(f, " %" PRIu64 "\n", st.count);
	}
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
		put_text(f, h->metric, true);
		fputs("\",object=\"", f);
		put_text(f, h->obj, true);
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
		put_hist(f, name, h, u, openmetrics);
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

/* kstats dump --rules: recording rules level:metric:operations, level "fleet" or a key
 * label, and alerts on the export's own gauges; none names a metric. */
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

/* A metric's name in the rules, label and annotations: YAML single-quoted text no template
 * expands.  Not printable ASCII: \xNN (kstats_escape); ' doubled; {{ as {{ "{{" }}. */
static void put_yaml(FILE *f, const char *name)
{
	char safe[KSTATS_ESCAPED_SIZE(KSTATS_LABEL_LEN)], *c;

	kstats_escape(safe, sizeof(safe), name, strlen(name));
	for (c = safe; *c; c++) {
		if (c[0] == '{' && c[1] == '{') {
			fputs("{{ \"{{\" }}", f);
			c++;
		} else {
			fputs(*c == '\'' ? "'" : "", f);
			fputc(*c, f);
		}
	}
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
		const struct kstats_hist *h = &s->hists[i];
		const struct kstats_unit_info *u = kstats_unit_or_count(h->unit);

		if (!h->selected || !u->prom_shift)
			continue;
		prom_name(name, sizeof(name), h->metric, u->prom_suffix);
		fprintf(f, "      - alert: KstatsLatencyP99High\n        expr: histogram_quantile("
			"0.99, sum by (instance, le) (rate(%s_bucket[" RULE_WINDOW "]))) > "
			P99_ALERT_SECONDS "\n        for: 15m\n        labels:\n"
			"          severity: warning\n          metric: '", name);
		put_yaml(f, h->metric);
		fputs("'\n        annotations:\n          summary: '", f);
		put_yaml(f, h->metric);
		fputs(" p99 above " P99_ALERT_SECONDS " s on {{ $labels.instance }}'\n"
		      "          description: 'Run on {{ $labels.instance }}: kstats dump "
		      "--interval 60 ", f);
		put_yaml(f, h->metric);
		fputs(" (which keys, minute by minute)'\n", f);
	}
	return ferror(f) ? -EIO : 0;
}
