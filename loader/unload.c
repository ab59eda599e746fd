// SPDX-License-Identifier: GPL-2.0
/* kstats-loader --unload: only what the loader made goes. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Without a status file: the pins named after the objects in --obj-dir. */
static int remove_named_pins(struct loader_ctx *ctx, struct unload *u)
{
	char path[LOADER_PATH_LEN], name[KSTATS_NAME_LEN];
	struct dirent **objs, *e;
	DIR *dir;
	int n, i;

	n = kstats_scan_objects(ctx->obj_dir, &objs);
	if (n < 0)
		return n;
	dir = opendir(ctx->pin_dir);
	while (dir && (e = readdir(dir))) {
		snprintf(path, sizeof(path), "%s/%s", ctx->pin_dir, e->d_name);
		for (i = 0; i < n; i++)
			if (!kstats_obj_name(objs[i]->d_name, name, sizeof(name)) &&
			    pin_of(ctx, path, name))
				break;
		if (i < n)
			remove_pin(u, path);
	}
	if (dir)
		closedir(dir);
	for (i = 0; i < n; i++)
		free(objs[i]);
	free(objs);
	return 0;
}

int unload_all(struct loader_ctx *ctx, const char *flag)
{
	const struct kstats_status_obj *o;
	char copy[LOADER_PATH_LEN];
	struct unload u = {};
	size_t i, j;

	for (i = 0; ctx->prev && i < ctx->prev->nobjs; i++) {
		o = &ctx->prev->objs[i];
		for (j = 0; j < o->npins; j++)
			if (pin_of(ctx, o->pins[j], o->name))
				remove_pin(&u, o->pins[j]);
			else
				log_msg(LOG_WARNING, "warning: %s is not a pin of %s in %s; "
					"left alone", o->pins[j], o->name, ctx->pin_dir);
		/* Its copy as loaded (object.c), if the status file records the one we make. */
		if (*o->copy && !copy_path(ctx, o->name, copy, sizeof(copy)) &&
		    !strcmp(copy, o->copy) && unlink(copy) && errno != ENOENT)
			log_msg(LOG_WARNING, "warning: cannot remove %s: %m", copy);
	}
	if (!ctx->prev && remove_named_pins(ctx, &u)) {
		log_msg(LOG_ERR, "no status file %s and cannot read %s: nothing known to "
			"unload; pass --run-dir or --obj-dir", ctx->status_path, ctx->obj_dir);
		return EXIT_ENV;
	}
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
