// SPDX-License-Identifier: GPL-2.0
/*
 * --unload: removes the pins the status file lists as the loader's (or,
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

#include "kstats_objmeta.h"
#include "kstats_status.h"
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
	const struct kstats_status_obj *o;
	size_t i, j;

	for (i = 0; i < ctx->prev->nobjs; i++) {
		o = &ctx->prev->objs[i];
		for (j = 0; j < o->npins; j++)
			if (pin_of(ctx, o->pins[j], o->name))
				remove_pin(u, o->pins[j]);
			else
				log_msg(LOG_WARNING, "warning: %s is not a pin of %s in %s; "
					"left alone", o->pins[j], o->name, ctx->pin_dir);
	}
}

/* Whether the pin dir entry name is a pin of an object of --obj-dir. */
static bool named_for_object(struct loader_ctx *ctx, const char *path,
			     struct dirent **objs, int n)
{
	char name[KSTATS_NAME_LEN];
	int i;

	for (i = 0; i < n; i++)
		if (!kstats_obj_name(objs[i]->d_name, name, sizeof(name)) &&
		    pin_of(ctx, path, name))
			return true;
	return false;
}

/* Without a status file: the pins named after the objects in --obj-dir. */
static int remove_named_pins(struct loader_ctx *ctx, struct unload *u)
{
	char path[LOADER_PATH_LEN];
	struct dirent **objs, *e;
	DIR *dir;
	int n, i;

	n = kstats_scan_objects(ctx->obj_dir, &objs);
	if (n < 0)
		return n;
	dir = opendir(ctx->pin_dir);
	while (dir && (e = readdir(dir))) {
		snprintf(path, sizeof(path), "%s/%s", ctx->pin_dir, e->d_name);
		if (named_for_object(ctx, path, objs, n))
			remove_pin(u, path);
	}
	if (dir)
		closedir(dir);
	for (i = 0; i < n; i++)
		free(objs[i]);
	free(objs);
	return 0;
}

/* The objects as loaded (object.c): no pin is left to read with them. */
static void remove_loaded_copies(const struct loader_ctx *ctx)
{
	char path[LOADER_PATH_LEN + 256];
	struct dirent **ents;
	int n, i;

	if (!strcmp(ctx->run_dir, ctx->obj_dir))
		return;	/* never the objects themselves */
	n = kstats_scan_objects(ctx->run_dir, &ents);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", ctx->run_dir, ents[i]->d_name);
		if (unlink(path) && errno != ENOENT)
			log_msg(LOG_WARNING, "warning: cannot remove %s: %m", path);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
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
	remove_loaded_copies(ctx);
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
