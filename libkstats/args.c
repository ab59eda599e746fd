// SPDX-License-Identifier: GPL-2.0
/* Command-line numbers (contract in kstats_args.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "kstats_args.h"

int kstats_strtou64(const char *s, uint64_t *out, const char **rest)
{
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	*rest = s;
	return 0;
}

/* strtod alone would take " 5", "+5", "1e3", "0x10", "inf" and "nan". */
static bool decimal(const char *s)
{
	uint64_t whole;
	const char *rest;

	if (kstats_strtou64(s, &whole, &rest))
		return false;	/* -ERANGE: beyond any max too */
	for (rest += *rest == '.'; *rest >= '0' && *rest <= '9'; rest++)
		;
	return !*rest && rest[-1] != '.';
}

int kstats_parse_seconds(const char *opt, const char *arg, double max, double *secs,
			 char *err, size_t errlen)
{
	*secs = decimal(arg) ? strtod(arg, NULL) : 0;
	if (*secs > 0 && *secs <= max)
		return 0;
	snprintf(err, errlen, "%s takes seconds in (0, %g], not '%s'", opt, max, arg);
	return -EINVAL;
}

int kstats_parse_count(const char *opt, const char *arg, uint64_t max, uint64_t *out,
		       char *err, size_t errlen)
{
	const char *rest;
	char most[32] = "";

	if (!kstats_strtou64(arg, out, &rest) && !*rest && *out && *out <= max)
		return 0;
	if (max < UINT64_MAX)
		snprintf(most, sizeof(most), " up to %" PRIu64, max);
	snprintf(err, errlen, "%s takes a positive number%s, not '%s'", opt, most, arg);
	return -EINVAL;
}
