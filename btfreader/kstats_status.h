/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The loader's status file (doc/loader.md): kstats-loader writes these structs,
 * everyone reads them.  Only version and objects are required; a member missing
 * or mistyped reads as "" or 0, unknown ones are ignored (the writer may add some).
 */
#ifndef KSTATS_STATUS_H
#define KSTATS_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KSTATS_STATUS_VERSION 1

struct json_object;

/* Strings are never NULL and live as long as the kstats_status. */
struct kstats_status_map {
	const char *name, *pin;
	uint32_t map_id;
	bool reused;
	uint64_t created_boot_ns, created_real_ns;	/* 0: unknown */
	const char *key_type, *value_type;		/* BTF names; "": unknown */
	struct json_object *json;	/* its member of the file, for --json */
};

struct kstats_status_prog {
	const char *name, *section, *attach, *attach_type, *outcome, *reason;
	const char *prog_pin, *link_pin;
	uint32_t prog_id;		/* 0: not loaded */
	bool kept;			/* the same program was already attached */
	struct json_object *json;
};

struct kstats_status_obj {
	const char *name, *path, *outcome, *reason;
	const char *copy;		/* its bytes as loaded (run dir), "": none */
	bool critical;
	struct kstats_status_prog *progs;
	size_t nprogs;
	struct kstats_status_map *maps;
	size_t nmaps;
	const char **pins;		/* every pin the loader made for it */
	size_t npins;
	struct json_object *json;
};

struct kstats_status {
	const char *kernel_release, *boot_id, *obj_dir, *pin_dir;
	uint32_t kernel_version;	/* KSTATS_KVER of the version in force */
	uint64_t started_boot_ns, finished_boot_ns;
	const char *error;		/* "": the environment was usable */
	struct kstats_status_obj *objs;
	size_t nobjs;
	struct json_object *json;	/* the whole file, for pass-through output */
};

/* A regular file, no symlink; -ENOENT/-EACCES/-EINVAL (not this version), fix in err. */
int kstats_status_read(const char *path, struct kstats_status *st,
		       char *err, size_t errlen);
/* The same from a buffer (the fuzzer's entry); name is used in err. */
int kstats_status_parse(const char *buf, size_t len, const char *name,
			struct kstats_status *st, char *err, size_t errlen);
void kstats_status_free(struct kstats_status *st);
/* The file's JSON for st (sets its json members), for json_object_put(). */
struct json_object *kstats_status_json(struct kstats_status *st);

const struct kstats_status_obj *kstats_status_obj(const struct kstats_status *st,
						  const char *name);
const struct kstats_status_map *kstats_status_obj_map(const struct kstats_status_obj *o,
						     const char *name);
const struct kstats_status_map *kstats_status_map_by_id(const struct kstats_status *st,
							uint32_t map_id);
bool kstats_status_failed(const struct kstats_status_obj *o);

#endif /* KSTATS_STATUS_H */
