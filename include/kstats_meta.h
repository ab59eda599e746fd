/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Metadata that the DEFINE_* macros place in each BPF object and the loader
 * reads back with libelf.  This is the only contract between a metric's
 * object and the loader, so the loader needs no per-metric table.
 *
 * The sections are not BPF maps: libbpf skips unknown data sections, and no
 * program references them.
 */
#ifndef KSTATS_META_H
#define KSTATS_META_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define KSTATS_META_VERSION 1
#define KSTATS_NAME_LEN 64
#define KSTATS_OWNER_LEN 32

#define KSTATS_SEC_MAPS ".kstats.maps"
#define KSTATS_SEC_PROGS ".kstats.progs"
#define KSTATS_SEC_HISTS ".kstats.hists"
#define KSTATS_SEC_OBJ ".kstats.obj"
#define KSTATS_SEC_STREAMS ".kstats.streams"
#define KSTATS_SEC_TYPES ".kstats.types"

#define KSTATS_KVER(a, b, c) (((a) << 16) + ((b) << 8) + (c))
#define KSTATS_KVER_INF 0xffffffffu

/* Program flags. */
#define KSTATS_PROG_OPTIONAL (1u << 0)	/* the object loads without it */

/* Object flags. */
#define KSTATS_OBJ_CRITICAL (1u << 0)	/* its failure fails the loader */

/* Preference order of the variants of one attach point: lower wins. */
enum kstats_variant {
	KSTATS_VARIANT_TP_BTF = 0,
	KSTATS_VARIANT_RAW_TP = 1,
	KSTATS_VARIANT_KPROBE = 2,
	KSTATS_VARIANT_OTHER = 3,
};

/* Owners are names ("root", "kstats"), resolved by the loader at boot. */
struct kstats_map_meta {
	char name[KSTATS_NAME_LEN];
	char uid[KSTATS_OWNER_LEN];
	char gid[KSTATS_OWNER_LEN];
	__u32 mode;
	__u32 version;
};

struct kstats_prog_meta {
	char name[KSTATS_NAME_LEN];	/* BPF function name */
	char attach[KSTATS_NAME_LEN];	/* attach point shared by the variants */
	char uid[KSTATS_OWNER_LEN];
	char gid[KSTATS_OWNER_LEN];
	__u32 mode;
	__u32 variant;			/* enum kstats_variant */
	__u32 min_kver;			/* inclusive */
	__u32 max_kver;			/* exclusive */
	__u32 flags;			/* KSTATS_PROG_* */
	__u32 version;
};

/* At most one per object (DEFINE_BPF_OBJECT); absent means all kernels. */
struct kstats_obj_meta {
	__u32 min_kver;			/* inclusive */
	__u32 max_kver;			/* exclusive */
	__u32 flags;			/* KSTATS_OBJ_* */
	__u32 version;
};

/* Units of histogram values; btfreader/units.c names each for every output. */
enum kstats_unit {
	KSTATS_UNIT_USEC = 1,
	KSTATS_UNIT_BYTES = 2,
	KSTATS_UNIT_COUNT = 3,		/* plain numbers, e.g. pages reclaimed */
};

/*
 * Marks a map whose value is a log2 accumulator and names its metric.  When
 * names_map is set, the key's first leaf is an id that the map names_map
 * (__u32 -> struct kstats_name) resolves to a display name.
 */
struct kstats_hist_meta {
	char map[KSTATS_NAME_LEN];
	char metric[KSTATS_NAME_LEN];	/* atom name, e.g. CompactionDuration */
	char names_map[KSTATS_NAME_LEN];	/* "" or the id -> name dictionary */
	char key_enum[KSTATS_NAME_LEN];	/* "" or the enum naming the key */
	__u32 unit;			/* enum kstats_unit */
	__u32 version;
};

/*
 * Names an event stream (include/bpf_stream.h): a RINGBUF map of records
 * of one struct type, which begins with struct kstats_stream_hdr, and a
 * PERCPU_ARRAY map (__u32 0 -> __u64) counting the records the ring buffer
 * had no room for.
 */
struct kstats_stream_meta {
	char name[KSTATS_NAME_LEN];	/* stream name, e.g. slow_compaction */
	char ringbuf[KSTATS_NAME_LEN];	/* BPF_MAP_TYPE_RINGBUF map */
	char drops[KSTATS_NAME_LEN];	/* failed-reserve counter map */
	char record[KSTATS_NAME_LEN];	/* struct tag of a record, in the object's BTF */
	__u32 version;
};

#endif /* KSTATS_META_H */
