// SPDX-License-Identifier: GPL-2.0
/* Reads an open map into int64 rows: batch lookups decoded in place, else a key walk. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "map_internal.h"

int kstats_map_grow(struct kstats_map *m, size_t entries, char *err, size_t errlen)
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
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		return is_signed ? (int64_t)(int8_t)*p : (int64_t)*p;
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

/* One key leaf (the usual u32 or u64 key), inlined per constant key size from spread_rows: no
 * switch in the loop (a sixth of its instructions, bench/read/profile.sh). */
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

/* Decode in place: the batch wrote n values back to back at vals, at least n * nkey_cols int64s
 * past rows, so row i ends at or before value i + 1 begins and moving forward never overwrites
 * an unread value.  The loop is the reader's whole per-row cost beyond the kernel's copy
 * (bench/read/profile.sh counts it): what it reads from m stays in locals. */
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

/* BPF_MAP_LOOKUP_BATCH until the kernel says ENOENT (hash maps) or every index is read (arrays).
 * A hash bucket that does not fit the room left gives ENOSPC when nothing else fit (then the
 * room grows), else a short count (the next call has more room). */
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
		if (ret == -ENOENT || (kstats_map_type_array(m->info.type) &&
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

/* A hash walk restarts from the first key when the previous key is deleted under it, so keys can
 * come twice: keep each key's latest copy, in order. */
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
	for (i = 0; i < *n; out += keep[i++]) {
		if (keep[i] && i != out) {
			memcpy((char *)m->keys + out * m->info.key_size, key_at(m, i),
			       m->info.key_size);
			memcpy((char *)m->vals + out * m->entry_bytes,
			       (char *)m->vals + i * m->entry_bytes, m->entry_bytes);
		}
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
	return kstats_map_type_array(m->info.type) ? 0 : dedup_walk(m, n, err, errlen);
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

/* Into rows directly when value_is_row and rows hold the whole map, else -EOVERFLOW;
 * kstats_read_chunk_bytes() of values per call, or the tests' m->chunk. */
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
	size_t n = 0, per_entry = m->per_cpu_rows ? m->ncpus : 1, i;
	int last = m->per_cpu_rows ? m->ncpus : 0, attempt, ret, cpu;	/* cpu -1: combined */
	int64_t *row = rows;

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
	for (i = 0; i < n; i++)
		for (cpu = m->per_cpu_rows ? 0 : -1; cpu < last; cpu++, row += m->ncols)
			fill_row(m, row, (unsigned char *)m->keys + i * m->info.key_size,
				 (unsigned char *)m->vals + i * m->entry_bytes, cpu);
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
