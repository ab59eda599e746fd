// SPDX-License-Identifier: GPL-2.0
/*
 * kstats atoms: prints atom files as text.  Generic over the schema: the
 * payload's key fields and bucket array are found through the protobuf-c
 * descriptors, so a new metric needs nothing here.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atom_schema.h"
#include "atoms.h"
#include "bpf_telemetry.h"
#include "kstats.h"
#include "kstats_tool.h"
#include "kstats_fileio.h"
#include "kstats_meta.h"
#include "pull.h"	/* window_clock_step() */

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

static void print_time(uint64_t real_ns)
{
	time_t sec = (time_t)(real_ns / 1000000000ull);
	char buf[32];
	struct tm tm;

	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", gmtime_r(&sec, &tm));
	printf("%s.%03u UTC", buf, (unsigned int)(real_ns / 1000000 % 1000));
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
		kstats_fputs_escaped(*(char *const *)p, out);
		break;
	default:
		fprintf(out, " %s=?", f->name);
	}
}

/* The unit that <what>_log2_buckets_<unit> names (units.c); count if none. */
static unsigned int field_unit(const char *name)
{
	const char *word = strstr(name, ATOM_BUCKETS_WORD);
	const struct kstats_unit_info *u =
		word ? kstats_unit_by_atom_word(word + strlen(ATOM_BUCKETS_WORD)) : NULL;

	return u ? u->id : KSTATS_UNIT_COUNT;
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
					     uint64_t *b, unsigned int *unit)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	const ProtobufCFieldDescriptor *f;
	size_t n, i;

	for (; *from < d->n_fields; ++*from) {
		f = &d->fields[*from];
		if (f->label != PROTOBUF_C_LABEL_REPEATED || f->type != PROTOBUF_C_TYPE_INT32)
			continue;
		n = *(const size_t *)field_ptr(m, f->quantifier_offset);
		memset(b, 0, BPF_TELEMETRY_NR_BUCKETS * sizeof(*b));
		for (i = 0; i < n && i < BPF_TELEMETRY_NR_BUCKETS; i++)
			b[i] = (uint64_t)(*(int32_t *const *)field_ptr(m, f->offset))[i];
		*unit = field_unit(f->name);
		++*from;
		return f;
	}
	return NULL;
}

static void print_payload(const ProtobufCMessage *m)
{
	const ProtobufCFieldDescriptor *f;
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS];
	unsigned int from = 0, unit;
	size_t n;

	if (atom_key_print(stdout, m, " "))
		printf("\n");
	while ((f = atom_buckets(m, &from, b, &unit))) {
		n = *(const size_t *)field_ptr(m, f->quantifier_offset);
		if (n != BPF_TELEMETRY_NR_BUCKETS)
			printf("  %s: %zu buckets, expected %d\n", f->name, n,
			       BPF_TELEMETRY_NR_BUCKETS);
		print_log2_hist(stdout, b, unit);
	}
}

/* Its realtime start and boot-time length, and what went wrong with a clock. */
static void print_window(const Kernelstats__Atom *a)
{
	uint64_t sb = a->window_start_boottime_ns, eb = a->window_end_boottime_ns;
	int64_t step = a->has_wall_clock_step_ns ? a->wall_clock_step_ns :
		       window_clock_step(sb, eb, a->window_start_realtime_ns,
					 a->window_end_realtime_ns);

	print_time(a->window_start_realtime_ns);
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

	(void)ctx;
	printf("\n%s (atom %d) pull %" PRIu64 " boot ",
	       payload ? payload->descriptor->short_name : "unknown payload",
	       a->atom_id, a->pull_id);
	kstats_fputs_escaped(a->boot_id ? a->boot_id : "?", stdout);
	printf("\n  window ");
	print_window(a);
	if (a->reset)
		printf("  reset (counts since the map's creation)");
	if (a->anomalies)
		printf("  anomalies %u", a->anomalies);
	printf("\n");
	if (payload)
		print_payload(payload);
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
 * One record (tag 0x0A, length, Atom) at a time, so that an atom this schema
 * cannot decode (a field whose type changed: see the proto's comments) does
 * not hide the others.  -EBADMSG when the framing itself is broken.  With
 * fn, each record that decodes goes to fn.
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
		atoms_file_free(f);
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

void atoms_file_free(struct atoms_file *f)
{
	free(f->buf);
	f->buf = NULL;
}

static int print_file(const char *path)
{
	struct atoms_file f;
	char why[512];
	int ret = atoms_file_read(path, &f, why, sizeof(why));

	if (!ret) {
		printf("# %s: %zu atoms\n", path, f.count);
		ret = atoms_file_each(&f, print_atom, NULL, why, sizeof(why));
		atoms_file_free(&f);
		if (ret)
			fprintf(stderr, "kstats atoms: %s: %s\n", path, why);
	} else {
		fprintf(stderr, "kstats atoms: %s\n", why);
	}
	return ret;
}

static int print_dir(const char *dir)
{
	struct dirent **ents;
	char path[4096];
	int n, i, failed = 0;

	n = scandir(dir, &ents, kstats_atoms_filter, alphasort);
	if (n < 0) {
		fprintf(stderr, "kstats atoms: cannot read %s: %s; pass --out-dir or a FILE\n",
			dir, strerror(errno));
		return KSTATS_EXIT_USAGE;
	}
	if (!n)
		fprintf(stderr, "kstats atoms: no atoms in %s yet; run kstats pull\n", dir);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		failed |= print_file(path) != 0;
		free(ents[i]);
	}
	free(ents);
	return failed ? KSTATS_EXIT_ERROR : KSTATS_EXIT_OK;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats atoms [--out-dir DIR] [--heatmap] [FILE...]\n"
		"Print atoms written by kstats pull as text: each atom's window, key\n"
		"and histogram.  Without FILE, every atoms-*.pb in the atoms directory,\n"
		"oldest first; FILE '-' reads stdin.\n\n"
		"  --out-dir DIR   atoms directory (default: " KSTATS_DEFAULT_ATOMS_DIR ")\n"
		"  --heatmap       per metric and key, a heatmap of the last days that fit\n"
		"                  80 columns: buckets as rows, UTC days as columns, shaded\n"
		"                  by count (256 colours on a terminal unless NO_COLOR)\n"
		"  -h, --help      this text\n\n"
		"Exit status: 0 ok, 1 a file is unreadable or not atoms, 2 bad usage.\n");
}

int cmd_atoms(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out-dir", required_argument, NULL, 'O' },
		{ "heatmap", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *dir = KSTATS_DEFAULT_ATOMS_DIR;
	bool heatmap = false;
	int c, failed = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'O': dir = optarg; break;
		case 'H': heatmap = true; break;
		case 'h': usage(stdout); return KSTATS_EXIT_OK;
		default: usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (heatmap)
		return heatmap_print(dir, argv + optind, argc - optind);
	if (optind == argc)
		return print_dir(dir);
	for (; optind < argc; optind++)
		failed |= print_file(argv[optind]) != 0;
	return failed ? KSTATS_EXIT_ERROR : KSTATS_EXIT_OK;
}
