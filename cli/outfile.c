// SPDX-License-Identifier: GPL-2.0
/*
 * Atomic output for node_exporter's textfile collector and for scripts,
 * through the one writer (kstats_file_replace()): a reader sees the old
 * file or the new one, never a torn one.  0644 less the umask: the
 * collector runs as another user (the textfile unit's UMask=0022).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kstats.h"
#include "kstats_fileio.h"

int kstats_write_atomic(const char *path, const char *buf, size_t len,
			char *msg, size_t msglen)
{
	int ret = kstats_file_replace(path, buf, len, 0644);

	if (ret)
		snprintf(msg, msglen, "cannot write %s: %s", path, ret == -EINVAL ?
			 "a symlink or not a regular file; remove it" : strerror(-ret));
	return ret;
}
