// SPDX-License-Identifier: GPL-2.0
/*
 * check_trusted() on real directories and files under a temp directory in
 * /tmp (root-owned, sticky): modes, owners, ancestors and symlinks.
 */
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "ktest.h"
#include "loader.h"

#define OTHER_UID 4242

static char root[64];
static char why[1024];

static const char *at(const char *rel)
{
	static char buf[4][256];
	static int n;
	char *p = buf[n++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", root, rel);
	return p;
}

static void make_dir(const char *rel, mode_t mode)
{
	assert_int_equal(mkdir(at(rel), 0700), 0);
	assert_int_equal(chmod(at(rel), mode), 0);
}

static void make_file(const char *rel, mode_t mode)
{
	FILE *f = fopen(at(rel), "w");

	assert_non_null(f);
	fclose(f);
	assert_int_equal(chmod(at(rel), mode), 0);
}

static int setup(void **state)
{
	(void)state;
	if (ktest_tmpdir(root, sizeof(root), "trust") || chmod(root, 0755))
		return -1;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	(void)state;
	return nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS) ? -1 : 0;
}

static void assert_refused(const char *path, const char *needle)
{
	*why = 0;
	assert_int_equal(check_trusted(path, why, sizeof(why)), -EPERM);
	if (!strstr(why, needle))
		fail_msg("reason \"%s\" lacks \"%s\"", why, needle);
	assert_null(strchr(why, '\n'));
}

static void test_root_owned_tree_is_trusted(void **state)
{
	(void)state;
	make_dir("ok", 0755);
	make_file("ok/a.bpf", 0644);
	assert_int_equal(check_trusted(at("ok"), why, sizeof(why)), 0);
	assert_int_equal(check_trusted(at("ok/a.bpf"), why, sizeof(why)), 0);
}

static void test_writable_directory_is_refused(void **state)
{
	char fix[300];

	(void)state;
	make_dir("gw", 0775);
	make_dir("ww", 0757);
	make_dir("sticky", 01777);	/* sticky does not save the leaf */
	snprintf(fix, sizeof(fix), "run: chmod go-w %s", at("gw"));
	assert_refused(at("gw"), fix);
	assert_refused(at("gw"), "group-writable (mode 0775)");
	assert_refused(at("ww"), "world-writable (mode 0757)");
	assert_refused(at("sticky"), "world-writable (mode 1777)");
}

static void test_writable_file_is_refused(void **state)
{
	(void)state;
	make_dir("f", 0755);
	make_file("f/g.bpf", 0664);
	make_file("f/w.bpf", 0646);
	assert_refused(at("f/g.bpf"), "group-writable");
	assert_refused(at("f/w.bpf"), "world-writable");
}

static void test_non_root_owner_is_refused(void **state)
{
	(void)state;
	if (geteuid())
		skip();
	make_dir("own", 0755);
	make_file("own/a.bpf", 0444);
	assert_int_equal(chown(at("own/a.bpf"), OTHER_UID, 0), 0);
	assert_refused(at("own/a.bpf"), "owned by uid 4242, not root");
	assert_refused(at("own/a.bpf"), "run: chown root");
	assert_int_equal(chown(at("own"), OTHER_UID, 0), 0);
	assert_refused(at("own"), "owned by uid 4242");
}

/* A trusted file below a writable directory is not: it can be swapped. */
static void test_writable_ancestor_is_refused(void **state)
{
	char needle[300];

	(void)state;
	make_dir("anc", 0777);
	make_dir("anc/bpf", 0755);
	make_file("anc/bpf/a.bpf", 0644);
	snprintf(needle, sizeof(needle), "%s is world-writable", at("anc"));
	assert_refused(at("anc/bpf"), needle);
	assert_refused(at("anc/bpf/a.bpf"), needle);
}

static void test_sticky_root_ancestor_is_trusted(void **state)
{
	(void)state;
	make_dir("tmp", 01777);
	make_dir("tmp/bpf", 0755);
	assert_int_equal(check_trusted(at("tmp/bpf"), why, sizeof(why)), 0);
	if (geteuid())
		skip();	/* the half that needs chown */
	assert_int_equal(chown(at("tmp"), OTHER_UID, 0), 0);
	assert_refused(at("tmp/bpf"), "owned by uid 4242");
}

static void test_symlink_is_judged_by_its_target(void **state)
{
	(void)state;
	make_dir("target_bad", 0777);
	make_dir("target_ok", 0755);
	assert_int_equal(symlink(at("target_bad"), at("link_bad")), 0);
	assert_int_equal(symlink(at("target_ok"), at("link_ok")), 0);
	assert_refused(at("link_bad"), at("target_bad"));
	assert_int_equal(check_trusted(at("link_ok"), why, sizeof(why)), 0);
}

static void test_missing_path_is_an_error(void **state)
{
	(void)state;
	assert_int_equal(check_trusted(at("nonexistent"), why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_owned_tree_is_trusted),
		cmocka_unit_test(test_writable_directory_is_refused),
		cmocka_unit_test(test_writable_file_is_refused),
		cmocka_unit_test(test_non_root_owner_is_refused),
		cmocka_unit_test(test_writable_ancestor_is_refused),
		cmocka_unit_test(test_sticky_root_ancestor_is_trusted),
		cmocka_unit_test(test_symlink_is_judged_by_its_target),
		cmocka_unit_test(test_missing_path_is_an_error),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
