/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The units of a histogram's values (enum kstats_unit of kstats_meta.h):
 * one table that every output reads, so a unit is named the same way in
 * the ASCII and JSON dumps, the OpenMetrics exposition and the atoms.
 */
#ifndef KSTATS_UNITS_H
#define KSTATS_UNITS_H

#include <stdbool.h>
#include <stddef.h>

struct kstats_unit_info {
	unsigned int id;		/* enum kstats_unit */
	const char *name;		/* JSON "unit": "us", "bytes", "count" */
	const char *axis;		/* ASCII column head: "latency", "size" */
	const char *atom_word;		/* bucket field <what>_log2_buckets_<atom_word> */
	const char *prom_suffix;	/* metric name suffix: "_seconds", "" */
	const char *prom_help;		/* "latencies in seconds" */
	/* OpenMetrics value = base value / 10^prom_shift (us -> s: 6). */
	unsigned int prom_shift;
	/* Display scaling: steps[i + 1] is step times steps[i]. */
	const char *const *steps;
	size_t nsteps;
	double step;
};

/* The unit with id, or NULL when this build does not know it. */
const struct kstats_unit_info *kstats_unit(unsigned int id);
/* The unit whose atom_word is word, or NULL. */
const struct kstats_unit_info *kstats_unit_by_atom_word(const char *word);
/* The known units, for iteration: *n gets their count. */
const struct kstats_unit_info *kstats_units(size_t *n);
/* Like kstats_unit(), but an unknown id gets the plain count unit. */
const struct kstats_unit_info *kstats_unit_or_count(unsigned int id);

#endif /* KSTATS_UNITS_H */
