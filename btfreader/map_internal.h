/* SPDX-License-Identifier: GPL-2.0 */
/* struct kstats_map (read.c), open to tests and bench for its counters. */
#ifndef KSTATS_MAP_INTERNAL_H
#define KSTATS_MAP_INTERNAL_H

#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "kstats_reader.h"

enum kstats_btf_source { KSTATS_BTF_OBJECT, KSTATS_BTF_MAP };

struct kstats_types {
	struct btf *btf;
	__u32 key_type_id, value_type_id;	/* in btf: what a map made from it names */
	__u32 max_entries;			/* the object's declaration; 0 from a map */
	struct kstats_layout key, value;
};

/* Leaves to decode: 8-byte integers at consecutive offsets are one memcpy. */
struct leaf_run {
	uint32_t off;
	uint32_t count;
	uint8_t size;
	bool is_signed, in_key;
	enum kstats_leaf_kind kind;
};

struct kstats_map {
	int fd;
	char *pin;
	struct kstats_map_opts opts;	/* to open the pin again: its strings are ours */
	struct stat pin_st;		/* the pin's inode when fd was opened */
	struct bpf_map_info info;
	struct kstats_types types;
	enum kstats_btf_source source;
	char note[KSTATS_ERR_LEN];
	struct kstats_column *cols;	/* [cpu,] key leaves, value leaves */
	size_t ncols, nkey_cols;
	struct leaf_run *runs;		/* cols without cpu, grouped to decode */
	size_t nruns;
	bool percpu, per_cpu_rows, no_batch;
	bool last_batched;		/* the last read used BPF_MAP_LOOKUP_BATCH */
	int ncpus;
	size_t stride;			/* bytes per value per CPU */
	size_t entry_bytes;		/* bytes of one entry's values, all CPUs */
	void *keys, *vals;
	size_t cap;			/* entries the buffers hold */
	size_t chunk;			/* entries per batch call into rows; 0: by size (tests set it) */
	unsigned int syscalls;		/* the last read's (tests and bench count them) */
};

static inline bool kstats_map_type_array(__u32 type)
{
	return type == BPF_MAP_TYPE_ARRAY || type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

/* Key and value buffers for entries (read_rows.c); 0 or -errno with err. */
int kstats_map_grow(struct kstats_map *m, size_t entries, char *err, size_t errlen);
/* The map the pin names now, when its columns are the same (read.c); else -ESTALE. */
int kstats_map_follow_pin(struct kstats_map *m, char *err, size_t errlen);

/* Bytes of values per direct read call: this CPU's L2 (else 1 MiB).  Smaller calls keep
 * spread_rows in cache but cost a syscall each, priced very unevenly (doc/benchmarks.md). */
#define KSTATS_READ_CHUNK_BYTES (1u << 20)
static inline size_t kstats_read_chunk_bytes(void)
{
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

	return l2 >= 64 << 10 && l2 <= 16 << 20 ? (size_t)l2 : KSTATS_READ_CHUNK_BYTES;
}

#endif /* KSTATS_MAP_INTERNAL_H */
