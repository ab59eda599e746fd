// SPDX-License-Identifier: GPL-2.0
/* kstats report: one self-contained HTML page (inline SVG and CSS, no script). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "atoms.h"

#define PAGE_LABEL_W 64
#define ROW_H 12
#define TOP 10

static const char *const viridis[] = { "#440154", "#472d7b", "#3b528b", "#2c728e",
	"#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725" };
#define NCOLOURS (sizeof(viridis) / sizeof(viridis[0]))

struct page {
	FILE *f;
	const struct days *d;
	int cw;				/* px per day */
	int rows[DAYS_NB];		/* row of each bucket from the top, -1: none */
	int nrows;
};

static void html_escaped(FILE *f, const char *s)
{
	static const char *const ent[] = { ['<'] = "&lt;", ['>'] = "&gt;", ['&'] = "&amp;",
					   ['"'] = "&quot;" };

	for (; *s; s++)
		if ((unsigned char)*s <= '>' && ent[(unsigned char)*s])
			fputs(ent[(unsigned char)*s], f);
		else
			fputc(*s, f);
}

static int day_x(const struct page *p, int32_t day)
{
	return PAGE_LABEL_W + (day - p->d->first) * p->cw;
}

static void put_quantiles(struct page *p, const struct day_series *s, bool p99)
{
	struct kstats_hist_stats st;
	int32_t prev = INT32_MIN;
	double v, frac;
	unsigned int b;
	size_t i;

	fprintf(p->f, "<path class=\"%s\" d=\"", p99 ? "q99" : "q50");
	for (i = 0; i < s->ndays; i++) {
		kstats_hist_stats(s->days[i].b, &st);
		if (!st.count)
			continue;
		/* y of v (base unit): inside its bucket's row, log-interpolated. */
		v = p99 ? st.p99 : st.p50;
		b = v < 2 ? 0 : (unsigned int)floor(log2(v));
		b = b >= DAYS_NB ? DAYS_NB - 1 : b;
		frac = b ? log2(v) - b : v / 2;
		fprintf(p->f, "%c%d %.1f", s->days[i].day == prev + 1 ? 'L' : 'M',
			day_x(p, s->days[i].day) + p->cw / 2,
			TOP + (p->rows[b] + 1 - (frac > 1 ? 1 : frac)) * ROW_H);
		prev = s->days[i].day;
	}
	fprintf(p->f, "\"><title>%s per day</title></path>\n", p99 ? "p99" : "p50");
}

static void put_cells(struct page *p, const struct day_series *s, uint64_t max)
{
	const struct day_cell *c;
	char day[16], lo[32], hi[32];
	size_t i;
	unsigned int b;

	for (i = 0; i < s->ndays; i++) {
		c = &s->days[i];
		days_fmt(day, sizeof(day), c->day);
		for (b = 0; b < DAYS_NB; b++) {
			if (!c->b[b])
				continue;
			kstats_fmt_bucket(lo, hi, sizeof(lo), b, s->unit, "∞");
			fprintf(p->f, "<rect x=%d y=%d class=c%u><title>", day_x(p, c->day),
				TOP + p->rows[b] * ROW_H, days_level(c->b[b], max, NCOLOURS) - 1);
			html_escaped(p->f, s->msg->short_name);
			html_escaped(p->f, s->key);
			fprintf(p->f, " %s [%s, %s): %" PRIu64 " events</title></rect>\n", day,
				lo, hi, c->b[b]);
		}
		if (c->reset || c->anomalies)
			fprintf(p->f, "<rect class=mark x=%d y=1 width=%d height=6><title>%s: %s"
				"</title></rect>\n", day_x(p, c->day), p->cw, day, c->reset ?
				"reset: counts since the map's creation" :
				"anomalies: buckets went backwards and count 0");
	}
}

