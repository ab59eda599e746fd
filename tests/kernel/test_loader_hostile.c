// SPDX-License-Identifier: GPL-2.0
/*
 * The loader against hostile entries and careless operators: non-regular
 * files named *.bpf (FIFO, directory, symlinks, a device, a socket), a closed
 * stdout pipe, a pin dir lock held by someone else, object names that cannot
 * be names, and two objects whose pin names would collide.  Every run here is
 * bounded: a loader that blocks is killed and the test fails.
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
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include "kstats_pins.h"
#include "kmain.h"
#include "ltest.h"

#define TB(name) "tests/bpf/loader_" name ".bpf"
#define RUN_TIMEOUT_S 120
#define EXIT_LOCKED 4

static int setup(void **state)
{
	return ltest_setup(state, 'h', true);
}

static void obj_path(const struct ltest *t, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s.bpf", t->kt.obj_dir, name);
}

static void assert_flag_written(const struct ltest *t)
{
	char flag[512];

	snprintf(flag, sizeof(flag), "%s/progs_loaded", t->run_dir);
	assert_int_equal(access(flag, F_OK), 0);
	assert_non_null(t->status);
}

static void assert_refused(const struct ltest *t, const char *name, const char *why)
{
	struct json_object *o = ltest_obj(t, name);

	assert_non_null(o);
	assert_string_equal(ltest_str(o, "outcome"), "FAILED_OBJECT");
	if (!strstr(ltest_str(o, "reason"), why))
		fail_msg("%s: reason '%s' lacks '%s'", name, ltest_str(o, "reason"), why);
}

static int bind_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	return fd;
}

/*
 * A FIFO blocked open() forever, /dev/zero-like devices read forever: each
 * non-regular entry is one FAILED_OBJECT, the rest loads, the flag is written.
 */
static void test_non_regular_entries(void **state)
{
	struct ltest *t = *state;
	char path[512], target[512];
	int sock;

	obj_path(t, "fifo", path, sizeof(path));
	assert_int_equal(mkfifo(path, 0644), 0);
	obj_path(t, "dir", path, sizeof(path));
	assert_int_equal(mkdir(path, 0755), 0);
	obj_path(t, "zero", path, sizeof(path));
	assert_int_equal(mknod(path, S_IFCHR | 0644, makedev(1, 5)), 0);
	obj_path(t, "sock", path, sizeof(path));
	sock = bind_socket(path);
	assert_true(sock >= 0);
	obj_path(t, "fifo", target, sizeof(target));
	obj_path(t, "link", path, sizeof(path));
	assert_int_equal(symlink(target, path), 0);
	obj_path(t, "dangling", path, sizeof(path));
	assert_int_equal(symlink("/nonexistent/x.bpf", path), 0);

	assert_int_equal(ltest_run_bounded(t, -1, RUN_TIMEOUT_S, NULL), 0);
	close(sock);
	assert_flag_written(t);
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "LOADED");
	assert_refused(t, "fifo", "is a FIFO; only regular files are loaded");
	assert_refused(t, "dir", "is a directory");
	assert_refused(t, "zero", "is a character device");
	assert_refused(t, "sock", "is a socket");
	assert_refused(t, "link", "is a FIFO");
	assert_refused(t, "dangling", "cannot resolve");
}

/* stdout a pipe nobody reads: SIGPIPE killed the loader before its status. */
static void test_closed_stdout_pipe(void **state)
{
	struct ltest *t = *state;
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	close(fds[0]);
	assert_int_equal(ltest_run_bounded(t, fds[1], RUN_TIMEOUT_S, NULL), 0);
	close(fds[1]);
	assert_flag_written(t);
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "LOADED");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A loader that never lets go of the pin dir holds the next one a bounded time. */
static void test_held_lock(void **state)
{
	struct ltest *t = *state;
	char lock[512];
	double started;
	int fd;

	assert_int_equal(ltest_run_bounded(t, -1, RUN_TIMEOUT_S, NULL), 0);
	snprintf(lock, sizeof(lock), "%s/loader.lock", t->run_dir);
	fd = open(lock, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	started = now_s();
	assert_int_equal(ltest_run_bounded(t, -1, 60, "--lock-timeout", "1", NULL), EXIT_LOCKED);
	assert_true(now_s() - started < 30);
	assert_true(ltest_output_has(t, "another kstats-loader has held"));
	/*
	 * One seconds parser with kstats (issue 28): the loader's refused a
	 * fraction and took 0; kstats' documented (0, max], fractions allowed,
	 * won.
	 */
	started = now_s();
	assert_int_equal(ltest_run_bounded(t, -1, 60, "--lock-timeout", "0.2", NULL),
			 EXIT_LOCKED);
	assert_true(now_s() - started < 30);
	assert_true(ltest_output_has(t, "has held"));
	assert_true(ltest_output_has(t, " for 0.2 s; wait"));
	assert_int_equal(ltest_run_bounded(t, -1, 60, "--lock-timeout", "0", NULL), 2);
	assert_true(ltest_output_has(t, "--lock-timeout takes seconds in (0, 86400], not '0'"));
	close(fd);
	assert_int_equal(ltest_run_bounded(t, -1, RUN_TIMEOUT_S, "--lock-timeout", "1", NULL), 0);
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "LOADED");
}

