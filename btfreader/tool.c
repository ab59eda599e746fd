// SPDX-License-Identifier: GPL-2.0
/* What every tool says and parses the same way (contract in kstats_tool.h). */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kstats_tool.h"

const char *kstats_perm_fix(void)
{
	struct group *g = getgrnam(KSTATS_GROUP);
	gid_t groups[256];
	int n = getgroups(sizeof(groups) / sizeof(groups[0]), groups), i;
	unsigned long long eff = 0;
	char line[256];
	FILE *f;

	for (i = 0; g && i < n && groups[i] != g->gr_gid; i++)
		;
	if (!g || (getegid() != g->gr_gid && i >= n))
		return KSTATS_FIX_PERM;
	f = fopen("/proc/self/status", "re");
	while (f && fgets(line, sizeof(line), f) && sscanf(line, "CapEff: %llx", &eff) != 1)
		;
	if (f)
		fclose(f);
	/* CAP_BPF (39) or CAP_SYS_ADMIN (21) in the effective set. */
	if (!(eff & (1ull << 39 | 1ull << 21)))
		return "needs CAP_BPF (already in group " KSTATS_GROUP ")";
	return "root-only (the pin's mode, or bpffs mounted 0700); needs root";
}

void kstats_add_fix(char *msg, size_t len, int err)
{
	size_t n = strlen(msg);

	if ((err == -EPERM || err == -EACCES) && !strstr(msg, "; needs ") &&
	    !strstr(msg, "root-only") && n < len)
		snprintf(msg + n, len - n, "; %s", kstats_perm_fix());
	else if ((err == -EMFILE || err == -ENFILE) && n < len)
		snprintf(msg + n, len - n, "; raise the open files limit (ulimit -n)");
}

const char *kstats_why(const struct kstats_status_obj *o, char *buf, size_t len)
{
	if (!o) {
		snprintf(buf, len, "its map is not pinned");
		return KSTATS_FIX_LOAD;
	}
	snprintf(buf, len, "%s%s%s%s", kstats_outcome_name(o->outcome),
		 *o->reason ? ": " : "", o->reason, o->critical ? " (critical)" : "");
	if (o->outcome >= KSTATS_SKIPPED_DISABLED && o->outcome <= KSTATS_SKIPPED_OBJECT_NAME)
		return "";
	return kstats_outcome_failed(o->outcome) ? KSTATS_FIX_STATUS : KSTATS_FIX_LOAD;
}

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

int kstats_parse_seconds(const char *opt, const char *arg, double max, double *secs,
			 char *err, size_t errlen)
{
	const char *rest = arg;
	uint64_t whole;

	/* Not strtod alone: it takes " 5", "+5", "1e3", "0x10", "inf" and "nan". */
	if (!kstats_strtou64(arg, &whole, &rest))
		for (rest += *rest == '.'; *rest >= '0' && *rest <= '9'; rest++)
			;
	*secs = rest != arg && !*rest && rest[-1] != '.' ? strtod(arg, NULL) : 0;
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

size_t kstats_utf8_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i, n = *s < 0x80 ? 1 : *s < 0xc2 ? 0 : *s < 0xe0 ? 2 : *s < 0xf0 ? 3 :
		      *s < 0xf5 ? 4 : 0;

	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((*s == 0xe0 && s[1] < 0xa0) || (*s == 0xed && s[1] >= 0xa0) ||
	    (*s == 0xf0 && s[1] < 0x90) || (*s == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

size_t kstats_escape(char *out, size_t outlen, const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = s[i];
		bool plain = c >= 0x20 && c < 0x7f && c != '\\';

		if (n + (plain ? 2 : 5) > outlen)
			break;
		if (plain)
			out[n++] = c;
		else
			n += snprintf(out + n, outlen - n, "\\x%02x", c);
	}
	out[n] = 0;
	return i;
}

const char *kstats_default_obj_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX], *slash;
	struct stat st;
	ssize_t n;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return KSTATS_INSTALLED_OBJ_DIR;
	*slash = '\0';
	if (snprintf(dir, sizeof(dir), "%s/bpf", exe) < (int)sizeof(dir) &&
	    !stat(dir, &st) && S_ISDIR(st.st_mode))
		return dir;
	if (snprintf(dir, sizeof(dir), "%s/../lib/kernelstats/bpf", exe) < (int)sizeof(dir) &&
	    realpath(dir, exe))
		return strcpy(dir, exe);
	dir[0] = '\0';
	return KSTATS_INSTALLED_OBJ_DIR;
}
