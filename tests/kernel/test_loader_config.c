// SPDX-License-Identifier: GPL-2.0
/*
 * loader.conf as a hostile or careless file: lines of any length are read
 * whole (no cut that turns the tail of a comment into a line of its own),
 * the file is capped at 64 KiB, a NUL byte is refused with its line number,
 * control bytes in a message are escaped, and only a regular file is read,
 * never through a symlink and never blocking on a FIFO.  A bad file is
 * exit 2 with the line named (doc/loader.md), next to compaction.bpf.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "kmain.h"
#include "ltest.h"

#define CONFIG_MAX 65536

static int setup(void **state)
{
	return ltest_setup(state, 'c', true);
}

static const char *conf_path(struct ltest *t, char *path, size_t len)
{
	snprintf(path, len, "%s/loader.conf", t->dir);
	return path;
}

static const char *write_conf(struct ltest *t, const void *data, size_t len)
{
	static char path[256];
	FILE *f;

	conf_path(t, path, sizeof(path));
	unlink(path);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

static const char *write_text(struct ltest *t, const char *text)
{
	return write_conf(t, text, strlen(text));
}

static void assert_outcome(struct ltest *t, const char *obj, const char *want)
{
	assert_string_equal(ltest_outcome(t, obj, NULL), want);
}

/* Old: fgets cut the line at 1023 bytes; its tail disabled every object. */
static void test_long_comment_is_one_line(void **state)
{
	struct ltest *t = *state;
	char text[1100];

	text[0] = '#';
	memset(text + 1, 'x', 1022);
	strcpy(text + 1023, "disable = all\n");
	assert_int_equal(ltest_run(t, "--config", write_text(t, text), NULL), 0);
	assert_outcome(t, "compaction", "LOADED");
}

/* Old: "expected 'key = value'" from the cut tail, and nothing loaded. */
static void test_long_disable_list(void **state)
{
	struct ltest *t = *state;
	size_t n = 0, cap = 8192;
	char *text = malloc(cap);
	int i;

	assert_non_null(text);
	assert_int_equal(ltest_add(t, "tests/bpf/loader_count.bpf", "lc"), 0);
	n += snprintf(text + n, cap - n, "disable = ");
	for (i = 0; i < 300; i++)
		n += snprintf(text + n, cap - n, "nosuchobject%03d, ", i);
	snprintf(text + n, cap - n, "lc\n");
	assert_true(strlen(text) > 4096);
	assert_int_equal(ltest_run(t, "--config", write_text(t, text), NULL), 0);
	free(text);
	assert_outcome(t, "lc", "SKIPPED_DISABLED");
	assert_outcome(t, "compaction", "LOADED");
}

/* Old: the NUL silently ended the line, and "lc" alone was disabled. */
static void test_nul_refused_with_line(void **state)
{
	static const char text[] = "# two lines\ndisable = lc\0, compaction\n";
	struct ltest *t = *state;

	assert_int_equal(ltest_run(t, "--config", write_conf(t, text, sizeof(text) - 1),
				   NULL), 2);
	assert_true(ltest_output_has(t, "loader.conf:2: a NUL byte"));
}

static bool output_has_byte(const struct ltest *t, char c)
{
	char buf[65536];
	ssize_t n;
	int fd = open(t->out_path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_true(n > 0);
	return memchr(buf, c, n);
}

/* Old: ESC and BEL reached stderr raw, a terminal escape sequence. */
static void test_control_bytes_escaped(void **state)
{
	struct ltest *t = *state;

	assert_int_equal(ltest_run(t, "--config", write_text(t, "disable = a\x1b[2Jb\x07\n"),
				   NULL), 2);
	assert_true(ltest_output_has(t, "loader.conf:1: 'a\\x1b[2Jb\\x07' is not an object"));
	assert_false(output_has_byte(t, '\x1b'));
	assert_false(output_has_byte(t, '\x07'));
	assert_int_equal(ltest_run(t, "--disable", "x\x1b]0;title\x07", NULL), 2);
	assert_true(ltest_output_has(t, "x\\x1b]0;title\\x07"));
	assert_false(output_has_byte(t, '\x1b'));
}

/* Old: no cap; any size was read. */
static void test_size_cap(void **state)
{
	struct ltest *t = *state;
	char *text = malloc(CONFIG_MAX + 64);
	size_t i;

	assert_non_null(text);
	for (i = 0; i < CONFIG_MAX + 1; i += 64) {
		memset(text + i, 'x', 64);
		text[i] = '#';
		text[i + 63] = '\n';
	}
	/* At the limit: read. */
	assert_int_equal(ltest_run(t, "--config", write_conf(t, text, CONFIG_MAX), NULL), 0);
	assert_outcome(t, "compaction", "LOADED");
	/* One byte more: refused, naming the limit. */
	text[CONFIG_MAX] = '\n';
	assert_int_equal(ltest_run(t, "--config", write_conf(t, text, CONFIG_MAX + 1),
				   NULL), 2);
	free(text);
	assert_true(ltest_output_has(t, "is larger than 65536 bytes, the limit"));
}

/* Old: a FIFO hung the loader; a symlink or a directory was followed or read. */
static void test_only_regular_files(void **state)
{
	struct ltest *t = *state;
	char path[256], target[256];

	conf_path(t, path, sizeof(path));
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(ltest_run_bounded(t, -1, 20, "--config", path, NULL), 2);
	assert_true(ltest_output_has(t, "not a regular file"));
	unlink(path);

	snprintf(target, sizeof(target), "%s/real.conf", t->dir);
	assert_int_equal(ktest_write_file(target, "disable = all\n"), 0);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(ltest_run(t, "--config", path, NULL), 2);
	assert_true(ltest_output_has(t, "symbolic link"));
	unlink(path);

	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(ltest_run(t, "--config", path, NULL), 2);
	assert_true(ltest_output_has(t, "not a regular file"));
	rmdir(path);

	/* A good file still works, and a missing --config is an error. */
	assert_int_equal(ltest_run(t, "--config", target, NULL), 0);
	assert_outcome(t, "compaction", "SKIPPED_DISABLED");
	assert_int_equal(ltest_run(t, "--config", path, NULL), 2);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, ltest_teardown)
	const struct CMUnitTest tests[] = {
		T(test_long_comment_is_one_line),
		T(test_long_disable_list),
		T(test_nul_refused_with_line),
		T(test_control_bytes_escaped),
		T(test_size_cap),
		T(test_only_regular_files),
	};

	return KTEST_MAIN("loader_config", tests, NULL, NULL);
}