/* Empty, too long, dotted and control-character names: refused, escaped. */
static void test_bad_names(void **state)
{
	struct ltest *t = *state;
	int kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	char long_name[96];

	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = 0;
	assert_int_equal(ltest_add(t, "bpf/compaction.bpf", ""), 0);
	assert_int_equal(ltest_add(t, "bpf/compaction.bpf", long_name), 0);
	assert_int_equal(ltest_add(t, "bpf/compaction.bpf", "dot.ted"), 0);
	assert_int_equal(ltest_add_bytes(t, "bad\nname\033[2J", "x", 1), 0);
	assert_true(kmsg >= 0);
	lseek(kmsg, 0, SEEK_END);	/* only what this run writes */
	assert_int_equal(ltest_run_bounded(t, -1, RUN_TIMEOUT_S, "--boot", NULL), 0);
	assert_flag_written(t);
	assert_refused(t, "", "an object needs a name before .bpf");
	assert_refused(t, "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...",
		       "object name is 95 bytes, the limit is 63");
	assert_refused(t, "dot.ted", "has a '.', which bpffs refuses");
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "LOADED");
	/* Only compaction's pins exist: nothing was renamed and loaded. */
	assert_int_equal(json_object_array_length(json_object_object_get(
		ltest_obj(t, ""), "pins")), 0);
	assert_true(ltest_output_has(t, "bad\\x0aname\\x1b[2J"));
	assert_false(ltest_output_has(t, "bad\nname"));
	/* /dev/kmsg shows our '\\' as \x5c: a raw newline would read \x0a. */
	assert_true(ltest_kmsg_has(kmsg, "bad\\x5cx0aname\\x5cx1b[2J"));
	close(kmsg);
}

struct collision {
	char map[512], link[512];
	uint32_t map_id, prog_id;
};

static void collision_pins(const struct ltest *t, struct collision *c)
{
	snprintf(c->map, sizeof(c->map), "%s/map_a_b_c", t->kt.pin_dir);
	snprintf(c->link, sizeof(c->link), "%s/link_a_b_on_rename", t->kt.pin_dir);
	c->map_id = kstats_pin_id(c->map);
	c->prog_id = ltest_link_prog(c->link);
}

static void assert_name_skipped(const struct ltest *t, const char *obj, const char *fix)
{
	struct json_object *o = ltest_obj(t, obj);
	char want[128];

	snprintf(want, sizeof(want), "rename the file to %s.bpf", fix);
	assert_string_equal(ltest_str(o, "outcome"), "SKIPPED_OBJECT_NAME");
	if (!strstr(ltest_str(o, "reason"), want))
		fail_msg("%s: reason '%s' lacks '%s'", obj, ltest_str(o, "reason"), want);
	assert_int_equal(json_object_array_length(json_object_object_get(o, "pins")), 0);
}

/*
 * Objects a_b (map c, program on_rename) and a (map b_c, program
 * b_on_rename) would both name map_a_b_c and link_a_b_on_rename.  The
 * object-name rule (letters and digits) makes a_b a SKIPPED_OBJECT_NAME,
 * whatever the sort order, so the names are a's alone, over re-runs; a_b
 * renamed as its reason says loads beside a with pins of its own.
 */
static void test_pin_name_collision(void **state)
{
	struct ltest *t = *state;
	struct collision first, now;
	uint32_t map_id;
	int run;

	ltest_remove(t, "compaction");
	assert_int_equal(ltest_add(t, TB("owner_ab"), "a_b"), 0);
	assert_int_equal(ltest_add(t, TB("owner_a"), "a"), 0);
	assert_int_equal(ltest_run_bounded(t, -1, RUN_TIMEOUT_S, NULL), 0);
	assert_string_equal(ltest_outcome(t, "a", NULL), "LOADED");
	assert_name_skipped(t, "a_b", "aB");
	assert_true(ltest_output_has(t, "SKIPPED_OBJECT_NAME"));
	collision_pins(t, &first);
	assert_true(first.map_id && first.prog_id);
	for (run = 0; run < 2; run++) {
		assert_int_equal(ltest_run_bounded(t, -1, RUN_TIMEOUT_S, NULL), 0);
		assert_name_skipped(t, "a_b", "aB");
		collision_pins(t, &now);
		assert_int_equal(now.map_id, first.map_id);
		assert_int_equal(now.prog_id, first.prog_id);
		map_id = ltest_u64(ltest_named(ltest_obj(t, "a"), "maps", "b_c"), "map_id");
		assert_int_equal(map_id, first.map_id);
		assert_int_equal(ltest_links_using_map(first.map_id), 1);
		assert_true(json_object_get_boolean(json_object_object_get(
			ltest_named(ltest_obj(t, "a"), "programs", "b_on_rename"), "kept")));
	}

	ltest_remove(t, "a_b");
	assert_int_equal(ltest_add(t, TB("owner_ab"), "aB"), 0);
	assert_int_equal(ltest_run_bounded(t, -1, RUN_TIMEOUT_S, NULL), 0);
	assert_string_equal(ltest_outcome(t, "aB", NULL), "LOADED");
	assert_string_equal(ltest_outcome(t, "a", NULL), "LOADED");
	collision_pins(t, &now);
	assert_int_equal(now.map_id, first.map_id);
	assert_int_equal(now.prog_id, first.prog_id);
	map_id = ltest_u64(ltest_named(ltest_obj(t, "aB"), "maps", "c"), "map_id");
	assert_true(map_id && map_id != first.map_id);
	assert_int_equal(ltest_links_using_map(map_id), 1);
}

