// SPDX-License-Identifier: GPL-2.0
/*
 * kstats watch, the binary, on the flood object's streams: JSON lines,
 * text, --count, the errors, and a clean exit on SIGINT and SIGTERM that
 * prints every record it had read.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <bpf/bpf.h>

#include "kmain.h"
#include "kstats_pins.h"
#include "ktest.h"
#include "stream.h"

static struct ktest t;
static struct kstream_flood flood;
static char tmp[64], out_path[128], err_path[128];

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/kstats-test-%d-watch-XXXXXX", (int)getpid());
	if (!mkdtemp(tmp) || ktest_init(&t, "stream-watch"))
		return -1;
	snprintf(out_path, sizeof(out_path), "%s/out", tmp);
	snprintf(err_path, sizeof(err_path), "%s/err", tmp);
	return kstream_flood_load(&t, &flood);
}

static int teardown(void **state)
{
	(void)state;
	kstream_flood_close(&flood);
	ktest_fini(&t);
	unlink(out_path);
	unlink(err_path);
	rmdir(tmp);
	return 0;
}

/* Starts kstats watch ARGS... --obj-dir --pin-dir, output into the files. */
static pid_t spawn_watch(const char *pin_dir, const char *const *args)
{
	char kstats[300];
	const char *argv[16] = { kstats, "watch", "--obj-dir", flood.dir, "--pin-dir",
				 pin_dir };
	int argc = 6;
	pid_t pid;

	snprintf(kstats, sizeof(kstats), "%s/kstats", t.build);
	while (*args && argc < 15)
		argv[argc++] = *args++;
	pid = ktest_spawn(argv, out_path, err_path);
	assert_true(pid > 0);
	return pid;
}

static int watch(const char *const *args)
{
	return ktest_loader_status(spawn_watch(t.pin_dir, args));
}

static char *slurp(const char *path)
{
	static char buf[1 << 22];

	assert_true(ktest_read_file(path, buf, sizeof(buf)) >= 0);
	return buf;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static int64_t json_int(json_object *o, const char *key)
{
	json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_int64(v);
}

/* Line i is record i: delivery seq and producer seq both equal i. */
static void assert_json_records(const char *out, size_t n)
{
	char *copy = strdup(out), *line, *save = NULL;
	size_t i = 0;

	assert_non_null(copy);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line), *v;

		assert_non_null(o);
		assert_true(json_object_object_get_ex(o, "stream", &v));
		assert_string_equal(json_object_get_string(v), "burst");
		assert_int_equal(json_int(o, "seq"), i);
		assert_int_equal(json_int(o, "record.seq"), i);
		assert_int_equal(json_int(o, "neg"), -(int64_t)(i % 1000));
		assert_true(json_int(o, "ts_ns") > 0);
		json_object_put(o);
		i++;
	}
	assert_int_equal(i, n);
	free(copy);
}

static void test_json_count(void **state)
{
	static const char *const args[] = { "burst", "--json", "--count", "5", NULL };

	(void)state;
	assert_int_equal(kstream_flood_run(&flood, "flood_burst", 10), 0);
	assert_int_equal(watch(args), 0);
	assert_json_records(slurp(out_path), 5);
}

static void test_text_lines(void **state)
{
	static const char *const args[] = { "stream_flood:burst", "--count", "3", NULL };
	char *out, want[64];
	int i;

	(void)state;
	assert_int_equal(kstream_flood_run(&flood, "flood_burst", 3), 0);
	assert_int_equal(watch(args), 0);
	out = slurp(out_path);
	assert_int_equal(count_lines(out), 3);
	for (i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), " burst record.seq=%d cpu=", i);
		assert_non_null(strstr(out, want));
		snprintf(want, sizeof(want), " neg=%d\n", -i);
		assert_non_null(strstr(out, want));
	}
	/* "HH:MM:SS.uuuuuu " */
	assert_true(out[2] == ':' && out[5] == ':' && out[8] == '.' && out[15] == ' ');
}

/*
 * The formatting kstats read shares (issue 28): a bool as true, a string's
 * control bytes and backslash as \xNN, in text and JSON.  watch printed
 * the string's bytes raw before.
 */
static void test_bool_and_escaped_string(void **state)
{
	static const char *const text[] = { "fields", "--count", "1", NULL };
	static const char *const json[] = { "fields", "--json", "--count", "1", NULL };
	json_object *o, *v;

	(void)state;
	assert_int_equal(kstream_flood_run(&flood, "fields_one", 1), 0);
	assert_int_equal(watch(text), 0);
	assert_non_null(strstr(slurp(out_path), " fields on=true name=a\\x09b\\x5c\n"));
	assert_int_equal(kstream_flood_run(&flood, "fields_one", 1), 0);
	assert_int_equal(watch(json), 0);
	o = json_tokener_parse(slurp(out_path));
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "on", &v));
	assert_true(json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "name", &v));
	assert_string_equal(json_object_get_string(v), "a\\x09b\\x5c");
	json_object_put(o);
}

/*
 * Ring reads are destructive: --count 1 over 50 waiting records prints one
 * and accounts for every other record it took (issue 15, item 6).
 */
static void test_count_accounts_every_record_read(void **state)
{
	static const char *const args[] = { "burst", "--count", "1", NULL };
	unsigned long long nread, kernel, queue, printed, unprinted;
	const char *summary;

	(void)state;
	assert_int_equal(kstream_flood_run(&flood, "flood_burst", 50), 0);
	assert_int_equal(watch(args), 0);
	assert_int_equal(count_lines(slurp(out_path)), 1);
	summary = strstr(slurp(err_path), "burst: ");
	assert_non_null(summary);
	assert_int_equal(sscanf(summary, "burst: %llu records read, %llu lost in the kernel "
				"(ring buffer full), %llu lost by this watch (queue full); "
				"%llu printed, %llu read but not printed (past --count)",
				&nread, &kernel, &queue, &printed, &unprinted), 5);
	assert_int_equal(printed, 1);
	assert_true(nread >= 1 && nread <= 50);
	assert_int_equal(nread, printed + unprinted + queue);
}

