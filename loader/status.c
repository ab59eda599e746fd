// SPDX-License-Identifier: GPL-2.0
/*
 * The status file (doc/loader.md has the schema): what every object and
 * program became, and what stays pinned.  The previous one, read by
 * libkstats' typed reader (kstats_status.h), tells this run which pins the
 * loader made and when reused maps were created.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "kstats_fileio.h"
#include "kstats_status.h"
#include "loader.h"

#define STATUS_VERSION 1

/* The previous status, when readable and about this pin dir (ret: the read's). */
static void keep_prev(struct loader_ctx *ctx, struct kstats_status *st, int ret,
		      const char *err)
{
	if (ret && ret != -ENOENT)
		log_msg(LOG_WARNING, "warning: ignoring unreadable status: %s; its pins are "
			"not known to this run", err);
	else if (!ret && strcmp(st->pin_dir, ctx->pin_dir))
		log_msg(LOG_WARNING, "warning: ignoring %s: it is about pin dir %s, not %s",
			ctx->status_path, *st->pin_dir ? st->pin_dir : "(none)", ctx->pin_dir);
	else if (!ret) {
		ctx->prev = st;
		return;
	}
	kstats_status_free(st);
	free(st);
}

/* libkstats' typed reader, the one reader of the status file. */
void status_parse_prev(struct loader_ctx *ctx, const char *buf, size_t len)
{
	struct kstats_status *st = calloc(1, sizeof(*st));
	char err[1024];

	status_free_prev(ctx);
	if (st)
		keep_prev(ctx, st, kstats_status_parse(buf, len, ctx->status_path, st, err,
						       sizeof(err)), err);
}

void status_load_prev(struct loader_ctx *ctx)
{
	struct kstats_status *st = calloc(1, sizeof(*st));
	char err[1024];

	status_free_prev(ctx);
	if (st)
		keep_prev(ctx, st, kstats_status_read(ctx->status_path, st, err, sizeof(err)),
			  err);
}

void status_free_prev(struct loader_ctx *ctx)
{
	if (ctx->prev)
		kstats_status_free(ctx->prev);
	free(ctx->prev);
	ctx->prev = NULL;
}

const struct kstats_status_obj *prev_object(const struct loader_ctx *ctx,
					    const char *name)
{
	return ctx->prev ? kstats_status_obj(ctx->prev, name) : NULL;
}

/* The previous run's record of the very same map (same id), or NULL. */
static const struct kstats_status_map *prev_map(const struct loader_ctx *ctx,
						const char *obj, const char *map,
						__u32 map_id)
{
	const struct kstats_status_map *m = kstats_status_obj_map(prev_object(ctx, obj), map);

	return m && m->map_id == map_id ? m : NULL;
}

/* Creation times carry over only for the very same map. */
void prev_map_created(const struct loader_ctx *ctx, const char *obj, const char *map,
		      __u32 map_id, __u64 *boot_ns, __u64 *real_ns)
{
	const struct kstats_status_map *m = prev_map(ctx, obj, map, map_id);

	*boot_ns = m ? m->created_boot_ns : 0;
	*real_ns = m ? m->created_real_ns : 0;
}

/* The type names the previous run recorded for the very same map. */
int prev_map_types(const struct loader_ctx *ctx, const char *obj, const char *map,
		   __u32 map_id, struct map_types *types)
{
	const struct kstats_status_map *m = prev_map(ctx, obj, map, map_id);

	if (!m || !*m->key_type || !*m->value_type)
		return -ENOENT;
	snprintf(types->key, sizeof(types->key), "%s", m->key_type);
	snprintf(types->value, sizeof(types->value), "%s", m->value_type);
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
	const struct kstats_status_obj *o;
	struct json_object *kept, *copy;
	size_t i, j;

	for (i = 0; ctx->prev && i < ctx->prev->nobjs; i++) {
		o = &ctx->prev->objs[i];
		if (!*o->name || in_results(res, n, o->name))
			continue;
		if (as_they_were) {
			json_object_array_add(objs, json_object_get(o->json));
			continue;
		}
		kept = json_object_new_array();
		for (j = 0; j < o->npins; j++)
			if (pin_of(ctx, o->pins[j], o->name) && !access(o->pins[j], F_OK))
				json_object_array_add(kept, json_object_new_string(o->pins[j]));
		copy = NULL;
		if (!json_object_array_length(kept) ||
		    json_object_deep_copy(o->json, &copy, NULL)) {
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
	put_u64(root, "finished_boottime_ns", kstats_clock_ns(CLOCK_BOOTTIME));
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
	ret = kstats_file_replace(ctx->status_path, text, strlen(text), 0644);
	json_object_put(root);
	return ret;
}
