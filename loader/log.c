// SPDX-License-Identifier: GPL-2.0
/* Results on stdout, diagnostics on stderr, both to /dev/kmsg at boot; held per thread. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader.h"

/* The kernel truncates longer kmsg records anyway. */
#define KMSG_LINE_MAX 900

struct log_rec {
	FILE *f;
	int prio;	/* -1: not for kmsg */
	char *text;	/* the line as written to f */
	size_t prefix;	/* of text, not for kmsg */
};

struct log_held {
	struct log_rec *recs;
	size_t n;
};

static int kmsg_fd = -1;
int log_verbose;
/* Per thread: libbpf calls the print callback on the loading thread. */
static _Thread_local char *capture;
static _Thread_local size_t capture_len;
static _Thread_local struct log_held *held;

void log_to_kmsg(void)
{
	kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (kmsg_fd < 0)
		log_msg(LOG_WARNING, "cannot open /dev/kmsg: %m; logging to stderr only");
}

/* kmsg gets text without its prefix (prio < 0: not at all). */
static void put(FILE *f, int prio, const char *text, size_t prefix)
{
	char rec[KMSG_LINE_MAX + 64];
	int n;

	fputs(text, f);
	if (f == stdout)
		fflush(stdout);
	if (kmsg_fd < 0 || prio < 0)
		return;
	/* One write() per record; dprintf() would fail on kmsg's lseek(). */
	n = snprintf(rec, sizeof(rec), "<%d>kstats-loader[%d]: %s", prio,
		     (int)getpid(), text + prefix);
	if (write(kmsg_fd, rec, n) < 0) {
		close(kmsg_fd);
		kmsg_fd = -1;
	}
}

/* Out of memory, a held line is written now. */
static void out(FILE *f, int prio, char *text, size_t prefix)
{
	struct log_rec *grown = held ? realloc(held->recs, (held->n + 1) * sizeof(*grown)) : NULL;

	if (grown) {
		held->recs = grown;
		grown[held->n++] = (struct log_rec){ f, prio, text, prefix };
		return;
	}
	put(f, prio, text, prefix);
	free(text);
}

void log_line(FILE *f, const char *prefix, int prio, const char *fmt, ...)
{
	char raw[KMSG_LINE_MAX], line[KMSG_LINE_MAX];
	va_list ap;
	char *text;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	kstats_escape(line, sizeof(line), raw, strlen(raw));
	if (asprintf(&text, "%s%s\n", prefix, line) < 0)
		return;
	out(f, prio, text, strlen(prefix));
}

struct log_held *log_hold(void)
{
	held = calloc(1, sizeof(*held));
	return held;
}

void log_release(struct log_held *h)
{
	size_t i;

	for (i = 0; h && i < h->n; i++) {
		put(h->recs[i].f, h->recs[i].prio, h->recs[i].text, h->recs[i].prefix);
		free(h->recs[i].text);
	}
	if (h)
		free(h->recs);
	free(h);
}

/* This thread writes its lines directly again; what it held stays held. */
void log_unhold(void)
{
	held = NULL;
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
	char *text;
	size_t n;

	if (level == LIBBPF_WARN && capture && !*capture) {
		va_copy(copy, ap);
		vsnprintf(capture, capture_len, fmt, copy);
		va_end(copy);
		if (!strncmp(capture, "libbpf: ", 8))
			memmove(capture, capture + 8, strlen(capture + 8) + 1);
		n = strlen(capture);
		while (n && capture[n - 1] == '\n')
			capture[--n] = 0;
	}
	if (!log_verbose || vasprintf(&text, fmt, ap) < 0)
		return 0;
	out(stderr, -1, text, 0);
	return 0;
}
