/* SPDX-License-Identifier: GPL-2.0 */
/* A BPF object's facts, read once: its .kstats.* metadata and its BTF. */
#ifndef KSTATS_OBJMETA_H
#define KSTATS_OBJMETA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kstats_meta.h"

struct btf;
struct btf_type;

struct kstats_objmeta {
	struct kstats_map_meta *maps;
	size_t nmaps;
	struct kstats_prog_meta *progs;
	size_t nprogs;
	struct kstats_hist_meta *hists;
	size_t nhists;
	struct kstats_obj_meta obj;	/* defaults when the object has none */
	struct kstats_stream_meta *streams;
	size_t nstreams;
	struct btf *btf;		/* with KSTATS_WANT_BTF */
};

#define KSTATS_WANT_META 1u	/* the .kstats.* sections */
#define KSTATS_WANT_BTF 2u	/* the .BTF section, which must be there */

/* From the process's catalog (thread-safe): path is read once, again only when it names
 * another file.  -ENOENT no such file, -ENOEXEC not a (BPF) ELF object, -ENODATA no BTF. */
int kstats_object_read(const char *path, unsigned int want, struct kstats_objmeta *meta,
		       char *err, size_t errlen);
#define kstats_objmeta_read(path, meta, err, errlen) \
	kstats_object_read(path, KSTATS_WANT_META, meta, err, errlen)
int kstats_objmeta_read_mem(void *buf, size_t len, const char *what,
			    struct kstats_objmeta *meta, char *err, size_t errlen);
void kstats_objmeta_free(struct kstats_objmeta *meta);

const struct kstats_map_meta *
kstats_objmeta_map(const struct kstats_objmeta *meta, const char *name);
const struct kstats_prog_meta *
kstats_objmeta_prog(const struct kstats_objmeta *meta, const char *name);
const struct kstats_stream_meta *
kstats_objmeta_stream(const struct kstats_objmeta *meta, const char *name);

/* A map's BTF definition in .maps; a member not declared is 0. */
struct kstats_map_def {
	uint32_t type, max_entries;		/* __uint() */
	uint32_t key_type, value_type;		/* __type() */
};
/* -ESRCH: btf defines no map of that name. */
int kstats_btf_map_def(const struct btf *btf, const char *map, struct kstats_map_def *def);
/* The id of enum (or enum64) name, or <= 0. */
int kstats_btf_find_enum(const struct btf *btf, const char *name);
/* Enumerator i of enum t: an unsigned-marked 32-bit value is zero-extended. */
struct kstats_enumerator {
	const char *name;
	int64_t value;
};
struct kstats_enumerator kstats_btf_enumerator(const struct btf *btf,
					       const struct btf_type *t, int i);

/* Whether two metric names export as one (equal but for case and non-alnum). */
bool kstats_metric_same(const char *a, const char *b);

struct dirent;
/* dir's *.bpf, sorted; count or -errno.  A bare ".bpf" is the caller's to refuse. */
int kstats_scan_objects(const char *dir, struct dirent ***ents);

/* "compaction" from ".../compaction.bpf" into buf. */
int kstats_obj_name(const char *path, char *buf, size_t len);

#endif /* KSTATS_OBJMETA_H */