static bool wait_for_output(int timeout_ms)
{
	struct stat st;

	for (; timeout_ms > 0; timeout_ms -= 2) {
		if (!stat(out_path, &st) && st.st_size > 0)
			return true;
		usleep(2000);
	}
	return false;
}

/*
 * 20000 records wait in the ring; the signal comes as soon as the first
 * line is out.  watch exits 0 and has printed all 20000.
 */
static void stops_cleanly_on(int signo)
{
	static const char *const args[] = { "burst", "--json", NULL };
	const unsigned int total = 20000;
	char want[128];
	pid_t pid;

	assert_int_equal(kstream_flood_run(&flood, "flood_burst", total), 0);
	pid = spawn_watch(t.pin_dir, args);
	assert_true(wait_for_output(10000));
	assert_int_equal(kill(pid, signo), 0);
	assert_int_equal(ktest_loader_status(pid), 0);
	assert_json_records(slurp(out_path), total);
	snprintf(want, sizeof(want), "burst: %u records read, 0 lost in the kernel "
		 "(ring buffer full), 0 lost by this watch", total);
	assert_non_null(strstr(slurp(err_path), want));
}

static void test_sigint_prints_everything_read(void **state)
{
	(void)state;
	stops_cleanly_on(SIGINT);
}

static void test_sigterm_prints_everything_read(void **state)
{
	(void)state;
	stops_cleanly_on(SIGTERM);
}

/* watch's exit status within timeout_ms, else kills it and returns -1. */
static int exit_within(pid_t pid, int timeout_ms)
{
	int status;

	for (; timeout_ms > 0; timeout_ms -= 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/*
 * Unload and load while watching: the ring held gets no more records, so
 * watch says the stream was reloaded and exits 1, with what it read
 * printed (it waited on the replaced ring forever).
 */
static void test_reload_stops_watch(void **state)
{
	static const char *const args[] = { "burst", "--json", NULL };
	char pin[512];
	pid_t pid;
	int fd;

	(void)state;
	assert_int_equal(kstream_flood_run(&flood, "flood_burst", 5), 0);
	pid = spawn_watch(t.pin_dir, args);
	assert_true(wait_for_output(10000));
	assert_int_equal(kstats_pin_path(pin, sizeof(pin), t.pin_dir, "map",
					 KSTREAM_FLOOD_OBJ, "burst_ringbuf"), 0);
	assert_int_equal(unlink(pin), 0);
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "burst_ringbuf", 0, 0, 4096, NULL);
	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_pin(fd, pin), 0);
	close(fd);
	assert_int_equal(exit_within(pid, 10000), 1);
	assert_non_null(strstr(slurp(err_path), "stream burst was reloaded"));
	assert_json_records(slurp(out_path), 5);
}

/*
 * A user who cannot see the pins is told the rings are root's (exit 5),
 * not that nothing is loaded (exit 3, "run kstats-loader").
 */
static void test_not_root_is_told_so(void **state)
{
	char kstats[300];
	const char *argv[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			       kstats, "watch", "--obj-dir", flood.dir, "--pin-dir", t.pin_dir,
			       "burst", NULL };

	(void)state;
	if (access(argv[0], X_OK)) {
		printf("# SKIP: setpriv(1) is not installed\n");
		skip();
	}
	snprintf(kstats, sizeof(kstats), "%s/kstats", t.build);
	assert_int_equal(chmod(t.pin_dir, 0700), 0);
	assert_int_equal(ktest_loader_status(ktest_spawn(argv, out_path, err_path)), 5);
	assert_non_null(strstr(slurp(err_path), "root-only: run kstats watch as root"));
}

static void test_errors_name_the_fix(void **state)
{
	static const char *const unknown[] = { "nope", NULL };
	static const char *const none[] = { NULL };
	static const char *const zero[] = { "burst", "--count", "0", NULL };
	static const char *const help[] = { "--help", NULL };
	char empty_pins[300];

	(void)state;
	assert_int_equal(watch(unknown), 2);
	assert_non_null(strstr(slurp(err_path), "unknown stream nope"));
	assert_non_null(strstr(slurp(err_path), "stream_flood:flood"));
	assert_non_null(strstr(slurp(err_path), "stream_flood:burst"));
	assert_int_equal(watch(none), 2);
	assert_non_null(strstr(slurp(err_path), "OBJ:STREAM"));
	assert_int_equal(watch(zero), 2);
	assert_non_null(strstr(slurp(err_path), "--count takes a positive number, not '0'"));
	assert_int_equal(watch(help), 0);
	assert_non_null(strstr(slurp(out_path), "Exit status"));
	snprintf(empty_pins, sizeof(empty_pins), "%s-empty", t.pin_dir);
	assert_int_equal(ktest_loader_status(spawn_watch(empty_pins, unknown + 1)), 3);
	assert_non_null(strstr(slurp(err_path), "run kstats-loader"));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_json_count),
		T(test_text_lines),
		T(test_bool_and_escaped_string),
		T(test_count_accounts_every_record_read),
		T(test_sigint_prints_everything_read),
		T(test_sigterm_prints_everything_read),
		T(test_errors_name_the_fix),
		T(test_reload_stops_watch),
		T(test_not_root_is_told_so),
	};
	return KTEST_MAIN("stream_watch", tests, NULL, NULL);
}