static void put_axes(struct page *p, const struct day_series *s)
{
	const struct days *d = p->d;
	int h = TOP + p->nrows * ROW_H, step = (70 + p->cw - 1) / p->cw;
	char label[64], to[16];
	int32_t day, end;
	unsigned int b;

	for (b = 0; b < DAYS_NB; b++) {
		if (p->rows[b] < 0)
			continue;
		kstats_fmt_value(label, sizeof(label), (double)kstats_bucket_lo(b), s->unit);
		fprintf(p->f, "<text x=%d y=%d class=yl>%s</text>\n", PAGE_LABEL_W - 4,
			TOP + (p->rows[b] + 1) * ROW_H - 2, label);
	}
	for (day = d->first; day <= d->last; day++) {
		/* A run of days without a pull is one gap (a clock in 1970 makes many). */
		for (end = day; end <= d->last && !d->pulled[end - d->first]; end++)
			;
		if (end > day && (day == d->first || d->pulled[day - 1 - d->first])) {
			days_fmt(label, sizeof(label), day);
			days_fmt(to, sizeof(to), end - 1);
			fprintf(p->f, "<rect class=gap x=%d y=%d width=%d height=%d><title>%s%s%s: "
				"no pull</title></rect>\n", day_x(p, day), TOP,
				(end - day) * p->cw, h - TOP, label, end - day > 1 ? " to " : "",
				end - day > 1 ? to : "");
		}
		if ((day - d->first) % step)
			continue;
		days_fmt(label, sizeof(label), day);
		fprintf(p->f, "<text x=%d y=%d>%s</text>\n", day_x(p, day), h + 11, label + 5);
	}
}

static void page_series(struct page *p, const struct day_series *s, uint64_t max)
{
	const struct days *d = p->d;
	size_t i;
	unsigned int b;
	int w = PAGE_LABEL_W + (d->last - d->first + 1) * p->cw + 8;

	for (b = 0; b < DAYS_NB; b++)
		for (p->rows[b] = -1, i = 0; i < s->ndays && p->rows[b] < 0; i++)
			if (s->days[i].b[b])
				p->rows[b] = 0;
	for (p->nrows = 0, b = DAYS_NB; b-- > 0;)
		if (!p->rows[b])
			p->rows[b] = p->nrows++;
	fputs("<h3>", p->f);
	if (s->folded)
		fprintf(p->f, "%s: %zu other keys, summed", s->msg->short_name, s->folded);
	else
		html_escaped(p->f, *s->key ? s->key + 1 : "system-wide");
	fprintf(p->f, "</h3>\n<svg class=hm width=%d height=%d>\n", w,
		TOP + p->nrows * ROW_H + 16);
	put_axes(p, s);
	put_cells(p, s, max);
	put_quantiles(p, s, false);
	put_quantiles(p, s, true);
	fputs("</svg>\n", p->f);
}

static void put_metric(struct page *p, size_t from, size_t to)
{
	const struct days *d = p->d;
	const struct day_series *s = &d->series[from];
	uint64_t all[DAYS_NB] = {}, max = 0;
	struct kstats_hist_stats st;
	char p50[32], p99[32], first[16], last[16];
	int32_t lo = INT32_MAX, hi = INT32_MIN;
	uint8_t *covered = calloc((size_t)(d->last - d->first) + 1, 1);
	size_t i, j, ndays = 0;
	unsigned int b;

	for (i = from; i < to; i++)
		for (j = 0; j < d->series[i].ndays; j++) {
			const struct day_cell *c = &d->series[i].days[j];

			for (b = 0; b < DAYS_NB; b++) {
				all[b] = kstats_add_sat(all[b], c->b[b]);
				max = c->b[b] > max ? c->b[b] : max;
			}
			if (covered && !covered[c->day - d->first]++)
				ndays++;
			lo = c->day < lo ? c->day : lo;
			hi = c->day > hi ? c->day : hi;
		}
	free(covered);
	kstats_hist_stats(all, &st);
	kstats_fmt_value(p50, sizeof(p50), st.p50, s->unit);
	kstats_fmt_value(p99, sizeof(p99), st.p99, s->unit);
	days_fmt(first, sizeof(first), lo);
	days_fmt(last, sizeof(last), hi);
	fprintf(p->f, "<h2>%s</h2>\n<p class=sum>%zu days covered (%s to %s), %" PRIu64
		" events, p50 %s%s, p99 %s%s. Colour: events per day and bucket, 1 ",
		s->msg->short_name, ndays, first, last, st.count, st.p50_open ? "+" : "",
		p50, st.p99_open ? "+" : "", p99);
	for (b = 0; b < NCOLOURS; b++)
		fprintf(p->f, "<svg width=10 height=10><rect width=10 height=10 fill=\"%s\"/>"
			"</svg>", viridis[b]);
	fprintf(p->f, " %" PRIu64 " (log scale)</p>\n", max);
	for (i = from; i < to; i++)
		page_series(p, &d->series[i], max);
}

