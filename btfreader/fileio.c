// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kstats_fileio.h"

int kstats_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		ret = -errno;
	close(fd);
	return ret;
}

int kstats_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int kstats_file_replace(const char *path, const void *buf, size_t len, mode_t mode)
{
	char dcopy[PATH_MAX], bcopy[PATH_MAX], tmp[PATH_MAX];
	const char *dir;
	int fd, ret;

	if ((size_t)snprintf(dcopy, sizeof(dcopy), "%s", path) >= sizeof(dcopy))
		return -ENAMETOOLONG;
	snprintf(bcopy, sizeof(bcopy), "%s", path);
	dir = dirname(dcopy);
	/* A leading '.' keeps globbing collectors (*.prom) off the temp file. */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir,
			     basename(bcopy)) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = kstats_write_full(fd, buf, len);
	if (!ret && fchmod(fd, mode))
		ret = -errno;
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return ret;
	}
	return kstats_fsync_dir(dir);
}