/* A bad name is a skip, not a failure: a critical object does not fail the run. */
static void test_bad_object_names_skipped(void **state)
{
	struct ltest *t = *state;

	assert_int_equal(ltest_add(t, TB("critical"), "loader_crit"), 0);
	assert_int_equal(ltest_add(t, "bpf/compaction.bpf", "2fast"), 0);
	assert_int_equal(ltest_run_bounded(t, -1, RUN_TIMEOUT_S, NULL), 0);
	assert_name_skipped(t, "loader_crit", "loaderCrit");
	assert_name_skipped(t, "2fast", "obj2fast");
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "LOADED");
}

/* s with each from replaced by to, into out (len bytes). */
static void replace_all(const char *s, const char *from, const char *to, char *out,
			size_t len)
{
	size_t n = 0;

	while (*s && n + strlen(to) + 1 < len)
		if (!strncmp(s, from, strlen(from))) {
			n += sprintf(out + n, "%s", to);
			s += strlen(from);
		} else {
			out[n++] = *s++;
		}
	out[n] = 0;
}

/* The status file with from replaced by to. */
static void edit_status(const struct ltest *t, const char *from, const char *to)
{
	static char buf[32768], out[40000];
	FILE *f;

	assert_true(ktest_read_file(t->status_path, buf, sizeof(buf)) >= 0);
	replace_all(buf, from, to, out, sizeof(out));
	f = fopen(t->status_path, "w");
	assert_non_null(f);
	fputs(out, f);
	fclose(f);
}

/*
 * Pins an older loader made for an object whose name breaks the rule (lc's
 * pins and status record moved to the name a_b): the skip retires its link
 * and program, keeps its map listed with its counts, and --unload removes it.
 */
static void test_bad_name_older_pins(void **state)
{
	struct ltest *t = *state;
	char pin[3][512], map[512], link[512];
	struct json_object *pins;
	uint32_t prog;
	size_t i;

	ltest_remove(t, "compaction");
	assert_int_equal(ltest_add(t, TB("count"), "lc"), 0);
	assert_int_equal(ltest_run_bounded(t, -1, RUN_TIMEOUT_S, NULL), 0);
	prog = ltest_u64(ltest_named(ltest_obj(t, "lc"), "programs", "on_rename"), "prog_id");
	pins = json_object_object_get(ltest_obj(t, "lc"), "pins");
	assert_int_equal(json_object_array_length(pins), 3);
	for (i = 0; i < 3; i++) {
		replace_all(json_object_get_string(json_object_array_get_idx(pins, i)),
			    "_lc_", "_a_b_", pin[i], sizeof(pin[i]));
		assert_int_equal(rename(json_object_get_string(
			json_object_array_get_idx(pins, i)), pin[i]), 0);
	}
	edit_status(t, "_lc_", "_a_b_");
	edit_status(t, "\"lc\"", "\"a_b\"");
	ltest_remove(t, "lc");
	assert_int_equal(ltest_add(t, TB("count"), "a_b"), 0);

	assert_int_equal(ltest_run_bounded(t, -1, RUN_TIMEOUT_S, NULL), 0);
	assert_string_equal(ltest_outcome(t, "a_b", NULL), "SKIPPED_OBJECT_NAME");
	snprintf(map, sizeof(map), "%s/map_a_b_rename_count_map", t->kt.pin_dir);
	snprintf(link, sizeof(link), "%s/link_a_b_on_rename", t->kt.pin_dir);
	assert_int_equal(access(link, F_OK), -1);
	assert_true(ltest_prog_gone(prog));
	assert_int_equal(access(map, F_OK), 0);
	pins = json_object_object_get(ltest_obj(t, "a_b"), "pins");
	assert_int_equal(json_object_array_length(pins), 1);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(pins, 0)), map);
	assert_int_equal(ltest_run_bounded(t, -1, RUN_TIMEOUT_S, "--unload", NULL), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(access(pin[i], F_OK), -1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, ltest_teardown)
	const struct CMUnitTest tests[] = {
		T(test_non_regular_entries),
		T(test_closed_stdout_pipe),
		T(test_held_lock),
		T(test_bad_names),
		T(test_pin_name_collision),
		T(test_bad_object_names_skipped),
		T(test_bad_name_older_pins),
	};

	return KTEST_MAIN("loader_hostile", tests, NULL, NULL);
}
