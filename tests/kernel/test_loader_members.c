// SPDX-License-Identifier: GPL-2.0
/*
 * The reader group reads, never breaks.  A child drops to a uid no account
 * has, group kstats and CAP_BPF (the pull unit's privileges), then tries to
 * freeze, write, detach or lock what the loader pinned; root's loader and
 * stream must not notice.  And a ring frozen anyway (by root) is named as
 * such by kstats watch and recreated by the next loader run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include "asuser.h"
#include "kmain.h"
#include "kstats_pins.h"
#include "ltest.h"

#define GROUP "kstats"
#define RUN_TIMEOUT_S 120

static struct asuser member;	/* group kstats and CAP_BPF */

static int setup(void **state)
{
	int ret = ltest_setup(state, 'm', true);

	return ret ?: ltest_add(*state, "bpf/slowCompaction.bpf", "slowCompaction");
}

/* The ring pin of slowCompaction's stream. */
static void ring_pin(const struct ltest *t, char *buf, size_t len)
{
	char pattern[512];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/map_slowCompaction_*_ringbuf",
		 t->kt.pin_dir);
	buf[0] = 0;
	if (!glob(pattern, 0, NULL, &g)) {
		snprintf(buf, len, "%s", g.gl_pathv[0]);
		globfree(&g);
	}
}

static int load(struct ltest *t)
{
	int ret = ltest_run_bounded(t, -1, RUN_TIMEOUT_S, NULL);

	if (ret)
		return ret;
	if (strcmp(ltest_outcome(t, "slowCompaction", NULL), "LOADED"))
		return -ENOENT;
	return 0;
}

/*
 * In the member: every way to break one pin.  Returns what worked, in
 * why; 0 when nothing did.
 */
static int try_to_break(const char *pin, char *why, size_t len)
{
	static char zeroes[1 << 16];
	LIBBPF_OPTS(bpf_obj_get_opts, ro, .file_flags = BPF_F_RDONLY);
	int fd = bpf_obj_get(pin);

	if (fd >= 0) {
		snprintf(why, len, "%s opens read-write (%s)", pin,
			 !bpf_map_freeze(fd) ? "and froze" :
			 !bpf_link_detach(fd) ? "and detached" : "freeze/detach failed");
		close(fd);
		return 1;
	}
	fd = bpf_obj_get_opts(pin, &ro);
	if (fd < 0)
		return 0;
	/* The kernel checks the fd's mode first: zeroes are never written. */
	if (!bpf_map_freeze(fd) || !bpf_map_update_elem(fd, zeroes, zeroes, BPF_ANY)) {
		snprintf(why, len, "%s: froze or wrote through a read-only fd", pin);
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}

static int member_breaks_pins(void *arg, char *why, size_t len)
{
	const char *pin_dir = arg;
	char pin[600];
	struct dirent *de;
	DIR *d = opendir(pin_dir);
	int broken = 0;

	if (!d) {
		snprintf(why, len, "cannot list %s as a member: %s", pin_dir, strerror(errno));
		return -1;
	}
	while (!broken && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(pin, sizeof(pin), "%s/%s", pin_dir, de->d_name);
		broken = try_to_break(pin, why, len);
	}
	closedir(d);
	return broken;
}

/* No pin opens writable for a member; no read-only fd freezes or writes. */
static void test_member_cannot_break_pins(void **state)
{
	struct ltest *t = *state;
	char ring[512], why[2048];
	int fd;

	assert_int_equal(load(t), 0);
	if (asuser_run(&member, member_breaks_pins, t->kt.pin_dir, why, sizeof(why)))
		fail_msg("group member uid %u: %s", member.uid, why);
	/* Root still consumes its stream. */
	ring_pin(t, ring, sizeof(ring));
	fd = bpf_obj_get(ring);
	assert_true(fd >= 0);
	assert_ptr_not_equal(mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE, MAP_SHARED,
				  fd, 0), MAP_FAILED);
	close(fd);
}

/* A member holding a lock on the pin dir used to stop every loader run. */
static void test_member_lock_does_not_block_loader(void **state)
{
	struct ltest *t = *state;
	int pfd[2], status, ret;
	char c = 0;
	pid_t pid;

	assert_int_equal(load(t), 0);
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int fd = asuser_drop(&member) ? -1 :
			 open(t->kt.pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		c = fd >= 0 && !flock(fd, LOCK_EX) ? 'l' : 'x';
		if (write(pfd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ret = read(pfd[0], &c, 1) == 1 && c == 'l' ?	/* the attack is real */
	      ltest_run_bounded(t, -1, RUN_TIMEOUT_S, NULL) : -EPERM;
	close(pfd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	assert_int_equal(ret, 0);
	assert_string_equal(ltest_outcome(t, "slowCompaction", NULL), "LOADED");
}

/* kstats watch on the frozen ring: its error, in out. */
static int watch_error(const struct ltest *t, char *out, size_t len)
{
	char kstats[300], err_path[300];
	const char *argv[] = { kstats, "watch", "--obj-dir", t->kt.obj_dir, "--pin-dir",
			       t->kt.pin_dir, "--count", "1", NULL };
	int fd, ret;
	ssize_t n;

	snprintf(kstats, sizeof(kstats), "%s/kstats", t->kt.build);
	snprintf(err_path, sizeof(err_path), "%s/watch.err", t->dir);
	ret = ktest_loader_status(ktest_spawn(argv, "/dev/null", err_path));
	fd = open(err_path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, out, len - 1) : -1;
	out[n > 0 ? n : 0] = 0;
	if (fd >= 0)
		close(fd);
	return ret;
}

/* A frozen ring: watch says so; the next loader run replaces it. */
static void test_frozen_ring_recreated(void **state)
{
	struct ltest *t = *state;
	char ring[512], err[2048];
	__u32 old_id, new_id;
	int fd;

	assert_int_equal(load(t), 0);
	ring_pin(t, ring, sizeof(ring));
	old_id = kstats_pin_id(ring);
	fd = bpf_obj_get(ring);
	assert_true(fd >= 0);
	assert_int_equal(bpf_map_freeze(fd), 0);
	close(fd);

	assert_int_not_equal(watch_error(t, err, sizeof(err)), 0);
	if (!strstr(err, "the ring was frozen"))
		fail_msg("kstats watch said: %s", err);

	assert_int_equal(load(t), 0);
	assert_true(ltest_output_has(t, "the ring was frozen"));
	new_id = kstats_pin_id(ring);
	assert_int_not_equal(new_id, old_id);
	fd = bpf_obj_get(ring);
	assert_true(fd >= 0);
	assert_ptr_not_equal(mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE, MAP_SHARED,
				  fd, 0), MAP_FAILED);
	close(fd);
	assert_int_equal(ltest_links_using_map(new_id), 1);
	assert_int_equal(ltest_links_using_map(old_id), 0);
}

static int prepare(void **state)
{
	struct group *gr = ktest_ensure_group(GROUP);

	(void)state;
	if (!gr) {
		fprintf(stderr, "no group " GROUP " and groupadd -f --system " GROUP " failed\n");
		return -1;
	}
	member.gid = gr->gr_gid;
	member.caps = 1ull << CAP_BPF;
	member.uid = 3100000000u + (uid_t)getpid() % 100000;
	while (getpwuid(member.uid))
		member.uid++;
	return 0;
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, ltest_teardown)
	const struct CMUnitTest tests[] = {
		T(test_member_cannot_break_pins),
		T(test_member_lock_does_not_block_loader),
		T(test_frozen_ring_recreated),
	};

	return KTEST_MAIN("loader_members", tests, prepare, NULL);
}
