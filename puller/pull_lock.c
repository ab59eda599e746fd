// SPDX-License-Identifier: GPL-2.0
/* kstats pull: one pull at a time (flock on <state dir>/lock, with a timeout). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>

#include "kstats_fileio.h"
#include "pull_run.h"

int pull_take_lock(const struct pull_opts *o, int *out)
{
	struct timespec pause = { 0, 100 * 1000000L };
	uint64_t deadline = pull_clock_ns(CLOCK_MONOTONIC) + o->lock_timeout_s * 1000000000ull;
	char path[4096], pid[32] = "";
	int fd, n;

	snprintf(path, sizeof(path), "%s/lock", o->state_dir);
	fd = kstats_open_regular(path, O_RDWR | O_CREAT, 0640);
	if (fd < 0) {
		fprintf(stderr, "kstats pull: cannot open %s: %s\n", path, pull_open_error(fd));
		return fd;
	}
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			n = -errno;
			fprintf(stderr, "kstats pull: lock %s: %s\n", path, strerror(errno));
			close(fd);
			return n;
		}
		if (pull_clock_ns(CLOCK_MONOTONIC) >= deadline) {
			n = pread(fd, pid, sizeof(pid) - 1, 0);
			pid[n > 0 ? n : 0] = 0;
			pid[strcspn(pid, "\n")] = 0;
			fprintf(stderr, "kstats pull: another pull (pid %s) holds %s; gave up "
				"after %us (raise --lock-timeout)\n", *pid ? pid : "?", path,
				o->lock_timeout_s);
			close(fd);
			return -EBUSY;
		}
		nanosleep(&pause, NULL);
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, n, 0) != n)
		fprintf(stderr, "kstats pull: warning: cannot record pid in %s\n", path);
	*out = fd;
	return 0;
}
