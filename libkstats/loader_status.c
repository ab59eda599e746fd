// SPDX-License-Identifier: GPL-2.0
/* The typed reader of the loader status file (contract in kstats_status.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "kstats_fileio.h"
#include "kstats_tool.h"
#include "kstats_status.h"

/* The loader writes a few KiB; anything past this is not its file. */
#define STATUS_MAX_BYTES (16u << 20)

static json_object *member(json_object *o, const char *key, json_type type)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, type) ?
	       v : NULL;
}

static const char *str(json_object *o, const char *key)
{
	json_object *v = member(o, key, json_type_string);

	return v ? json_object_get_string(v) : "";
}

/* Non-negative integers only; anything else reads as 0. */
static uint64_t unsigned_int(json_object *o, const char *key, uint64_t max)
{
	json_object *v = member(o, key, json_type_int);
	int64_t n = v ? json_object_get_int64(v) : 0;

	return n > 0 && (uint64_t)n <= max ? (uint64_t)n : 0;
}

static bool boolean(json_object *o, const char *key)
{
	json_object *v = member(o, key, json_type_boolean);

	return v && json_object_get_boolean(v);
}

/* The JSON objects of array key of o, counted; non-objects are skipped. */
static size_t objects_of(json_object *o, const char *key, json_object **arr)
{
	size_t i, n = 0;

	*arr = member(o, key, json_type_array);
	for (i = 0; *arr && i < json_object_array_length(*arr); i++)
		n += json_object_is_type(json_object_array_get_idx(*arr, i), json_type_object);
	return n;
}

#define FOR_EACH_OBJECT(arr, i, e)						\
	for (i = 0; arr && i < json_object_array_length(arr); i++)		\
		if ((e = json_object_array_get_idx(arr, i)) &&			\
		    json_object_is_type(e, json_type_object))

static void read_prog(json_object *j, struct kstats_status_prog *p)
{
	p->json = j;
	p->name = str(j, "name");
	p->section = str(j, "section");
	p->attach = str(j, "attach");
	p->attach_type = str(j, "attach_type");
	p->outcome = str(j, "outcome");
	p->reason = str(j, "reason");
	p->prog_pin = str(j, "prog_pin");
	p->link_pin = str(j, "link_pin");
	p->prog_id = (uint32_t)unsigned_int(j, "prog_id", UINT32_MAX);
}

static void read_map(json_object *j, struct kstats_status_map *m)
{
	m->json = j;
	m->name = str(j, "name");
	m->pin = str(j, "pin");
	m->map_id = (uint32_t)unsigned_int(j, "map_id", UINT32_MAX);
	m->reused = boolean(j, "reused");
	m->created_boot_ns = unsigned_int(j, "created_boottime_ns", INT64_MAX);
	m->created_real_ns = unsigned_int(j, "created_realtime_ns", INT64_MAX);
	m->key_type = str(j, "key_type");
	m->value_type = str(j, "value_type");
}

/* The strings of array key of o; other members are skipped. */
static int read_strings(json_object *o, const char *key, const char ***out, size_t *n)
{
	json_object *arr = member(o, key, json_type_array), *e;
	size_t i, len = arr ? json_object_array_length(arr) : 0;

	*out = calloc(len + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < len; i++)
		if ((e = json_object_array_get_idx(arr, i)) &&
		    json_object_is_type(e, json_type_string))
			(*out)[(*n)++] = json_object_get_string(e);
	return 0;
}

static int read_obj(json_object *j, struct kstats_status_obj *o)
{
	json_object *progs, *maps, *e;
	size_t i;

	o->json = j;
	o->name = str(j, "name");
	o->path = str(j, "path");
	o->outcome = str(j, "outcome");
	o->reason = str(j, "reason");
	o->critical = boolean(j, "critical");
	o->progs = calloc(objects_of(j, "programs", &progs) + 1, sizeof(*o->progs));
	o->maps = calloc(objects_of(j, "maps", &maps) + 1, sizeof(*o->maps));
	if (!o->progs || !o->maps)
		return -ENOMEM;
	FOR_EACH_OBJECT(progs, i, e)
		read_prog(e, &o->progs[o->nprogs++]);
	FOR_EACH_OBJECT(maps, i, e)
		read_map(e, &o->maps[o->nmaps++]);
	return read_strings(j, "pins", &o->pins, &o->npins);
}

