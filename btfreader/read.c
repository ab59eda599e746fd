// SPDX-License-Identifier: GPL-2.0
/* Opens a pinned map read-only and reads it into int64 rows in one batch. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kstats_reader.h"
#include "map_types.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524	/* kernel-internal, seen by old kernels' batch ops */
#endif

#define BATCH_MAX_BYTES (64u << 20)	/* first buffer; it grows past this */
#define READ_ATTEMPTS 3

/*
 * Leaves grouped for decoding: a run of 8-byte integers at consecutive
 * offsets (a counter array, say) is copied into the row in one memcpy.
 */
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
	struct bpf_map_info info;
	struct kstats_types *types;	/* shared with the layout cache */
	enum kstats_btf_source source;
	char note[KSTATS_ERR_LEN];
	struct kstats_column *cols;	/* [cpu,] key leaves, value leaves */
	size_t ncols, nkey_cols;
	struct leaf_run *runs;		/* cols without cpu, grouped to decode */
	size_t nruns;
	bool percpu, per_cpu_rows, no_batch, last_batched;
	int ncpus;
	size_t stride;			/* bytes per value per CPU */
	size_t entry_bytes;		/* bytes of one entry's values, all CPUs */
	void *keys, *vals;
	size_t cap;			/* entries the buffers hold */
	unsigned int syscalls;
};

static bool map_type_percpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

static bool map_type_array(__u32 type)
{
	return type == BPF_MAP_TYPE_ARRAY || type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

static bool map_type_supported(__u32 type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return true;
	default:
		return false;
	}
}

static int open_pin(struct kstats_map *m, const char *pin, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_obj_get_opts, get_opts, .file_flags = BPF_F_RDONLY);
	__u32 len = sizeof(m->info);
	int e;

	m->fd = bpf_obj_get_opts(pin, &get_opts);
	if (m->fd < 0) {
		e = errno;
		if (e == ENOENT)
			return kstats_fail(err, errlen, ENOENT, "%s: no map is pinned there", pin);
		return kstats_fail(err, errlen, e, "%s: %s%s", pin, strerror(e),
				   e == EACCES ? " (needs root or the map's group)" : "");
	}
	if (bpf_obj_get_info_by_fd(m->fd, &m->info, &len))
		return kstats_fail(err, errlen, errno, "%s: not a BPF map: %s", pin,
				   strerror(errno));
	if (!map_type_supported(m->info.type))
		return kstats_fail(err, errlen, EOPNOTSUPP,
				   "%s: map type %s is not supported (hash, lru_hash, array "
				   "and their per-CPU forms are)",
				   pin, libbpf_bpf_map_type_str(m->info.type) ?: "unknown");
	return 0;
}

/* The object's types, or NULL when the object is missing. */
static int object_types(const struct kstats_map_opts *o, struct kstats_types **obj,
			char *err, size_t errlen)
{
	int ret;

	*obj = NULL;
	if (!o->obj_path)
		return 0;
	ret = kstats_types_from_object(o->obj_path, o->map_name, obj, err, errlen);
	return ret == -ENOENT ? 0 : ret;
}

/*
 * The object's types, checked against the map's own BTF when the map has
 * one and we may load it; the map's own when the object is missing or does
 * not match (a newer object on disk than the one the map came from).
 * Takes over the reference to obj.
 */
static int choose_types(struct kstats_map *m, const struct kstats_map_opts *o,
			struct kstats_types *obj, char *err, size_t errlen)
{
	struct kstats_types *own = NULL;
	char own_err[KSTATS_ERR_LEN] = "";
	int own_ret;

	own_ret = kstats_types_from_map(&m->info, &own, own_err, sizeof(own_err));
	if (obj && own && !kstats_types_equal(obj, own)) {
		snprintf(m->note, sizeof(m->note),
			 "%s: its types for %s differ from the pinned map's; "
			 "read with the map's own BTF", o->obj_path, o->map_name);
		kstats_types_put(obj);
		obj = NULL;
	} else if (!obj && own && o->obj_path) {
		snprintf(m->note, sizeof(m->note),
			 "%s: no such object; read with the map's own BTF", o->obj_path);
	}
	if (obj) {
		kstats_types_put(own);
		m->types = obj;
		m->source = KSTATS_BTF_OBJECT;
		return 0;
	}
	if (own) {
		m->types = own;
		m->source = KSTATS_BTF_MAP;
		return 0;
	}
	if (o->obj_path)
		return kstats_fail(err, errlen, ENODATA, "%s: no such object, and %s: %s; "
				   "pass the object the map was loaded from",
				   o->obj_path, m->pin, own_err);
	if (own_ret == -ENODATA)
		return kstats_fail(err, errlen, ENODATA, "%s: the map has no BTF; "
				   "pass the object it was loaded from", m->pin);
	return kstats_fail(err, errlen, -own_ret, "%s: %s", m->pin, own_err);
}

