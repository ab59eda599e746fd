// SPDX-License-Identifier: GPL-2.0
/* One function per struct names its members in file order, for writing and reading. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "kstats_fileio.h"
#include "kstats_tool.h"

/* The loader writes a few KiB; anything past this is not its file. */
#define STATUS_MAX_BYTES (16u << 20)

struct io {
	json_object *j;		/* the JSON object of the struct at hand */
	bool write, free;	/* free: each string and array, nothing read */
	int err;
};

static json_object *member(json_object *o, const char *key, json_type type)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, type) ?
	       v : NULL;
}

/* A file name may be any bytes: one that is not UTF-8 is escaped as the log escapes it. */
static json_object *utf8_string(const char *s)
{
	size_t i, n, len = strlen(s);
	json_object *j;
	char *buf;

	for (i = 0; i < len && (n = kstats_utf8_len(s + i)); i += n)
		;
	if (i >= len || !(buf = malloc(4 * len + 1)))
		return json_object_new_string(i >= len ? s : "");
	kstats_escape(buf, 4 * len + 1, s, len);
	j = json_object_new_string(buf);
	free(buf);
	return j;
}

static void io_str(struct io *io, const char *key, char **v)
{
	json_object *m = io->write ? NULL : member(io->j, key, json_type_string);

	if (io->free)
		free(*v);
	else if (io->write)
		json_object_object_add(io->j, key, utf8_string(*v));
	else if (!(*v = strdup(m ? json_object_get_string(m) : "")))
		io->err = -ENOMEM;
}

#define OUTCOME_NAME(name) #name,
static const char *const outcome_names[] = { KSTATS_OUTCOMES(OUTCOME_NAME) };

const char *kstats_outcome_name(enum kstats_outcome o)
{
	return o < KSTATS_OUTCOME_COUNT ? outcome_names[o] : outcome_names[KSTATS_UNKNOWN];
}

/* Named in the file, a value everywhere else. */
static enum kstats_outcome io_outcome(struct io *io, enum kstats_outcome o)
{
	json_object *m = io->write ? NULL : member(io->j, "outcome", json_type_string);
	int i = m ? KSTATS_OUTCOME_COUNT - 1 : KSTATS_UNKNOWN;

	if (io->write)
		json_object_object_add(io->j, "outcome",
				       json_object_new_string(kstats_outcome_name(o)));
	for (; i > KSTATS_UNKNOWN && strcmp(json_object_get_string(m), outcome_names[i]); i--)
		;
	return io->write ? o : (enum kstats_outcome)i;
}

/* Reads non-negative integers up to max; anything else reads as 0. */
static uint64_t io_uint(struct io *io, const char *key, uint64_t v, uint64_t max)
{
	int64_t n = io->write ? 0 : json_object_get_int64(member(io->j, key, json_type_int));

	if (io->write)
		json_object_object_add(io->j, key, json_object_new_uint64(v));
	return io->write ? v : n > 0 && (uint64_t)n <= max ? (uint64_t)n : 0;
}

static bool io_bool(struct io *io, const char *key, bool v)
{
	if (io->write)
		json_object_object_add(io->j, key, json_object_new_boolean(v));
	return io->write ? v : json_object_get_boolean(member(io->j, key, json_type_boolean));
}

