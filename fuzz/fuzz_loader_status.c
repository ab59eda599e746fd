// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as the loader's previous status file,
 * then everything the loader asks of it: pin owners, previous maps and
 * their creation times and types, and the pins an object adopts.  Beyond
 * "no crash, no leak": whatever the file says, no adopted or owned pin may
 * lie outside the pin dir, since the loader unlinks and replaces them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "loader.h"

#define PIN_DIR "/sys/fs/bpf/kernelstats-fuzz-none"

static const char *const names[] = { "compaction", "a", "a_b", "", "objects" };

static void check_object(struct loader_ctx *ctx, const char *name)
{
	struct obj_result res = {};
	struct map_types types;
	__u64 boot, real;
	size_t i;

	snprintf(res.name, sizeof(res.name), "%s", name);
	prev_map_created(ctx, name, "map", 1, &boot, &real);
	prev_map_types(ctx, name, "map", 1, &types);
	adopt_prev_pins(ctx, &res);
	for (i = 0; i < res.npins; i++)
		if (!in_pin_dir(ctx, res.pins[i]))
			abort();	/* a status file steered us out of the pin dir */
	pin_owner_other(ctx, PIN_DIR "/map_a_b_c", name);
	free_result(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct loader_ctx ctx = { .obj_dir = "/nonexistent", .pin_dir = PIN_DIR,
				  .status_path = "fuzz-input" };
	size_t i;

	status_parse_prev(&ctx, (const char *)data, size);
	owners_from_status(&ctx);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check_object(&ctx, names[i]);
	owners_free(&ctx);
	json_object_put(ctx.prev);
	return 0;
}
