/* SPDX-License-Identifier: GPL-2.0 */
/* What kstats, kstats-loader and the JNI binding say and parse the same way. */
#ifndef KSTATS_TOOL_H
#define KSTATS_TOOL_H

#include "kstats_reader.h"
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

/* o's outcome into buf, "OUTCOME: reason (critical)" ("its map is not pinned" for NULL);
 * returns the fix: "" when SKIPPED_* (this kernel's doing), else _STATUS or _LOAD. */
const char *kstats_why(const struct kstats_status_obj *o, char *buf, size_t len);

/* Decimal digits at s (no sign, blank, exponent or hex), *rest past them; -EINVAL, -ERANGE. */
int kstats_strtou64(const char *s, uint64_t *out, const char **rest);
/* Seconds in (0, max], fractions allowed ("0.3"): 0, or -EINVAL with the message in err. */
int kstats_parse_seconds(const char *opt, const char *arg, double max, double *secs,
			 char *err, size_t errlen);
/* A whole number in 1..max: 0, or -EINVAL with the message in err. */
int kstats_parse_count(const char *opt, const char *arg, uint64_t max, uint64_t *out,
		       char *err, size_t errlen);

/* Bytes of the UTF-8 sequence at s (RFC 3629: no overlong form, surrogate or code
 * point past U+10FFFF), 0 if it is not one: where a name must stay valid text. */
size_t kstats_utf8_len(const char *s);
/* Text made safe to print (one record one line, no terminal or kernel log command): printable
 * ASCII as is, any other byte and '\' as \xNN.  The len bytes at s into out (outlen >= 1), whole
 * escapes only; returns how many bytes of s it took. */
#define KSTATS_ESCAPED_SIZE(n) (4 * (n) + 1)
size_t kstats_escape(char *out, size_t outlen, const char *s, size_t len);

#define KSTATS_INSTALLED_OBJ_DIR "/usr/lib/kernelstats/bpf"
#define KSTATS_OBJ_DIR_HELP "bpf/ beside the binary, else ../lib/kernelstats/bpf from it"
/* KSTATS_OBJ_DIR_HELP (a build tree, an installed PREFIX), else KSTATS_INSTALLED_OBJ_DIR. */
const char *kstats_default_obj_dir(void);

/* One table of units (enum kstats_unit), named the same in every output and the atoms. */
struct kstats_unit_info {
	unsigned int id;		/* enum kstats_unit */
	const char *name;		/* JSON "unit": "us", "bytes", "count" */
	const char *axis;		/* ASCII column head: "latency", "size" */
	const char *atom_word;		/* bucket field <what>_log2_buckets_<atom_word> */
	const char *prom_suffix;	/* metric name suffix: "_seconds", "" */
	const char *prom_help;		/* "latencies in seconds" */
	unsigned int prom_shift;	/* OpenMetrics value = base / 10^prom_shift */
	const char *const *steps;	/* display: steps[i + 1] is step times steps[i] */
	size_t nsteps;
	double step;
};

/* The unit with id, or whose atom_word is word; NULL when this build does not know it. */
const struct kstats_unit_info *kstats_unit(unsigned int id);
const struct kstats_unit_info *kstats_unit_by_atom_word(const char *word);
/* The known units, *n of them. */
const struct kstats_unit_info *kstats_units(size_t *n);

#endif /* KSTATS_TOOL_H */
