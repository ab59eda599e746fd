// SPDX-License-Identifier: GPL-2.0
/* kstats atoms and report: atoms files read, printed, and summed per metric, key and UTC day
 * as heatmaps (terminal, HTML); keys and buckets come from the protobuf-c descriptors. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hist.h"
#include "kstats.h"
#include "kstats_fileio.h"
#include "kstats_meta.h"
#include "proto/kernelstats_atoms.pb-c.h"
#include "pull.h"	/* window_clock_step() */
#include "fleet.h"

/*
 * Bounded memory per input: a file, one record, and what decoding one
 * record may allocate.  An atom is under 1 KiB (32 buckets, a key, a name);
 * a pull's file holds at most a few ten thousand.
 */
#define MAX_FILE_MIB 64
#define MAX_RECORD_KIB 4
#define MAX_DECODE_MIB 16

struct budget {
	size_t used;
	bool exceeded;
};

/* A ProtobufCAllocator that stops at MAX_DECODE_MIB, each block prefixed by its size. */
static void *budget_alloc(void *data, size_t size)
{
	struct budget *b = data;
	max_align_t *p;

	if (size > (size_t)MAX_DECODE_MIB << 20 ||
	    b->used + size > (size_t)MAX_DECODE_MIB << 20) {
		b->exceeded = true;
		return NULL;
	}
	p = malloc(sizeof(*p) + size);
	if (!p)
		return NULL;
	*(size_t *)p = size;
	b->used += size;
	return p + 1;
}

static void budget_free(void *data, void *ptr)
{
	struct budget *b = data;
	max_align_t *p = ptr;

	if (!p)
		return;
	b->used -= *(size_t *)--p;
	free(p);
}

static void fputs_escaped(const char *s, FILE *f)
{
	size_t len = strlen(s), took;
	char buf[256];

	for (; len; s += took, len -= took) {
		took = kstats_escape(buf, sizeof(buf), s, len);
		fputs(buf, f);
	}
}

static const void *field_ptr(const ProtobufCMessage *m, unsigned int offset)
{
	return (const char *)m + offset;
}

static bool field_present(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
	if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE)
		return *(void *const *)field_ptr(m, f->offset) != NULL;
	if (f->label != PROTOBUF_C_LABEL_OPTIONAL)
		return true;
	return *(const protobuf_c_boolean *)field_ptr(m, f->quantifier_offset);
}

static void print_key_field(FILE *out, const ProtobufCMessage *m,
			    const ProtobufCFieldDescriptor *f)
{
	const ProtobufCEnumValue *ev;
	const void *p = field_ptr(m, f->offset);

	switch (f->type) {
	case PROTOBUF_C_TYPE_ENUM:
		ev = protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int *)p);
		if (ev)
			fprintf(out, " %s=%s", f->name, ev->name);
		else
			fprintf(out, " %s=%d", f->name, *(const int *)p);
		break;
	case PROTOBUF_C_TYPE_UINT32:
		fprintf(out, " %s=%" PRIu32, f->name, *(const uint32_t *)p);
		break;
	case PROTOBUF_C_TYPE_INT32:
		fprintf(out, " %s=%" PRId32, f->name, *(const int32_t *)p);
		break;
	case PROTOBUF_C_TYPE_STRING:
		fprintf(out, " %s=", f->name);
		fputs_escaped(*(char *const *)p, out);
		break;
	default:
		fprintf(out, " %s=?", f->name);
	}
}

bool atom_key_print(FILE *out, const ProtobufCMessage *m, const char *lead)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	unsigned int i;
	bool keyed = false;

	for (i = 0; i < d->n_fields; i++) {
		if (d->fields[i].label == PROTOBUF_C_LABEL_REPEATED ||
		    !field_present(m, &d->fields[i]))
			continue;
		fputs(keyed ? "" : lead, out);
		print_key_field(out, m, &d->fields[i]);
		keyed = true;
	}
	return keyed;
}