/*
 * A map the object does not define is a wrong name, not a missing pin; an
 * unsupported map type says more than the object's view of its types.
 */
static int open_types(struct kstats_map *m, const struct kstats_map_opts *o,
		      char *err, size_t errlen)
{
	char obj_err[KSTATS_ERR_LEN] = "";
	struct kstats_types *obj;
	int obj_ret, ret;

	obj_ret = object_types(o, &obj, obj_err, sizeof(obj_err));
	ret = open_pin(m, o->pin_path, err, errlen);
	if ((ret && obj_ret == -ESRCH) || (!ret && obj_ret)) {
		snprintf(err, errlen, "%s", obj_err);
		ret = obj_ret;
	}
	if (ret) {
		kstats_types_put(obj);
		return ret;
	}
	return choose_types(m, o, obj, err, errlen);
}

static int check_sizes(const struct kstats_map *m, char *err, size_t errlen)
{
	const struct kstats_types *t = m->types;

	if (t->key.size != m->info.key_size || t->value.size != m->info.value_size)
		return kstats_fail(err, errlen, EINVAL,
				   "%s: BTF says key %u/value %u bytes but the map has %u/%u; "
				   "pass the object this map was loaded from",
				   m->pin, t->key.size, t->value.size,
				   m->info.key_size, m->info.value_size);
	return 0;
}

static int build_columns(struct kstats_map *m, char *err, size_t errlen)
{
	const struct kstats_layout *key = &m->types->key, *value = &m->types->value;
	size_t extra = m->per_cpu_rows ? 1 : 0;
	struct kstats_column *c;

	m->ncols = extra + key->ncols + value->ncols;
	m->nkey_cols = extra + key->ncols;
	m->cols = calloc(m->ncols ?: 1, sizeof(*m->cols));
	if (!m->cols)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	c = m->cols;
	if (extra) {
		snprintf(c->name, sizeof(c->name), "cpu");
		c->size = 4;
		c->in_key = true;
		c++;
	}
	memcpy(c, key->cols, key->ncols * sizeof(*c));
	memcpy(c + key->ncols, value->cols, value->ncols * sizeof(*c));
	return 0;
}

static int plan_runs(struct kstats_map *m, char *err, size_t errlen)
{
	const struct kstats_column *c = m->cols + (m->per_cpu_rows ? 1 : 0);
	size_t i, n = m->ncols - (m->per_cpu_rows ? 1 : 0);
	struct leaf_run *r = NULL;

	m->runs = calloc(n ?: 1, sizeof(*m->runs));
	if (!m->runs)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	for (i = 0; i < n; i++, c++) {
		if (r && c->size == 8 && r->size == 8 && c->in_key == r->in_key &&
		    c->kind == r->kind && c->offset == r->off + 8 * r->count) {
			r->count++;
			continue;
		}
		r = &m->runs[m->nruns++];
		*r = (struct leaf_run){ .off = c->offset, .count = 1, .size = c->size,
					.is_signed = c->is_signed, .in_key = c->in_key,
					.kind = c->kind };
	}
	return 0;
}

static int grow(struct kstats_map *m, size_t entries, char *err, size_t errlen)
{
	size_t kbytes, vbytes;
	void *p;

	if (__builtin_mul_overflow(entries, (size_t)m->info.key_size, &kbytes) ||
	    __builtin_mul_overflow(entries, m->entry_bytes, &vbytes))
		return kstats_fail(err, errlen, ENOMEM, "%zu entries do not fit in memory",
				   entries);
	p = realloc(m->keys, kbytes);
	if (!p)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	m->keys = p;
	p = realloc(m->vals, vbytes);
	if (!p)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	m->vals = p;
	m->cap = entries;
	return 0;
}

/* Whole map in one batch, unless that is huge or the caller asked less. */
static size_t first_cap(const struct kstats_map *m, const struct kstats_map_opts *o)
{
	size_t per_entry = m->info.key_size + m->entry_bytes;
	size_t cap = BATCH_MAX_BYTES / per_entry;

	if (o->batch_entries)
		cap = o->batch_entries;
	if (cap > m->info.max_entries)
		cap = m->info.max_entries;
	return cap ?: 1;
}

