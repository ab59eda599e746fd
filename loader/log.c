// SPDX-License-Identifier: GPL-2.0
/*
 * One line per object on stdout, diagnostics on stderr, and both to
 * /dev/kmsg at boot (--boot).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "kstats_escape.h"
#include "loader.h"

/* The kernel truncates longer kmsg records anyway. */
#define KMSG_LINE_MAX 900

static int kmsg_fd = -1;
static bool verbose;
static char *capture;
static size_t capture_len;

void log_to_kmsg(void)
{
	kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (kmsg_fd < 0)
		log_msg(LOG_WARNING, "cannot open /dev/kmsg: %m; logging to stderr only");
}

void log_close(void)
{
	if (kmsg_fd >= 0)
		close(kmsg_fd);
	kmsg_fd = -1;
}

void log_set_verbose(bool on)
{
	verbose = on;
}

static void emit(FILE *f, const char *prefix, int prio, const char *fmt, va_list ap)
{
	char raw[KMSG_LINE_MAX], line[KMSG_LINE_MAX], rec[KMSG_LINE_MAX + 64];
	int n;

	vsnprintf(raw, sizeof(raw), fmt, ap);
	kstats_escape(line, sizeof(line), raw, strlen(raw));
	fprintf(f, "%s%s\n", prefix, line);
	if (kmsg_fd < 0)
		return;
	/* One write() per record; dprintf() would fail on kmsg's lseek(). */
	n = snprintf(rec, sizeof(rec), "<%d>kstats-loader[%d]: %s\n", prio,
		     (int)getpid(), line);
	if (write(kmsg_fd, rec, n) < 0) {
		close(kmsg_fd);
		kmsg_fd = -1;
	}
}

/* Diagnostics: stderr. */
void log_msg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(stderr, "kstats-loader: ", prio, fmt, ap);
	va_end(ap);
}

/* The outcome of one object, "<obj> <OUTCOME>: <reason>": stdout. */
void log_result(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(stdout, "", prio, fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* Keeps libbpf's first warning since the last call: the root cause. */
void log_capture(char *buf, size_t len)
{
	capture = buf;
	capture_len = len;
	if (buf && len)
		*buf = 0;
}

int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list copy;
	size_t n;

	if (level == LIBBPF_WARN && capture && !*capture) {
		va_copy(copy, ap);
		vsnprintf(capture, capture_len, fmt, copy);
		va_end(copy);
		n = strlen("libbpf: ");
		if (!strncmp(capture, "libbpf: ", n))
			memmove(capture, capture + n, strlen(capture + n) + 1);
		n = strlen(capture);
		while (n && capture[n - 1] == '\n')
			capture[--n] = 0;
	}
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}
