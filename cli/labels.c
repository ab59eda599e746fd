// SPDX-License-Identifier: GPL-2.0
/*
 * Key labels from BTF and metadata alone.  Name: the key member's path, else
 * key_enum, the key's typedef or enum (kstats_ and _t dropped), the names_map
 * less _names_map, or "key".  Value: the enumerator less its common prefix,
 * the id's name in names_map, else decimal.  node, node_id, nid, numa_node: "node".
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "hist.h"
#include "kstats_keys.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"

struct kstats_names {
	struct kstats_map *m;	/* kept open: a later read opens nothing */
	size_t n;
	struct {
		int64_t id;
		char name[KSTATS_NAME_MAX + 1];
	} *e;
};

bool kstats_label_is_node(const char *name)
{
	return !strcmp(name, "node") || !strcmp(name, "node_id") ||
	       !strcmp(name, "nid") || !strcmp(name, "numa_node");
}

/* Keeps [A-Za-z0-9_], one '_' for any run of others (Prometheus names). */
static void sanitize(char *dst, size_t len, const char *src)
{
	size_t n = 0;

	for (; *src && n + 1 < len; src++) {
		if (isalnum((unsigned char)*src))
			dst[n++] = *src;
		else if (n && dst[n - 1] != '_')
			dst[n++] = '_';
	}
	while (n && dst[n - 1] == '_')
		n--;
	dst[n] = 0;
}

static void strip(char *s, const char *prefix, const char *suffix)
{
	size_t n = strlen(prefix), m;

	if (!strncmp(s, prefix, n) && s[n])
		memmove(s, s + n, strlen(s + n) + 1);
	m = strlen(s);
	n = strlen(suffix);
	if (m > n && !strcmp(s + m - n, suffix))
		s[m - n] = 0;
}

/* __u32, u32, uint32_t, size_t and friends say nothing about the key. */
static bool says_nothing(const char *name)
{
	static const char *const generic[] = {
		"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
		"uint8_t", "uint16_t", "uint32_t", "uint64_t", "int8_t",
		"int16_t", "int32_t", "int64_t", "size_t", "ssize_t",
	};
	size_t i;

	if (!*name || *name == '_')
		return true;
	for (i = 0; i < sizeof(generic) / sizeof(generic[0]); i++)
		if (!strcmp(name, generic[i]))
			return true;
	return false;
}

/* Name of map's declared key type (typedef or enum) in the object's BTF, or NULL. */
static const char *declared_key_name(const struct btf *btf, const char *map)
{
	const struct btf_type *t;
	struct kstats_map_def def;
	__u32 id;

	if (kstats_btf_map_def(btf, map, &def))
		return NULL;
	for (id = def.key_type; id && (t = btf__type_by_id(btf, id)); id = t->type) {
		const char *name = btf__name_by_offset(btf, t->name_off);

		if ((btf_is_typedef(t) || btf_is_any_enum(t)) && !says_nothing(name))
			return name;
		if (!btf_is_typedef(t) && !btf_is_mod(t))
			break;
	}
	return NULL;
}

/* Length of the prefix every enumerator of enum type_id shares, or 0. */
static size_t enum_prefix(const struct btf *btf, uint32_t type_id)
{
	const struct btf_type *t = btf__type_by_id(btf, type_id);
	const char *first;
	size_t n;
	int i;

	if (!t || !btf_is_any_enum(t) || btf_vlen(t) < 2)
		return 0;
	first = kstats_btf_enumerator(btf, t, 0).name;
	n = strlen(first);
	for (i = 1; i < btf_vlen(t); i++)
		while (n && strncmp(kstats_btf_enumerator(btf, t, i).name, first, n))
			n--;
	while (n && first[n - 1] != '_')
		n--;
	return n;
}

/* The BTF enum of label i: the key_enum of an int key, or the leaf's type. */
static uint32_t label_enum(const struct kstats_hist *h, const struct kstats_map *m,
			   size_t i)
{
	const struct kstats_column *c = kstats_map_column(m, i);
	int id;

	if (c->kind == KSTATS_LEAF_ENUM)
		return c->type_id;
	if (i || !*h->key_enum || c->kind != KSTATS_LEAF_INT)
		return 0;
	id = kstats_btf_find_enum(kstats_map_btf(m), h->key_enum);
	return id > 0 ? (uint32_t)id : 0;
}

static void label_name(struct kstats_hist *h, const struct kstats_map *m,
		       size_t i, char *buf, size_t len)
{
	const struct kstats_column *c = kstats_map_column(m, i);
	const char *type = !i && *h->key_enum ? h->key_enum :
			   declared_key_name(kstats_map_btf(m), h->map);

	if (strcmp(c->name, "key")) {
		sanitize(buf, len, c->name);
	} else if (type) {
		snprintf(buf, len, "%s", type);
		strip(buf, "kstats_", "_t");
		sanitize(buf, len, buf);
	} else if (!i && *h->names_map) {
		snprintf(buf, len, "%s", h->names_map);
		strip(buf, "", "_map");
		strip(buf, "", "_names");
	} else {
		snprintf(buf, len, "key");
	}
	if (kstats_label_is_node(buf))
		snprintf(buf, len, "node");
}

/*
 * A Prometheus label name starts with a letter or '_' and is not le,
 * quantile (the histogram's and summaries' own), instance or job (the
 * scrape's): such a name, or one starting with a digit, gets "key_" before
 * it.  Empty (a field named "_") becomes "key".
 */
