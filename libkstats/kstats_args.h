/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Numbers from the command line, one syntax for every tool (kstats and
 * kstats-loader): decimal digits, no sign, no blanks, no exponent, no hex.
 */
#ifndef KSTATS_ARGS_H
#define KSTATS_ARGS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The digits at s as a number; *rest is set past them.  -EINVAL when s
 * does not start with a digit, -ERANGE past UINT64_MAX.
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

#endif /* KSTATS_ARGS_H */
