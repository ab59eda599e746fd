/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KSTATS_LOADER_H
#define KSTATS_LOADER_H

#include <stdbool.h>
#include <stddef.h>

struct btf;

enum obj_outcome {
	OBJ_LOADED,
	OBJ_SKIPPED_NO_ATTACH_POINT,
	OBJ_FAILED_OBJECT,
	OBJ_FAILED_VERIFIER,
	OBJ_FAILED_PIN,
};

struct loader_ctx {
	const char *obj_dir;
	const char *pin_dir;
	struct btf *vmlinux_btf;	/* parsed once per run */
	bool verbose;
};

struct obj_result {
	char name[64];
	enum obj_outcome outcome;
	unsigned int progs_attached;
	unsigned int maps_pinned;
	char reason[512];
};

const char *obj_outcome_str(enum obj_outcome o);
int load_object(struct loader_ctx *ctx, const char *path, struct obj_result *res);
int apply_owner(const char *path, const char *uid, const char *gid,
		unsigned int mode);

#endif /* KSTATS_LOADER_H */
