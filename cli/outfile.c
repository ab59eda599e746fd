// SPDX-License-Identifier: GPL-2.0
/*
 * Atomic output for node_exporter's textfile collector and for scripts,
 * through the one writer (kstats_file_replace_owned()): a reader sees the
 * old file or the new one, never a torn one, and the directory is root's
 * or ours, reached through no symlink (node_exporter's own directory sits
 * in user prometheus' /var/lib/prometheus).  0644 less the umask: the
 * collector runs as another user (the textfile unit's UMask=0022).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "kstats.h"
#include "kstats_fileio.h"

int kstats_write_atomic(const char *path, const char *buf, size_t len,
			char *msg, size_t msglen)
{
	char why[PATH_MAX + 256];
	int ret = kstats_file_replace_owned(path, buf, len, 0644, why, sizeof(why));

	if (ret)
		snprintf(msg, msglen, "cannot write %s: %s", path, why);
	return ret;
}
