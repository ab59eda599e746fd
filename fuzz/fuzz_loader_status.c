// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as the loader's previous status file,
 * then everything the loader asks of it: previous maps and their creation
 * times and types, and the pins an object adopts.  Beyond "no crash, no
 * leak": whatever the file says, no adopted pin may lie outside the pin dir
 * or carry another object's name, since the loader unlinks and replaces them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"

#define PIN_DIR "/sys/fs/bpf/kernelstats-fuzz-none"

static const char *const names[] = { "compaction", "a", "a_b", "", "objects" };

static void check_object(struct loader_ctx *ctx, const char *name)
{
	struct kstats_status_obj res = {};
	struct map_types types;
	uint64_t boot, real;
	size_t i;

	if (obj_init(&res))
		abort();
	snprintf(res.name, KSTATS_NAME_LEN, "%s", name);
	prev_map_created(ctx, name, "map", 1, &boot, &real);
	prev_map_types(ctx, name, "map", 1, types.key, types.value);
	adopt_prev_pins(ctx, &res);
	for (i = 0; i < res.npins; i++)
		if (!in_pin_dir(ctx, res.pins[i]) || !strstr(res.pins[i], name))
			abort();	/* a status file steered us out of the pin dir */
	kstats_status_obj_free(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct loader_ctx ctx = { .obj_dir = "/nonexistent", .pin_dir = PIN_DIR,
				  .status_path = "fuzz-input" };
	size_t i;

	status_parse_prev(&ctx, (const char *)data, size);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check_object(&ctx, names[i]);
	status_free_prev(&ctx);
	return 0;
}