const ProtobufCFieldDescriptor *atom_buckets(const ProtobufCMessage *m, unsigned int *from,
					     uint64_t *b, const struct kstats_unit_info **unit)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	const ProtobufCFieldDescriptor *f;
	const char *word;
	size_t n, i;

	for (; *from < d->n_fields; ++*from) {
		f = &d->fields[*from];
		if (f->label != PROTOBUF_C_LABEL_REPEATED || f->type != PROTOBUF_C_TYPE_INT32)
			continue;
		n = *(const size_t *)field_ptr(m, f->quantifier_offset);
		memset(b, 0, BPF_TELEMETRY_NR_BUCKETS * sizeof(*b));
		for (i = 0; i < n && i < BPF_TELEMETRY_NR_BUCKETS; i++)
			b[i] = (uint64_t)(*(int32_t *const *)field_ptr(m, f->offset))[i];
		/* The unit <what>_log2_buckets_<unit> names (units.c); count if none. */
		word = strstr(f->name, ATOM_BUCKETS_WORD);
		*unit = word ? kstats_unit_by_atom_word(word + strlen(ATOM_BUCKETS_WORD)) : NULL;
		*unit = *unit ?: kstats_unit(KSTATS_UNIT_COUNT);
		++*from;
		return f;
	}
	return NULL;
}

/* The window: its realtime start, boot-time length, and what went wrong with a clock. */
static void print_window(const Kernelstats__Atom *a)
{
	uint64_t sb = a->window_start_boottime_ns, eb = a->window_end_boottime_ns;
	uint64_t real_ns = a->window_start_realtime_ns;
	int64_t step = a->has_wall_clock_step_ns ? a->wall_clock_step_ns :
		       window_clock_step(sb, eb, real_ns, a->window_end_realtime_ns);
	time_t sec = (time_t)(real_ns / 1000000000ull);
	char buf[32];
	struct tm tm;

	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", gmtime_r(&sec, &tm));
	printf("%s.%03u UTC", buf, (unsigned int)(real_ns / 1000000 % 1000));
	if (eb >= sb)
		printf(" + %.3fs", (eb - sb) / 1e9);
	else
		printf(" + 0s (its boot-time end is %.3fs before its start)", (sb - eb) / 1e9);
	if (step)
		printf("  wall clock set %+.3fs in the window", step / 1e9);
}

const ProtobufCMessage *atom_payload(const Kernelstats__Atom *a)
{
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field(&kernelstats__atom__descriptor,
							a->payload_case);

	if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE)
		return NULL;
	return *(ProtobufCMessage *const *)field_ptr(&a->base, f->offset);
}

static void print_atom(void *ctx, const Kernelstats__Atom *a)
{
	const ProtobufCMessage *payload = atom_payload(a);
	const ProtobufCFieldDescriptor *f;
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS];
	const struct kstats_unit_info *unit;
	unsigned int from = 0;
	size_t n;

	(void)ctx;
	printf("\n%s (atom %d) pull %" PRIu64 " boot ",
	       payload ? payload->descriptor->short_name : "unknown payload",
	       a->atom_id, a->pull_id);
	fputs_escaped(a->boot_id ? a->boot_id : "?", stdout);
	printf("\n  window ");
	print_window(a);
	if (a->reset)
		printf("  reset (counts since the map's creation)");
	if (a->anomalies)
		printf("  anomalies %u", a->anomalies);
	printf("\n");
	if (!payload)
		return;
	if (atom_key_print(stdout, payload, " "))
		printf("\n");
	while ((f = atom_buckets(payload, &from, b, &unit))) {
		n = *(const size_t *)field_ptr(payload, f->quantifier_offset);
		if (n != BPF_TELEMETRY_NR_BUCKETS)
			printf("  %s: %zu buckets, expected %d\n", f->name, n,
			       BPF_TELEMETRY_NR_BUCKETS);
		print_log2_hist(stdout, b, unit);
	}
}

