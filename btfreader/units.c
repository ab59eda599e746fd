// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "kstats_meta.h"
#include "kstats_tool.h"

static const char *const time_steps[] = { "µs", "ms", "s" };
static const char *const size_steps[] = { "B", "KiB", "MiB", "GiB", "TiB" };
static const char *const count_steps[] = { "", "k", "M", "G", "T" };

#define STEPS(a) a, sizeof(a) / sizeof(a[0])

static const struct kstats_unit_info units[] = {
	{ KSTATS_UNIT_USEC, "us", "latency", "micros", "_seconds",
	  "latencies in seconds", 6, STEPS(time_steps), 1000 },
	{ KSTATS_UNIT_BYTES, "bytes", "size", "bytes", "_bytes",
	  "sizes in bytes", 0, STEPS(size_steps), 1024 },
	{ KSTATS_UNIT_COUNT, "count", "value", "count", "",
	  "counts", 0, STEPS(count_steps), 1000 },
};

#define NUNITS (sizeof(units) / sizeof(units[0]))

const struct kstats_unit_info *kstats_unit(unsigned int id)
{
	size_t i;

	for (i = 0; i < NUNITS; i++)
		if (units[i].id == id)
			return &units[i];
	return NULL;
}

const struct kstats_unit_info *kstats_unit_by_atom_word(const char *word)
{
	size_t i;

	for (i = 0; i < NUNITS; i++)
		if (!strcmp(units[i].atom_word, word))
			return &units[i];
	return NULL;
}

const struct kstats_unit_info *kstats_units(size_t *n)
{
	*n = NUNITS;
	return units;
}
