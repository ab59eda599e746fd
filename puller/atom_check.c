// SPDX-License-Identifier: GPL-2.0
/* Mismatches between the objects' histograms and the atom schema, one warning each. */
#include <errno.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <bpf/btf.h>

#include "pull.h"
#include "kstats_objmeta.h"

#define LINE_LEN 512

static void warn(struct atom_check *c, const char *fmt, ...)
{
	char line[LINE_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->warnings++;
	c->warn(c->ctx, line);
}

/* STATE_CACHED and PROCESS_STATE_CACHED both stand for CACHED. */
static bool same_name(const char *proto, const char *word)
{
	size_t n = strlen(proto), w = strlen(word);

	return !strcmp(proto, word) ||
	       (n > w && proto[n - w - 1] == '_' && !strcmp(proto + n - w, word));
}

/* A value an ARRAY map cannot hold as a key (a _COUNT sentinel) is not one. */
static bool is_key_value(const struct kstats_map_def *d, int64_t v)
{
	bool array = d->type == BPF_MAP_TYPE_ARRAY || d->type == BPF_MAP_TYPE_PERCPU_ARRAY;

	return !array || (v >= 0 && v < d->max_entries);
}

/* Key column col of h, an enum, against proto enum field f. */
static void compare_enums(struct atom_check *c, const struct kstats_hist *h, size_t col,
			  const struct btf *btf, const struct kstats_map_def *d,
			  const ProtobufCFieldDescriptor *f)
{
	const ProtobufCEnumDescriptor *pe = f->descriptor;
	const struct btf_type *t = btf__type_by_id(btf, h->enum_type[col]);
	const char *bname = btf__name_by_offset(btf, t->name_off);
	size_t prefix = h->enum_prefix[col];
	unsigned int j;
	int i;

	for (i = 0; i < btf_vlen(t); i++) {
		struct kstats_enumerator e = kstats_btf_enumerator(btf, t, i);
		const char *word = strlen(e.name) > prefix ? e.name + prefix : e.name;

		if (!is_key_value(d, e.value))
			continue;
		for (j = 0; j < pe->n_values && pe->values[j].value != e.value; j++)
			;
		if (j == pe->n_values)
			warn(c, "%s: %s = %" PRId64 " of enum %s has no value in %s: add "
			     "%s = %" PRId64 "; to proto/kernelstats_atoms.proto", h->metric,
			     e.name, e.value, bname, pe->name, word, e.value);
		else if (!same_name(pe->values[j].name, word))
			warn(c, "%s: %s = %" PRId64 " of enum %s is %s in %s: rename one "
			     "so the names agree", h->metric, e.name, e.value, bname,
			     pe->values[j].name, pe->name);
	}
	for (j = 0; j < pe->n_values; j++) {
		for (i = 0; i < btf_vlen(t); i++) {
			struct kstats_enumerator e = kstats_btf_enumerator(btf, t, i);

			if (e.value == pe->values[j].value && is_key_value(d, e.value))
				break;
		}
		if (i == btf_vlen(t))
			warn(c, "%s: %s = %d of %s has no value in enum %s (%s/%s): add it "
			     "there or remove it from the proto", h->metric,
			     pe->values[j].name, pe->values[j].value, pe->name, bname,
			     h->obj, h->map);
	}
}

static bool check_keys(struct atom_check *c, const struct kstats_hist *h,
		       const struct atom_shape *s)
{
	char err[KSTATS_ERR_LEN];
	struct kstats_map *m;
	struct kstats_map_def def;
	struct kstats_hist k = *h;	/* its labels, as dump names them */
	bool ok = true;
	size_t i;

	/* No BTF for the key: nothing to compare with, build from the rows. */
	if (kstats_labels_declared(&k, &m, err, sizeof(err)) ||
	    kstats_btf_map_def(kstats_map_btf(m), h->map, &def))
		goto out;
	if (s->nkeys != k.nlabels) {
		warn(c, "%s has %zu key field(s) but %s/%s has %zu key column(s): make "
		     "them agree (system-wide: no key field)", s->msg->short_name,
		     s->nkeys, h->obj, h->map, k.nlabels);
		ok = false;
		goto out;
	}
	for (i = 0; i < s->nkeys; i++) {
		if (s->keys[i]->type != PROTOBUF_C_TYPE_ENUM)
			continue;
		if (k.enum_type[i])
			compare_enums(c, &k, i, kstats_map_btf(m), &def, s->keys[i]);
		else
			warn(c, "%s.%s is an enum but key column %zu of %s/%s has none: "
			     "name it with DEFINE_BPF_HISTOGRAM_ENUM", s->msg->short_name,
			     s->keys[i]->name, i, h->obj, h->map);
	}
out:
	kstats_map_close(m);
	return ok;
}

static void atom_check_hist(struct atom_check *c, const struct kstats_hist *h,
			    struct atom_shape *s)
{
	const struct kstats_unit_info *u = kstats_unit(h->unit);
	char why[LINE_LEN] = "";
	bool ok;
	int ret;

	c->checked++;
	ret = atom_shape_init(s, c->atom, h->metric, why, sizeof(why));
	if (ret == -ENOENT)
		warn(c, "histogram %s (%s/%s) has no atom: add message %s and its line "
		     "in Atom's oneof payload to proto/kernelstats_atoms.proto",
		     h->metric, h->obj, h->map, h->metric);
	else if (ret)
		warn(c, "%s: fix proto/kernelstats_atoms.proto", why);
	if (ret) {
		memset(s, 0, sizeof(*s));
		return;
	}
	if (!u)
		warn(c, "%s (%s/%s): unit %u is not in btfreader/units.c: use "
		     "KSTATS_UNIT_USEC, KSTATS_UNIT_BYTES or KSTATS_UNIT_COUNT",
		     h->metric, h->obj, h->map, h->unit);
	else if (u != s->unit)
		warn(c, "%s.%s is in %s but %s/%s counts %s: rename it <what>"
		     ATOM_BUCKETS_WORD "%s or fix the unit in DEFINE_BPF_HISTOGRAM",
		     s->msg->short_name, s->buckets->name, s->unit->atom_word, h->obj,
		     h->map, u->atom_word, u->atom_word);
	ok = check_keys(c, h, s) && u == s->unit;
	if (*h->names_map && !s->name)
		warn(c, "%s has no string field for the names in %s/%s: add "
		     "optional string <key>_name = 1;", s->msg->short_name, h->obj,
		     h->names_map);
	else if (!*h->names_map && s->name)
		warn(c, "%s.%s: %s/%s has no names map: remove the field or use "
		     "DEFINE_BPF_HISTOGRAM_NAMED", s->msg->short_name, s->name->name,
		     h->obj, h->map);
	if (!ok)
		memset(s, 0, sizeof(*s));
}

void atom_check_catalog(struct atom_check *c, const struct kstats_snapshot *s,
			struct atom_shape *shapes)
{
	const ProtobufCMessageDescriptor *m;
	struct atom_shape shape;
	unsigned int i;
	size_t k;

	for (k = 0; k < s->nhists; k++)
		atom_check_hist(c, &s->hists[k], shapes ? &shapes[k] : &shape);
	for (i = 0; i < c->atom->n_fields; i++) {
		if (!(c->atom->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) ||
		    c->atom->fields[i].type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		m = c->atom->fields[i].descriptor;
		for (k = 0; k < s->nhists && strcmp(s->hists[k].metric, m->short_name); k++)
			;
		if (k == s->nhists)
			warn(c, "atom %s (%u) has no histogram in the objects: add "
			     "DEFINE_BPF_HISTOGRAM(<map>, \"%s\", <unit>) to its bpfprogs/ "
			     "file, or remove the message", m->short_name,
			     c->atom->fields[i].id, m->short_name);
	}
}
