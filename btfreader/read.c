// SPDX-License-Identifier: GPL-2.0
/* Opens a pinned map read-only and reads it into int64 rows in one batch. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kstats_reader.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524	/* kernel-internal, seen by old kernels' batch ops */
#endif

struct kstats_map {
	int fd;
	struct bpf_map_info info;
	struct btf *btf;
	struct kstats_layout key, value;
	struct kstats_column *cols;	/* [cpu,] key leaves, value leaves */
	size_t ncols, nkey_cols;
	bool percpu, per_cpu_rows;
	int ncpus;
	size_t stride;			/* bytes per value per CPU */
	void *keys, *vals;
	size_t cap;			/* entries the buffers hold */
	bool no_batch;
	unsigned int syscalls;
};

static int fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -errnum;
}

static bool map_type_percpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_ARRAY;
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

/* Finds "key"/"value" of map_name's definition in the object's .maps. */
static int find_map_def(const struct btf *btf, const char *map_name,
			__u32 *key_id, __u32 *value_id, char *err, size_t errlen)
{
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec, *def;
	const struct btf_member *m;
	int sec_id, i;

	sec_id = btf__find_by_name_kind(btf, ".maps", BTF_KIND_DATASEC);
	if (sec_id < 0)
		return fail(err, errlen, ENOENT, "object has no .maps section in its BTF");
	sec = btf__type_by_id(btf, sec_id);
	for (i = 0, vs = btf_var_secinfos(sec); i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);

		if (!var || !btf_is_var(var) ||
		    strcmp(btf__name_by_offset(btf, var->name_off), map_name))
			continue;
		def = btf__type_by_id(btf, btf__resolve_type(btf, var->type));
		if (!def || !btf_is_struct(def))
			break;
		*key_id = *value_id = 0;
		for (m = btf_members(def); m < btf_members(def) + btf_vlen(def); m++) {
			const char *n = btf__name_by_offset(btf, m->name_off);
			const struct btf_type *ptr = btf__type_by_id(btf, m->type);

			if (!ptr || !btf_is_ptr(ptr))
				continue;
			if (!strcmp(n, "key"))
				*key_id = ptr->type;
			else if (!strcmp(n, "value"))
				*value_id = ptr->type;
		}
		if (!*key_id || !*value_id)
			return fail(err, errlen, EINVAL,
				    "map %s: definition lacks __type(key/value)", map_name);
		return 0;
	}
	return fail(err, errlen, ENOENT, "map %s is not defined in the object", map_name);
}

static int load_types(struct kstats_map *m, const struct kstats_map_opts *o,
		      __u32 *key_id, __u32 *value_id, char *err, size_t errlen)
{
	int ret;

	if (o->obj_path) {
		m->btf = btf__parse(o->obj_path, NULL);
		if (!m->btf)
			return fail(err, errlen, errno, "%s: cannot read BTF: %s",
				    o->obj_path, strerror(errno));
		return find_map_def(m->btf, o->map_name, key_id, value_id, err, errlen);
	}
	if (!m->info.btf_id || !m->info.btf_value_type_id)
		return fail(err, errlen, ENOENT,
			    "%s: map has no BTF; pass the object with --obj", o->pin_path);
	m->btf = btf__load_from_kernel_by_id(m->info.btf_id);
	if (!m->btf) {
		ret = errno;
		return fail(err, errlen, ret, "%s: cannot load map BTF: %s",
			    o->pin_path, strerror(ret));
	}
	*key_id = m->info.btf_key_type_id;
	*value_id = m->info.btf_value_type_id;
	if (!*key_id)
		return fail(err, errlen, EINVAL, "%s: map BTF has no key type", o->pin_path);
	return 0;
}

static int build_columns(struct kstats_map *m, char *err, size_t errlen)
{
	size_t extra = m->per_cpu_rows ? 1 : 0;
	struct kstats_column *c;

	m->ncols = extra + m->key.ncols + m->value.ncols;
	m->nkey_cols = extra + m->key.ncols;
	m->cols = calloc(m->ncols, sizeof(*m->cols));
	if (!m->cols)
		return fail(err, errlen, ENOMEM, "out of memory");
	c = m->cols;
	if (extra) {
		snprintf(c->name, sizeof(c->name), "cpu");
		c->size = 4;
		c->in_key = true;
		c++;
	}
	memcpy(c, m->key.cols, m->key.ncols * sizeof(*c));
	memcpy(c + m->key.ncols, m->value.cols, m->value.ncols * sizeof(*c));
	return 0;
}

static int check_sizes(const struct kstats_map *m, const char *pin,
		       char *err, size_t errlen)
{
	if (m->key.size != m->info.key_size || m->value.size != m->info.value_size)
		return fail(err, errlen, EINVAL,
			    "%s: BTF says key %u/value %u bytes but the map has %u/%u; "
			    "pass the object this map was loaded from",
			    pin, m->key.size, m->value.size,
			    m->info.key_size, m->info.value_size);
	return 0;
}

