/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the reader's kernel tests: load a test object's maps into the
 * test's private pin dir, read a pinned map whole, find columns and rows,
 * and make BPF_MAP_LOOKUP_BATCH fail in one thread (seccomp) to drive the
 * reader's fallback against the real kernel.
 */
#ifndef KSTATS_TEST_READER_H
#define KSTATS_TEST_READER_H

#include <stddef.h>
#include <stdint.h>

#include "kstats_reader.h"
#include "ktest.h"
/* Not the product's interface: the syscalls and batching of the last read,
 * the layout cache's hits and misses. */
#include "map_internal.h"

struct bpf_object;

/* tests/bpf/reader_layouts.bpf's maps, pinned in this process's own dir. */
struct rtest_fixture {
	struct ktest t;
	struct bpf_object *obj;
	char obj_path[512];
	const char *no_kernel;		/* why this kernel cannot run the tests */
	int ncpus;			/* libbpf_num_possible_cpus() */
};

/* 0 also when the kernel cannot run the tests (no_kernel says why). */
int rtest_fixture_setup(struct rtest_fixture *f, const char *tag);
void rtest_fixture_teardown(struct rtest_fixture *f);
struct CMUnitTest;
/* The n tests as group name, between rtest_fixture_setup(f, tag) and its teardown. */
int rtest_main(const char *name, const struct CMUnitTest *tests, size_t n,
	       struct rtest_fixture *f, const char *tag);
#define RTEST_MAIN(name, tests, f, tag) \
	rtest_main(name, tests, sizeof(tests) / sizeof((tests)[0]), f, tag)
/* cmocka: skips the test when the kernel cannot run it. */
#define RTEST_NEED_KERNEL(f) do { if ((f)->no_kernel) skip(); } while (0)
/* The fixture's map called name (the test fails if there is none). */
int rtest_map_fd(const struct rtest_fixture *f, const char *name);
/* Options reading the fixture's map name; pin receives its pin path. */
struct kstats_map_opts rtest_opts(const struct rtest_fixture *f, const char *name,
				  char *pin, size_t len);
/* kstats_map_open(o) fails with -errnum and an error containing why. */
void rtest_expect_open_error(const struct kstats_map_opts *o, int errnum,
			     const char *why);

/* $KSTATS_BUILD/tests/bpf/<obj>.bpf */
void rtest_obj_path(const struct ktest *t, const char *obj, char *buf, size_t len);
/* <pin_dir>/map_<obj>_<map>, as kstats-loader names it. */
void rtest_pin_path(const struct ktest *t, const char *obj, const char *map,
		    char *buf, size_t len);
/* Loads tests/bpf/<file>.bpf, pinning its maps as those of object obj. */
int rtest_load(const struct ktest *t, const char *file, const char *obj,
	       struct bpf_object **out);

struct rtest_read {
	struct kstats_map *m;
	int64_t *rows;
	size_t nrows, ncols;
	char err[KSTATS_ERR_LEN];
};

/* Opens and reads the whole map; on error r->err says why. */
int rtest_read(const struct kstats_map_opts *o, struct rtest_read *r);
/* Reads the already open map again. */
int rtest_reread(struct rtest_read *r);
void rtest_read_free(struct rtest_read *r);

/* Index of the column named name, or -1. */
int rtest_col(const struct kstats_map *m, const char *name);
/* The value of column name in row, by name (aborts the test if missing). */
int64_t rtest_get(const struct rtest_read *r, const int64_t *row, const char *name);
/* The row whose first nkey columns equal key, or NULL; one at most. */
const int64_t *rtest_find_row(const struct rtest_read *r, const int64_t *key,
			      size_t nkey);

/* From now on, this thread's BPF_MAP_LOOKUP_BATCH fails with errnum. */
int rtest_fail_batch_in_this_thread(int errnum);

#endif /* KSTATS_TEST_READER_H */
