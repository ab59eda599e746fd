/* SPDX-License-Identifier: GPL-2.0 */
/* The loader's status file (doc/loader.md).  Only version and objects are required; a
 * member missing or mistyped reads as "" or 0, unknown ones are ignored. */
#ifndef KSTATS_STATUS_H
#define KSTATS_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KSTATS_STATUS_VERSION 1

/* Outcomes, spelled in the file (KSTATS_LOADED is "LOADED").  UNKNOWN: missing in a
 * file, or of a newer release; ABSENT: gone from the object dir. */
#define KSTATS_OUTCOMES(X) X(UNKNOWN) X(LOADED) X(SKIPPED_DISABLED)		\
	X(SKIPPED_KERNEL_VERSION) X(SKIPPED_NO_ATTACH_POINT) X(SKIPPED_VARIANT)	\
	X(SKIPPED_DUPLICATE_METRIC) X(SKIPPED_OBJECT_NAME) X(FAILED_OBJECT)	\
	X(FAILED_VERIFIER) X(FAILED_ATTACH) X(FAILED_PIN)			\
	X(REFUSED_INCOMPATIBLE_PIN) X(ABSENT)
#define KSTATS_OUTCOME_VALUE(name) KSTATS_##name,
enum kstats_outcome { KSTATS_OUTCOMES(KSTATS_OUTCOME_VALUE) KSTATS_OUTCOME_COUNT };

/* Filled by the loader, written by kstats_status_json(), read by kstats_status_read().
 * Strings are never NULL, each its own allocation (kstats_status_free() frees them). */
struct kstats_status_map {
	char *name, *pin;
	uint32_t map_id;
	bool reused;
	bool replaced;			/* moved aside for a new map (written when true) */
	uint64_t created_boot_ns, created_real_ns;	/* 0: unknown */
	char *key_type, *value_type;	/* BTF names; "": unknown */
	struct json_object *json;	/* its member of the file, for --json */
};

struct kstats_status_prog {
	char *name, *section, *attach, *attach_type, *reason;
	enum kstats_outcome outcome;
	char *prog_pin, *link_pin;
	uint32_t prog_id;		/* 0: not loaded */
	bool kept;			/* the same program was already attached */
	struct json_object *json;
};

struct kstats_status_obj {
	char *name, *path, *reason;
	char *copy;			/* its bytes as loaded (run dir), "": none */
	enum kstats_outcome outcome;
	bool critical;
	struct kstats_status_prog *progs;
	size_t nprogs;
	struct kstats_status_map *maps;
	size_t nmaps;
	char **pins;			/* every pin the loader made for it */
	size_t npins;
	struct json_object *json;
};

struct kstats_status {
	char *kernel_release, *boot_id, *obj_dir, *pin_dir;
	uint32_t kernel_version;	/* KSTATS_KVER of the version in force */
	uint64_t started_boot_ns, finished_boot_ns;
	char *error;			/* "": the environment was usable */
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

/* The object or map of that name, or NULL (also for st or o NULL). */
const struct kstats_status_obj *kstats_status_obj(const struct kstats_status *st,
						  const char *name);
const struct kstats_status_map *kstats_status_obj_map(const struct kstats_status_obj *o,
						     const char *name);
const struct kstats_status_map *kstats_status_map_by_id(const struct kstats_status *st,
							uint32_t map_id);
const char *kstats_outcome_name(enum kstats_outcome o);
/* FAILED_*: the object's own fault (a refused pin and skips are not). */
static inline bool kstats_outcome_failed(enum kstats_outcome o)
{
	return o >= KSTATS_FAILED_OBJECT && o <= KSTATS_FAILED_PIN;
}
void kstats_status_obj_free(struct kstats_status_obj *o);

#endif /* KSTATS_STATUS_H */
