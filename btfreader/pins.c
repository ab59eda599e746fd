// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "kstats_pins.h"

int kstats_pin_path(char *buf, size_t len, const char *dir, const char *kind,
		    const char *obj, const char *name)
{
	int n = snprintf(buf, len, "%s/%s_%s_", dir, kind, obj);
	char *p;

	if (n < 0 || (size_t)n >= len || strlen(name) >= len - n)
		return -ENAMETOOLONG;
	for (p = buf + n; *name; name++)
		*p++ = *name == '/' ? '_' : *name;
	*p = 0;
	return 0;
}

bool kstats_is_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type == BPF_FS_MAGIC;
}

int kstats_ensure_bpffs(const char *pin_dir, char *err, size_t errlen)
{
	size_t n = strlen(KSTATS_BPFFS);

	if (strncmp(pin_dir, KSTATS_BPFFS, n) || (pin_dir[n] && pin_dir[n] != '/'))
		return 0;
	if (kstats_is_bpffs(KSTATS_BPFFS))
		return 0;
	if (mount("bpf", KSTATS_BPFFS, "bpf", 0, "mode=0755")) {
		int ret = -errno;

		snprintf(err, errlen, "bpffs is not mounted on %s and mounting it failed: %s; "
			 "run: mount -t bpf bpf %s", KSTATS_BPFFS, strerror(errno),
			 KSTATS_BPFFS);
		return ret;
	}
	return 0;
}

bool kstats_off_bpffs(const char *path)
{
	struct statfs st;

	return !statfs(path, &st) && st.f_type != BPF_FS_MAGIC;
}

const char *kstats_fd_kind(int fd)
{
	static const char *const kinds[] = { "map", "prog", "link" };
	char path[64], target[64] = "";
	size_t i;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (readlink(path, target, sizeof(target) - 1) < 0)
		return "map";	/* no /proc: let the map info call decide */
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strncmp(target, "anon_inode:bpf-", 15) && !strcmp(target + 15, kinds[i]))
			return i == 1 ? "program" : kinds[i];
	return "object";
}