/* n structs of size bytes through fn; reading skips non-objects (without fn, non-strings). */
static void *io_array(struct io *io, const char *key, void *arr, size_t *n, size_t size,
		      void (*fn)(struct io *, void *))
{
	json_object *a = io->write ? json_object_new_array() :
			 member(io->j, key, json_type_array);
	size_t i, len = io->write || io->free ? *n : a ? json_object_array_length(a) : 0;
	struct io sub = { .write = io->write, .free = io->free };
	char *p = arr;

	if (io->write)
		json_object_object_add(io->j, key, a);
	else if (!io->free && !(p = calloc(len + 1, size)))
		io->err = -ENOMEM;
	for (i = 0; p && i < len && !sub.err; i++) {
		if (io->free && !fn) {
			free(((char **)p)[i]);
		} else if (io->free) {
			fn(&sub, p + i * size);
		} else if (io->write && !fn) {
			json_object_array_add(a, utf8_string(((char **)p)[i]));
		} else if (io->write) {
			sub.j = json_object_new_object();
			json_object_array_add(a, sub.j);
			fn(&sub, p + i * size);
		} else {
			sub.j = json_object_array_get_idx(a, i);
			if (fn && json_object_is_type(sub.j, json_type_object))
				fn(&sub, p + (*n)++ * size);
			else if (!fn && json_object_is_type(sub.j, json_type_string) &&
				 !(((char **)p)[(*n)++] = strdup(json_object_get_string(sub.j))))
				sub.err = -ENOMEM;
		}
	}
	io->err = io->err ?: sub.err;
	if (io->free)
		free(p);
	return io->free ? NULL : p;
}

static void prog_io(struct io *io, void *s)
{
	struct kstats_status_prog *p = s;

	p->json = io->j;
	io_str(io, "name", &p->name);
	io_str(io, "section", &p->section);
	io_str(io, "attach", &p->attach);
	io_str(io, "attach_type", &p->attach_type);
	p->outcome = io_outcome(io, p->outcome);
	io_str(io, "reason", &p->reason);
	p->prog_id = io_uint(io, "prog_id", p->prog_id, UINT32_MAX);
	io_str(io, "link_pin", &p->link_pin);
	io_str(io, "prog_pin", &p->prog_pin);
	p->kept = io_bool(io, "kept", p->kept);
}

static void map_io(struct io *io, void *s)
{
	struct kstats_status_map *m = s;

	m->json = io->j;
	io_str(io, "name", &m->name);
	io_str(io, "pin", &m->pin);
	m->map_id = io_uint(io, "map_id", m->map_id, UINT32_MAX);
	m->reused = io_bool(io, "reused", m->reused);
	if (!io->write || m->replaced)
		m->replaced = io_bool(io, "replaced", m->replaced);
	m->created_boot_ns = io_uint(io, "created_boottime_ns", m->created_boot_ns, INT64_MAX);
	m->created_real_ns = io_uint(io, "created_realtime_ns", m->created_real_ns, INT64_MAX);
	if (!io->write || *m->key_type) {
		io_str(io, "key_type", &m->key_type);
		io_str(io, "value_type", &m->value_type);
	}
}

static void obj_io(struct io *io, void *s)
{
	struct kstats_status_obj *o = s;

	o->json = io->j;
	io_str(io, "name", &o->name);
	io_str(io, "path", &o->path);
	if (!io->write || *o->copy)
		io_str(io, "copy", &o->copy);
	o->outcome = io_outcome(io, o->outcome);
	io_str(io, "reason", &o->reason);
	o->critical = io_bool(io, "critical", o->critical);
	o->progs = io_array(io, "programs", o->progs, &o->nprogs, sizeof(*o->progs), prog_io);
	o->maps = io_array(io, "maps", o->maps, &o->nmaps, sizeof(*o->maps), map_io);
	o->pins = io_array(io, "pins", o->pins, &o->npins, sizeof(*o->pins), NULL);
}

static int status_io(struct io *io, struct kstats_status *st)
{
	st->json = io->j;
	io_uint(io, "version", KSTATS_STATUS_VERSION, 0);
	io_str(io, "kernel_release", &st->kernel_release);
	st->kernel_version = io_uint(io, "kernel_version", st->kernel_version, UINT32_MAX);
	io_str(io, "boot_id", &st->boot_id);
	st->started_boot_ns = io_uint(io, "started_boottime_ns", st->started_boot_ns,
				      INT64_MAX);
	st->finished_boot_ns = io_uint(io, "finished_boottime_ns", st->finished_boot_ns,
				       INT64_MAX);
	io_str(io, "obj_dir", &st->obj_dir);
	io_str(io, "pin_dir", &st->pin_dir);
	if (!io->write || *st->error)
		io_str(io, "error", &st->error);
	st->objs = io_array(io, "objects", st->objs, &st->nobjs, sizeof(*st->objs), obj_io);
	return io->err;
}

