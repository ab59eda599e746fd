// SPDX-License-Identifier: GPL-2.0
/* Result lines, object checks and tool runs shared by the guest tests. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "guest.h"
#include "kstats_pins.h"

static bool any_failed;

void lab_result(const char *verdict, const char *test, const char *fmt, ...)
{
	char detail[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	any_failed |= !strcmp(verdict, "FAIL");
	/* PASS lines carry their detail in parentheses, others after ": ". */
	if (!strcmp(verdict, "PASS"))
		printf("@@ PASS: %s%s%s%s\n", test, *detail ? " (" : "", detail,
		       *detail ? ")" : "");
	else
		printf("@@ %s: %s: %s\n", verdict, test, detail);
}

void lab_info(const char *fmt, ...)
{
	va_list ap;

	printf("@@ INFO: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

bool lab_failed(void)
{
	return any_failed;
}

const struct lab_outcome *lab_outcome_of(const struct lab *lab, const char *obj)
{
	size_t i;

	for (i = 0; i < lab->noutcomes; i++)
		if (!strcmp(lab->outcomes[i].obj, obj))
			return &lab->outcomes[i];
	return NULL;
}

int lab_require(const struct lab *lab, const char *test, const char *obj,
		const char *map)
{
	const struct lab_outcome *o = lab_outcome_of(lab, obj);
	char path[512];

	snprintf(path, sizeof(path), "%s/%s.bpf", lab->obj_dir, obj);
	if (access(path, R_OK)) {
		lab_skip(test, "%s.bpf not built", obj);
		return -1;
	}
	if (o && strcmp(o->outcome, "LOADED")) {
		lab_skip(test, "loader: %s %s: %s", obj, o->outcome, o->reason);
		return -1;
	}
	kstats_pin_path(path, sizeof(path), lab->pin_dir, "map", obj, map);
	if (access(path, F_OK)) {
		lab_fail(test, "%s loaded but %s is not pinned", obj, path);
		return -1;
	}
	return 0;
}

char lab_config(const char *option)
{
	char line[256];
	size_t len = strlen(option);
	char val = 'n';
	FILE *f = fopen("/boot/config", "re");

	if (!f)
		return 0;
	while (val == 'n' && fgets(line, sizeof(line), f))
		if (!strncmp(line, option, len) && line[len] == '=')
			val = line[len + 1];
	fclose(f);
	return val;
}

int lab_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		n = -errno;
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : n < 0 ? (int)n : -EIO;
}

static size_t read_all(int fd, char *out, size_t len)
{
	size_t used = 0;
	char sink[512];
	ssize_t n;

	for (;;) {
		if (used + 1 < len)
			n = read(fd, out + used, len - 1 - used);
		else
			n = read(fd, sink, sizeof(sink));	/* keep the child unblocked */
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (used + 1 < len)
			used += n;
	}
	out[used] = 0;
	return used;
}

int lab_run_tool(const struct lab *lab, const char *const *argv, char *out,
		 size_t len)
{
	char path[256];
	int fds[2], status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", lab->tools_dir, argv[0]);
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -ENOMEM;
	}
	if (!pid) {
		dup2(fds[1], STDOUT_FILENO);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	read_all(fds[0], out, len);
	close(fds[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
