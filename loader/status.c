// SPDX-License-Identifier: GPL-2.0
/*
 * The status file (doc/loader.md has the schema): what every object and
 * program became, and what stays pinned.  The previous one tells this run
 * which pins it owns and when reused maps were created.
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "kstats_fileio.h"
#include "kstats_status.h"
#include "loader.h"

#define STATUS_VERSION 1

__u64 clock_ns(int clockid)
{
	struct timespec ts;

	clock_gettime(clockid, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Temp file, fsync, rename, fsync the directory: all or nothing on disk. */
int write_file_atomic(const char *path, const char *data, size_t len)
{
	return kstats_file_replace(path, data, len, 0644);
}

/* Far more than any status file the loader writes. */
#define STATUS_MAX_BYTES (16u << 20)

/* The previous status (libkstats' typed reader), when it is about this pin dir. */
void status_parse_prev(struct loader_ctx *ctx, const char *buf, size_t len)
{
	struct kstats_status st;
	char err[1024];

	if (kstats_status_parse(buf, len, ctx->status_path, &st, err, sizeof(err))) {
		log_msg(LOG_WARNING, "warning: ignoring unreadable status: %s; its pins are "
			"not known to this run", err);
		return;
	}
	if (strcmp(st.pin_dir, ctx->pin_dir))
		log_msg(LOG_WARNING, "warning: ignoring %s: it is about pin dir %s, not %s",
			ctx->status_path, *st.pin_dir ? st.pin_dir : "(none)", ctx->pin_dir);
	else
		ctx->prev = json_object_get(st.json);
	kstats_status_free(&st);
}

