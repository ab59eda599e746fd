// SPDX-License-Identifier: GPL-2.0
/* Opens a pinned map read-only: its types, columns and decode plan (read_rows.c reads it). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "map_internal.h"

#define BATCH_MAX_BYTES (64u << 20)	/* first buffer; it grows past this */

static bool map_type_percpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

static bool map_type_supported(__u32 type)
{
	return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_LRU_HASH ||
	       kstats_map_type_array(type) || map_type_percpu(type);
}

/* "program" or "link", from the fd's anon inode; NULL for a map or if /proc cannot say. */
static const char *bpf_fd_kind(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	target[n < 0 ? 0 : n] = 0;
	return !strcmp(target, "anon_inode:bpf-prog") ? "program" :
	       !strcmp(target, "anon_inode:bpf_link") ? "link" : NULL;
}

/* The kernel says EACCES for a bpf_obj_get() of anything on or off bpffs that is not a BPF
 * object, and EINVAL for a read-only get of a link (and, on some kernels, of a program). */
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
		ret = build_layouts(t, def.key_type, def.value_type, err, errlen);
	t->max_entries = def.max_entries;
	if (ret)
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

/* The object's types, else the map's own BTF (object missing or another, newer one).  A map the
 * object does not define is a wrong name, not a missing pin; an unsupported map type says more
 * than the object's view of its types. */
static int open_types(struct kstats_map *m, const struct kstats_map_opts *o,
		      char *err, size_t errlen)
{
	char obj_err[KSTATS_ERR_LEN] = "", own_err[KSTATS_ERR_LEN] = "";
	struct kstats_types obj = {}, own = {};
	int obj_ret = 0, own_ret, ret;

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
	own_ret = types_from_map(&m->info, &own, own_err, sizeof(own_err));
	if (obj.btf && !own.btf && m->info.btf_key_type_id &&
	    (obj.key_type_id != m->info.btf_key_type_id ||
	     obj.value_type_id != m->info.btf_value_type_id)) {
		/* Without root the map's BTF is out of reach, but not its type ids. */
		snprintf(m->note, sizeof(m->note),
			 "%s: its %s types may not be the map's (BTF type ids %u/%u, the "
			 "map's %u/%u; only root reads the map's BTF): columns are the "
			 "object's; pass the object the map was loaded from",
			 o->obj_path, o->map_name, obj.key_type_id, obj.value_type_id,
			 m->info.btf_key_type_id, m->info.btf_value_type_id);
	} else if (obj.btf && own.btf && !types_equal(&obj, &own)) {
		snprintf(m->note, sizeof(m->note),
			 "%s: its types for %s differ from the pinned map's; "
			 "read with the map's own BTF", o->obj_path, o->map_name);
		types_free(&obj);
	} else if (!obj.btf && own.btf && o->obj_path) {
		snprintf(m->note, sizeof(m->note),
			 "%s: no such object; read with the map's own BTF", o->obj_path);
	}
	if (obj.btf || own.btf) {
		m->source = obj.btf ? KSTATS_BTF_OBJECT : KSTATS_BTF_MAP;
		m->types = obj.btf ? obj : own;
		if (obj.btf)
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
	if (extra)
		*c++ = (struct kstats_column){ .name = "cpu", .size = 4, .in_key = true };
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
	m->opts = *o;
	m->opts.obj_path = o->obj_path ? strdup(o->obj_path) : NULL;
	m->opts.map_name = o->map_name ? strdup(o->map_name) : NULL;
	m->opts.pin_path = m->pin = strdup(o->pin_path ?: "");
	if (!m->pin || (o->obj_path && !m->opts.obj_path) || (o->map_name && !m->opts.map_name)) {
		kstats_map_close(m);
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	}
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

int kstats_map_follow_pin(struct kstats_map *m, char *err, size_t errlen)
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
	free((char *)m->opts.obj_path);
	free((char *)m->opts.map_name);
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

size_t kstats_column_string(const struct kstats_column *col, const int64_t *vals,
			    char *buf, size_t len)
{
	size_t n;

	for (n = 0; n < col->str_len && n + 1 < len && vals[n]; n++)
		buf[n] = (char)vals[n];
	if (len)
		buf[n] = 0;
	return n;
}