static int setup_read(struct kstats_map *m, const struct kstats_map_opts *o,
		      char *err, size_t errlen)
{
	m->percpu = map_type_percpu(m->info.type);
	m->per_cpu_rows = o->per_cpu_rows && m->percpu;
	m->no_batch = o->no_batch;
	m->ncpus = m->percpu ? libbpf_num_possible_cpus() : 1;
	if (m->ncpus <= 0)
		return kstats_fail(err, errlen, EINVAL, "cannot count the possible CPUs");
	/* The kernel pads each CPU's copy of a per-CPU value to 8 bytes. */
	m->stride = m->percpu ? (m->info.value_size + 7) / 8 * 8 : m->info.value_size;
	m->entry_bytes = m->stride * m->ncpus;
	return grow(m, first_cap(m, o), err, errlen);
}

int kstats_map_open(const struct kstats_map_opts *o, struct kstats_map **out,
		    char *err, size_t errlen)
{
	struct kstats_map *m;
	int ret;

	if (!o->pin_path || (o->obj_path && !o->map_name))
		return kstats_fail(err, errlen, EINVAL,
				   "need a pin path, and a map name with an object");
	m = calloc(1, sizeof(*m));
	if (!m || !(m->pin = strdup(o->pin_path))) {
		free(m);
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	}
	m->fd = -1;
	ret = open_types(m, o, err, errlen);
	ret = ret ?: check_sizes(m, err, errlen);
	ret = ret ?: setup_read(m, o, err, errlen);
	ret = ret ?: build_columns(m, err, errlen);
	ret = ret ?: plan_runs(m, err, errlen);
	if (ret) {
		kstats_map_close(m);
		return ret;
	}
	*out = m;
	return 0;
}

void kstats_map_close(struct kstats_map *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	kstats_types_put(m->types);
	free(m->pin);
	free(m->cols);
	free(m->runs);
	free(m->keys);
	free(m->vals);
	free(m);
}

size_t kstats_map_ncols(const struct kstats_map *m) { return m->ncols; }
size_t kstats_map_nkey_cols(const struct kstats_map *m) { return m->nkey_cols; }
const struct btf *kstats_map_btf(const struct kstats_map *m) { return m->types->btf; }
unsigned int kstats_map_last_syscalls(const struct kstats_map *m) { return m->syscalls; }
bool kstats_map_last_batched(const struct kstats_map *m) { return m->last_batched; }
uint32_t kstats_map_id(const struct kstats_map *m) { return m->info.id; }
enum kstats_btf_source kstats_map_btf_source(const struct kstats_map *m) { return m->source; }
const char *kstats_map_source_note(const struct kstats_map *m) { return m->note; }

const struct kstats_column *kstats_map_column(const struct kstats_map *m, size_t i)
{
	return i < m->ncols ? &m->cols[i] : NULL;
}

size_t kstats_map_max_rows(const struct kstats_map *m)
{
	return (size_t)m->info.max_entries * (m->per_cpu_rows ? m->ncpus : 1);
}

/* Enumerators are matched on the leaf's width, whatever its signedness. */
const char *kstats_column_enum_name(const struct kstats_map *m,
				    const struct kstats_column *col, int64_t v)
{
	const struct btf *btf = m->types->btf;
	const struct btf_type *t = btf__type_by_id(btf, col->type_id);
	uint64_t mask = col->size >= 8 ? UINT64_MAX : (1ull << (col->size * 8)) - 1;
	int i;

	if (col->kind != KSTATS_LEAF_ENUM || !t)
		return NULL;
	if (btf_is_enum(t)) {
		const struct btf_enum *e = btf_enum(t);

		for (i = 0; i < btf_vlen(t); i++, e++)
			if ((((uint64_t)(int64_t)e->val ^ (uint64_t)v) & mask) == 0)
				return btf__name_by_offset(btf, e->name_off);
	} else if (btf_is_enum64(t)) {
		const struct btf_enum64 *e = btf_enum64(t);

		for (i = 0; i < btf_vlen(t); i++, e++)
			if (((btf_enum64_value(e) ^ (uint64_t)v) & mask) == 0)
				return btf__name_by_offset(btf, e->name_off);
	}
	return NULL;
}

/*
 * BPF_MAP_LOOKUP_BATCH until the kernel says ENOENT (hash maps) or every
 * index is read (arrays).  A hash bucket that does not fit the space left
 * gives ENOSPC when nothing else fit, else a short count: grow either way.
 */
