// SPDX-License-Identifier: GPL-2.0
/*
 * Every histogram of every built object against the atom schema, found by
 * walking both (no metric named, no metric counted): each has a message,
 * units and enums agree, and an atom built for it round-trips.  Then the
 * same check on planted mismatches (copies of the real descriptors with one
 * thing changed) must warn, naming the fix.  No kernel needed: the objects'
 * metadata and BTF are read from the files.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pull.h"
#include "hist.h"

static struct kstats_snapshot cat;
static char warnings[8192];

static void collect(void *ctx, const char *line)
{
	size_t n = strlen(warnings);

	(void)ctx;
	printf("# warning: %s\n", line);
	snprintf(warnings + n, sizeof(warnings) - n, "%s\n", line);
}

static unsigned int check(const ProtobufCMessageDescriptor *atom,
			  const struct kstats_snapshot *s)
{
	struct atom_check c = { .atom = atom, .warn = collect };

	warnings[0] = 0;
	atom_check_catalog(&c, s, NULL);
	assert_int_equal(c.checked, s->nhists);
	return c.warnings;
}

static int setup(void **state)
{
	const char *build = getenv("KSTATS_BUILD");
	char dir[512], err[256];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/bpf", build ? build : "build");
	if (kstats_snapshot_init(&cat, dir, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	kstats_snapshot_free(&cat);
	return 0;
}

static const int32_t *payload_buckets(const Kernelstats__Atom *a,
				      const struct atom_shape *sh)
{
	const ProtobufCMessage *p = *(ProtobufCMessage *const *)
		((const char *)a + sh->oneof->offset);

	assert_int_equal(*(const size_t *)((const char *)p + sh->buckets->quantifier_offset),
			 PULL_NR_BUCKETS);
	return *(int32_t *const *)((const char *)p + sh->buckets->offset);
}

/* The shipped objects and proto agree, and every atom packs and unpacks. */
static void test_objects_match_schema(void **state)
{
	const int64_t key[PULL_MAX_KEY_COLS] = { 3, 4, 5, 6 };
	uint8_t buf[1024];
	size_t i, len;

	(void)state;
	assert_true(cat.nhists > 0);
	assert_int_equal(check(&kernelstats__atom__descriptor, &cat), 0);
	for (i = 0; i < cat.nhists; i++) {
		struct atom_slot *s = calloc(1, sizeof(*s));
		struct atom_shape sh;
		Kernelstats__Atom *back;
		char why[256];

		assert_non_null(s);
		assert_int_equal(atom_shape_init(&sh, &kernelstats__atom__descriptor,
						 cat.hists[i].metric, why, sizeof(why)), 0);
		assert_true(sh.oneof->id >= 100000);
		kernelstats__atom__init(&s->atom);
		s->buckets[7] = 11;
		assert_int_equal(atom_build(s, &sh, key, PULL_MAX_KEY_COLS, "pool"), 0);
		len = kernelstats__atom__get_packed_size(&s->atom);
		assert_true(len <= sizeof(buf));
		kernelstats__atom__pack(&s->atom, buf);
		back = kernelstats__atom__unpack(NULL, len, buf);
		assert_non_null(back);
		assert_int_equal(back->payload_case, sh.oneof->id);
		assert_int_equal(payload_buckets(back, &sh)[7], 11);
		kernelstats__atom__free_unpacked(back, NULL);
		atom_slot_free(s);
	}
}

/* A writable copy of Atom whose field for metric points to a copy of its message. */
struct planted {
	ProtobufCMessageDescriptor atom, msg;
	ProtobufCFieldDescriptor *atom_fields, *msg_fields;
	ProtobufCEnumDescriptor enm;
};

static void plant(struct planted *p, const char *metric)
{
	const ProtobufCFieldDescriptor *f = atom_field_of(&kernelstats__atom__descriptor, metric);
	size_t n = kernelstats__atom__descriptor.n_fields, i;

	assert_non_null(f);
	p->atom = kernelstats__atom__descriptor;
	p->atom_fields = calloc(n, sizeof(*p->atom_fields));
	assert_non_null(p->atom_fields);
	memcpy(p->atom_fields, p->atom.fields, n * sizeof(*p->atom_fields));
	p->atom.fields = p->atom_fields;
	p->msg = *(const ProtobufCMessageDescriptor *)f->descriptor;
	p->msg_fields = calloc(p->msg.n_fields, sizeof(*p->msg_fields));
	assert_non_null(p->msg_fields);
	memcpy(p->msg_fields, p->msg.fields, p->msg.n_fields * sizeof(*p->msg_fields));
	p->msg.fields = p->msg_fields;
	for (i = 0; i < n; i++)
		if (p->atom_fields[i].id == f->id)
			p->atom_fields[i].descriptor = &p->msg;
}

static void unplant(struct planted *p)
{
	free(p->atom_fields);
	free(p->msg_fields);
}

