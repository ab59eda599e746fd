/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for kernel tests: a private pin directory per test process, the
 * real loader, tracefs instances that count events independently, and
 * histogram totals read back through libkstats.
 */
#ifndef KSTATS_KTEST_H
#define KSTATS_KTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ktest {
	char pin_dir[256];
	char obj_dir[256];
	char build[200];
	char trace_dir[256];		/* tracefs instance, "" if none */
};

/* KSTATS_BUILD names the build tree; pin dir is kernelstats-test-<pid>. */
int ktest_init(struct ktest *t, const char *tag);
/* A new directory /tmp/kstats-test-<pid>-<tag>-XXXXXX (0700) in dir. */
int ktest_tmpdir(char *dir, size_t len, const char *tag);
/*
 * ktest_init, with the objects in an empty obj/ of a new ktest_tmpdir
 * (in dir), for a test that chooses them.
 */
int ktest_init_own_objs(struct ktest *t, const char *tag, char *dir, size_t len);
void ktest_fini(struct ktest *t);
/* Group fixtures: ktest_init(t, tag) and a loader run, *state = t; ktest_fini(*state). */
int ktest_loader_up(void **state, struct ktest *t, const char *tag);
int ktest_teardown(void **state);

/* Runs build/kstats-loader with --obj-dir/--pin-dir plus extra args. */
int ktest_run_loader(struct ktest *t, const char *const *extra);
/* Same, but returns the loader's pid without waiting. */
int ktest_loader_status(pid_t pid);
/* Starts argv[0] with stdout and stderr into the files; the pid or -errno. */
pid_t ktest_spawn(const char *const *argv, const char *out_path,
		  const char *err_path);

struct group;
/* The system group name, made with groupadd if missing (waits out its lock). */
struct group *ktest_ensure_group(const char *name);

/* Why the kernel cannot run this test, or NULL. */
const char *ktest_missing_feature(void);

/* Tracefs instance recording the given events with the mono clock. */
int ktest_trace_start(struct ktest *t, const char *const *events);
/* Events named event whose timestamps lie in [from_ns, to_ns]. */
long ktest_trace_count(struct ktest *t, const char *event, uint64_t from_ns,
		       uint64_t to_ns);

/* Writes s to path (created 0644 if missing); 0 or -errno. */
int ktest_write_file(const char *path, const char *s);
/* At most len - 1 bytes of path, NUL-terminated; their count, or -errno. */
ssize_t ktest_read_file(const char *path, char *buf, size_t len);
/* Removes path and everything under it. */
int ktest_rm_tree(const char *path);

uint64_t ktest_now_ns(void);
int ktest_compact_memory(void);

/* Sum of every bucket of every key of a pinned histogram map. */
int ktest_hist_total(struct ktest *t, const char *obj, const char *map,
		     uint64_t *total);

#endif /* KSTATS_KTEST_H */
