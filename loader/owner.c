// SPDX-License-Identifier: GPL-2.0
/*
 * Who owns each pin.  Pin names join object and map or program names with
 * '_', which both may contain, so a name alone cannot say whose a pin is
 * (objects a_b + map c and a + map b_c both give map_a_b_c).  The owner is
 * instead recorded: the previous status file (root's, in the run dir, as
 * short-lived as bpffs itself) lists the pins of every object, and objects
 * of this run claim theirs as they go, in sorted order.  An object never
 * touches a pin another object owns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "loader.h"

struct pin_owner {
	char *pin;
	char *obj;
};

static struct pin_owner *find(const struct loader_ctx *ctx, const char *pin)
{
	size_t i;

	for (i = 0; i < ctx->nowners; i++)
		if (!strcmp(ctx->owners[i].pin, pin))
			return &ctx->owners[i];
	return NULL;
}

static int set_owner(struct loader_ctx *ctx, const char *pin, const char *obj)
{
	struct pin_owner *o = find(ctx, pin), *grown;
	char *copy = strdup(obj);

	if (!copy)
		return -ENOMEM;
	if (!o) {
		grown = realloc(ctx->owners, (ctx->nowners + 1) * sizeof(*grown));
		if (!grown || !(grown[ctx->nowners].pin = strdup(pin))) {
			if (grown)
				ctx->owners = grown;
			free(copy);
			return -ENOMEM;
		}
		ctx->owners = grown;
		o = &ctx->owners[ctx->nowners++];
	} else {
		free(o->obj);
	}
	o->obj = copy;
	return 0;
}

/* The pins every object of the previous status file owned. */
void owners_from_status(struct loader_ctx *ctx)
{
	struct json_object *objs = status_array(ctx->prev, "objects"), *o, *pins, *n;
	const char *pin;
	size_t i, j;

	for (i = 0; objs && i < json_object_array_length(objs); i++) {
		o = json_object_array_get_idx(objs, i);
		pins = status_array(o, "pins");
		if (!pins || !json_object_object_get_ex(o, "name", &n) ||
		    !json_object_is_type(n, json_type_string))
			continue;
		for (j = 0; j < json_object_array_length(pins); j++) {
			pin = json_object_get_string(json_object_array_get_idx(pins, j));
			if (in_pin_dir(ctx, pin))
				set_owner(ctx, pin, json_object_get_string(n));
		}
	}
}

/* The object other than obj that owns pin, or NULL. */
const char *pin_owner_other(const struct loader_ctx *ctx, const char *pin,
			    const char *obj)
{
	const struct pin_owner *o = *pin ? find(ctx, pin) : NULL;

	return o && strcmp(o->obj, obj) ? o->obj : NULL;
}

/* After an object's run: what it owns now is recorded as its. */
void owners_claim(struct loader_ctx *ctx, const struct obj_result *res)
{
	size_t i;

	for (i = 0; i < res->npins; i++)
		set_owner(ctx, res->pins[i], res->name);
}

void owners_free(struct loader_ctx *ctx)
{
	size_t i;

	for (i = 0; i < ctx->nowners; i++) {
		free(ctx->owners[i].pin);
		free(ctx->owners[i].obj);
	}
	free(ctx->owners);
	ctx->owners = NULL;
	ctx->nowners = 0;
}
