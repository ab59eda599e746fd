// SPDX-License-Identifier: GPL-2.0
/*
 * Generic atom building: the roles of a message's fields come from their
 * descriptors (proto/kernelstats_atoms.proto says which), and a payload is
 * filled through the descriptors' offsets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atom_schema.h"

const ProtobufCFieldDescriptor *
atom_field_of(const ProtobufCMessageDescriptor *atom, const char *metric)
{
	const ProtobufCFieldDescriptor *f;
	unsigned int i;

	for (i = 0; i < atom->n_fields; i++) {
		f = &atom->fields[i];
		if (f->type == PROTOBUF_C_TYPE_MESSAGE &&
		    (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
		    !strcmp(((const ProtobufCMessageDescriptor *)f->descriptor)->short_name,
			    metric))
			return f;
	}
	return NULL;
}

static bool is_key_type(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_ENUM:
	case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
		return true;
	default:
		return false;
	}
}

/* repeated int32 <what>_log2_buckets_<unit>: the unit, or why not. */
static int bucket_unit(const ProtobufCFieldDescriptor *f,
		       const struct kstats_unit_info **unit, char *why, size_t len)
{
	const char *word = strstr(f->name, ATOM_BUCKETS_WORD);

	if (!word || word == f->name) {
		snprintf(why, len, "repeated field %s is not named "
			 "<what>" ATOM_BUCKETS_WORD "<unit>", f->name);
		return -EINVAL;
	}
	word += strlen(ATOM_BUCKETS_WORD);
	*unit = kstats_unit_by_atom_word(word);
	if (!*unit) {
		snprintf(why, len, "bucket field %s: unit '%s' is not one of "
			 "libkstats/units.c (micros, bytes, count)", f->name, word);
		return -EINVAL;
	}
	return 0;
}

static int add_field(struct atom_shape *s, const ProtobufCFieldDescriptor *f,
		     char *why, size_t len)
{
	const char *m = s->msg->short_name;

	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
		snprintf(why, len, "%s.%s: oneof fields are not supported", m, f->name);
		return -EINVAL;
	}
	if (f->label == PROTOBUF_C_LABEL_REPEATED && f->type == PROTOBUF_C_TYPE_INT32 &&
	    !s->buckets) {
		s->buckets = f;
		return bucket_unit(f, &s->unit, why, len);
	}
	if (f->label != PROTOBUF_C_LABEL_REPEATED && f->type == PROTOBUF_C_TYPE_STRING &&
	    !s->name) {
		s->name = f;
		return 0;
	}
	if (f->label != PROTOBUF_C_LABEL_REPEATED && is_key_type(f->type) &&
	    s->nkeys < PULL_MAX_KEY_COLS) {
		s->keys[s->nkeys++] = f;
		return 0;
	}
	snprintf(why, len, "%s.%s fits no role: one repeated int32 bucket field, "
		 "one string name and up to %d enum or integer key fields", m, f->name,
		 PULL_MAX_KEY_COLS);
	return -EINVAL;
}

static int by_number(const void *a, const void *b)
{
	const ProtobufCFieldDescriptor *x = *(const ProtobufCFieldDescriptor *const *)a;
	const ProtobufCFieldDescriptor *y = *(const ProtobufCFieldDescriptor *const *)b;

	return (x->id > y->id) - (x->id < y->id);
}

int atom_shape_init(struct atom_shape *s, const ProtobufCMessageDescriptor *atom,
		    const char *metric, char *why, size_t len)
{
	unsigned int i;
	int ret;

	memset(s, 0, sizeof(*s));
	s->oneof = atom_field_of(atom, metric);
	if (!s->oneof)
		return -ENOENT;
	s->msg = s->oneof->descriptor;
	for (i = 0; i < s->msg->n_fields; i++) {
		ret = add_field(s, &s->msg->fields[i], why, len);
		if (ret)
			return ret;
	}
	if (!s->buckets) {
		snprintf(why, len, "%s has no bucket field: add repeated int32 "
			 "<what>" ATOM_BUCKETS_WORD "<unit>", s->msg->short_name);
		return -EINVAL;
	}
	qsort(s->keys, s->nkeys, sizeof(s->keys[0]), by_number);
	return 0;
}

static void *member(void *msg, unsigned int offset)
{
	return (char *)msg + offset;
}

static void set_key(void *msg, const ProtobufCFieldDescriptor *f, int64_t v)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		*(uint64_t *)member(msg, f->offset) = (uint64_t)v;
		break;
	default:	/* 32-bit and enums: the key column's low bits */
		*(uint32_t *)member(msg, f->offset) = (uint32_t)v;
	}
	if (f->label == PROTOBUF_C_LABEL_OPTIONAL)
		*(protobuf_c_boolean *)member(msg, f->quantifier_offset) = 1;
}

int atom_build(struct atom_slot *s, const struct atom_shape *shape,
	       const int64_t *key, size_t nkey, const char *name)
{
	void *msg = calloc(1, shape->msg->sizeof_message);
	size_t i;

	if (!msg)
		return -ENOMEM;
	shape->msg->message_init(msg);
	for (i = 0; i < shape->nkeys && i < nkey; i++)
		set_key(msg, shape->keys[i], key[i]);
	if (shape->name && *name) {
		snprintf(s->name, sizeof(s->name), "%s", name);
		*(char **)member(msg, shape->name->offset) = s->name;
	}
	*(size_t *)member(msg, shape->buckets->quantifier_offset) = PULL_NR_BUCKETS;
	*(int32_t **)member(msg, shape->buckets->offset) = s->buckets;
	*(uint32_t *)member(&s->atom, shape->oneof->quantifier_offset) = shape->oneof->id;
	*(ProtobufCMessage **)member(&s->atom, shape->oneof->offset) = msg;
	s->payload = msg;
	return 0;
}

void atom_slot_free(struct atom_slot *s)
{
	if (!s)
		return;
	free(s->payload);
	free(s);
}