static int read_batch(struct kstats_map *m, size_t *n, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u64 token_in = 0, token_out = 0;	/* bucket index, or array key */
	bool started = false;
	size_t done = 0;
	int ret;

	for (;;) {
		__u32 count;

		if (done == m->cap) {
			ret = grow(m, m->cap * 2, err, errlen);
			if (ret)
				return ret;
		}
		count = m->cap - done > UINT32_MAX ? UINT32_MAX : (__u32)(m->cap - done);
		m->syscalls++;
		ret = bpf_map_lookup_batch(m->fd, started ? &token_in : NULL, &token_out,
					   (char *)m->keys + done * m->info.key_size,
					   (char *)m->vals + done * m->entry_bytes,
					   &count, &opts);
		ret = ret < 0 ? -errno : 0;
		if (ret && ret != -ENOENT && ret != -ENOSPC)
			return ret;
		done += count;
		if (ret == -ENOENT || (map_type_array(m->info.type) &&
				       done >= m->info.max_entries))
			break;
		if (ret == -ENOSPC) {
			ret = grow(m, m->cap * 2, err, errlen);
			if (ret)
				return ret;
			continue;	/* retry the same bucket */
		}
		token_in = token_out;
		started = true;
	}
	*n = done;
	return 0;
}

static const void *key_at(const struct kstats_map *m, size_t i)
{
	return (const char *)m->keys + i * m->info.key_size;
}

static int cmp_keys(const void *a, const void *b, void *arg)
{
	const struct kstats_map *m = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = memcmp(key_at(m, i), key_at(m, j), m->info.key_size);

	return c ?: (i < j ? -1 : i > j);
}

/*
 * A hash walk restarts from the first key when the previous key is deleted
 * under it, so keys can come twice: keep each key's latest copy, in order.
 */
static int dedup_walk(struct kstats_map *m, size_t *n, char *err, size_t errlen)
{
	size_t *idx = malloc((*n + 1) * sizeof(*idx)), i, out = 0;
	bool *keep = calloc(*n + 1, sizeof(*keep));

	if (!idx || !keep) {
		free(idx);
		free(keep);
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	}
	for (i = 0; i < *n; i++)
		idx[i] = i;
	qsort_r(idx, *n, sizeof(*idx), cmp_keys, m);
	/* Sorted by key, then by position: the last of a run is the latest. */
	for (i = 0; i < *n; i++)
		keep[idx[i]] = i + 1 == *n || memcmp(key_at(m, idx[i]), key_at(m, idx[i + 1]),
						     m->info.key_size);
	for (i = 0; i < *n; i++) {
		if (!keep[i])
			continue;
		if (i != out) {
			memcpy((char *)m->keys + out * m->info.key_size, key_at(m, i),
			       m->info.key_size);
			memcpy((char *)m->vals + out * m->entry_bytes,
			       (char *)m->vals + i * m->entry_bytes, m->entry_bytes);
		}
		out++;
	}
	free(idx);
	free(keep);
	*n = out;
	return 0;
}

/* Fallback for kernels without batch ops: get_next_key + lookup. */
static int read_walk(struct kstats_map *m, size_t *n, char *err, size_t errlen)
{
	size_t ks = m->info.key_size, done = 0, steps = 0;
	size_t limit = 4 * (size_t)m->info.max_entries + 64;
	int ret;

	for (;;) {
		if (done == m->cap) {
			ret = grow(m, m->cap * 2, err, errlen);
			if (ret)
				return ret;
		}
		void *prev = done ? (char *)m->keys + (done - 1) * ks : NULL;
		void *key = (char *)m->keys + done * ks;

		if (++steps > limit)
			return kstats_fail(err, errlen, EAGAIN, "%s: the map changes faster "
					   "than it can be walked", m->pin);
		m->syscalls++;
		if (bpf_map_get_next_key(m->fd, prev, key)) {
			if (errno == ENOENT)
				break;
			return kstats_fail(err, errlen, errno, "%s: get_next_key: %s",
					   m->pin, strerror(errno));
		}
		m->syscalls++;
		if (bpf_map_lookup_elem(m->fd, key, (char *)m->vals + done * m->entry_bytes)) {
			if (errno == ENOENT)	/* deleted since get_next_key */
				continue;
			return kstats_fail(err, errlen, errno, "%s: lookup: %s", m->pin,
					   strerror(errno));
		}
		done++;
	}
	*n = done;
	return map_type_array(m->info.type) ? 0 : dedup_walk(m, n, err, errlen);
}

