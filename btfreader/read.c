// SPDX-License-Identifier: GPL-2.0
/* Opens a pinned map read-only (its types, columns, decode plan) and reads it into int64 rows. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_telemetry.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "map_internal.h"

#define BATCH_MAX_BYTES (64u << 20)	/* first buffer; it grows past this */

static bool map_type_array(__u32 type)
{
	return type == BPF_MAP_TYPE_ARRAY || type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

static bool map_type_percpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

static bool map_type_supported(__u32 type)
{
	return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_LRU_HASH ||
	       map_type_array(type) || map_type_percpu(type);
}

/* "program" or "link", from the fd's anon inode; NULL for a map or if /proc cannot say. */
static const char *bpf_fd_kind(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return NULL;
	target[n] = 0;
	if (!strcmp(target, "anon_inode:bpf-prog"))
		return "program";
	if (!strcmp(target, "anon_inode:bpf_link"))
		return "link";
	return NULL;
}

/*
 * The kernel says EACCES for a bpf_obj_get() of anything on or off bpffs
 * that is not a BPF object, and EINVAL for a read-only get of a link (and,
 * on some kernels, of a program).
 */
static int open_pin(struct kstats_map *m, const char *pin, char *err, size_t errlen)
{
	__u32 len = sizeof(m->info);
	const char *kind;
	struct stat st;
	int e;

	m->fd = kstats_pin_get(pin, BPF_F_RDONLY, &m->pin_st);
	e = m->fd < 0 ? -m->fd : 0;
	kind = m->fd >= 0 ? bpf_fd_kind(m->fd) : NULL;
	if (e == EAGAIN)
		return kstats_fail(err, errlen, EAGAIN, "%s: the pin is replaced faster "
				   "than it can be opened", pin);
	if (kind)
		return kstats_fail(err, errlen, EMEDIUMTYPE, "%s: not a map (a pinned BPF %s); "
				   "pass a map's pin", pin, kind);
	if (e == EINVAL && kstats_is_bpffs(pin))
		return kstats_fail(err, errlen, EMEDIUMTYPE, "%s: not a map (a pinned BPF link "
				   "or program); pass a map's pin", pin);
	if (e == EACCES && !stat(pin, &st) && S_ISDIR(st.st_mode))
		return kstats_fail(err, errlen, EMEDIUMTYPE, "%s: a directory, not a pinned map",
				   pin);
	if (e == EACCES && !stat(pin, &st) && !kstats_is_bpffs(pin))
		return kstats_fail(err, errlen, EMEDIUMTYPE, "%s: not on bpffs, so not a pinned "
				   "map; pass a pin under a bpffs mount (such as "
				   "/sys/fs/bpf/kernelstats)", pin);
	if (e == ENOENT)
		return kstats_fail(err, errlen, ENOENT, "%s: no map is pinned there", pin);
	if (e)
		return kstats_fail(err, errlen, e, "%s: %s%s", pin, strerror(e),
				   e == EACCES ? " (needs root or the map's group)" : "");
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

static void types_free(struct kstats_types *t)
{
	btf__free(t->btf);
	kstats_layout_free(&t->key);
	kstats_layout_free(&t->value);
	memset(t, 0, sizeof(*t));
}

static int build_layouts(struct kstats_types *t, __u32 key_id, __u32 value_id,
			 char *err, size_t errlen)
{
	int ret;

	t->key_type_id = key_id;
	t->value_type_id = value_id;
	ret = kstats_layout_build(t->btf, key_id, "key", true, &t->key, err, errlen);
	ret = ret ?: kstats_layout_build(t->btf, value_id, "value", false, &t->value,
					 err, errlen);
	if (ret)
		types_free(t);
	return ret;
}

static int types_from_object(const char *path, const char *map_name,
			     struct kstats_types *t, char *err, size_t errlen)
{
	struct kstats_objmeta obj;
	struct kstats_map_def def;
	int ret = kstats_object_read(path, KSTATS_WANT_BTF, &obj, err, errlen);

	if (ret)
		return ret;
	t->btf = obj.btf;
	obj.btf = NULL;
	kstats_objmeta_free(&obj);
	if (kstats_btf_map_def(t->btf, map_name, &def))
		ret = kstats_fail(err, errlen, ESRCH, "%s: defines no map named %s (in .maps)",
				  path, map_name);
	else if (!def.key_type || !def.value_type)
		ret = kstats_fail(err, errlen, EINVAL, "%s: map %s is declared without "
				  "__type(key/value), so its layout is unknown", path, map_name);
	else
		t->max_entries = def.max_entries;
	if (!ret)
		return build_layouts(t, def.key_type, def.value_type, err, errlen);
	types_free(t);
	return ret;
}

/* -ENODATA: the map has no BTF; -EPERM: its BTF needs CAP_SYS_ADMIN. */
static int types_from_map(const struct bpf_map_info *info, struct kstats_types *t,
			  char *err, size_t errlen)
{
	if (!info->btf_id || !info->btf_key_type_id || !info->btf_value_type_id)
		return kstats_fail(err, errlen, ENODATA, "map %s has no key/value BTF",
				   info->name);
	t->btf = btf__load_from_kernel_by_id(info->btf_id);
	if (!t->btf)
		return kstats_fail(err, errlen, errno, "cannot load the BTF of map %s: %s",
				   info->name, strerror(errno));
	return build_layouts(t, info->btf_key_type_id, info->btf_value_type_id, err, errlen);
}

static bool types_equal(const struct kstats_types *a, const struct kstats_types *b)
{
	return kstats_layout_equal(&a->key, &b->key) &&
	       kstats_layout_equal(&a->value, &b->value);
}

/* The object's types (taken over; empty: none), or the map's own BTF when the
 * object is missing or does not match it (a newer object on disk). */
static int choose_types(struct kstats_map *m, const struct kstats_map_opts *o,
			struct kstats_types *obj, char *err, size_t errlen)
{
	struct kstats_types own = {};
	char own_err[KSTATS_ERR_LEN] = "";
	int own_ret;

	own_ret = types_from_map(&m->info, &own, own_err, sizeof(own_err));
	if (obj->btf && !own.btf && m->info.btf_key_type_id &&
	    (obj->key_type_id != m->info.btf_key_type_id ||
	     obj->value_type_id != m->info.btf_value_type_id)) {
		/* Without root the map's BTF is out of reach, but not its type ids. */
		snprintf(m->note, sizeof(m->note),
			 "%s: its %s types may not be the map's (BTF type ids %u/%u, the "
			 "map's %u/%u; only root reads the map's BTF): columns are the "
			 "object's; pass the object the map was loaded from",
			 o->obj_path, o->map_name, obj->key_type_id, obj->value_type_id,
			 m->info.btf_key_type_id, m->info.btf_value_type_id);
	} else if (obj->btf && own.btf && !types_equal(obj, &own)) {
		snprintf(m->note, sizeof(m->note),
			 "%s: its types for %s differ from the pinned map's; "
			 "read with the map's own BTF", o->obj_path, o->map_name);
		types_free(obj);
	} else if (!obj->btf && own.btf && o->obj_path) {
		snprintf(m->note, sizeof(m->note),
			 "%s: no such object; read with the map's own BTF", o->obj_path);
	}
	if (obj->btf || own.btf) {
		m->source = obj->btf ? KSTATS_BTF_OBJECT : KSTATS_BTF_MAP;
		m->types = obj->btf ? *obj : own;
		if (obj->btf)
			types_free(&own);
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
	struct kstats_types obj = {};
	int obj_ret = 0, ret;

	if (o->obj_path)
		obj_ret = types_from_object(o->obj_path, o->map_name, &obj, obj_err,
					    sizeof(obj_err));
	if (obj_ret == -ENOENT)
		obj_ret = 0;	/* a missing object: the map's own BTF */
	ret = open_pin(m, o->pin_path, err, errlen);
	if ((ret && obj_ret == -ESRCH) || (!ret && obj_ret)) {
		snprintf(err, errlen, "%s", obj_err);
		ret = obj_ret;
	}
	if (ret) {
		types_free(&obj);
		return ret;
	}
	return choose_types(m, o, &obj, err, errlen);
}

/* The columns ([cpu,] key leaves, value leaves) and the runs to decode them. */
static int plan_columns(struct kstats_map *m)
{
	const struct kstats_layout *key = &m->types.key, *value = &m->types.value;
	size_t extra = m->per_cpu_rows ? 1 : 0, i;
	struct kstats_column *c;
	struct leaf_run *r = NULL;

	m->ncols = extra + key->ncols + value->ncols;
	m->nkey_cols = extra + key->ncols;
	m->cols = calloc(m->ncols ?: 1, sizeof(*m->cols));
	m->runs = calloc(m->ncols ?: 1, sizeof(*m->runs));
	if (!m->cols || !m->runs)
		return -ENOMEM;
	c = m->cols;
	if (extra) {
		snprintf(c->name, sizeof(c->name), "cpu");
		c->size = 4;
		c->in_key = true;
		c++;
	}
	memcpy(c, key->cols, key->ncols * sizeof(*c));
	memcpy(c + key->ncols, value->cols, value->ncols * sizeof(*c));
	for (i = extra; i < m->ncols; i++, c++) {
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

static int kstats_map_grow(struct kstats_map *m, size_t entries, char *err, size_t errlen)
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

static int setup_read(struct kstats_map *m, const struct kstats_map_opts *o,
		      char *err, size_t errlen)
{
	size_t cap;

	m->percpu = map_type_percpu(m->info.type);
	m->per_cpu_rows = o->per_cpu_rows && m->percpu;
	m->no_batch = o->no_batch;
	m->ncpus = m->percpu ? libbpf_num_possible_cpus() : 1;
	if (m->ncpus <= 0)
		return kstats_fail(err, errlen, EINVAL, "cannot count the possible CPUs");
	/* The kernel pads each CPU's copy of a per-CPU value to 8 bytes. */
	m->stride = m->percpu ? (m->info.value_size + 7) / 8 * 8 : m->info.value_size;
	m->entry_bytes = m->stride * m->ncpus;
	/* Whole map in one batch, unless that is huge or the caller asked less. */
	cap = o->batch_entries ?: BATCH_MAX_BYTES / (m->info.key_size + m->entry_bytes);
	if (cap > m->info.max_entries)
		cap = m->info.max_entries;
	return kstats_map_grow(m, cap ?: 1, err, errlen);
}

int kstats_map_open(const struct kstats_map_opts *o, struct kstats_map **out,
		    char *err, size_t errlen)
{
	struct kstats_map *m;
	int ret;

	if ((!o->pin_path && !o->obj_path) || (o->obj_path && !o->map_name))
		return kstats_fail(err, errlen, EINVAL,
				   "need a pin path or an object, and a map name with an object");
	m = calloc(1, sizeof(*m));
	if (!m)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	m->fd = -1;
	if (!(m->pin = strdup(o->pin_path ?: "")) ||
	    (o->obj_path && !(m->obj_path = strdup(o->obj_path))) ||
	    (o->map_name && !(m->map_name = strdup(o->map_name)))) {
		kstats_map_close(m);
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	}
	m->opts = *o;
	m->opts.obj_path = m->obj_path;
	m->opts.map_name = m->map_name;
	m->opts.pin_path = m->pin;
	ret = o->pin_path ? open_types(m, o, err, errlen) :
	      types_from_object(o->obj_path, o->map_name, &m->types, err, errlen);
	if (!ret && !o->pin_path) {	/* the object's declaration, for its columns */
		m->info.key_size = m->types.key.size;
		m->info.value_size = m->types.value.size;
		m->info.max_entries = m->types.max_entries;
	}
	if (!ret && (m->types.key.size != m->info.key_size ||
		     m->types.value.size != m->info.value_size))
		ret = kstats_fail(err, errlen, EINVAL,
				  "%s: BTF says key %u/value %u bytes but the map has %u/%u; "
				  "pass the object this map was loaded from", m->pin,
				  m->types.key.size, m->types.value.size,
				  m->info.key_size, m->info.value_size);
	ret = ret ?: setup_read(m, o, err, errlen);
	if (!ret && plan_columns(m))
		ret = kstats_fail(err, errlen, ENOMEM, "out of memory");
	if (ret) {
		kstats_map_close(m);
		return ret;
	}
	*out = m;
	return 0;
}

static int kstats_map_follow_pin(struct kstats_map *m, char *err, size_t errlen)
{
	struct kstats_map *next;
	int ret, fd;

	if (m->opts.pin_once)
		return 0;
	ret = kstats_pin_changed(m->pin, &m->pin_st);
	if (ret == -ENOENT)
		return kstats_fail(err, errlen, ENOENT, "%s: no map is pinned there any more "
				   "(map id %u was unloaded)", m->pin, m->info.id);
	if (ret < 0)
		return kstats_fail(err, errlen, -ret, "%s: %s", m->pin, strerror(-ret));
	if (!ret)
		return 0;
	ret = kstats_map_open(&m->opts, &next, err, errlen);
	if (ret)
		return ret;
	/* Another map is read into what callers hold: the same columns and rows. */
	if (next->info.id != m->info.id &&
	    (next->info.type != m->info.type || next->info.key_size != m->info.key_size ||
	     next->info.value_size != m->info.value_size ||
	     next->info.max_entries != m->info.max_entries ||
	     !types_equal(&next->types, &m->types))) {
		ret = kstats_fail(err, errlen, ESTALE, "%s now holds another map (id %u, was "
				  "%u) with other columns; open it again", m->pin,
				  next->info.id, m->info.id);
		kstats_map_close(next);
		return ret;
	}
	/* Same columns: read the new map from now on, keeping what callers hold. */
	fd = m->fd;
	m->fd = next->fd;
	next->fd = fd;
	m->info = next->info;
	m->pin_st = next->pin_st;
	m->source = next->source;
	memcpy(m->note, next->note, sizeof(m->note));
	kstats_map_close(next);
	return 0;
}

void kstats_map_close(struct kstats_map *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	types_free(&m->types);
	free(m->pin);
	free(m->obj_path);
	free(m->map_name);
	free(m->cols);
	free(m->runs);
	free(m->keys);
	free(m->vals);
	free(m);
}

size_t kstats_map_ncols(const struct kstats_map *m) { return m->ncols; }
size_t kstats_map_nkey_cols(const struct kstats_map *m) { return m->nkey_cols; }
const struct btf *kstats_map_btf(const struct kstats_map *m) { return m->types.btf; }
uint32_t kstats_map_id(const struct kstats_map *m) { return m->info.id; }
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
	const struct btf *btf = m->types.btf;
	const struct btf_type *t = btf__type_by_id(btf, col->type_id);
	uint64_t mask = col->size >= 8 ? UINT64_MAX : (1ull << (col->size * 8)) - 1;
	int i;

	if (col->kind != KSTATS_LEAF_ENUM || !t || !btf_is_any_enum(t))
		return NULL;
	for (i = 0; i < btf_vlen(t); i++) {
		struct kstats_enumerator e = kstats_btf_enumerator(btf, t, i);

		if ((((uint64_t)e.value ^ (uint64_t)v) & mask) == 0)
			return e.name;
	}
	return NULL;
}

#ifndef ENOTSUPP
#define ENOTSUPP 524	/* kernel-internal, seen by old kernels' batch ops */
#endif

#define READ_ATTEMPTS 3

/* read_direct's calls: each writes its values to the end of the rows they become. */
struct direct {
	int64_t *rows;
	size_t cap;		/* entries the rows (and m->keys) hold */
	size_t chunk;		/* entries per call; doubled when a bucket does not fit */
};

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

/* cpu < 0: all CPUs combined.  memmove: spread_rows decodes in place. */
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
			memmove(row, p, 8 * r->count);
		} else {
			row[0] = load_leaf(p, r->size, r->is_signed);
		}
	}
}

/*
 * One key leaf (the usual u32 or u64 key): inlined for each key size that
 * spread_rows passes as a constant, so the loop decodes the key without a
 * switch (a sixth of the loop's instructions, bench/read/profile.sh).
 */
static inline __attribute__((always_inline)) void
spread_one_key(int64_t *rows, const int64_t *vals, const unsigned char *k, size_t n,
	       const struct kstats_map *m, uint8_t size, bool is_signed)
{
	size_t ncols = m->ncols, ks = m->info.key_size, vsize = m->info.value_size;
	size_t nv = vsize / 8, i;

	for (k += m->runs[0].off, i = 0; i < n; i++, rows += ncols, vals += nv, k += ks) {
		rows[0] = load_leaf(k, size, is_signed);
		memmove(rows + 1, vals, vsize);
	}
}

/*
 * Decode in place: the batch wrote n values back to back at vals, at least
 * n * nkey_cols int64s past rows, so row i ends at or before value i + 1
 * begins and moving forward never overwrites an unread value.  The loop is
 * the reader's whole per-row cost beyond the kernel's copy
 * (bench/read/profile.sh counts it): what it reads from m stays in locals.
 */
static void spread_rows(const struct kstats_map *m, int64_t *rows, const int64_t *vals,
			const unsigned char *k, size_t n)
{
	const struct leaf_run key = m->runs[0];
	size_t ncols = m->ncols, nk = m->nkey_cols, ks = m->info.key_size;
	size_t vsize = m->info.value_size, nv = vsize / 8, i;

	if (nk == 1 && key.in_key && key.size == 4 && !key.is_signed)
		spread_one_key(rows, vals, k, n, m, 4, false);
	else if (nk == 1 && key.in_key && key.size == 8)
		spread_one_key(rows, vals, k, n, m, 8, false);
	else if (nk == 1 && key.in_key)
		spread_one_key(rows, vals, k, n, m, key.size, key.is_signed);
	else
		for (i = 0; i < n; i++, rows += ncols, vals += nv, k += ks)
			fill_row(m, rows, k, (const unsigned char *)vals, -1);
}

/*
 * BPF_MAP_LOOKUP_BATCH until the kernel says ENOENT (hash maps) or every
 * index is read (arrays).  A hash bucket that does not fit the room left
 * gives ENOSPC when nothing else fit (then the room grows), else a short
 * count (the next call has more room).
 */
static int read_batch(struct kstats_map *m, struct direct *d, size_t *n, char *err,
		      size_t errlen)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u64 token_in = 0, token_out = 0;	/* bucket index, or array key */
	size_t done = 0, room, ks = m->info.key_size;
	bool started = false;
	int64_t *row = NULL;
	void *vals;
	int ret = 0;

	for (;;) {
		__u32 count;

		room = (d ? d->cap : m->cap) - done;
		if (!room && d)
			return -EOVERFLOW;
		if (!d && (!room || ret == -ENOSPC)) {	/* more room for the next bucket */
			ret = kstats_map_grow(m, m->cap * 2, err, errlen);
			if (ret)
				return ret;
			room = m->cap - done;
		}
		if (d) {
			room = room < d->chunk ? room : d->chunk;
			row = d->rows + done * m->ncols;
			vals = row + room * m->nkey_cols;	/* ends where row + room ends */
		} else {
			vals = (char *)m->vals + done * m->entry_bytes;
		}
		count = room > UINT32_MAX ? UINT32_MAX : (__u32)room;
		m->syscalls++;
		ret = bpf_map_lookup_batch(m->fd, started ? &token_in : NULL, &token_out,
					   (char *)m->keys + done * ks, vals, &count, &opts);
		ret = ret < 0 ? -errno : 0;
		if (ret && ret != -ENOENT && ret != -ENOSPC)
			return ret;
		if (d)
			spread_rows(m, row, vals, (unsigned char *)m->keys + done * ks, count);
		done += count;
		if (ret == -ENOENT || (map_type_array(m->info.type) &&
				       done >= m->info.max_entries))
			break;
		if (ret == -ENOSPC && d && room == d->cap - done)
			return -EOVERFLOW;	/* not even in all the rows left */
		if (ret == -ENOSPC && d)
			d->chunk *= 2;	/* the same bucket again, with more room */
		if (ret == -ENOSPC)
			continue;
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
	size_t *idx = calloc(*n + 1, sizeof(*idx) + sizeof(bool)), i, out = 0;
	bool *keep;

	if (!idx)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	keep = (bool *)(idx + *n + 1);
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
			ret = kstats_map_grow(m, m->cap * 2, err, errlen);
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

static int read_entries(struct kstats_map *m, struct direct *direct, size_t *n,
			char *err, size_t errlen)
{
	int ret;

	m->last_batched = false;
	if (!m->no_batch) {
		ret = read_batch(m, direct, n, err, errlen);
		if (ret == -EOVERFLOW)
			return ret;
		if (ret != -EINVAL && ret != -ENOTSUPP && ret != -EOPNOTSUPP) {
			m->last_batched = !ret;
			if (ret && !*err)
				kstats_fail(err, errlen, -ret, "%s: batch lookup: %s", m->pin,
					    strerror(-ret));
			return ret;
		}
		m->no_batch = true;	/* this kernel has no batch ops: walk from now on */
		if (direct)
			return -EOVERFLOW;
	}
	return read_walk(m, n, err, errlen);
}

static void fill_rows(const struct kstats_map *m, int64_t *rows, size_t n)
{
	int last = m->per_cpu_rows ? m->ncpus : 0, cpu;	/* cpu -1: all combined */
	size_t i;

	for (i = 0; i < n; i++)
		for (cpu = m->per_cpu_rows ? 0 : -1; cpu < last; cpu++, rows += m->ncols)
			fill_row(m, rows, (unsigned char *)m->keys + i * m->info.key_size,
				 (unsigned char *)m->vals + i * m->entry_bytes, cpu);
}

/* Values of 8-byte integers only, one copy: rows hold them as they are. */
static bool value_is_row(const struct kstats_map *m)
{
	const struct leaf_run *r;
	uint32_t off = 0;

	if (m->percpu || m->no_batch)
		return false;
	for (r = m->runs; r < m->runs + m->nruns; r++) {
		if (r->in_key)
			continue;
		if (r->size != 8 || r->off != off)
			return false;
		off += 8 * r->count;
	}
	return off && off == m->info.value_size;
}

/* Into rows directly when value_is_row and rows hold the whole map, else -EOVERFLOW. */
static int read_direct(struct kstats_map *m, int64_t *rows, size_t max_rows, size_t *nrows,
		       char *err, size_t errlen)
{
	size_t cap = m->cap < m->info.max_entries ? m->cap : m->info.max_entries;
	size_t bytes = kstats_read_chunk_bytes();
	size_t chunk = cap * m->entry_bytes > bytes ? bytes / m->entry_bytes : cap;
	struct direct d = { .rows = rows, .cap = cap, .chunk = m->chunk ?: chunk ?: 1 };

	if (!value_is_row(m) || max_rows < m->info.max_entries)
		return -EOVERFLOW;
	return read_entries(m, &d, nrows, err, errlen);
}

int kstats_map_read(struct kstats_map *m, int64_t *rows, size_t max_rows,
		    size_t *nrows, char *err, size_t errlen)
{
	size_t n = 0, per_entry = m->per_cpu_rows ? m->ncpus : 1;
	int attempt, ret;

	*err = 0;
	ret = kstats_map_follow_pin(m, err, errlen);
	if (ret)
		return ret;
	m->syscalls = 0;
	ret = read_direct(m, rows, max_rows, nrows, err, errlen);
	if (ret != -EOVERFLOW)
		return ret;
	for (attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
		if (attempt)
			m->syscalls = 0;	/* the last attempt's */
		ret = read_entries(m, NULL, &n, err, errlen);
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

int kstats_read_rows(struct kstats_map *m, int64_t **rows, size_t *nrows,
		     char *err, size_t errlen)
{
	int ret;

	*rows = calloc(kstats_map_max_rows(m) ?: 1,
		       (kstats_map_ncols(m) ?: 1) * sizeof(**rows));
	if (!*rows)
		return -ENOMEM;
	ret = kstats_map_read(m, *rows, kstats_map_max_rows(m), nrows, err, errlen);
	if (ret) {
		free(*rows);
		*rows = NULL;
	}
	return ret;
}

static int histmap_open(const char *obj_path, const char *map_name, const char *pin,
			struct kstats_histmap *h, char *err, size_t errlen)
{
	struct kstats_map_opts mo = { .obj_path = obj_path, .map_name = map_name,
				      .pin_path = pin };
	char own_err[KSTATS_ERR_LEN];
	const struct kstats_column *c;
	int ret = kstats_map_open(&mo, &h->map, err, errlen);
	size_t i;

	if (ret && ret != -ENOENT && obj_path) {
		mo.obj_path = NULL;
		if (!kstats_map_open(&mo, &h->map, own_err, sizeof(own_err)))
			ret = 0;
	}
	if (ret)
		return ret;
	h->ncols = kstats_map_ncols(h->map);
	h->nkey = kstats_map_nkey_cols(h->map);
	if (h->ncols - h->nkey != BPF_TELEMETRY_NR_BUCKETS)
		return kstats_fail(err, errlen, EINVAL, "value is not a %d-bucket accumulator",
				   BPF_TELEMETRY_NR_BUCKETS);
	h->width = kstats_map_column(h->map, h->nkey)->size;
	for (i = h->nkey; i < h->ncols; i++) {
		c = kstats_map_column(h->map, i);
		if (c->size != h->width || c->is_signed)
			return kstats_fail(err, errlen, EINVAL,
					   "bucket counters are not one unsigned width");
	}
	h->rows = calloc(kstats_map_max_rows(h->map) ?: 1, h->ncols * sizeof(*h->rows));
	return h->rows ? 0 : -ENOMEM;
}

int kstats_histmap_read(const char *obj_path, const char *map_name, const char *pin,
			struct kstats_histmap *h, char *err, size_t errlen)
{
	int ret, tries;

	for (tries = 0; tries < 2; tries++) {
		ret = h->map ? 0 : histmap_open(obj_path, map_name, pin, h, err, errlen);
		if (ret) {
			kstats_histmap_free(h);
			return ret;
		}
		ret = kstats_map_read(h->map, h->rows, kstats_map_max_rows(h->map),
				      &h->nrows, err, errlen);
		if (ret != -ESTALE)
			break;
		/* Reloaded with other columns: open the new map. */
		kstats_histmap_free(h);
		*err = 0;
	}
	if (ret)
		h->nrows = 0;
	else
		h->map_id = kstats_map_id(h->map);
	return ret;
}

void kstats_histmap_free(struct kstats_histmap *h)
{
	kstats_map_close(h->map);
	free(h->rows);
	memset(h, 0, sizeof(*h));
}