/* Histogram 0 loses its message: one warning names it and the fix. */
static void test_planted_histogram_without_message(void **state)
{
	struct planted p;
	size_t i, n;

	(void)state;
	plant(&p, cat.hists[0].metric);
	for (i = n = 0; i < p.atom.n_fields; i++)
		if (!atom_field_of(&(ProtobufCMessageDescriptor){ .n_fields = 1,
				   .fields = &p.atom_fields[i] }, cat.hists[0].metric))
			p.atom_fields[n++] = p.atom_fields[i];
	p.atom.n_fields = n;
	assert_true(check(&p.atom, &cat) > 0);
	assert_non_null(strstr(warnings, cat.hists[0].metric));
	assert_non_null(strstr(warnings, "has no atom: add message"));
	unplant(&p);
}

/* A catalog without histogram 0: its message has no histogram. */
static void test_planted_message_without_histogram(void **state)
{
	struct kstats_snapshot part = cat;

	(void)state;
	part.hists++;
	part.nhists--;
	assert_true(check(&kernelstats__atom__descriptor, &part) > 0);
	assert_non_null(strstr(warnings, cat.hists[0].metric));
	assert_non_null(strstr(warnings, "has no histogram in the objects"));
}

/* Histogram 0's bucket field renamed to every other unit's word. */
static void test_planted_unit_mismatch(void **state)
{
	const struct kstats_unit_info *units;
	struct atom_shape sh;
	struct planted p;
	char why[256], name[128];
	size_t n, u, i;

	(void)state;
	units = kstats_units(&n);
	assert_int_equal(atom_shape_init(&sh, &kernelstats__atom__descriptor,
					 cat.hists[0].metric, why, sizeof(why)), 0);
	for (u = 0; u < n; u++) {
		if (units[u].id == cat.hists[0].unit)
			continue;
		plant(&p, cat.hists[0].metric);
		snprintf(name, sizeof(name), "what" ATOM_BUCKETS_WORD "%s", units[u].atom_word);
		for (i = 0; i < p.msg.n_fields; i++)
			if (p.msg_fields[i].id == sh.buckets->id)
				p.msg_fields[i].name = name;
		assert_int_equal(check(&p.atom, &cat), 1);
		assert_non_null(strstr(warnings, "or fix the unit in DEFINE_BPF_HISTOGRAM"));
		unplant(&p);
	}
}

/* The first histogram keyed by an enum loses its last proto enum value, then gains one. */
static void test_planted_enum_value(void **state)
{
	ProtobufCEnumValue *values;
	struct atom_shape sh;
	struct planted p;
	char why[256];
	size_t h, k = 0, i;

	(void)state;
	for (h = 0; h < cat.nhists; h++) {
		assert_int_equal(atom_shape_init(&sh, &kernelstats__atom__descriptor,
						 cat.hists[h].metric, why, sizeof(why)), 0);
		for (k = 0; k < sh.nkeys && sh.keys[k]->type != PROTOBUF_C_TYPE_ENUM; k++)
			;
		if (k < sh.nkeys)
			break;
	}
	if (h == cat.nhists) {
		printf("# SKIP: no histogram of the built objects is keyed by an enum\n");
		skip();
	}
	plant(&p, cat.hists[h].metric);
	for (i = 0; i < p.msg.n_fields; i++)
		if (p.msg_fields[i].id == sh.keys[k]->id) {
			p.enm = *(const ProtobufCEnumDescriptor *)sh.keys[k]->descriptor;
			p.enm.n_values--;
			p.msg_fields[i].descriptor = &p.enm;
		}
	assert_int_equal(check(&p.atom, &cat), 1);
	assert_non_null(strstr(warnings, "has no value in"));
	assert_non_null(strstr(warnings, "to proto/kernelstats_atoms.proto"));

	/* And one value more than the BPF enum has keys for. */
	values = calloc(p.enm.n_values + 2, sizeof(*values));
	assert_non_null(values);
	memcpy(values, p.enm.values, (p.enm.n_values + 1) * sizeof(*values));
	values[p.enm.n_values + 1] = values[p.enm.n_values];
	values[p.enm.n_values + 1].name = "PLANTED";
	values[p.enm.n_values + 1].value = 1000;
	p.enm.values = values;
	p.enm.n_values += 2;
	assert_int_equal(check(&p.atom, &cat), 1);
	assert_non_null(strstr(warnings, "PLANTED = 1000"));
	assert_non_null(strstr(warnings, "add it there or remove it from the proto"));
	free(values);
	unplant(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_objects_match_schema),
		cmocka_unit_test(test_planted_histogram_without_message),
		cmocka_unit_test(test_planted_message_without_histogram),
		cmocka_unit_test(test_planted_unit_mismatch),
		cmocka_unit_test(test_planted_enum_value),
	};

	return cmocka_run_group_tests_name("pull_schema", tests, setup, teardown);
}
