// SPDX-License-Identifier: GPL-2.0
/*
 * Atoms summed per metric, key and UTC day (the day of the window's end),
 * from one or more atoms directories: what kstats report and kstats atoms
 * --heatmap draw.  Files are read with the bounds of kstats atoms; one that
 * is not an atoms file is named in d->bad and on stderr, and skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atoms.h"
#include "hist.h"
#include "kstats.h"

void days_init(struct days *d, const char *tool)
{
	memset(d, 0, sizeof(*d));
	d->since = INT32_MIN;
	d->until = INT32_MAX;
	d->first = INT32_MAX;
	d->last = INT32_MIN;
	d->tool = tool;
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 8;
	void *q;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	q = realloc(p, n * size);
	if (!q) {
		fprintf(stderr, "kstats: out of memory\n");
		exit(1);
	}
	*cap = n;
	return q;
}

/* The slot of metric msg's key: where it is, or the free one for it. */
static size_t slot_of(const struct days *d, const ProtobufCMessageDescriptor *msg,
		      const char *key)
{
	const struct day_series *s;
	size_t h = (uintptr_t)msg;
	const char *k;

	for (k = key; *k; k++)
		h = (h ^ (unsigned char)*k) * 16777619u;
	for (h %= DAYS_SLOTS; d->slot[h]; h = (h + 1) % DAYS_SLOTS) {
		s = &d->series[d->slot[h] - 1];
		if (s->msg == msg && !strcmp(s->key, key))
			break;
	}
	return h;
}

static struct day_series *series_of(struct days *d, const ProtobufCMessage *m,
				    const char *key, unsigned int unit)
{
	size_t h = slot_of(d, m->descriptor, key);
	struct day_series *s;

	if (d->slot[h])
		return &d->series[d->slot[h] - 1];
	if (d->nseries == DAYS_MAX_SERIES)
		return NULL;
	d->series = grow(d->series, &d->cap, d->nseries + 1, sizeof(*s));
	s = &d->series[d->nseries++];
	memset(s, 0, sizeof(*s));
	s->msg = m->descriptor;
	s->unit = unit;
	snprintf(s->key, sizeof(s->key), "%s", key);
	d->slot[h] = (uint32_t)d->nseries;
	return s;
}

static void add_cell(struct day_cell *to, const struct day_cell *c)
{
	unsigned int b;

	to->reset |= c->reset;
	to->anomalies += c->anomalies;
	for (b = 0; b < DAYS_NB; b++)
		to->b[b] = kstats_add_sat(to->b[b], c->b[b]);
}

static int cell_cmp(const void *x, const void *y)
{
	const struct day_cell *a = x, *b = y;

	return (a->day > b->day) - (a->day < b->day);
}

/* Sorts s's cells by day and adds up those of one day; d: counts them. */
static void compact(struct days *d, struct day_series *s)
{
	size_t i, n = 0;

	if (s->ndays)
		qsort(s->days, s->ndays, sizeof(*s->days), cell_cmp);
	for (i = 0; i < s->ndays; i++) {
		if (n && s->days[n - 1].day == s->days[i].day)
			add_cell(&s->days[n - 1], &s->days[i]);
		else
			s->days[n++] = s->days[i];
	}
	if (d)
		d->ncells -= s->ndays - n;
	s->ndays = s->sorted = n;
}

/*
 * The cell of day: the last one, or a new one after it (compacted when the
 * unsorted tail outgrows the rest), so that days out of order cost
 * O(n log n), not a move per day.  NULL past DAYS_MAX_CELLS (d: counted).
 */
static struct day_cell *cell_of(struct days *d, struct day_series *s, int32_t day)
{
	struct day_cell *c;

	if (s->ndays && s->days[s->ndays - 1].day == day)
		return &s->days[s->ndays - 1];
	if (d && d->ncells >= DAYS_MAX_CELLS)
		return NULL;
	if (s->ndays >= 2 * s->sorted + 64)
		compact(d, s);
	s->days = grow(s->days, &s->cap, s->ndays + 1, sizeof(*s->days));
	c = &s->days[s->ndays++];
	memset(c, 0, sizeof(*c));
	c->day = day;
	if (d)
		d->ncells++;
	return c;
}

