// SPDX-License-Identifier: GPL-2.0
/*
 * kstats pull: where it writes, checked (the state and atoms directories),
 * and one pull at a time (flock on <state dir>/lock, with a timeout).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kstats_fileio.h"
#include "pull_run.h"

int pull_take_lock(const struct pull_opts *o, int *out)
{
	char path[4096], pid[32] = "";
	int fd, n;

	snprintf(path, sizeof(path), "%s/lock", o->state_dir);
	fd = kstats_open_regular(path, O_RDWR | O_CREAT, 0640);
	if (fd < 0) {
		fprintf(stderr, "kstats pull: cannot open %s: %s\n", path,
			fd == -ELOOP || fd == -EINVAL ?
			"a symlink or not a regular file; remove it" : strerror(-fd));
		return fd;
	}
	n = kstats_flock_wait(fd, o->lock_timeout_s * 1000000000ull);
	if (n == -EWOULDBLOCK) {
		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = 0;
		pid[strcspn(pid, "\n")] = 0;
		fprintf(stderr, "kstats pull: another pull (pid %s) holds %s; gave up "
			"after %us (raise --lock-timeout)\n", *pid ? pid : "?", path,
			o->lock_timeout_s);
		close(fd);
		return -EBUSY;
	}
	if (n) {
		fprintf(stderr, "kstats pull: lock %s: %s\n", path, strerror(-n));
		close(fd);
		return n;
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, n, 0) != n)
		fprintf(stderr, "kstats pull: warning: cannot record pid in %s\n", path);
	*out = fd;
	return 0;
}

int pull_check_dirs(const char *state_dir, const char *out_dir)
{
	char msg[1024];
	int ret;

	/* Both checked before either is made: a refusal leaves nothing behind. */
	ret = kstats_mkdir_private(state_dir, 0750, false, msg, sizeof(msg)) ?:
	      kstats_mkdir_private(out_dir, 0750, false, msg, sizeof(msg)) ?:
	      kstats_mkdir_private(state_dir, 0750, true, msg, sizeof(msg)) ?:
	      kstats_mkdir_private(out_dir, 0750, true, msg, sizeof(msg));
	if (!ret)
		return 0;
	/* Root on the packaged layout (a kstats-owned /var/lib/kernelstats). */
	fprintf(stderr, "kstats pull: refusing %s%s\n", msg,
		!geteuid() && strstr(msg, " is owned by uid ") ?
		", or run the pull as that user, as the packaged timer does (doc/pull.md)" : "");
	return ret;
}
