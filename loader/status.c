// SPDX-License-Identifier: GPL-2.0
/* The status file (kstats_status.h); the previous one tells this run its pins. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "kstats_fileio.h"
#include "kstats_status.h"
#include "loader.h"

/* The previous status (from buf, the fuzzer's, else the file) if about this pin dir. */
void status_parse_prev(struct loader_ctx *ctx, const char *buf, size_t len)
{
	struct kstats_status *st = calloc(1, sizeof(*st));
	char err[1024];
	int ret;

	status_free_prev(ctx);
	if (!st)
		return;
	ret = buf ? kstats_status_parse(buf, len, ctx->status_path, st, err, sizeof(err)) :
	      kstats_status_read(ctx->status_path, st, err, sizeof(err));
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

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Its strings stay the result's. */
static int to_status(const struct obj_result *r, struct kstats_status_obj *o)
{
	size_t i;

	*o = (struct kstats_status_obj){
		.name = r->name, .path = r->path, .outcome = outcome_str(r->outcome),
		.reason = r->reason, .critical = r->critical,
		.progs = calloc(r->nprogs + 1, sizeof(*o->progs)), .nprogs = r->nprogs,
		.maps = calloc(r->nmaps + 1, sizeof(*o->maps)), .nmaps = r->nmaps,
		.pins = calloc(r->npins + 1, sizeof(*o->pins)), .npins = r->npins };
	if (!o->progs || !o->maps || !o->pins)
		return -ENOMEM;
	for (i = 0; i < r->nprogs; i++) {
		const struct prog_result *p = &r->progs[i];

		o->progs[i] = (struct kstats_status_prog){
			.name = p->name, .section = p->section, .attach = p->attach,
			.attach_type = p->attach_type ? p->attach_type : "other",
			.outcome = outcome_str(p->outcome), .reason = p->reason,
			.prog_id = p->prog_id, .link_pin = p->link_pin,
			.prog_pin = p->prog_pin, .kept = p->kept };
	}
	for (i = 0; i < r->nmaps; i++) {
		const struct map_result *m = &r->maps[i];

		o->maps[i] = (struct kstats_status_map){
			.name = m->name, .pin = m->pin, .map_id = m->map_id,
			.reused = m->reused, .created_boot_ns = m->created_boottime_ns,
			.created_real_ns = m->created_realtime_ns,
			.key_type = m->types.key, .value_type = m->types.value };
	}
	for (i = 0; i < r->npins; i++)
		o->pins[i] = r->pins[i];
	qsort(o->pins, r->npins, sizeof(*o->pins), cmp_str);
	return 0;
}

/*
 * Previous objects this run did not process: after an environment error, as they
 * were; one gone from the object directory keeps its pins until --unload.
 */
static void carry_prev(const struct loader_ctx *ctx, const struct obj_result *res,
		       size_t n, bool as_they_were, struct json_object *objs)
{
	const struct kstats_status_obj *o;
	struct json_object *kept, *copy;
	size_t i, j;

	for (i = 0; ctx->prev && i < ctx->prev->nobjs; i++) {
		o = &ctx->prev->objs[i];
		for (j = 0; j < n && strcmp(res[j].name, o->name); j++)
			;
		if (!*o->name || j < n)
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
		json_object_object_add(copy, "outcome", json_object_new_string("ABSENT"));
		json_object_object_add(copy, "reason", json_object_new_string(
			"no longer in the object directory; its pins stay until "
			"kstats-loader --unload"));
		json_object_array_add(objs, copy);
	}
}

int status_write(const struct loader_ctx *ctx, const struct obj_result *res,
		 size_t n, __u64 started_ns, const char *error)
{
	char boot_id[64];
	struct kstats_status st = {
		.kernel_release = ctx->release, .kernel_version = ctx->kver,
		.boot_id = boot_id, .started_boot_ns = started_ns,
		.finished_boot_ns = kstats_clock_ns(CLOCK_BOOTTIME),
		.obj_dir = ctx->obj_dir, .pin_dir = ctx->pin_dir, .error = error ? error : "",
		.objs = calloc(n + 1, sizeof(*st.objs)), .nobjs = n };
	struct json_object *root = NULL, *objs;
	const char *text;
	size_t i;
	int ret = st.objs ? 0 : -ENOMEM;

	kstats_boot_id(boot_id, sizeof(boot_id));
	for (i = 0; !ret && i < n; i++)
		ret = to_status(&res[i], &st.objs[i]);
	if (!ret)
		root = kstats_status_json(&st);
	if (root && json_object_object_get_ex(root, "objects", &objs)) {
		carry_prev(ctx, res, n, error, objs);
		text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_NOSLASHESCAPE);
		ret = kstats_file_replace(ctx->status_path, text, strlen(text), 0644);
	} else {
		ret = ret ?: -ENOMEM;
	}
	kstats_status_free(&st);	/* and root */
	return ret;
}
