/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libkstats internal: the key and value layouts of a map, resolved once from
 * an object file (by file identity and map name) or from the map's own BTF
 * (by BTF id and type ids), and shared through a process-wide cache.
 */
#ifndef KSTATS_MAP_TYPES_H
#define KSTATS_MAP_TYPES_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>
#include <bpf/bpf.h>

#include "kstats_reader.h"

struct kstats_types_id {
	bool from_map;
	dev_t dev;		/* object file identity */
	ino_t ino;
	off_t size;
	struct timespec mtime;
	char *map_name;
	__u32 btf_id;		/* map BTF identity */
	__u32 btf_size;
	__u32 key_type_id;
	__u32 value_type_id;
};

struct kstats_types {
	struct btf *btf;
	__u32 key_type_id, value_type_id;	/* in btf: what a map made from it names */
	__u32 max_entries;			/* the object's declaration; 0 from a map */
	struct kstats_layout key, value;
	/* cache bookkeeping, under the cache lock */
	struct kstats_types_id id;
	unsigned int refs;
	unsigned long long last_use;
	bool cached;
	struct kstats_types *next;
};

/* -ENOENT: no such object file; -ESRCH: no such map in it. */
int kstats_types_from_object(const char *path, const char *map_name,
			     struct kstats_types **out, char *err, size_t errlen);
/* -ENODATA: the map has no BTF; -EPERM: its BTF needs CAP_SYS_ADMIN. */
int kstats_types_from_map(const struct bpf_map_info *info,
			  struct kstats_types **out, char *err, size_t errlen);
void kstats_types_put(struct kstats_types *types);
/* Writes the one-line reason into err; returns -errnum. */
int kstats_fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
bool kstats_types_equal(const struct kstats_types *a, const struct kstats_types *b);

/* The cache's counts so far, for the tests that it serves what it should. */
struct kstats_cache_stats {
	unsigned long hits, misses;	/* layout resolutions reused / built */
};
void kstats_cache_stats(struct kstats_cache_stats *stats);

#endif /* KSTATS_MAP_TYPES_H */
