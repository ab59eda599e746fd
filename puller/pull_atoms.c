// SPDX-License-Identifier: GPL-2.0
/* kstats pull's atoms: built from the schema alone (field roles and offsets), written, retired. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "kstats_fileio.h"
#include "pull.h"
#include "atoms.h"

const ProtobufCFieldDescriptor *
atom_field_of(const ProtobufCMessageDescriptor *atom, const char *metric)
{
	const ProtobufCFieldDescriptor *f;
	unsigned int i;

	for (i = 0; i < atom->n_fields; i++) {
		f = &atom->fields[i];
		if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
		    (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    !strcmp(((const ProtobufCMessageDescriptor *)f->descriptor)->short_name,
			    metric))
			return f;
	}
	return NULL;
}

int atom_shape_init(struct atom_shape *s, const ProtobufCMessageDescriptor *atom,
		    const char *metric, char *why, size_t len)
{
	const ProtobufCFieldDescriptor *f;
	const char *m, *word;

	memset(s, 0, sizeof(*s));
	s->oneof = atom_field_of(atom, metric);
	if (!s->oneof)
		return -ENOENT;
	s->msg = s->oneof->descriptor;
	m = s->msg->short_name;
	/* protobuf-c sorts fields by number (the keys come in field order) and lists the
	 * integer types first, INT32 to FIXED64. */
	for (f = s->msg->fields; f < s->msg->fields + s->msg->n_fields; f++) {
		word = strstr(f->name, ATOM_BUCKETS_WORD);
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
			return kstats_fail(why, len, EINVAL, "%s.%s: oneof fields are not "
					   "supported", m, f->name);
		/* repeated int32 <what>_log2_buckets_<unit> */
		if (f->label == PROTOBUF_C_LABEL_REPEATED && f->type == PROTOBUF_C_TYPE_INT32 &&
		    !s->buckets) {
			s->buckets = f;
			if (!word || word == f->name)
				return kstats_fail(why, len, EINVAL, "repeated field %s is not "
						   "named <what>" ATOM_BUCKETS_WORD "<unit>",
						   f->name);
			word += strlen(ATOM_BUCKETS_WORD);
			s->unit = kstats_unit_by_atom_word(word);
			if (!s->unit)
				return kstats_fail(why, len, EINVAL, "bucket field %s: unit '%s' "
						   "is not one of btfreader/units.c (micros, "
						   "bytes, count)", f->name, word);
		} else if (f->label != PROTOBUF_C_LABEL_REPEATED &&
			   f->type == PROTOBUF_C_TYPE_STRING && !s->name) {
			s->name = f;
		} else if (f->label != PROTOBUF_C_LABEL_REPEATED &&
			   s->nkeys < PULL_MAX_KEY_COLS && (f->type <= PROTOBUF_C_TYPE_FIXED64 ||
							   f->type == PROTOBUF_C_TYPE_ENUM)) {
			s->keys[s->nkeys++] = f;
		} else {
			return kstats_fail(why, len, EINVAL, "%s.%s fits no role: one repeated "
					   "int32 bucket field, one string name and up to %d "
					   "enum or integer key fields", m, f->name,
					   PULL_MAX_KEY_COLS);
		}
	}
	return s->buckets ? 0 : kstats_fail(why, len, EINVAL, "%s has no bucket field: add "
					    "repeated int32 <what>" ATOM_BUCKETS_WORD "<unit>",
					    s->msg->short_name);
}

static void *member(void *msg, unsigned int offset)
{
	return (char *)msg + offset;
}