static void add_atom(void *ctx, const Kernelstats__Atom *a)
{
	struct days *d = ctx;
	const ProtobufCMessage *m = atom_payload(a);
	struct day_cell atom = {
		.day = (int32_t)(a->window_end_realtime_ns / 1000000000ull / DAY_SECS),
		.reset = a->reset, .anomalies = a->anomalies,
	};
	unsigned int from = 0, unit, i;
	struct day_series *s;
	struct day_cell *c;
	char key[160] = "";
	FILE *f;

	if (!m || atom.day < d->since || atom.day > d->until ||
	    !atom_buckets(m, &from, atom.b, &unit))
		return;
	f = fmemopen(key, sizeof(key) - 1, "w");
	if (f) {
		atom_key_print(f, m, "");
		fclose(f);
	}
	s = series_of(d, m, key, unit);
	c = s ? cell_of(d, s, atom.day) : NULL;
	if (!c) {
		d->over++;
		return;
	}
	add_cell(c, &atom);
	for (i = 0; i < DAYS_NB; i++)
		s->events = kstats_add_sat(s->events, atom.b[i]);
	d->first = atom.day < d->first ? atom.day : d->first;
	d->last = atom.day > d->last ? atom.day : d->last;
	d->atoms++;
}

static void bad(struct days *d, const char *why)
{
	fprintf(stderr, "%s: skipped %s\n", d->tool, why);
	d->bad = grow(d->bad, &d->badcap, d->nbad + 1, sizeof(*d->bad));
	d->bad[d->nbad++] = strdup(why);
}

static void load_file(struct days *d, const char *path)
{
	struct atoms_file f;
	char why[600], line[1200];

	if (atoms_file_read(path, &f, why, sizeof(why))) {
		bad(d, why);
		return;
	}
	d->files++;
	if (atoms_file_each(&f, add_atom, d, why, sizeof(why))) {
		snprintf(line, sizeof(line), "%s: %s", path, why);
		bad(d, line);
	}
	if (d->over) {
		snprintf(line, sizeof(line), "%s: %zu atoms past the limits of %d keys and "
			 "%d key-days; not drawn (split the directories or use --since)",
			 path, d->over, DAYS_MAX_SERIES, DAYS_MAX_CELLS);
		bad(d, line);
		d->over = 0;
	}
	atoms_file_free(&f);
}

int days_load(struct days *d, const char *dir, char *const *files, int n)
{
	struct dirent **ents;
	char path[4096];
	int i;

	d->dirs++;
	for (i = 0; i < n; i++)
		load_file(d, files[i]);
	if (n)
		return 0;
	n = scandir(dir, &ents, kstats_atoms_filter, alphasort);
	if (n < 0) {
		snprintf(path, sizeof(path), "%s: cannot read: %s; pass the atoms "
			 "directory with --out-dir", dir, strerror(errno));
		bad(d, path);
		return -ENOENT;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		load_file(d, path);
		free(ents[i]);
	}
	free(ents);
	return 0;
}

static int series_cmp(const void *x, const void *y)
{
	const struct day_series *a = x, *b = y;

	return strcmp(a->msg->short_name, b->msg->short_name) ?:
	       (a->folded > 0) - (b->folded > 0) ?: strcmp(a->key, b->key);
}

static int busiest_cmp(const void *x, const void *y)
{
	const struct day_series *a = x, *b = y;

	return strcmp(a->msg->short_name, b->msg->short_name) ?:
	       (a->events < b->events) - (a->events > b->events);
}

/* Its non-empty cells, and 100 for the heatmap's axes and labels. */
static size_t cells(const struct day_series *s)
{
	size_t i, n = 100;
	unsigned int b;

	for (i = 0; i < s->ndays; i++)
		for (b = 0; b < DAYS_NB; b++)
			n += s->days[i].b[b] != 0;
	return n;
}

