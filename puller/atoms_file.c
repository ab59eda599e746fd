// SPDX-License-Identifier: GPL-2.0
/* Atoms files, bounded, read record by record; an atom's payload, key and buckets
 * found through the protobuf-c descriptors. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atoms.h"
#include "kstats_fileio.h"
#include "delta.h"	/* ATOM_BUCKETS_WORD */

/* Bounded memory per input: a file and one record (what decoding it allocates is then
 * bounded too: no repeated message in an Atom).  An atom is under 1 KiB (32 buckets, a
 * key, a name); a pull's file holds at most a few ten thousand. */
#define MAX_FILE_MIB 64
#define MAX_RECORD_KIB 4

void atoms_put_escaped(const char *s, FILE *f)
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

bool atom_key_print(FILE *out, const ProtobufCMessage *m, const char *lead)
{
	const ProtobufCFieldDescriptor *f = m->descriptor->fields;
	const ProtobufCEnumValue *ev;
	bool keyed = false;
	const void *p;

	for (; f < m->descriptor->fields + m->descriptor->n_fields; f++) {
		p = field_ptr(m, f->offset);
		/* Present: a string or message set, an optional's has_ flag, a required. */
		if (f->label == PROTOBUF_C_LABEL_REPEATED ||
		    (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE ?
		     !*(void *const *)p : f->label == PROTOBUF_C_LABEL_OPTIONAL &&
		     !*(const protobuf_c_boolean *)field_ptr(m, f->quantifier_offset)))
			continue;
		fprintf(out, "%s %s=", keyed ? "" : lead, f->name);
		keyed = true;
		switch (f->type) {
		case PROTOBUF_C_TYPE_ENUM:
			ev = protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int *)p);
			if (ev)
				fputs(ev->name, out);
			else
				fprintf(out, "%d", *(const int *)p);
			break;
		case PROTOBUF_C_TYPE_UINT32:
			fprintf(out, "%" PRIu32, *(const uint32_t *)p);
			break;
		case PROTOBUF_C_TYPE_INT32:
			fprintf(out, "%" PRId32, *(const int32_t *)p);
			break;
		case PROTOBUF_C_TYPE_STRING:
			atoms_put_escaped(*(char *const *)p, out);
			break;
		default:
			fputc('?', out);
		}
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

const ProtobufCMessage *atom_payload(const Kernelstats__Atom *a)
{
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field(&kernelstats__atom__descriptor,
							a->payload_case);

	if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE)
		return NULL;
	return *(ProtobufCMessage *const *)field_ptr(&a->base, f->offset);
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

/* Record by record (tag 0x0A, length, Atom), so that one this schema cannot decode (a field's
 * type changed: see the proto) does not hide the others; each that decodes goes to fn (if
 * any).  -EBADMSG when the framing is broken. */
static int each_record(const uint8_t *p, size_t len, atoms_fn fn, void *ctx,
		       size_t *count, size_t *skipped)
{
	const uint8_t *end = p + len;
	Kernelstats__Atom *a;
	uint64_t n;

	for (*count = 0; p < end; ++*count) {
		if (*p++ != 0x0a || !read_varint(&p, end, &n) || n > (uint64_t)(end - p))
			return -EBADMSG;
		if (n > MAX_RECORD_KIB << 10)
			return -E2BIG;
		a = fn ? kernelstats__atom__unpack(NULL, n, p) : NULL;
		if (a)
			fn(ctx, a);
		else if (fn)
			++*skipped;
		kernelstats__atom__free_unpacked(a, NULL);
		p += n;
	}
	return 0;
}

int atoms_file_read(const char *path, struct atoms_file *f, char *why, size_t len)
{
	int fd = strcmp(path, "-") ? kstats_open_regular(path, O_RDONLY, 0) : STDIN_FILENO;
	size_t skipped;
	int ret = fd;

	memset(f, 0, sizeof(*f));
	if (fd >= 0) {
		ret = kstats_read_fd(fd, (size_t)MAX_FILE_MIB << 20, &f->buf, &f->len);
		if (fd != STDIN_FILENO)
			close(fd);
	}
	if (!ret)
		ret = each_record((const uint8_t *)f->buf, f->len, NULL, NULL, &f->count,
				  &skipped);
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
	size_t count, skipped = 0;

	each_record((const uint8_t *)f->buf, f->len, fn, ctx, &count, &skipped);
	if (skipped)
		snprintf(why, len, "%zu atoms do not decode with this schema (older "
			 "field types); protoc --decode=kernelstats.AtomList shows them "
			 "by field number", skipped);
	return skipped ? -EBADMSG : 0;
}

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