/* A base-128 varint at *p (at most 10 bytes before end); false if malformed. */
static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift;

	for (*v = 0, shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * Record by record (tag 0x0A, length, Atom), so that one this schema cannot
 * decode (a field's type changed: see the proto) does not hide the others; each
 * that decodes goes to fn (if any).  -EBADMSG when the framing is broken.
 */
static int each_record(const uint8_t *p, size_t len, atoms_fn fn, void *ctx,
		       size_t *count, size_t *skipped, size_t *too_big)
{
	const uint8_t *end = p + len;
	struct budget b = {};
	ProtobufCAllocator alloc = { budget_alloc, budget_free, &b };
	Kernelstats__Atom *a;
	uint64_t n;

	for (*count = 0; p < end; ++*count) {
		if (*p++ != 0x0a || !read_varint(&p, end, &n) || n > (uint64_t)(end - p))
			return -EBADMSG;
		if (n > MAX_RECORD_KIB << 10)
			return -E2BIG;
		if (!fn) {
			p += n;
			continue;
		}
		b.exceeded = false;
		a = kernelstats__atom__unpack(&alloc, n, p);
		if (a)
			fn(ctx, a);
		else
			++*(b.exceeded ? too_big : skipped);
		kernelstats__atom__free_unpacked(a, &alloc);
		p += n;
	}
	return 0;
}

/* path ("-": stdin): a regular file within the MAX_* bounds; -errno: "path: why" in why. */
int atoms_file_read(const char *path, struct atoms_file *f, char *why, size_t len)
{
	int fd = strcmp(path, "-") ? kstats_open_regular(path, O_RDONLY, 0) : STDIN_FILENO;
	size_t skipped, too_big;
	int ret = fd;

	memset(f, 0, sizeof(*f));
	if (fd >= 0) {
		ret = kstats_read_fd(fd, (size_t)MAX_FILE_MIB << 20, &f->buf, &f->len);
		if (fd != STDIN_FILENO)
			close(fd);
	}
	if (!ret)
		ret = each_record((const uint8_t *)f->buf, f->len, NULL, NULL, &f->count,
				  &skipped, &too_big);
	if (ret == -EFBIG)
		snprintf(why, len, "%s: over %d MiB, the limit of one atoms file; not an "
			 "atoms file", path, MAX_FILE_MIB);
	else if (ret == -ELOOP || ret == -EINVAL)
		snprintf(why, len, "%s: a symlink or not a regular file; pass the atoms "
			 "file itself, or - to read a pipe", path);
	else if (ret == -E2BIG)
		snprintf(why, len, "%s: a record over %d KiB, the limit of one atom; not "
			 "an atoms file", path, MAX_RECORD_KIB);
	else if (ret == -EBADMSG)
		snprintf(why, len, "%s: not an atoms file (protobuf decode failed)", path);
	else if (ret)
		snprintf(why, len, "%s: %s", path, strerror(-ret));
	if (ret)
		free(f->buf);
	return ret;
}

int atoms_file_each(const struct atoms_file *f, atoms_fn fn, void *ctx, char *why,
		    size_t len)
{
	size_t count, skipped = 0, too_big = 0;

	each_record((const uint8_t *)f->buf, f->len, fn, ctx, &count, &skipped, &too_big);
	if (too_big)
		snprintf(why, len, "%zu atoms need over %d MiB each to decode, the limit "
			 "of one atom; skipped", too_big, MAX_DECODE_MIB);
	else if (skipped)
		snprintf(why, len, "%zu atoms do not decode with this schema (older "
			 "field types); protoc --decode=kernelstats.AtomList shows them "
			 "by field number", skipped);
	return skipped || too_big ? -EBADMSG : 0;
}

static int print_file(const char *path)
{
	struct atoms_file f;
	char why[512];
	int ret = atoms_file_read(path, &f, why, sizeof(why));

	if (!ret) {
		printf("# %s: %zu atoms\n", path, f.count);
		ret = atoms_file_each(&f, print_atom, NULL, why, sizeof(why));
		free(f.buf);
		if (ret)
			fprintf(stderr, "kstats atoms: %s: %s\n", path, why);
	} else {
		fprintf(stderr, "kstats atoms: %s\n", why);
	}
	return ret;
}

/* fn for each atoms file of dir, oldest first: their count, or -1 with errno. */
int atoms_each_path(const char *dir, void (*fn)(void *ctx, const char *path), void *ctx)
{
	struct dirent **ents;
	char path[4096];
	int n, i;

	n = scandir(dir, &ents, kstats_atoms_filter, alphasort);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		fn(ctx, path);
		free(ents[i]);
	}
	free(ents);
	return n;
}

static void print_path(void *failed, const char *path)
{
	*(bool *)failed |= print_file(path) != 0;
}

#define DAYS_NB BPF_TELEMETRY_NR_BUCKETS
#define DAY_SECS 86400
/* Bounded memory (72 MiB of cells) and time, whatever the files hold. */
#define DAYS_MAX_SERIES 4096
#define DAYS_MAX_CELLS (256 * 1024)
#define DAYS_SLOTS (2 * DAYS_MAX_SERIES)

struct day_series {
	const ProtobufCMessageDescriptor *msg;	/* the metric */
	char key[160];				/* "name=value ...", "" for none */
	const struct kstats_unit_info *unit;
	struct day_cell *days;			/* sorted by day once finished */
	size_t ndays, cap, sorted;
	uint64_t events;
	size_t folded;				/* keys summed into it */
};

struct days {
	struct day_series *series;	/* sorted by metric, then key */
	size_t nseries, cap;
	int32_t since, until;		/* days kept; INT32_MIN/MAX: all */
	int32_t first, last;		/* of the atoms kept */
	uint8_t *pulled;		/* [last - first + 1]; NULL: no atoms */
	size_t dirs, files, atoms, ncells, over;
	uint32_t slot[DAYS_SLOTS];	/* series index + 1 by hash of metric, key */
	char **bad;			/* one line per file skipped */
	size_t nbad, badcap;
	const char *tool;		/* "kstats report": names its warnings */
};

static void days_init(struct days *d, const char *tool)
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
	memset(s, 0, sizeof(*s));
	s->msg = msg;
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

void days_add(void *ctx, const ProtobufCMessageDescriptor *msg, const char *key,
	      const struct kstats_unit_info *unit, const struct day_cell *atom)
{
	struct days *d = ctx;
	struct day_series *s;
	struct day_cell *c;
	unsigned int i;

	if (atom->day < d->since || atom->day > d->until)
		return;
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

static void bad(struct days *d, const char *why)
{
	fprintf(stderr, "%s: skipped %s\n", d->tool, why);
	d->bad = grow(d->bad, &d->badcap, d->nbad + 1, sizeof(*d->bad));
	d->bad[d->nbad++] = strdup(why);
}

static void load_file(void *ctx, const char *path)
{
	struct days *d = ctx;
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
	free(f.buf);
}

static void load_rows(struct days *d, const char *path)
{
	char why[600];

	if (rows_read(path, days_add, d, why, sizeof(why)))
		bad(d, why);
	if (d->over) {
		snprintf(why, sizeof(why), "%s: %zu rows past the limits of %d keys and %d "
			 "key-days; not drawn (narrow the query or use --since)", path,
			 d->over, DAYS_MAX_SERIES, DAYS_MAX_CELLS);
		bad(d, why);
	}
}

/* Every atoms file of dir (or files[], when n > 0); -errno: dir unreadable. */
static int days_load(struct days *d, const char *dir, char *const *files, int n)
{
	char why[4096];
	int i;

	d->dirs++;
	for (i = 0; i < n; i++)
		load_file(d, files[i]);
	if (n || atoms_each_path(dir, load_file, d) >= 0)
		return 0;
	snprintf(why, sizeof(why), "%s: cannot read: %s; pass the atoms directory with "
		 "--out-dir", dir, strerror(errno));
	bad(d, why);
	return -ENOENT;
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

/*
 * Sorts, and marks the days some atom ends on.  Per metric, the least busy keys
 * past its share of max_cells non-empty cells are summed into one (folded: how many).
 */
static void days_finish(struct days *d, size_t max_cells)
{
	size_t i, j, from = 0, n = 0, metrics = 0;

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

static void days_free(struct days *d)
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

static void days_fmt(char *buf, size_t len, int32_t day)
{
	time_t t = (time_t)day * DAY_SECS;
	struct tm tm;

	strftime(buf, len, "%Y-%m-%d", gmtime_r(&t, &tm));
}

#define HEAT_LABEL_W 10
#define CELL_W 3
#define SHOWN_DAYS ((80 - HEAT_LABEL_W) / CELL_W)

static const char *const shades[] = { " ", "░", "▒", "▓", "█" };
/* xterm-256 colours near viridis, dark to bright. */
static const unsigned char colours[] = { 54, 60, 24, 30, 36, 71, 149, 226 };

static unsigned int level(uint64_t c, uint64_t max, unsigned int levels)
{
	if (!c)
		return 0;
	if (max < 2)
		return levels;
	return 1 + (unsigned int)((levels - 0.001) * log((double)c) / log((double)max));
}

static void put_cell(uint64_t c, uint64_t max, bool colour)
{
	unsigned int l = level(c, max, colour ? sizeof(colours) : 4);

	if (colour && l)
		printf(" \033[38;5;%um██\033[0m", colours[l - 1]);
	else
		printf(" %s%s", shades[l], shades[l]);
}

static void put_header(int32_t from, int32_t to)
{
	char date[16];
	int32_t day;

	printf("%*s", HEAT_LABEL_W, "");
	for (day = from; day <= to; day++) {
		days_fmt(date, sizeof(date), day);
		if (day == from || (!strcmp(date + 8, "01") && day + 2 <= to)) {
			printf(" %-8.7s", date);
			day += 2;
		} else {
			printf("%*s", CELL_W, "");
		}
	}
	printf("\n%*s", HEAT_LABEL_W, "");
	for (day = from; day <= to; day++) {
		days_fmt(date, sizeof(date), day);
		printf(" %s", date + 8);
	}
	printf("\n");
}

static const struct day_cell *day_of(const struct day_series *s, int32_t day)
{
	size_t i;

	for (i = 0; i < s->ndays; i++)
		if (s->days[i].day == day)
			return &s->days[i];
	return NULL;
}

static void heat_series(const struct days *d, const struct day_series *s, bool colour)
{
	int32_t from = d->last - SHOWN_DAYS + 1 > d->first ? d->last - SHOWN_DAYS + 1 : d->first;
	uint64_t all[DAYS_NB] = {}, max = 0, rows[DAYS_NB] = {};
	struct kstats_hist_stats st;
	char p50[32], p99[32], label[32];
	const struct day_cell *c;
	bool marks = false;
	size_t i;
	int32_t day;
	int b;

	for (i = 0; i < s->ndays; i++)
		for (b = 0; b < DAYS_NB; b++) {
			all[b] += s->days[i].b[b];
			if (s->days[i].day >= from) {
				rows[b] += s->days[i].b[b];
				max = s->days[i].b[b] > max ? s->days[i].b[b] : max;
				marks |= s->days[i].reset || s->days[i].anomalies;
			}
		}
	kstats_hist_stats(all, &st);
	kstats_fmt_value(p50, sizeof(p50), st.p50, s->unit);
	kstats_fmt_value(p99, sizeof(p99), st.p99, s->unit);
	printf("\n%s%s\n%*s%zu days, %" PRIu64 " events, p50 ~%s, p99 ~%s\n",
	       s->msg->short_name, s->key, HEAT_LABEL_W, "", s->ndays, s->events, p50, p99);
	put_header(from, d->last);
	for (b = DAYS_NB - 1; b >= 0; b--) {
		if (!rows[b])
			continue;
		kstats_fmt_value(label, sizeof(label), (double)kstats_bucket_lo(b), s->unit);
		kstats_put_padded(stdout, label, HEAT_LABEL_W - 1, true);
		for (day = from; day <= d->last; day++) {
			c = day_of(s, day);
			if (!d->pulled[day - d->first])
				printf("  ·");
			else
				put_cell(c ? c->b[b] : 0, max, colour);
		}
		printf("\n");
	}
	if (marks) {
		printf("%*s", HEAT_LABEL_W - 1, "reset/!");
		for (day = from; day <= d->last; day++) {
			c = day_of(s, day);
			printf("  %s", !c ? " " : c->reset ? "R" : c->anomalies ? "!" : " ");
		}
		printf("\n");
	}
	printf("%*s1 to %" PRIu64 " events per day and bucket, log scale; · no pull\n",
	       HEAT_LABEL_W, "", max);
}

static int heatmap_print(const char *dir, char *const *files, int n)
{
	const char *nc = getenv("NO_COLOR");
	bool colour = isatty(STDOUT_FILENO) && !(nc && *nc);
	struct days d;
	size_t i, nbad;
	int ret;

	days_init(&d, "kstats atoms");
	ret = days_load(&d, dir, files, n);
	days_finish(&d, SIZE_MAX);
	if (!ret && !d.pulled)
		fprintf(stderr, "kstats atoms: no atoms in %s yet; run kstats pull\n",
			n ? "these files" : dir);
	for (i = 0; !ret && i < d.nseries && d.pulled; i++)
		heat_series(&d, &d.series[i], colour);
	nbad = d.nbad;
	days_free(&d);
	return ret ? KSTATS_EXIT_USAGE : nbad ? KSTATS_EXIT_ERROR : KSTATS_EXIT_OK;
}

/* kstats report: one self-contained HTML page (inline SVG and CSS, no script). */
#define MAX_DIRS 64
#define PAGE_LABEL_W 64
#define ROW_H 12
#define TOP 10
/* ~130 bytes a cell; the busiest keys take a metric's share, the rest are summed:
 * a year of 6 metrics of 30 keys stays under 5 MB (bench/report.sh). */
#define PAGE_CELLS 30000

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
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static int day_x(const struct page *p, int32_t day)
{
	return PAGE_LABEL_W + (day - p->d->first) * p->cw;
}

/* y of value v (base unit): inside its bucket's row, log-interpolated. */
static double value_y(const struct page *p, double v)
{
	int i = v < 2 ? 0 : (int)floor(log2(v));
	unsigned int b = i >= DAYS_NB ? DAYS_NB - 1 : (unsigned int)i;
	double frac = b ? log2(v) - b : v / 2;

	if (frac > 1)
		frac = 1;
	return TOP + (p->rows[b] + 1 - frac) * ROW_H;
}

static void put_quantiles(struct page *p, const struct day_series *s, bool p99)
{
	struct kstats_hist_stats st;
	size_t i;
	int32_t prev = INT32_MIN;

	fprintf(p->f, "<path class=\"%s\" d=\"", p99 ? "q99" : "q50");
	for (i = 0; i < s->ndays; i++) {
		kstats_hist_stats(s->days[i].b, &st);
		if (!st.count)
			continue;
		fprintf(p->f, "%c%d %.1f", s->days[i].day == prev + 1 ? 'L' : 'M',
			day_x(p, s->days[i].day) + p->cw / 2, value_y(p, p99 ? st.p99 : st.p50));
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
				TOP + p->rows[b] * ROW_H, level(c->b[b], max, NCOLOURS) - 1);
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

static void put_head(FILE *f, const struct days *d, int cw)
{
	char first[16] = "", last[16] = "";
	unsigned int i;
	size_t b;

	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
	      "<title>kernelstats report</title>\n<style>\n"
	      "body{font:13px sans-serif;margin:1em 2em;color:#222}\n"
	      "svg.hm{display:block;font:10px sans-serif;margin-bottom:6px}\n"
	      "svg.hm text.yl{text-anchor:end}\n"
	      ".q50{fill:none;stroke:#fff;stroke-width:2}\n"
	      ".q99{fill:none;stroke:#ff3b30;stroke-width:2;stroke-dasharray:4 2}\n"
	      ".gap{fill:#e6e6e6}\n.mark{fill:#d62728}\n"
	      "h3{font-size:12px;margin:8px 0 2px}\n.bad{color:#a00}\n", f);
	for (i = 0; i < NCOLOURS; i++)
		fprintf(f, ".c%u{fill:%s;width:%dpx;height:%dpx}\n", i, viridis[i], cw,
			ROW_H);
	fputs("</style></head><body>\n<h1>kernelstats: latency heatmaps</h1>\n", f);
	if (d->pulled) {
		days_fmt(first, sizeof(first), d->first);
		days_fmt(last, sizeof(last), d->last);
	}
	fprintf(f, "<p>Read %zu host%s (atoms directories), %zu files, %zu atoms%s%s%s%s. "
		"A column is a UTC day (the day of the pull window's end), a row a log2 "
		"bucket; grey: no pull that day; red mark: a reset or anomalies; white "
		"line: p50, dashed red: p99. Hover a cell for its count.</p>\n",
		d->dirs, d->dirs == 1 ? "" : "s", d->files, d->atoms,
		*first ? ", " : "", first, *first ? " to " : "", last);
	if (!d->nbad)
		return;
	fprintf(f, "<div class=bad><p>Skipped %zu:</p><ul>\n", d->nbad);
	for (b = 0; b < d->nbad; b++) {
		fputs("<li>", f);
		html_escaped(f, d->bad[b]);
		fputs("</li>\n", f);
	}
	fputs("</ul></div>\n", f);
}

static void put_page(FILE *f, const struct days *d, char *const *dirs, int ndirs)
{
	struct page p = { .f = f, .d = d, .cw = 8 };
	size_t i, from;
	int n;

	if (d->pulled) {
		n = d->last - d->first + 1;
		p.cw = n > 1100 / 2 ? 2 : n > 1100 / 24 ? 1100 / n : 24;
	}
	put_head(f, d, p.cw);
	if (!d->pulled) {
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

static void report_usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats report [--out-dir DIR]... [--rows FILE] [-o FILE] [--since DATE]\n"
		"                     [--until DATE]\n"
		"Write one self-contained HTML page (inline SVG, no script, opens offline)\n"
		"with a latency heatmap per metric and key: a column per UTC day, a row per\n"
		"log2 bucket, colour by count, p50 and p99 drawn over.  Several --out-dir\n"
		"(one per host) add up.\n\n"
		"  --out-dir DIR   atoms directory, repeatable (default: "
		KSTATS_DEFAULT_ATOMS_DIR ")\n"
		"  --rows FILE     JSON-each-row rows with day, metric, key, buckets (kstats\n"
		"                  atoms --format json-each-row, the fleet query of\n"
		"                  doc/fleet-atoms.md); - reads stdin\n"
		"  -o, --output FILE  write the page there, atomically (default: stdout)\n"
		"  --since DATE    first UTC day shown, YYYY-MM-DD (default: the first atom's)\n"
		"  --until DATE    last UTC day shown, YYYY-MM-DD (default: the last atom's)\n"
		"  -h, --help      this text\n\n"
		"Exit status: 0 page written, 1 page written but a file or directory was\n"
		"skipped (named on stderr and on the page), or the page could not be\n"
		"written, 2 bad usage.\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out-dir", required_argument, NULL, 'O' },
		{ "output", required_argument, NULL, 'o' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "rows", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	char *dirs[MAX_DIRS] = { (char *)KSTATS_DEFAULT_ATOMS_DIR }, *out = NULL, *buf = NULL;
	const char *rows = NULL;
	char msg[512];
	const char *end;
	size_t len = 0;
	int c, i, ndirs = 0, ret;
	struct days d;
	struct tm tm;
	FILE *f;

	days_init(&d, "kstats report");
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'O':
			if (ndirs == MAX_DIRS) {
				fprintf(stderr, "kstats report: at most %d --out-dir; merge "
					"directories first\n", MAX_DIRS);
				return KSTATS_EXIT_USAGE;
			}
			dirs[ndirs++] = optarg;
			break;
		case 'o': out = optarg; break;
		case 'R': rows = optarg; break;
		case 'S':
		case 'U':
			memset(&tm, 0, sizeof(tm));
			end = strptime(optarg, "%Y-%m-%d", &tm);
			if (end && !*end) {
				*(c == 'S' ? &d.since : &d.until) = (int32_t)(timegm(&tm) / DAY_SECS);
				break;
			}
			fprintf(stderr, "kstats report: --%s %s: give a UTC day as YYYY-MM-DD\n",
				c == 'S' ? "since" : "until", optarg);
			return KSTATS_EXIT_USAGE;
		case 'h': report_usage(stdout); return KSTATS_EXIT_OK;
		default: report_usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kstats report: unexpected '%s'; directories go with "
			"--out-dir\n", argv[optind]);
		return KSTATS_EXIT_USAGE;
	}
	ndirs = ndirs ?: !rows;
	for (i = 0; i < ndirs; i++)
		days_load(&d, dirs[i], NULL, 0);
	if (rows)
		load_rows(&d, rows);
	days_finish(&d, PAGE_CELLS);
	f = open_memstream(&buf, &len);
	if (!f) {
		days_free(&d);
		return KSTATS_EXIT_ERROR;
	}
	put_page(f, &d, dirs, ndirs);
	ret = fclose(f) ? -ENOMEM : 0;
	if (!ret && out)
		ret = kstats_file_replace_owned(out, buf, len, 0644, msg, sizeof(msg));
	else if (!ret && fwrite(buf, 1, len, stdout) != len)
		ret = -EIO;
	if (ret)
		fprintf(stderr, "kstats report: %s\n", out ? msg : strerror(-ret));
	free(buf);
	days_free(&d);
	return ret || d.nbad ? KSTATS_EXIT_ERROR : KSTATS_EXIT_OK;
}

static void atoms_usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats atoms [--out-dir DIR] [--heatmap | --format FORMAT] [FILE...]\n"
		"Print atoms written by kstats pull as text: each atom's window, key\n"
		"and histogram.  Without FILE, every atoms-*.pb in the atoms directory,\n"
		"oldest first; FILE '-' reads stdin.\n\n"
		"  --out-dir DIR   atoms directory (default: " KSTATS_DEFAULT_ATOMS_DIR ")\n"
		"  --heatmap       per metric and key, a heatmap of the last days that fit\n"
		"                  80 columns: buckets as rows, UTC days as columns, shaded\n"
		"                  by count (256 colours on a terminal unless NO_COLOR)\n"
		"  --format json-each-row  one JSON object per atom (ClickHouse's\n"
		"                  JSONEachRow: doc/fleet-atoms.md); text is the default\n"
		"  -h, --help      this text\n\n"
		"Exit status: 0 ok, 1 a file is unreadable or not atoms, 2 bad usage.\n");
}

int cmd_atoms(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out-dir", required_argument, NULL, 'O' },
		{ "heatmap", no_argument, NULL, 'H' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *dir = KSTATS_DEFAULT_ATOMS_DIR;
	bool heatmap = false, failed = false, rows = false;
	int c, n;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'O': dir = optarg; break;
		case 'H': heatmap = true; break;
		case 'F':
			rows = !strcmp(optarg, "json-each-row");
			if (rows || !strcmp(optarg, "text"))
				break;
			fprintf(stderr, "kstats atoms: --format %s: use text or json-each-row\n",
				optarg);
			return KSTATS_EXIT_USAGE;
		case 'h': atoms_usage(stdout); return KSTATS_EXIT_OK;
		default: atoms_usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (heatmap)
		return heatmap_print(dir, argv + optind, argc - optind);
	if (rows)
		return rows_print(dir, argv + optind, argc - optind);
	if (optind == argc) {
		n = atoms_each_path(dir, print_path, &failed);
		if (n < 0) {
			fprintf(stderr, "kstats atoms: cannot read %s: %s; pass --out-dir or a FILE\n",
				dir, strerror(errno));
			return KSTATS_EXIT_USAGE;
		}
		if (!n)
			fprintf(stderr, "kstats atoms: no atoms in %s yet; run kstats pull\n", dir);
	}
	for (; optind < argc; optind++)
		failed |= print_file(argv[optind]) != 0;
	return failed ? KSTATS_EXIT_ERROR : KSTATS_EXIT_OK;
}