static void fold_into(struct day_series *to, struct day_series *s)
{
	size_t i;

	for (i = 0; i < s->ndays; i++)
		add_cell(cell_of(NULL, to, s->days[i].day), &s->days[i]);
	to->events = kstats_add_sat(to->events, s->events);
	to->folded++;
	free(s->days);
	s->days = NULL;
	s->ndays = 0;
}

/* s[0..n), busiest first: the keys past share cells go into s[kept]. */
static void fold_group(struct day_series *s, size_t n, size_t share)
{
	size_t kept, used = 0, sum, i;
	struct day_series *other;

	for (kept = 0; kept < n && (!kept || used + cells(&s[kept]) <= share); kept++)
		used += cells(&s[kept]);
	if (kept == n)
		return;
	other = &s[kept];
	other->folded = 1;
	snprintf(other->key, sizeof(other->key), " (other keys)");
	for (i = kept + 1; i < n; i++)
		fold_into(other, &s[i]);
	compact(NULL, other);
	/* The sum has cells of its own: room for them too (counted high). */
	for (sum = cells(other); kept > 1 && used + sum > share;) {
		used -= cells(&s[--kept]);
		sum += cells(&s[kept]);
		fold_into(other, &s[kept]);
	}
	compact(NULL, other);
}

static void fold(struct days *d, size_t max_cells)
{
	size_t i, from = 0, n = 0, metrics = 0;

	qsort(d->series, d->nseries, sizeof(*d->series), busiest_cmp);
	for (i = 0; i < d->nseries; i++)
		metrics += !i || d->series[i].msg != d->series[i - 1].msg;
	for (i = 1; i <= d->nseries; i++)
		if (i == d->nseries || d->series[i].msg != d->series[from].msg) {
			fold_group(&d->series[from], i - from, max_cells / metrics);
			from = i;
		}
	for (i = 0; i < d->nseries; i++)
		if (d->series[i].ndays)
			d->series[n++] = d->series[i];
	d->nseries = n;
}

void days_finish(struct days *d, size_t max_cells)
{
	size_t i, j;

	if (!d->nseries)
		return;
	for (i = 0; i < d->nseries; i++)
		compact(d, &d->series[i]);
	fold(d, max_cells);
	qsort(d->series, d->nseries, sizeof(*d->series), series_cmp);
	d->pulled = calloc((size_t)(d->last - d->first) + 1, 1);
	for (i = 0; d->pulled && i < d->nseries; i++)
		for (j = 0; j < d->series[i].ndays; j++)
			d->pulled[d->series[i].days[j].day - d->first] = 1;
}

void days_free(struct days *d)
{
	size_t i;

	for (i = 0; i < d->nseries; i++)
		free(d->series[i].days);
	for (i = 0; i < d->nbad; i++)
		free(d->bad[i]);
	free(d->series);
	free(d->bad);
	free(d->pulled);
}

void days_fmt(char *buf, size_t len, int32_t day)
{
	time_t t = (time_t)day * DAY_SECS;
	struct tm tm;

	strftime(buf, len, "%Y-%m-%d", gmtime_r(&t, &tm));
}

unsigned int days_bucket_of(double v)
{
	int i = v < 2 ? 0 : (int)floor(log2(v));

	return i >= DAYS_NB ? DAYS_NB - 1 : (unsigned int)i;
}

void days_bucket_label(char *buf, size_t len, unsigned int i, unsigned int unit)
{
	char lo[32], hi[32] = "∞";

	kstats_fmt_value(lo, sizeof(lo), (double)kstats_bucket_lo(i), unit);
	if (i < DAYS_NB - 1)
		kstats_fmt_value(hi, sizeof(hi), (double)kstats_bucket_hi(i) + 1, unit);
	snprintf(buf, len, "[%s, %s)", lo, hi);
}
