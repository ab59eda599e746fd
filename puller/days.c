// SPDX-License-Identifier: GPL-2.0
/* kstats atoms --heatmap and report: atoms summed per metric, key and UTC day, within bounds. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "atoms.h"

void days_init(struct days *d, const char *tool)
{
	*d = (struct days){ .since = INT32_MIN, .until = INT32_MAX, .first = INT32_MAX,
			    .last = INT32_MIN, .tool = tool };
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

/* The series of metric m's key, found by its hash slot or added in the free one. */
static struct day_series *series_of(struct days *d, const ProtobufCMessageDescriptor *msg,
				    const char *key, const struct kstats_unit_info *unit)
{
	size_t h = (uintptr_t)msg;
	struct day_series *s;
	const char *k;

	for (k = key; *k; k++)
		h = (h ^ (unsigned char)*k) * 16777619u;
	for (h %= DAYS_SLOTS; d->slot[h]; h = (h + 1) % DAYS_SLOTS) {
		s = &d->series[d->slot[h] - 1];
		if (s->msg == msg && !strcmp(s->key, key))
			return s;
	}
	if (d->nseries == DAYS_MAX_SERIES)
		return NULL;
	d->series = grow(d->series, &d->cap, d->nseries + 1, sizeof(*s));
	s = &d->series[d->nseries++];
	*s = (struct day_series){ .msg = msg, .unit = unit };
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

struct day_cell *days_cell(const struct day_series *s, int32_t day)
{
	struct day_cell key = { .day = day };

	return s->sorted ? bsearch(&key, s->days, s->sorted, sizeof(key), cell_cmp) : NULL;
}

/* The cell of day: the last one, one found (all compacted first at the limit, which counts
 * distinct key-days), or a new one at the end (compacted when the unsorted tail outgrows the
 * rest), so that days out of order cost O(n log n), not a move per day.  NULL past
 * DAYS_MAX_CELLS (counted).  d NULL: always a new one. */
static struct day_cell *cell_of(struct days *d, struct day_series *s, int32_t day)
{
	struct day_cell *c = NULL;
	size_t i;

	if (d && s->ndays && s->days[s->ndays - 1].day == day)
		return &s->days[s->ndays - 1];
	if (d && d->ncells >= DAYS_MAX_CELLS && !d->merged) {
		for (i = 0; i < d->nseries; i++)
			compact(d, &d->series[i]);
		d->merged = true;
	}
	c = d ? days_cell(s, day) : NULL;
	if (c || (d && d->ncells >= DAYS_MAX_CELLS))
		return c;
	if (s->ndays >= 2 * s->sorted + 64)
		compact(d, s);
	s->days = grow(s->days, &s->cap, s->ndays + 1, sizeof(*s->days));
	c = &s->days[s->ndays++];
	*c = (struct day_cell){ .day = day };
	if (d) {
		d->ncells++;
		d->merged = false;
	}
	return c;
}

static void add_atom(void *ctx, const Kernelstats__Atom *a)
{
	const ProtobufCMessage *m = atom_payload(a);
	struct day_cell atom = {
		.day = (int32_t)(a->window_end_realtime_ns / 1000000000ull / DAY_SECS),
		.reset = a->reset, .anomalies = a->anomalies,
	};
	const struct kstats_unit_info *unit;
	unsigned int from = 0;
	char key[160] = "";
	FILE *f;

	if (!m || !atom_buckets(m, &from, atom.b, &unit))
		return;
	f = fmemopen(key, sizeof(key) - 1, "w");
	if (f) {
		atom_key_print(f, m, "");
		fclose(f);
	}
	days_add(ctx, m->descriptor, key, unit, &atom);
}

void days_add(struct days *d, const ProtobufCMessageDescriptor *msg, const char *key,
	      const struct kstats_unit_info *unit, const struct day_cell *atom)
{
	struct day_series *s;
	struct day_cell *c;
	unsigned int i;

	if (atom->day < d->since || atom->day > d->until) {
		d->outside++;
		return;
	}
	s = series_of(d, msg, key, unit);
	c = s ? cell_of(d, s, atom->day) : NULL;
	if (!c) {
		d->over++;
		return;
	}
	add_cell(c, atom);
	for (i = 0; i < DAYS_NB; i++)
		s->events = kstats_add_sat(s->events, atom->b[i]);
	d->first = atom->day < d->first ? atom->day : d->first;
	d->last = atom->day > d->last ? atom->day : d->last;
	d->atoms++;
}

void days_bad(struct days *d, const char *fmt, ...)
{
	va_list ap;
	char *why;

	va_start(ap, fmt);
	if (vasprintf(&why, fmt, ap) < 0)
		why = NULL;
	va_end(ap);
	fprintf(stderr, "%s: skipped %s\n", d->tool, why ?: "(out of memory)");
	d->bad = grow(d->bad, &d->badcap, d->nbad + 1, sizeof(*d->bad));
	d->bad[d->nbad++] = why ?: strdup("(out of memory)");
}

void days_over(struct days *d, const char *path, const char *what, const char *fix)
{
	if (d->over)
		days_bad(d, "%s: %zu %s past the limits of %d keys and %d key-days; not drawn "
			 "(%s)", path, d->over, what, DAYS_MAX_SERIES, DAYS_MAX_CELLS, fix);
	d->over = 0;
}

static void load_file(void *ctx, const char *path)
{
	struct days *d = ctx;
	struct atoms_file f;
	char why[600];

	if (atoms_file_read(path, &f, why, sizeof(why))) {
		days_bad(d, "%s", why);
		return;
	}
	d->files++;
	if (atoms_file_each(&f, add_atom, d, why, sizeof(why)))
		days_bad(d, "%s: %s", path, why);
	days_over(d, path, "atoms", "split the directories or use --since");
	free(f.buf);
}

int days_load(struct days *d, char *const *dirs, int ndirs, char *const *files, int nfiles)
{
	struct dirent **ents[MAX_DIRS];
	int n[MAX_DIRS], i, left, ret = 0;
	char path[4096];

	for (i = 0; i < nfiles; i++)
		load_file(d, files[i]);
	for (i = 0; i < ndirs && !nfiles; i++) {
		n[i] = scandir(dirs[i], &ents[i], kstats_atoms_filter, alphasort);
		if (n[i] < 0) {
			days_bad(d, "%s: cannot read: %s; pass the atoms directory with "
				 "--out-dir", dirs[i], strerror(errno));
			ret = -ENOENT;
		}
		if (!n[i])
			free(ents[i]);
	}
	d->dirs = (size_t)ndirs;
	/* At the limits, older days give way: each host's newest file first, in turn. */
	for (left = 1; left && !nfiles;)
		for (left = 0, i = 0; i < ndirs; i++) {
			if (n[i] <= 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[i], ents[i][--n[i]]->d_name);
			load_file(d, path);
			free(ents[i][n[i]]);
			left |= n[i] > 0;
			if (!n[i])
				free(ents[i]);
		}
	return ret;
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

static size_t cells_of(const struct day_cell *c)
{
	size_t n = 0;
	unsigned int b;

	for (b = 0; b < DAYS_NB; b++)
		n += c->b[b] != 0;
	return n;
}

/* Its non-empty cells, and 100 for the heatmap's axes and labels. */
static size_t cells(const struct day_series *s)
{
	size_t i, n = 100;

	for (i = 0; i < s->ndays; i++)
		n += cells_of(&s->days[i]);
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
	size_t kept, used = 0, i;
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
	/* The sum has cells of its own: room for them too, recounted as it grows. */
	while (kept > 1 && used + cells(other) > share) {
		used -= cells(&s[--kept]);
		fold_into(other, &s[kept]);
		compact(NULL, other);
	}
}

/* The newest days whose cells, and each series' axes, fit max_cells: from d->first on. */
static void cut_days(struct days *d, size_t max_cells)
{
	size_t span = (size_t)(d->last - d->first) + 1, used = 0, i, j, n;
	size_t *per_day = max_cells < SIZE_MAX ? calloc(span, sizeof(*per_day)) : NULL;
	int32_t cut;

	if (!per_day)
		return;
	for (i = 0; i < d->nseries; i++) {
		used += d->series[i].ndays ? 100 : 0;
		for (j = 0; j < d->series[i].ndays; j++) {
			const struct day_cell *c = &d->series[i].days[j];

			per_day[c->day - d->first] += cells_of(c);
		}
	}
	/* The newest day always: its cells are bounded by the folded keys' count. */
	for (cut = d->last + 1; cut > d->first && (cut > d->last ||
	     used + per_day[cut - 1 - d->first] <= max_cells); cut--)
		used += per_day[cut - 1 - d->first];
	free(per_day);
	for (i = 0; i < d->nseries && cut > d->first; i++) {
		struct day_series *s = &d->series[i];

		for (j = 0; j < s->ndays && s->days[j].day < cut; j++)
			;
		n = s->ndays - j;
		if (j)
			memmove(s->days, s->days + j, n * sizeof(*s->days));
		s->ndays = s->sorted = n;
	}
	d->first = cut;
}

void days_finish(struct days *d, size_t max_cells)
{
	size_t i, j, from = 0, n = 0, metrics = 0;

	d->oldest = d->first;
	if (!d->nseries)
		return;
	for (i = 0; i < d->nseries; i++)
		compact(d, &d->series[i]);
	qsort(d->series, d->nseries, sizeof(*d->series), busiest_cmp);
	for (i = 0; i < d->nseries; i++)
		metrics += !i || d->series[i].msg != d->series[i - 1].msg;
	for (i = 1; i <= d->nseries; i++)
		if (i == d->nseries || d->series[i].msg != d->series[from].msg) {
			fold_group(&d->series[from], i - from, max_cells / metrics);
			from = i;
		}
	cut_days(d, max_cells);
	for (i = 0; i < d->nseries; i++)
		if (d->series[i].ndays)
			d->series[n++] = d->series[i];
	d->nseries = n;
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

unsigned int days_level(uint64_t c, uint64_t max, unsigned int levels)
{
	if (!c)
		return 0;
	if (max < 2)
		return levels;
	return 1 + (unsigned int)((levels - 0.001) * log((double)c) / log((double)max));
}

void days_fmt(char *buf, size_t len, int32_t day)
{
	time_t t = (time_t)day * DAY_SECS;
	struct tm tm;

	strftime(buf, len, "%Y-%m-%d", gmtime_r(&t, &tm));
}