static int read_entries(struct kstats_map *m, size_t *n, char *err, size_t errlen)
{
	int ret;

	m->syscalls = 0;
	m->last_batched = false;
	if (!m->no_batch) {
		ret = read_batch(m, n, err, errlen);
		if (ret != -EINVAL && ret != -ENOTSUPP && ret != -EOPNOTSUPP) {
			m->last_batched = !ret;
			if (ret && !*err)
				kstats_fail(err, errlen, -ret, "%s: batch lookup: %s", m->pin,
					    strerror(-ret));
			return ret;
		}
		m->no_batch = true;	/* this kernel has no batch ops: walk from now on */
	}
	return read_walk(m, n, err, errlen);
}

static int64_t load_leaf(const unsigned char *p, uint8_t size, bool is_signed)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		return is_signed ? (int64_t)(int8_t)u8 : (int64_t)u8;
	case 2:
		memcpy(&u16, p, 2);
		return is_signed ? (int64_t)(int16_t)u16 : (int64_t)u16;
	case 4:
		memcpy(&u32, p, 4);
		return is_signed ? (int64_t)(int32_t)u32 : (int64_t)u32;
	default:
		memcpy(&u64, p, 8);
		return (int64_t)u64;
	}
}

/* One value leaf over all CPUs: counters add up, flags OR, the rest max. */
static int64_t combine_cpus(const struct kstats_map *m, const unsigned char *p,
			    const struct leaf_run *r)
{
	int64_t acc = load_leaf(p, r->size, r->is_signed), x;
	int cpu;

	for (cpu = 1; cpu < m->ncpus; cpu++) {
		x = load_leaf(p + cpu * m->stride, r->size, r->is_signed);
		if (r->kind == KSTATS_LEAF_INT)
			acc = (int64_t)((uint64_t)acc + (uint64_t)x);	/* wraps, never traps */
		else if (r->kind == KSTATS_LEAF_BOOL)
			acc = acc || x;
		else if (r->is_signed ? x > acc : (uint64_t)x > (uint64_t)acc)
			acc = x;
	}
	return acc;
}

/* cpu < 0: all CPUs combined. */
static void fill_row(const struct kstats_map *m, int64_t *row, const unsigned char *key,
		     const unsigned char *vals, int cpu)
{
	bool combine = cpu < 0 && m->percpu;
	const struct leaf_run *r;
	uint32_t j;

	if (cpu >= 0) {
		*row++ = cpu;
		vals += cpu * m->stride;
	}
	for (r = m->runs; r < m->runs + m->nruns; row += r->count, r++) {
		const unsigned char *p = (r->in_key ? key : vals) + r->off;

		if (combine && !r->in_key) {
			for (j = 0; j < r->count; j++)
				row[j] = combine_cpus(m, p + 8 * j, r);
		} else if (r->size == 8) {
			memcpy(row, p, 8 * r->count);
		} else {
			row[0] = load_leaf(p, r->size, r->is_signed);
		}
	}
}

static void fill_rows(const struct kstats_map *m, int64_t *rows, size_t n)
{
	size_t i;
	int cpu;

	for (i = 0; i < n; i++) {
		const unsigned char *key = (unsigned char *)m->keys + i * m->info.key_size;
		const unsigned char *vals = (unsigned char *)m->vals + i * m->entry_bytes;

		if (!m->per_cpu_rows) {
			fill_row(m, rows, key, vals, -1);
			rows += m->ncols;
			continue;
		}
		for (cpu = 0; cpu < m->ncpus; cpu++, rows += m->ncols)
			fill_row(m, rows, key, vals, cpu);
	}
}

int kstats_map_read(struct kstats_map *m, int64_t *rows, size_t max_rows,
		    size_t *nrows, char *err, size_t errlen)
{
	size_t n = 0, per_entry = m->per_cpu_rows ? m->ncpus : 1;
	int attempt, ret;

	*err = 0;
	for (attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
		ret = read_entries(m, &n, err, errlen);
		if (ret)
			return ret;
		/* More keys than the map holds: entries came and went meanwhile. */
		if (n <= m->info.max_entries)
			break;
	}
	if (attempt == READ_ATTEMPTS)
		return kstats_fail(err, errlen, EAGAIN, "%s: the map changed faster than it "
				   "could be read, %d times", m->pin, READ_ATTEMPTS);
	if (n > max_rows / per_entry)
		return kstats_fail(err, errlen, ENOSPC, "%zu rows do not fit in %zu; size the "
				   "buffer with kstats_map_max_rows()", n * per_entry, max_rows);
	fill_rows(m, rows, n);
	*nrows = n * per_entry;
	return 0;
}
