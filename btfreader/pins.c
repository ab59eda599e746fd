// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>

#include "kstats_pins.h"
#include "kstats_reader.h"

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

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int kstats_pin_get(const char *pin, unsigned int file_flags, struct stat *st)
{
	LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = file_flags);
	struct stat before;
	int fd, tries;

	for (tries = 0; tries < 3; tries++) {
		if (stat(pin, &before))
			memset(&before, 0, sizeof(before));
		fd = bpf_obj_get_opts(pin, &opts);
		if (fd < 0)
			return -errno;
		if (!stat(pin, st) && same_inode(&before, st))
			return fd;
		close(fd);
	}
	return -EAGAIN;
}

int kstats_pin_changed(const char *pin, const struct stat *st)
{
	struct stat now;

	if (stat(pin, &now))
		return -errno;
	return !same_inode(&now, st);
}

int kstats_ensure_bpffs(const char *pin_dir, char *err, size_t errlen)
{
	size_t n = strlen(KSTATS_BPFFS);

	if (strncmp(pin_dir, KSTATS_BPFFS, n) || (pin_dir[n] && pin_dir[n] != '/') ||
	    kstats_is_bpffs(KSTATS_BPFFS))
		return 0;
	if (!mount("bpf", KSTATS_BPFFS, "bpf", 0, "mode=0755"))
		return 0;
	return kstats_fail(err, errlen, errno, "bpffs is not mounted on %s and mounting it "
			   "failed: %s; run: mount -t bpf bpf %s", KSTATS_BPFFS, strerror(errno),
			   KSTATS_BPFFS);
}

__u32 kstats_fd_obj_id(int fd)
{
	struct { __u32 type, id; } info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

__u32 kstats_pin_id(const char *pin)
{
	int fd = bpf_obj_get(pin);
	__u32 id;

	if (fd < 0)
		return 0;
	id = kstats_fd_obj_id(fd);
	close(fd);
	return id;
}