int kstats_map_open(const struct kstats_map_opts *o, struct kstats_map **out,
		    char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_obj_get_opts, get_opts, .file_flags = BPF_F_RDONLY);
	__u32 key_id = 0, value_id = 0, len = sizeof(struct bpf_map_info);
	struct kstats_map *m;
	int ret;

	m = calloc(1, sizeof(*m));
	if (!m)
		return fail(err, errlen, ENOMEM, "out of memory");
	m->per_cpu_rows = o->per_cpu_rows;
	m->fd = bpf_obj_get_opts(o->pin_path, &get_opts);
	if (m->fd < 0) {
		ret = fail(err, errlen, errno, "%s: %s", o->pin_path, strerror(errno));
		goto err_out;
	}
	ret = bpf_obj_get_info_by_fd(m->fd, &m->info, &len);
	if (ret) {
		ret = fail(err, errlen, errno, "%s: not a BPF map: %s",
			   o->pin_path, strerror(errno));
		goto err_out;
	}
	if (!map_type_supported(m->info.type)) {
		ret = fail(err, errlen, EOPNOTSUPP, "%s: map type %s is not supported",
			   o->pin_path, libbpf_bpf_map_type_str(m->info.type));
		goto err_out;
	}
	ret = load_types(m, o, &key_id, &value_id, err, errlen);
	if (ret)
		goto err_out;
	ret = kstats_layout_build(m->btf, key_id, "key", true, &m->key, err, errlen);
	if (ret)
		goto err_out;
	ret = kstats_layout_build(m->btf, value_id, "value", false, &m->value,
				  err, errlen);
	if (ret)
		goto err_out;
	ret = check_sizes(m, o->pin_path, err, errlen);
	if (ret)
		goto err_out;
	m->percpu = map_type_percpu(m->info.type);
	m->per_cpu_rows = m->per_cpu_rows && m->percpu;
	m->ncpus = m->percpu ? libbpf_num_possible_cpus() : 1;
	if (m->ncpus <= 0) {
		ret = fail(err, errlen, EINVAL, "cannot count possible CPUs");
		goto err_out;
	}
	m->stride = m->percpu ? (m->info.value_size + 7) / 8 * 8 : m->info.value_size;
	ret = build_columns(m, err, errlen);
	if (ret)
		goto err_out;
	*out = m;
	return 0;
err_out:
	kstats_map_close(m);
	return ret;
}

void kstats_map_close(struct kstats_map *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	btf__free(m->btf);
	kstats_layout_free(&m->key);
	kstats_layout_free(&m->value);
	free(m->cols);
	free(m->keys);
	free(m->vals);
	free(m);
}

size_t kstats_map_ncols(const struct kstats_map *m) { return m->ncols; }
size_t kstats_map_nkey_cols(const struct kstats_map *m) { return m->nkey_cols; }
const struct btf *kstats_map_btf(const struct kstats_map *m) { return m->btf; }
unsigned int kstats_map_last_syscalls(const struct kstats_map *m) { return m->syscalls; }

const struct kstats_column *kstats_map_column(const struct kstats_map *m, size_t i)
{
	return i < m->ncols ? &m->cols[i] : NULL;
}

size_t kstats_map_max_rows(const struct kstats_map *m)
{
	return (size_t)m->info.max_entries * (m->per_cpu_rows ? m->ncpus : 1);
}

const char *kstats_column_enum_name(const struct kstats_map *m,
				    const struct kstats_column *col, int64_t v)
{
	const struct btf_type *t = btf__type_by_id(m->btf, col->type_id);
	int i;

	if (col->kind != KSTATS_LEAF_ENUM || !t)
		return NULL;
	if (btf_is_enum(t)) {
		const struct btf_enum *e = btf_enum(t);

		for (i = 0; i < btf_vlen(t); i++, e++)
			if (e->val == (col->is_signed ? (int32_t)v : (int64_t)(uint32_t)v))
				return btf__name_by_offset(m->btf, e->name_off);
	} else if (btf_is_enum64(t)) {
		const struct btf_enum64 *e = btf_enum64(t);

		for (i = 0; i < btf_vlen(t); i++, e++)
			if ((int64_t)btf_enum64_value(e) == v)
				return btf__name_by_offset(m->btf, e->name_off);
	}
	return NULL;
}

static int grow(struct kstats_map *m, size_t entries, char *err, size_t errlen)
{
	void *k = realloc(m->keys, entries * m->info.key_size);
	void *v;

	if (!k)
		return fail(err, errlen, ENOMEM, "out of memory");
	m->keys = k;
	v = realloc(m->vals, entries * m->stride * m->ncpus);
	if (!v)
		return fail(err, errlen, ENOMEM, "out of memory");
	m->vals = v;
	m->cap = entries;
	return 0;
}

