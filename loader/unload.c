// SPDX-License-Identifier: GPL-2.0
/*
 * --unload: removes the pins the status file says this loader owns (or,
 * without one, the pins named after the objects in --obj-dir), the status
 * file and the completion flag, and the pin directory if nothing else is
 * left in it.  Other pins in the directory are never touched.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>

#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "loader.h"

struct unload {
	unsigned int removed;
	unsigned int failed;
};

static void remove_pin(struct unload *u, const char *path)
{
	if (!unlink(path)) {
		u->removed++;
	} else if (errno != ENOENT) {
		log_msg(LOG_ERR, "cannot remove %s: %m", path);
		u->failed++;
	}
}

static void remove_status_pins(struct loader_ctx *ctx, struct unload *u)
{
	struct json_object *objs = status_array(ctx->prev, "objects"), *pins;
	const char *pin;
	size_t i, j;

	for (i = 0; objs && i < json_object_array_length(objs); i++) {
		pins = status_array(json_object_array_get_idx(objs, i), "pins");
		if (!pins)
			continue;
		for (j = 0; j < json_object_array_length(pins); j++) {
			pin = json_object_get_string(json_object_array_get_idx(pins, j));
			if (in_pin_dir(ctx, pin))
				remove_pin(u, pin);
			else
				log_msg(LOG_WARNING, "warning: %s is not in %s; left alone",
					pin ? pin : "(null)", ctx->pin_dir);
		}
	}
}

static void remove_named(struct loader_ctx *ctx, struct unload *u, const char *kind,
			 const char *obj, const char *name)
{
	char path[LOADER_PATH_LEN];

	if (!kstats_pin_path(path, sizeof(path), ctx->pin_dir, kind, obj, name))
		remove_pin(u, path);
}

/* Without a status file: the pins the naming rule gives each object. */
static void remove_object_pins(struct loader_ctx *ctx, struct unload *u,
			       const char *path)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *map;
	char name[KSTATS_NAME_LEN];

	if (kstats_obj_name(path, name, sizeof(name)))
		return;
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		log_msg(LOG_WARNING, "warning: cannot open %s; its pins, if any, stay", path);
		return;
	}
	bpf_object__for_each_map(map, obj)
		if (!bpf_map__is_internal(map))
			remove_named(ctx, u, "map", name, bpf_map__name(map));
	bpf_object__for_each_program(prog, obj) {
		remove_named(ctx, u, "link", name, bpf_program__name(prog));
		remove_named(ctx, u, "prog", name, bpf_program__section_name(prog));
	}
	bpf_object__close(obj);
}

static int remove_named_pins(struct loader_ctx *ctx, struct unload *u)
{
	struct dirent **ents;
	char path[LOADER_PATH_LEN];
	int n, i;

	n = kstats_scan_objects(ctx->obj_dir, &ents);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", ctx->obj_dir, ents[i]->d_name);
		remove_object_pins(ctx, u, path);
		free(ents[i]);
	}
	free(ents);
	return 0;
}

int unload_all(struct loader_ctx *ctx)
{
	struct unload u = {};
	char flag[LOADER_PATH_LEN + 16];

	if (ctx->prev) {
		remove_status_pins(ctx, &u);
	} else if (remove_named_pins(ctx, &u)) {
		log_msg(LOG_ERR, "no status file %s and cannot read %s: nothing known to "
			"unload; pass --run-dir or --obj-dir", ctx->status_path, ctx->obj_dir);
		return EXIT_ENV;
	}
	snprintf(flag, sizeof(flag), "%s/progs_loaded", ctx->run_dir);
	unlink(flag);
	if (unlink(ctx->status_path) && errno != ENOENT)
		log_msg(LOG_WARNING, "warning: cannot remove %s: %m", ctx->status_path);
	if (rmdir(ctx->pin_dir) && errno != ENOENT)
		log_msg(LOG_INFO, "%s stays: it holds pins that are not the loader's",
			ctx->pin_dir);
	log_result(LOG_INFO, "unloaded: %u pins removed%s", u.removed,
		u.failed ? ", some could not be" : "");
	return u.failed ? EXIT_CRITICAL : EXIT_OK;
}
