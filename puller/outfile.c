// SPDX-License-Identifier: GPL-2.0
/*
 * Atomic output for node_exporter's textfile collector and for scripts: a
 * reader sees the old file or the new one, never a torn one.  Unlike pull's
 * durable_write() the temp name is unique (two dumps may write one file) and
 * the file is 0644 (the collector runs as another user); it starts with
 * '.', so collectors that glob *.prom ignore it.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kstats.h"
#include "pull.h"		/* fsync_dir */

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int kstats_write_atomic(const char *path, const char *buf, size_t len,
			char *msg, size_t msglen)
{
	char dcopy[PATH_MAX], bcopy[PATH_MAX], tmp[PATH_MAX + 16];
	const char *dir, *base;
	int fd, ret;

	snprintf(dcopy, sizeof(dcopy), "%s", path);
	snprintf(bcopy, sizeof(bcopy), "%s", path);
	dir = dirname(dcopy);
	base = basename(bcopy);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, base) >= sizeof(tmp)) {
		snprintf(msg, msglen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(msg, msglen, "cannot create a file in %s: %s", dir, strerror(errno));
		return ret;
	}
	ret = write_all(fd, buf, len);
	if (!ret && fchmod(fd, 0644))
		ret = -errno;
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		snprintf(msg, msglen, "cannot write %s: %s", path, strerror(-ret));
		unlink(tmp);
		return ret;
	}
	ret = fsync_dir(dir);
	if (ret)
		snprintf(msg, msglen, "%s written, but fsync of %s failed: %s",
			 path, dir, strerror(-ret));
	return ret;
}