void page_put(FILE *f, const struct days *d, char *const *dirs, int ndirs)
{
	struct page p = { .f = f, .d = d, .cw = 8 };
	char first[16] = "", last[16] = "";
	size_t i, from;
	int n;

	if (d->pulled) {
		n = d->last - d->first + 1;
		p.cw = n > 1100 / 2 ? 2 : n > 1100 / 24 ? 1100 / n : 24;
	}
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
	      "<title>kernelstats report</title>\n<style>\n"
	      "body{font:13px sans-serif;margin:1em 2em;color:#222}\n"
	      "svg.hm{display:block;font:10px sans-serif;margin-bottom:6px}\n"
	      "svg.hm text.yl{text-anchor:end}\n"
	      ".q50{fill:none;stroke:#fff;stroke-width:2}\n"
	      ".q99{fill:none;stroke:#ff3b30;stroke-width:2;stroke-dasharray:4 2}\n"
	      ".gap{fill:#e6e6e6}\n.mark{fill:#d62728}\n"
	      "h3{font-size:12px;margin:8px 0 2px}\n.bad{color:#a00}\n", f);
	for (n = 0; n < (int)NCOLOURS; n++)
		fprintf(f, ".c%d{fill:%s;width:%dpx;height:%dpx}\n", n, viridis[n], p.cw,
			ROW_H);
	fputs("</style></head><body>\n<h1>kernelstats: latency heatmaps</h1>\n", f);
	if (d->pulled) {
		days_fmt(first, sizeof(first), d->first);
		days_fmt(last, sizeof(last), d->last);
	}
	fputs("<p>Read ", f);
	if (d->dirs)
		fprintf(f, "%zu host%s (atoms directories), %zu files, ", d->dirs,
			d->dirs == 1 ? "" : "s", d->files);
	/* Rows name their hosts or not (queries.sql's page rows sum them): no count then. */
	if (d->by_rows && d->hosts)
		fprintf(f, "%zu rows of %s%zu host%s (--rows), ", d->rows,
			d->hosts == ROWS_MAX_HOSTS ? "at least " : "", d->hosts,
			d->hosts == 1 ? "" : "s");
	else if (d->by_rows)
		fprintf(f, "%zu rows (--rows, no host column), ", d->rows);
	fprintf(f, "%zu atoms%s%s%s%s. A column is a UTC day (the day of the pull window's "
		"end), a row a log2 bucket; grey: no pull that day; red mark: a reset or "
		"anomalies; white line: p50, dashed red: p99. Hover a cell for its count.</p>\n",
		d->atoms, *first ? ", " : "", first, *first ? " to " : "", last);
	if (d->pulled && d->oldest < d->first) {
		days_fmt(last, sizeof(last), d->oldest);
		fprintf(f, "<p class=bad>Not drawn: the days from %s to before %s, past the page's "
			"%d cells (newest days first); narrow them with --since.</p>\n", last,
			first, PAGE_CELLS);
	}
	if (d->nbad)
		fprintf(f, "<div class=bad><p>Skipped %zu:</p><ul>\n", d->nbad);
	for (i = 0; i < d->nbad; i++) {
		fputs("<li>", f);
		html_escaped(f, d->bad[i]);
		fputs(i + 1 < d->nbad ? "</li>\n" : "</li>\n</ul></div>\n", f);
	}
	if (!d->pulled && d->outside) {
		fprintf(f, "<p class=empty>Nothing in the range: the %zu atoms read are all "
			"outside --since and --until.</p>\n", d->outside);
	} else if (!d->pulled) {
		fputs("<p class=empty>Nothing yet: no atoms in", f);
		for (n = 0; n < ndirs; n++) {
			fputc(' ', f);
			html_escaped(f, dirs[n]);
		}
		fputs(". kstats pull writes one atoms file a day (kernelstats-pull.timer); "
		      "come back after a pull.</p>\n", f);
	}
	for (from = 0, i = 1; i <= d->nseries; i++)
		if (i == d->nseries || d->series[i].msg != d->series[from].msg) {
			put_metric(&p, from, i);
			from = i;
		}
	fputs("</body></html>\n", f);
}