int atom_build(struct atom_slot *s, const struct atom_shape *shape,
	       const int64_t *key, size_t nkey, const char *name)
{
	void *msg = calloc(1, shape->msg->sizeof_message);
	const ProtobufCFieldDescriptor *f;
	size_t i;

	if (!msg)
		return -ENOMEM;
	shape->msg->message_init(msg);
	for (i = 0; i < shape->nkeys && i < nkey; i++) {
		f = shape->keys[i];
		/* 32-bit and enums: the key column's low bits */
		if (f->type == PROTOBUF_C_TYPE_INT64 || f->type == PROTOBUF_C_TYPE_SINT64 ||
		    f->type == PROTOBUF_C_TYPE_SFIXED64 || f->type == PROTOBUF_C_TYPE_UINT64 ||
		    f->type == PROTOBUF_C_TYPE_FIXED64)
			*(uint64_t *)member(msg, f->offset) = (uint64_t)key[i];
		else
			*(uint32_t *)member(msg, f->offset) = (uint32_t)key[i];
		if (f->label == PROTOBUF_C_LABEL_OPTIONAL)
			*(protobuf_c_boolean *)member(msg, f->quantifier_offset) = 1;
	}
	if (shape->name && *name) {
		snprintf(s->name, sizeof(s->name), "%s", name);
		*(char **)member(msg, shape->name->offset) = s->name;
	}
	*(size_t *)member(msg, shape->buckets->quantifier_offset) = PULL_NR_BUCKETS;
	*(int32_t **)member(msg, shape->buckets->offset) = s->buckets;
	*(uint32_t *)member(&s->atom, shape->oneof->quantifier_offset) = shape->oneof->id;
	*(ProtobufCMessage **)member(&s->atom, shape->oneof->offset) = msg;
	s->payload = msg;
	return 0;
}

void atom_slot_free(struct atom_slot *s)
{
	if (s)
		free(s->payload);
	free(s);
}

int pull_emit_atom(struct pull_run *r, const struct atom_shape *shape,
		   const struct window *w, const int64_t *key, size_t nkey,
		   const char *name, const int32_t *buckets, unsigned int anomalies)
{
	Kernelstats__Atom **atoms = realloc(r->atoms, (r->natoms + 1) * sizeof(*atoms)), *a;
	static struct utsname u;
	struct atom_slot *s;
	int ret;

	if (!atoms)
		return -ENOMEM;
	r->atoms = atoms;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	a = &s->atom;
	kernelstats__atom__init(a);
	memcpy(s->buckets, buckets, sizeof(s->buckets));
	ret = atom_build(s, shape, key, nkey, name);
	if (ret) {
		atom_slot_free(s);
		return ret;
	}
	a->has_atom_id = a->has_pull_id = a->has_reset = a->has_anomalies = 1;
	a->has_window_start_realtime_ns = a->has_window_end_realtime_ns = 1;
	a->has_window_start_boottime_ns = a->has_window_end_boottime_ns = 1;
	a->atom_id = (int32_t)shape->oneof->id;
	a->pull_id = r->pull_id;
	a->boot_id = r->boot_id;
	a->window_start_realtime_ns = w->start_real;
	a->window_end_realtime_ns = w->end_real;
	a->window_start_boottime_ns = w->start_boot;
	a->window_end_boottime_ns = w->end_boot;
	a->reset = w->reset;
	a->anomalies = anomalies;
	a->has_wall_clock_step_ns = w->clock_step != 0;
	a->wall_clock_step_ns = w->clock_step;
	if (!*u.release)
		uname(&u);
	a->kernel_release = *u.release ? u.release : NULL;
	r->atoms[r->natoms++] = a;
	return 0;
}

/* Like the state: never writable by the group nor readable by others (UMask=0027). */
#define ATOMS_MODE 0640

static int atoms_file_id(const char *name, uint64_t *id)
{
	int n = 0;

	return sscanf(name, "atoms-%" SCNu64 ".pb%n", id, &n) == 1 &&
	       !name[n] && name[6] >= '0' && name[6] <= '9' ? 0 : -EINVAL;
}

int kstats_atoms_filter(const struct dirent *d)
{
	uint64_t id;

	return !atoms_file_id(d->d_name, &id);
}

uint64_t pull_max_atoms_id(const char *out_dir)
{
	DIR *dp = opendir(out_dir);
	struct dirent *d;
	uint64_t id, max = 0;

	while (dp && (d = readdir(dp)))
		if (!atoms_file_id(d->d_name, &id) && id > max)
			max = id;
	if (dp)
		closedir(dp);
	return max;
}