/* Reads all entries with BPF_MAP_LOOKUP_BATCH; *n gets the count. */
static int read_batch(struct kstats_map *m, size_t *n, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u64 token_in = 0, token_out = 0;
	size_t done = 0;
	int ret;

	for (;;) {
		__u32 count = (__u32)(m->cap - done);

		m->syscalls++;
		ret = bpf_map_lookup_batch(m->fd, done ? &token_in : NULL, &token_out,
					   (char *)m->keys + done * m->info.key_size,
					   (char *)m->vals + done * m->stride * m->ncpus,
					   &count, &opts);
		ret = ret < 0 ? -errno : 0;
		done += count;
		if (ret == -ENOENT || (!ret && done >= m->info.max_entries))
			break;
		if (ret == -ENOSPC || done == m->cap) {
			/* A hash bucket did not fit: grow and go on. */
			ret = grow(m, m->cap * 2, err, errlen);
			if (ret)
				return ret;
		} else if (ret) {
			return ret;
		}
		token_in = token_out;
	}
	*n = done;
	return 0;
}

/* Fallback for kernels without batch ops: get_next_key + lookup. */
static int read_walk(struct kstats_map *m, size_t *n, char *err, size_t errlen)
{
	size_t ks = m->info.key_size, done = 0;
	void *prev = NULL;
	int ret;

	for (;;) {
		if (done == m->cap) {
			ret = grow(m, m->cap * 2, err, errlen);
			if (ret)
				return ret;
			prev = done ? (char *)m->keys + (done - 1) * ks : NULL;
		}
		void *key = (char *)m->keys + done * ks;

		m->syscalls++;
		if (bpf_map_get_next_key(m->fd, prev, key))
			break;
		m->syscalls++;
		if (bpf_map_lookup_elem(m->fd, key, (char *)m->vals +
					done * m->stride * m->ncpus)) {
			if (errno == ENOENT)	/* deleted meanwhile */
				continue;
			return fail(err, errlen, errno, "lookup: %s", strerror(errno));
		}
		prev = key;
		done++;
	}
	if (errno != ENOENT)
		return fail(err, errlen, errno, "get_next_key: %s", strerror(errno));
	*n = done;
	return 0;
}

static int64_t load_leaf(const unsigned char *p, const struct kstats_column *c)
{
	switch (c->size) {
	case 1: { uint8_t v; memcpy(&v, p, 1); return c->is_signed ? (int64_t)(int8_t)v : (int64_t)v; }
	case 2: { uint16_t v; memcpy(&v, p, 2); return c->is_signed ? (int64_t)(int16_t)v : (int64_t)v; }
	case 4: { uint32_t v; memcpy(&v, p, 4); return c->is_signed ? (int64_t)(int32_t)v : (int64_t)v; }
	default: { uint64_t v; memcpy(&v, p, 8); return (int64_t)v; }
	}
}

static void fill_row(const struct kstats_map *m, int64_t *row, const void *key,
		     const unsigned char *vals, int cpu)
{
	const struct kstats_layout *vl = &m->value;
	size_t i;
	int c, lo = cpu < 0 ? 0 : cpu, hi = cpu < 0 ? m->ncpus : cpu + 1;

	if (m->per_cpu_rows)
		*row++ = cpu;
	for (i = 0; i < m->key.ncols; i++)
		*row++ = load_leaf((const unsigned char *)key + m->key.cols[i].offset,
				   &m->key.cols[i]);
	for (i = 0; i < vl->ncols; i++) {
		uint64_t sum = 0;

		/* Summing in uint64_t wraps like the kernel's counters would. */
		for (c = lo; c < hi; c++)
			sum += (uint64_t)load_leaf(vals + c * m->stride + vl->cols[i].offset,
						   &vl->cols[i]);
		row[i] = (int64_t)sum;
	}
}

int kstats_map_read(struct kstats_map *m, int64_t *rows, size_t max_rows,
		    size_t *nrows, char *err, size_t errlen)
{
	size_t n = 0, i, out = 0;
	int ret, cpu;

	m->syscalls = 0;
	if (!m->cap) {
		ret = grow(m, m->info.max_entries ? m->info.max_entries : 1, err, errlen);
		if (ret)
			return ret;
	}
	ret = m->no_batch ? -EINVAL : read_batch(m, &n, err, errlen);
	if (ret == -EINVAL || ret == -ENOTSUPP || ret == -EOPNOTSUPP) {
		m->no_batch = true;
		ret = read_walk(m, &n, err, errlen);
	}
	if (ret < 0)
		return *err ? ret : fail(err, errlen, -ret, "batch lookup: %s",
					 strerror(-ret));
	for (i = 0; i < n; i++) {
		const void *key = (char *)m->keys + i * m->info.key_size;
		const unsigned char *v = (unsigned char *)m->vals + i * m->stride * m->ncpus;

		for (cpu = m->per_cpu_rows ? 0 : -1;
		     cpu < (m->per_cpu_rows ? m->ncpus : 0); cpu++) {
			if (out == max_rows)
				return fail(err, errlen, ENOSPC,
					    "%zu rows do not fit in %zu", n, max_rows);
			fill_row(m, rows + out * m->ncols, key, v, cpu);
			out++;
		}
	}
	*nrows = out;
	return 0;
}