static void exposable(char *name, size_t len)
{
	static const char *const taken[] = { "le", "quantile", "instance", "job" };
	char tmp[KSTATS_LABEL_LEN];
	size_t i;

	for (i = 0; i < sizeof(taken) / sizeof(taken[0]) && strcmp(name, taken[i]); i++)
		;
	snprintf(tmp, sizeof(tmp), "%s%s", *name ? "key_" : "key", name);
	if (!*name || i < sizeof(taken) / sizeof(taken[0]) || isdigit((unsigned char)*name))
		snprintf(name, len, "%s", tmp);
}

static bool label_taken(const struct kstats_hist *h, size_t i)
{
	size_t j;

	for (j = 0; j < i && strcmp(h->label[i], h->label[j]); j++)
		;
	return j < i;
}

int kstats_labels_init(struct kstats_hist *h, const struct kstats_map *m,
		       char *err, size_t errlen)
{
	size_t nkey = kstats_map_nkey_cols(m), i, k;

	h->nlabels = 0;
	if (kstats_map_max_rows(m) <= 1)
		return 0;	/* one system-wide series: nothing to tell apart */
	if (nkey > KSTATS_MAX_LABELS)
		return kstats_fail(err, errlen, EOPNOTSUPP, "%s: key has %zu fields, at most %d "
				   "are supported", h->metric, nkey, KSTATS_MAX_LABELS);
	for (i = 0; i < nkey; i++) {
		label_name(h, m, i, h->label[i], sizeof(h->label[i]));
		exposable(h->label[i], sizeof(h->label[i]));
		for (k = i; label_taken(h, i); k++)	/* "key1" may be taken too */
			snprintf(h->label[i], sizeof(h->label[i]), "key%zu", k);
		h->enum_type[i] = label_enum(h, m, i);
		h->enum_prefix[i] = enum_prefix(kstats_map_btf(m), h->enum_type[i]);
	}
	h->nlabels = nkey;
	return 0;
}

int kstats_labels_declared(struct kstats_hist *h, struct kstats_map **m,
			   char *err, size_t errlen)
{
	struct kstats_map_opts mo = { .obj_path = h->obj_path, .map_name = h->map };

	*m = NULL;
	return kstats_map_open(&mo, m, err, errlen) ?: kstats_labels_init(h, *m, err, errlen);
}

/* The entries of the names map d->m holds now. */
static int names_fill(struct kstats_names *d, char *err, size_t errlen)
{
	size_t nrows, ncols = kstats_map_ncols(d->m), nkey = kstats_map_nkey_cols(d->m), r, c, k;
	int64_t *rows = NULL;
	int ret = kstats_read_rows(d->m, &rows, &nrows, err, errlen);

	free(d->e);
	d->n = 0;
	d->e = ret ? NULL : calloc(nrows ?: 1, sizeof(*d->e));
	if (!ret && !d->e)
		ret = -ENOMEM;
	for (r = 0; !ret && r < nrows; r++) {
		const int64_t *row = rows + r * ncols;
		char *name = d->e[r].name;

		d->e[r].id = row[0];
		for (c = nkey; c < ncols && !kstats_map_column(d->m, c)->str_len; c++)
			;
		k = c < ncols ? kstats_column_string(kstats_map_column(d->m, c), row + c, name,
						     sizeof(d->e[r].name)) : 0;
		while (k--)
			name[k] = isprint((unsigned char)name[k]) ? name[k] : '?';
		d->n++;
	}
	free(rows);
	return ret;
}

int kstats_hist_names(struct kstats_hist *h, const char *pin_dir, char *err, size_t errlen)
{
	char pin[4096];
	struct kstats_map_opts mo = { .obj_path = h->obj_path, .map_name = h->names_map,
				      .pin_path = pin };
	int ret = kstats_pin_path(pin, sizeof(pin), pin_dir, "map", h->obj, h->names_map);
	bool pinned = !ret && !access(pin, F_OK);	/* else ids show as numbers */

	if (pinned && !h->names && !(h->names = calloc(1, sizeof(*h->names))))
		return -ENOMEM;
	ret = pinned && !h->names->m ? kstats_map_open(&mo, &h->names->m, err, errlen) : 0;
	ret = ret ?: pinned ? names_fill(h->names, err, errlen) : 0;
	if (!pinned || ret) {
		kstats_names_free(h->names);
		h->names = NULL;
	}
	return ret;
}

void kstats_names_free(struct kstats_names *d)
{
	if (!d)
		return;
	kstats_map_close(d->m);
	free(d->e);
	free(d);
}

const char *kstats_names_find(const struct kstats_names *d, int64_t id)
{
	size_t i;

	for (i = 0; d && i < d->n; i++)
		if (d->e[i].id == id && d->e[i].name[0])
			return d->e[i].name;
	return NULL;
}

void kstats_labels_resolve(const struct kstats_hist *h, struct kstats_series *s)
{
	const struct kstats_map *m = h->hm.map;
	size_t i;

	for (i = 0; i < h->nlabels; i++) {
		const struct kstats_column *c = kstats_map_column(m, i);
		struct kstats_column as_enum = *c;
		const char *e, *name = i ? NULL : kstats_names_find(h->names, s->key[i]);

		as_enum.kind = KSTATS_LEAF_ENUM;
		as_enum.type_id = h->enum_type[i];
		e = h->enum_type[i] ? kstats_column_enum_name(m, &as_enum, s->key[i]) : NULL;
		if (e && strlen(e) > h->enum_prefix[i])
			snprintf(s->value[i], KSTATS_LABEL_LEN, "%s", e + h->enum_prefix[i]);
		else if (name)
			snprintf(s->value[i], KSTATS_LABEL_LEN, "%s", name);
		else if (c->size == 8 && !c->is_signed)
			snprintf(s->value[i], KSTATS_LABEL_LEN, "%" PRIu64, (uint64_t)s->key[i]);
		else
			snprintf(s->value[i], KSTATS_LABEL_LEN, "%" PRId64, s->key[i]);
	}
}
