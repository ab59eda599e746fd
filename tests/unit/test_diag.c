// SPDX-License-Identifier: GPL-2.0
/*
 * kstats' pin directory check (puller/diag.c) as a user who cannot pass a
 * directory above the pins: the message names the real errno.  It said
 * "cannot access ...: Success" because the fix hint, evaluated before
 * strerror(errno) in the same call, reset errno (issue 25).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "kstats.h"

/* In a child that dropped root for nobody (65534): the check's message. */
static void check_as_nobody(const char *pin_dir, char *msg, size_t len, int *ret)
{
	int fd[2], st;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char m[512] = "";
		int r;

		close(fd[0]);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		r = kstats_check_pin_dir(pin_dir, m, sizeof(m));
		if (write(fd[1], &r, sizeof(r)) != sizeof(r) ||
		    write(fd[1], m, strlen(m) + 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(fd[1]);
	assert_int_equal(read(fd[0], ret, sizeof(*ret)), sizeof(*ret));
	n = read(fd[0], msg, len - 1);
	assert_true(n > 0);
	msg[n] = 0;
	close(fd[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_denied_names_errno(void **state)
{
	char dir[64], pins[96], msg[512];
	int ret;

	(void)state;
	if (geteuid()) {
		skip();	/* needs root to drop to another user */
		return;
	}
	snprintf(dir, sizeof(dir), "/tmp/kstats-test-%d-diag-XXXXXX", (int)getpid());
	assert_non_null(mkdtemp(dir));	/* 0700 root: nobody cannot pass */
	snprintf(pins, sizeof(pins), "%s/kernelstats", dir);
	assert_int_equal(mkdir(pins, 0755), 0);
	check_as_nobody(pins, msg, sizeof(msg), &ret);
	rmdir(pins);
	rmdir(dir);
	assert_int_equal(ret, -EACCES);
	assert_non_null(strstr(msg, strerror(EACCES)));
	assert_null(strstr(msg, "Success"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_denied_names_errno),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
