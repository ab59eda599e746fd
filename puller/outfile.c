// SPDX-License-Identifier: GPL-2.0
/*
 * Atomic output for node_exporter's textfile collector and for scripts: a
 * reader sees the old file or the new one, never a torn one.  Unlike pull's
 * durable_write() the temp name is unique (two dumps may write one file) and
 * the file is 0644 (the collector runs as another user); it starts with
 * '.', so collectors that glob *.prom ignore it.
 */
#include <stdio.h>
#include <string.h>

#include "kstats.h"
#include "kstats_fileio.h"

int kstats_write_atomic(const char *path, const char *buf, size_t len,
			char *msg, size_t msglen)
{
	int ret = kstats_file_replace(path, buf, len, 0644);

	if (ret)
		snprintf(msg, msglen, "cannot write %s: %s", path, strerror(-ret));
	return ret;
}