struct json_object *kstats_status_json(struct kstats_status *st)
{
	struct io io = { .j = json_object_new_object(), .write = true };

	if (io.j)
		status_io(&io, st);
	return io.j;
}

int kstats_status_parse(const char *buf, size_t len, const char *name,
			struct kstats_status *st, char *err, size_t errlen)
{
	enum json_tokener_error jerr;
	struct json_tokener *tok = json_tokener_new();
	struct io io = {};
	int64_t version;
	int ret;

	memset(st, 0, sizeof(*st));
	if (!tok)
		return -ENOMEM;
	io.j = len <= INT32_MAX ? json_tokener_parse_ex(tok, buf, (int)len) : NULL;
	jerr = json_tokener_get_error(tok);
	json_tokener_free(tok);
	st->json = io.j;
	version = json_object_get_int64(member(io.j, "version", json_type_int));
	if (!io.j || jerr != json_tokener_success || !json_object_is_type(io.j, json_type_object))
		ret = kstats_fail(err, errlen, EINVAL, "%s is not a loader status file: %s; "
				  KSTATS_FIX_LOAD " to rewrite it", name,
				  jerr == json_tokener_continue ? "truncated" : io.j &&
				  jerr == json_tokener_success ? "not a JSON object" :
				  json_tokener_error_desc(jerr));
	else if (version != KSTATS_STATUS_VERSION || !member(io.j, "objects", json_type_array))
		ret = kstats_fail(err, errlen, EINVAL, "%s: status version %lld, this kstats "
				  "reads version %d with an objects array; " KSTATS_FIX_LOAD
				  " from the same release", name, (long long)version,
				  KSTATS_STATUS_VERSION);
	else if ((ret = status_io(&io, st)))
		snprintf(err, errlen, "%s: %s", name, strerror(-ret));
	if (ret)
		kstats_status_free(st);
	return ret;
}

int kstats_status_read(const char *path, struct kstats_status *st,
		       char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len;
	int ret;

	memset(st, 0, sizeof(*st));
	ret = kstats_read_file(path, STATUS_MAX_BYTES, &buf, &len);
	if (ret == -ENOENT)
		snprintf(err, errlen, "no loader status at %s; " KSTATS_FIX_LOAD
			 " (or pass --status-file)", path);
	else if (ret == -ELOOP || ret == -EINVAL)
		snprintf(err, errlen, "%s is a symlink or not a regular file; " KSTATS_FIX_LOAD
			 " to rewrite it", path);
	else if (ret)
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-ret));
	else
		ret = kstats_status_parse(buf, len, path, st, err, errlen);
	if (ret == -ELOOP)
		ret = -EINVAL;
	free(buf);
	return ret;
}

void kstats_status_obj_free(struct kstats_status_obj *o)
{
	struct io io = { .free = true };

	obj_io(&io, o);
	memset(o, 0, sizeof(*o));
}

void kstats_status_free(struct kstats_status *st)
{
	struct io io = { .free = true };

	json_object_put(st->json);
	status_io(&io, st);
	memset(st, 0, sizeof(*st));
}

const struct kstats_status_obj *kstats_status_obj(const struct kstats_status *st,
						  const char *name)
{
	size_t i;

	for (i = 0; st && i < st->nobjs; i++)
		if (!strcmp(st->objs[i].name, name))
			return &st->objs[i];
	return NULL;
}

const struct kstats_status_map *kstats_status_obj_map(const struct kstats_status_obj *o,
						     const char *name)
{
	size_t i;

	for (i = 0; o && i < o->nmaps; i++)
		if (!strcmp(o->maps[i].name, name))
			return &o->maps[i];
	return NULL;
}

const struct kstats_status_map *kstats_status_map_by_id(const struct kstats_status *st,
							uint32_t map_id)
{
	size_t i, j;

	for (i = 0; map_id && i < st->nobjs; i++)
		for (j = 0; j < st->objs[i].nmaps; j++)
			if (st->objs[i].maps[j].map_id == map_id)
				return &st->objs[i].maps[j];
	return NULL;
}