/* Read like any file others could have placed: regular, bounded, no links. */
void status_load_prev(struct loader_ctx *ctx)
{
	int fd = open(ctx->status_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	size_t len;
	char *buf;

	if (fd < 0 && errno == ENOENT)
		return;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    kstats_read_fd(fd, STATUS_MAX_BYTES, &buf, &len)) {
		log_msg(LOG_WARNING, "warning: ignoring %s: not a readable regular file "
			"(%s); its pins are not known to this run", ctx->status_path,
			fd < 0 ? strerror(errno) : "wrong type or size");
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	status_parse_prev(ctx, buf, len);
	free(buf);
}

static struct json_object *find_named(struct json_object *arr, const char *name)
{
	struct json_object *e, *n;
	size_t i, len;

	if (!arr || !json_object_is_type(arr, json_type_array))
		return NULL;
	len = json_object_array_length(arr);
	for (i = 0; i < len; i++) {
		e = json_object_array_get_idx(arr, i);
		if (json_object_object_get_ex(e, "name", &n) &&
		    json_object_is_type(n, json_type_string) &&
		    !strcmp(json_object_get_string(n), name))
			return e;
	}
	return NULL;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* o[key] when it is an array, else NULL: a corrupt file must not abort us. */
struct json_object *status_array(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

struct json_object *prev_object(const struct loader_ctx *ctx, const char *name)
{
	return find_named(status_array(ctx->prev, "objects"), name);
}

/* Creation times carry over only for the very same map (same id). */
void prev_map_created(const struct loader_ctx *ctx, const char *obj, const char *map,
		      __u32 map_id, __u64 *boot_ns, __u64 *real_ns)
{
	struct json_object *m = find_named(status_array(prev_object(ctx, obj), "maps"), map);
	bool same = m && json_object_get_uint64(get(m, "map_id")) == map_id;

	*boot_ns = same ? json_object_get_uint64(get(m, "created_boottime_ns")) : 0;
	*real_ns = same ? json_object_get_uint64(get(m, "created_realtime_ns")) : 0;
}

/* The type names the previous run recorded for the very same map. */
int prev_map_types(const struct loader_ctx *ctx, const char *obj, const char *map,
		   __u32 map_id, struct map_types *types)
{
	struct json_object *m = find_named(status_array(prev_object(ctx, obj), "maps"), map);
	const char *key = json_object_get_string(get(m, "key_type"));
	const char *value = json_object_get_string(get(m, "value_type"));

	if (!m || json_object_get_uint64(get(m, "map_id")) != map_id || !key || !value)
		return -ENOENT;
	snprintf(types->key, sizeof(types->key), "%s", key);
	snprintf(types->value, sizeof(types->value), "%s", value);
	return 0;
}

static void put_str(struct json_object *o, const char *key, const char *val)
{
	json_object_object_add(o, key, json_object_new_string(val));
}

static void put_u64(struct json_object *o, const char *key, __u64 val)
{
	json_object_object_add(o, key, json_object_new_uint64(val));
}

static struct json_object *prog_json(const struct prog_result *p)
{
	struct json_object *o = json_object_new_object();

	put_str(o, "name", p->name);
	put_str(o, "section", p->section);
	put_str(o, "attach", p->attach);
	put_str(o, "attach_type", p->attach_type ? p->attach_type : "other");
	put_str(o, "outcome", outcome_str(p->outcome));
	put_str(o, "reason", p->reason);
	put_u64(o, "prog_id", p->prog_id);
	put_str(o, "link_pin", p->link_pin);
	put_str(o, "prog_pin", p->prog_pin);
	json_object_object_add(o, "kept", json_object_new_boolean(p->kept));
	return o;
}

static struct json_object *map_json(const struct map_result *m)
{
	struct json_object *o = json_object_new_object();

	put_str(o, "name", m->name);
	put_str(o, "pin", m->pin);
	put_u64(o, "map_id", m->map_id);
	json_object_object_add(o, "reused", json_object_new_boolean(m->reused));
	put_u64(o, "created_boottime_ns", m->created_boottime_ns);
	put_u64(o, "created_realtime_ns", m->created_realtime_ns);
	if (*m->types.key) {
		put_str(o, "key_type", m->types.key);
		put_str(o, "value_type", m->types.value);
	}
	return o;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct json_object *obj_json(const struct obj_result *r)
{
	struct json_object *o = json_object_new_object(), *arr;
	char **pins = calloc(r->npins + 1, sizeof(*pins));
	size_t i;

	put_str(o, "name", r->name);
	put_str(o, "path", r->path);
	put_str(o, "outcome", outcome_str(r->outcome));
	put_str(o, "reason", r->reason);
	json_object_object_add(o, "critical", json_object_new_boolean(r->critical));
	arr = json_object_new_array();
	for (i = 0; i < r->nprogs; i++)
		json_object_array_add(arr, prog_json(&r->progs[i]));
	json_object_object_add(o, "programs", arr);
	arr = json_object_new_array();
	for (i = 0; i < r->nmaps; i++)
		json_object_array_add(arr, map_json(&r->maps[i]));
	json_object_object_add(o, "maps", arr);
	arr = json_object_new_array();
	if (pins && r->npins) {
		memcpy(pins, r->pins, r->npins * sizeof(*pins));
		qsort(pins, r->npins, sizeof(*pins), cmp_str);
		for (i = 0; i < r->npins; i++)
			json_object_array_add(arr, json_object_new_string(pins[i]));
	}
	free(pins);
	json_object_object_add(o, "pins", arr);
	return o;
}

static bool in_results(const struct obj_result *res, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(res[i].name, name))
			return true;
	return false;
}

/*
 * Previous objects this run did not process: after an environment error,
 * as they were; an object gone from the object directory keeps its pins
 * until --unload.
 */
static void carry_prev(const struct loader_ctx *ctx, const struct obj_result *res,
		       size_t n, bool as_they_were, struct json_object *objs)
{
	struct json_object *prev = status_array(ctx->prev, "objects"), *o, *pins, *kept, *copy;
	const char *name, *pin;
	size_t i, j;

	for (i = 0; prev && i < json_object_array_length(prev); i++) {
		o = json_object_array_get_idx(prev, i);
		name = json_object_get_string(get(o, "name"));
		pins = status_array(o, "pins");
		if (!name || in_results(res, n, name) || !pins)
			continue;
		if (as_they_were) {
			json_object_array_add(objs, json_object_get(o));
			continue;
		}
		kept = json_object_new_array();
		for (j = 0; j < json_object_array_length(pins); j++) {
			pin = json_object_get_string(json_object_array_get_idx(pins, j));
			if (in_pin_dir(ctx, pin) && !access(pin, F_OK))
				json_object_array_add(kept, json_object_new_string(pin));
		}
		if (!json_object_array_length(kept)) {
			json_object_put(kept);
			continue;
		}
		copy = NULL;
		if (json_object_deep_copy(o, &copy, NULL)) {
			json_object_put(kept);
			continue;
		}
		json_object_object_add(copy, "pins", kept);
		put_str(copy, "outcome", "ABSENT");
		put_str(copy, "reason", "no longer in the object directory; its pins "
			"stay until kstats-loader --unload");
		json_object_array_add(objs, copy);
	}
}

int status_write(const struct loader_ctx *ctx, const struct obj_result *res,
		 size_t n, __u64 started_ns, const char *error)
{
	struct json_object *root = json_object_new_object(), *objs;
	char boot_id[64];
	const char *text;
	size_t i;
	int ret;

	kstats_boot_id(boot_id, sizeof(boot_id));
	json_object_object_add(root, "version", json_object_new_int(STATUS_VERSION));
	put_str(root, "kernel_release", ctx->release);
	put_u64(root, "kernel_version", ctx->kver);
	put_str(root, "boot_id", boot_id);
	put_u64(root, "started_boottime_ns", started_ns);
	put_u64(root, "finished_boottime_ns", clock_ns(CLOCK_BOOTTIME));
	put_str(root, "obj_dir", ctx->obj_dir);
	put_str(root, "pin_dir", ctx->pin_dir);
	if (error)
		put_str(root, "error", error);
	objs = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(objs, obj_json(&res[i]));
	carry_prev(ctx, res, n, error, objs);
	json_object_object_add(root, "objects", objs);
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	ret = write_file_atomic(ctx->status_path, text, strlen(text));
	json_object_put(root);
	return ret;
}
