/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loader tests: a private object directory (chosen objects copied into a
 * mktemp dir), run dir and pin dir per test; the real kstats-loader; its
 * status file read back with json-c.
 */
#ifndef KSTATS_LTEST_H
#define KSTATS_LTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "ktest.h"

struct ltest {
	struct ktest kt;		/* kt.obj_dir is the private object dir */
	char dir[128];			/* mktemp dir, removed by ltest_fini */
	char run_dir[192];
	char status_path[256];
	char out_path[256];		/* the last run's stdout and stderr */
	struct json_object *status;	/* the last run's status file */
	bool capped;			/* run with the unit's capabilities only */
};

/* Fresh dirs; tag must be unique within the test binary. */
int ltest_init(struct ltest *t, const char *tag);
void ltest_fini(struct ltest *t);

/*
 * cmocka fixtures: a fresh ltest per test in *state, tagged <prefix><n>,
 * with compaction.bpf in its object dir when with_compaction.
 */
int ltest_setup(void **state, char prefix, bool with_compaction);
int ltest_teardown(void **state);

/* Copies $KSTATS_BUILD/<rel> (e.g. "bpf/compaction.bpf") in as <as>.bpf. */
int ltest_add(struct ltest *t, const char *rel, const char *as);
int ltest_add_bytes(struct ltest *t, const char *as, const void *data, size_t len);
void ltest_remove(struct ltest *t, const char *as);

/*
 * Runs the loader with --obj-dir, --pin-dir, --run-dir and NULL-terminated
 * extra args: its exit code, 128 + signal, or -ETIMEDOUT after 600 s.
 */
int ltest_run(struct ltest *t, ...);
/* Same, with stdout on out_fd (-1: the output file), killed after timeout_s. */
int ltest_run_bounded(struct ltest *t, int out_fd, int timeout_s, ...);
/* Whether the last run's output (stdout and stderr) contains s. */
bool ltest_output_has(const struct ltest *t, const char *s);

/* Whether a loader record read from the /dev/kmsg fd (non-blocking) has text. */
bool ltest_kmsg_has(int fd, const char *text);

struct json_object *ltest_obj(const struct ltest *t, const char *name);
struct json_object *ltest_named(struct json_object *obj, const char *array,
				const char *name);
const char *ltest_str(struct json_object *o, const char *key);
uint64_t ltest_u64(struct json_object *o, const char *key);
/* outcome of object obj, or of its program prog when prog is not NULL. */
const char *ltest_outcome(const struct ltest *t, const char *obj, const char *prog);

/* prctl(PR_SET_NAME) n times: n task_rename events from this process. */
int ltest_renames(int n);
/* This process's entry of <obj>'s pinned rename_count_map (0 if none). */
int ltest_rename_count(const struct ltest *t, const char *obj, uint64_t *count);
/* The program id of the link pinned at pin (0 if none); kstats_pin_id() for others. */
uint32_t ltest_link_prog(const char *pin);
/* Attached links, system-wide, whose program uses map map_id. */
int ltest_links_using_map(uint32_t map_id);
/* Whether a program id still exists (detaching frees it asynchronously). */
bool ltest_prog_gone(uint32_t prog_id);

#endif /* KSTATS_LTEST_H */