int pull_write_atoms(struct pull_run *r, char *name, size_t len)
{
	Kernelstats__AtomList list = KERNELSTATS__ATOM_LIST__INIT;
	char path[4096];
	uint8_t *buf;
	size_t size;
	int ret;

	list.n_atom = r->natoms;
	list.atom = r->atoms;
	size = kernelstats__atom_list__get_packed_size(&list);
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	kernelstats__atom_list__pack(&list, buf);
	snprintf(name, len, ATOMS_NAME, r->pull_id);
	ret = snprintf(path, sizeof(path), "%s/%s", r->o->out_dir, name) >= (int)sizeof(path) ?
	      -ENAMETOOLONG : kstats_file_create(path, buf, size, ATOMS_MODE);
	free(buf);
	return ret;
}

/* Retention: a file's age is the up time since its first atom's boot-time window end (plus
 * every later boot's up time), never the wall clock or mtime: setting the clock ages nothing,
 * and time powered off does not count (--max-files and --max-bytes still bound the files). */
#define HEAD_BYTES 4096		/* a file's first record: an atom is well under this */

struct retained {
	uint64_t size;
	uint64_t end_boot;
	char boot_id[64];
	bool known;		/* end_boot and boot_id read */
	uint64_t age_ns;
};

static void first_atom(void *ctx, const Kernelstats__Atom *a)
{
	struct retained *f = ctx;

	if (f->known || !a->boot_id || !a->has_window_end_boottime_ns)
		return;
	snprintf(f->boot_id, sizeof(f->boot_id), "%s", a->boot_id);
	f->end_boot = a->window_end_boottime_ns;
	f->known = true;
}

int pull_apply_retention(const struct pull_run *r, uint64_t now_boot)
{
	uint64_t total = 0, removed_bytes = 0, later = 0, ref = now_boot;
	char path[4096], buf[HEAD_BYTES], why[256];
	struct atoms_file head = { .buf = buf };
	const char *boot = r->boot_id;
	struct dirent **ents;
	struct retained *f;
	struct stat st;
	ssize_t got;
	int n, i, fd, removed = 0, ret = 0;

	n = scandir(r->o->out_dir, &ents, kstats_atoms_filter, alphasort);
	if (n < 0)
		return -errno;
	f = calloc(n ? n : 1, sizeof(*f));
	if (!f) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", r->o->out_dir, ents[i]->d_name);
		fd = kstats_open_regular(path, O_RDONLY, 0);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st))
			f[i].size = st.st_size;
		got = pread(fd, buf, sizeof(buf), 0);
		close(fd);
		head.len = got > 0 ? (size_t)got : 0;
		atoms_file_each(&head, first_atom, &f[i], why, sizeof(why));
		total += f[i].size;
	}
	/* Newest first: later is the up time of later boots, ref the newest window end of boot's. */
	for (i = n - 1; i >= 0; i--) {
		if (!f[i].known)
			continue;	/* age unknown: 0, only the count and size limits */
		if (strcmp(f[i].boot_id, boot)) {
			later = later > UINT64_MAX - ref ? UINT64_MAX : later + ref;
			boot = f[i].boot_id;
			ref = f[i].end_boot;
		}
		f[i].age_ns = ref > f[i].end_boot ? ref - f[i].end_boot : 0;
		f[i].age_ns = later > UINT64_MAX - f[i].age_ns ? UINT64_MAX : later + f[i].age_ns;
	}
	/* Oldest first; the newest file is always kept, one of unknown age ages not. */
	for (i = 0; i < n - 1; i++) {
		bool too_many = r->o->max_files && (uint64_t)(n - removed) > r->o->max_files;
		bool too_big = r->o->max_bytes && total > r->o->max_bytes;
		bool too_old = r->o->max_age_s && f[i].age_ns / 1000000000ull > r->o->max_age_s;

		if (!too_many && !too_big && !too_old)
			continue;
		snprintf(path, sizeof(path), "%s/%s", r->o->out_dir, ents[i]->d_name);
		if (unlink(path)) {
			ret = -errno;
			break;
		}
		total -= f[i].size;
		removed_bytes += f[i].size;
		removed++;
	}
	if (removed) {
		fprintf(stderr, "kstats pull: retention removed %d atom file(s), %" PRIu64
			" bytes (--max-age/--max-files/--max-bytes)\n", removed, removed_bytes);
		kstats_fsync_dir(r->o->out_dir);
	}
out:
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	free(f);
	return ret;
}
