/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every tool (kstats, kstats-loader, the JNI binding) says and parses
 * the same way: fixes, why an object is not loaded, command-line numbers,
 * escaped text, the object directory and the unit table.
 */
#ifndef KSTATS_TOOL_H
#define KSTATS_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kstats_status.h"

#define KSTATS_FIX_LOAD "run kstats-loader"
#define KSTATS_FIX_STATUS "see kstats status"
#define KSTATS_GROUP "kstats"
#define KSTATS_FIX_PERM "needs CAP_BPF and group " KSTATS_GROUP

/* What this user lacks: KSTATS_FIX_PERM outside group kstats, else CAP_BPF or root. */
const char *kstats_perm_fix(void);
/* Appends "; <kstats_perm_fix()>" when err is EPERM/EACCES. */
void kstats_add_fix(char *msg, size_t len, int err);

/* Room for a line with any reason the loader writes. */
#define KSTATS_WHY_LEN 4096

/*
 * Object o's outcome line into buf: "OUTCOME: reason (critical)", or for o
 * NULL (not in the status) "its map is not pinned".  Returns the fix for a
 * metric of o that is not loaded: "" when skipped (SKIPPED_*: this kernel's
 * doing), KSTATS_FIX_STATUS when it failed, else KSTATS_FIX_LOAD.
 */
const char *kstats_why(const struct kstats_status_obj *o, char *buf, size_t len);

/*
 * Command-line numbers: decimal digits, no sign, blanks, exponent or hex.
 * The digits at s, *rest past them; -EINVAL: no digit, -ERANGE: too big.
 */
int kstats_strtou64(const char *s, uint64_t *out, const char **rest);
/*
 * Seconds, fractions allowed ("5", "0.3"), in (0, max]: 0, or -EINVAL with
 * "OPT takes seconds in (0, MAX], not 'ARG'" in err.
 */
int kstats_parse_seconds(const char *opt, const char *arg, double max, double *secs,
			 char *err, size_t errlen);
/*
 * A whole number in 1..max: 0, or -EINVAL with "OPT takes a positive
 * number[ up to MAX], not 'ARG'" in err.
 */
int kstats_parse_count(const char *opt, const char *arg, uint64_t max, uint64_t *out,
		       char *err, size_t errlen);

/*
 * Text from files, maps and atoms, made safe to print: printable ASCII as
 * is, any other byte and '\' as \xNN.  One record stays one line, and
 * nothing reaches a terminal or the kernel log as a command.  The len bytes
 * at s into out (outlen >= 1), whole escapes only, NUL-terminated; returns
 * how many bytes of s it took.
 */
#define KSTATS_ESCAPED_SIZE(n) (4 * (n) + 1)
size_t kstats_escape(char *out, size_t outlen, const char *s, size_t len);
void kstats_fputs_escaped(const char *s, FILE *f);

#define KSTATS_INSTALLED_OBJ_DIR "/usr/lib/kernelstats/bpf"
#define KSTATS_OBJ_DIR_HELP "bpf/ beside the binary, else ../lib/kernelstats/bpf from it"
/*
 * bpf/ beside the binary (a build tree), else ../lib/kernelstats/bpf from
 * it (an installed PREFIX), else KSTATS_INSTALLED_OBJ_DIR.
 */
const char *kstats_default_obj_dir(void);

/*
 * The units of a histogram's values (enum kstats_unit of kstats_meta.h):
 * one table, so a unit is named the same way in every output and the atoms.
 */
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
/* Like kstats_unit(), but an unknown id gets the plain count unit. */
const struct kstats_unit_info *kstats_unit_or_count(unsigned int id);
/* The unit whose atom_word is word, or NULL. */
const struct kstats_unit_info *kstats_unit_by_atom_word(const char *word);
/* The known units, for iteration: *n gets their count. */
const struct kstats_unit_info *kstats_units(size_t *n);

#endif /* KSTATS_TOOL_H */