static int read_root(struct kstats_status *st)
{
	json_object *objs, *e;
	size_t i;
	int ret = 0;

	st->kernel_release = str(st->json, "kernel_release");
	st->boot_id = str(st->json, "boot_id");
	st->pin_dir = str(st->json, "pin_dir");
	st->objs = calloc(objects_of(st->json, "objects", &objs) + 1, sizeof(*st->objs));
	if (!st->objs)
		return -ENOMEM;
	FOR_EACH_OBJECT(objs, i, e) {
		ret = read_obj(e, &st->objs[st->nobjs++]);
		if (ret)
			break;
	}
	return ret;
}

int kstats_status_parse(const char *buf, size_t len, const char *name,
			struct kstats_status *st, char *err, size_t errlen)
{
	enum json_tokener_error jerr = json_tokener_success;
	struct json_tokener *tok = json_tokener_new();
	int64_t version;
	int ret;

	memset(st, 0, sizeof(*st));
	if (!tok)
		return -ENOMEM;
	st->json = len <= INT32_MAX ? json_tokener_parse_ex(tok, buf, (int)len) : NULL;
	jerr = json_tokener_get_error(tok);
	json_tokener_free(tok);
	if (!st->json || jerr != json_tokener_success ||
	    !json_object_is_type(st->json, json_type_object)) {
		snprintf(err, errlen, "%s is not a loader status file: %s; " KSTATS_FIX_LOAD
			 " to rewrite it", name, jerr == json_tokener_continue ? "truncated" :
			 st->json && jerr == json_tokener_success ? "not a JSON object" :
			 json_tokener_error_desc(jerr));
		kstats_status_free(st);
		return -EINVAL;
	}
	version = member(st->json, "version", json_type_int) ?
		  json_object_get_int64(member(st->json, "version", json_type_int)) : 0;
	if (version != KSTATS_STATUS_VERSION || !member(st->json, "objects", json_type_array)) {
		snprintf(err, errlen, "%s: status version %lld, this kstats reads version %d "
			 "with an objects array; " KSTATS_FIX_LOAD " from the same release", name,
			 (long long)version, KSTATS_STATUS_VERSION);
		kstats_status_free(st);
		return -EINVAL;
	}
	ret = read_root(st);
	if (ret) {
		snprintf(err, errlen, "%s: %s", name, strerror(-ret));
		kstats_status_free(st);
	}
	return ret;
}

int kstats_status_read(const char *path, struct kstats_status *st,
		       char *err, size_t errlen)
{
	int fd = kstats_open_regular(path, O_RDONLY, 0), ret;
	char *buf = NULL;
	size_t len;

	memset(st, 0, sizeof(*st));
	if (fd == -ENOENT)
		snprintf(err, errlen, "no loader status at %s; " KSTATS_FIX_LOAD
			 " (or pass --status-file)", path);
	else if (fd == -ELOOP || fd == -EINVAL)
		snprintf(err, errlen, "%s is a symlink or not a regular file; " KSTATS_FIX_LOAD
			 " to rewrite it", path);
	else if (fd < 0)
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-fd));
	if (fd < 0)
		return fd == -ELOOP ? -EINVAL : fd;
	ret = kstats_read_fd(fd, STATUS_MAX_BYTES, &buf, &len);
	close(fd);
	if (ret)
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-ret));
	else
		ret = kstats_status_parse(buf, len, path, st, err, errlen);
	free(buf);
	return ret;
}

void kstats_status_free(struct kstats_status *st)
{
	size_t i;

	for (i = 0; st->objs && i < st->nobjs; i++) {
		free(st->objs[i].progs);
		free(st->objs[i].maps);
		free(st->objs[i].pins);
	}
	free(st->objs);
	json_object_put(st->json);
	memset(st, 0, sizeof(*st));
}

const struct kstats_status_obj *kstats_status_obj(const struct kstats_status *st,
						  const char *name)
{
	size_t i;

	for (i = 0; i < st->nobjs; i++)
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

bool kstats_status_failed(const struct kstats_status_obj *o)
{
	return !strncmp(o->outcome, "FAILED", 6);
}
