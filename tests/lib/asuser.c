// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <cmocka.h>

#include "asuser.h"

int asuser_drop(const struct asuser *u)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (prctl(PR_SET_KEEPCAPS, 1) || setgroups(u->ngroups, u->groups) ||
	    setresgid(u->gid, u->gid, u->gid) || setresuid(u->uid, u->uid, u->uid))
		return -errno;
	data[0].effective = data[0].permitted = (__u32)u->caps;
	data[1].effective = data[1].permitted = (__u32)(u->caps >> 32);
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/* No cmocka in the child: its failures would unwind into the parent's runner. */
static _Noreturn void child(const struct asuser *u, asuser_fn fn, void *arg,
			    char *msg, size_t len, int out)
{
	int ret = asuser_drop(u);

	if (ret)
		snprintf(msg, len, "cannot drop privileges: %s", strerror(-ret));
	else
		ret = fn(arg, msg, len);
	if (write(out, &ret, sizeof(ret)) != sizeof(ret) ||
	    write(out, msg, strlen(msg)) < 0)
		_exit(1);
	_exit(0);
}

int asuser_run(const struct asuser *u, asuser_fn fn, void *arg, char *msg,
	       size_t len)
{
	int pfd[2], status, ret = 0;
	ssize_t n;
	pid_t pid;

	assert_true(len > 0);
	msg[0] = 0;
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(pfd[0]);
		child(u, fn, arg, msg, len, pfd[1]);
	}
	close(pfd[1]);
	n = read(pfd[0], &ret, sizeof(ret));
	if (n == sizeof(ret)) {
		n = read(pfd[0], msg, len - 1);
		msg[n > 0 ? n : 0] = 0;
	}
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("the child as uid %u died (status 0x%x): %s", (unsigned)u->uid,
			 status, msg);
	return ret;
}
