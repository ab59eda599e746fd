// SPDX-License-Identifier: GPL-2.0
/*
 * kstats-loader re-runs against the running kernel: counts survive, nothing
 * is attached twice, a failed load or attach leaves the old program working,
 * incompatible pins are refused, and --unload removes exactly its own pins.
 * Compaction counts are checked against a tracefs instance (see
 * test_compaction.c); task_rename counts are exact (prctl).
 */
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
#include <bpf/bpf.h>

#include "kstats_pins.h"
#include "kmain.h"
#include "ltest.h"

#define TB(name) "tests/bpf/loader_" name ".bpf"
#define CMAP "compaction_duration_map"
#define TRIGGERS 3

static int setup(void **state)
{
	return ltest_setup(state, 'r', false);
}

static struct json_object *prog_of(struct ltest *t, const char *obj, const char *prog)
{
	return ltest_named(ltest_obj(t, obj), "programs", prog);
}

static struct json_object *map_of(struct ltest *t, const char *obj, const char *map)
{
	return ltest_named(ltest_obj(t, obj), "maps", map);
}

static uint32_t prog_id(struct ltest *t, const char *obj, const char *prog)
{
	return ltest_u64(prog_of(t, obj, prog), "prog_id");
}

static uint32_t map_id(struct ltest *t, const char *obj, const char *map)
{
	return ltest_u64(map_of(t, obj, map), "map_id");
}

static void pin_path(struct ltest *t, const char *kind, const char *obj,
		     const char *name, char *buf, size_t len)
{
	kstats_pin_path(buf, len, t->kt.pin_dir, kind, obj, name);
}

static bool status_pins_has(struct ltest *t, const char *obj, const char *path)
{
	struct json_object *pins = json_object_object_get(ltest_obj(t, obj), "pins");
	size_t i;

	for (i = 0; i < json_object_array_length(pins); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(pins, i)), path))
			return true;
	return false;
}

/* The program id behind a pinned link, 0 if none. */
static uint32_t linked_prog(struct ltest *t, const char *obj, const char *prog)
{
	char path[512];

	pin_path(t, "link", obj, prog, path, sizeof(path));
	return ltest_link_prog(path);
}

static void assert_renames_count(struct ltest *t, const char *obj, int n)
{
	uint64_t before, after;

	assert_int_equal(ltest_rename_count(t, obj, &before), 0);
	assert_int_equal(ltest_renames(n), 0);
	assert_int_equal(ltest_rename_count(t, obj, &after), 0);
	assert_int_equal(after - before, n);
}

/* Histogram growth over compactions equals the tracefs count of ends. */
static void assert_compaction_counts_exact(struct ltest *t)
{
	uint64_t a0, a1, b0, b1, before, after;
	long ends, overlap;
	int attempt, i;

	for (attempt = 0; attempt < 5; attempt++) {
		a0 = ktest_now_ns();
		assert_int_equal(ktest_hist_total(&t->kt, "compaction", CMAP, &before), 0);
		a1 = ktest_now_ns();
		for (i = 0; i < TRIGGERS; i++)
			assert_int_equal(ktest_compact_memory(), 0);
		b0 = ktest_now_ns();
		assert_int_equal(ktest_hist_total(&t->kt, "compaction", CMAP, &after), 0);
		b1 = ktest_now_ns();
		overlap = ktest_trace_count(&t->kt, "mm_compaction_end", a0, a1) +
			  ktest_trace_count(&t->kt, "mm_compaction_end", b0, b1);
		if (!overlap)
			break;
	}
	assert_int_equal(overlap, 0);
	ends = ktest_trace_count(&t->kt, "mm_compaction_end", a1, b0);
	assert_true(ends >= TRIGGERS);
	assert_int_equal(after - before, (uint64_t)ends);
}

static void test_rerun_keeps_counts_no_double_count(void **state)
{
	static const char *const events[] = { "compaction/mm_compaction_end", NULL };
	struct ltest *t = *state;
	uint64_t total0, total1, boot0, real0;
	uint32_t begin0, end0, map0;

	assert_int_equal(ltest_add(t, "bpf/compaction.bpf", "compaction"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_int_equal(ktest_compact_memory(), 0);
	assert_int_equal(ktest_hist_total(&t->kt, "compaction", CMAP, &total0), 0);
	assert_true(total0 > 0);
	begin0 = prog_id(t, "compaction", "on_compaction_begin");
	end0 = prog_id(t, "compaction", "on_compaction_end");
	map0 = map_id(t, "compaction", CMAP);
	boot0 = ltest_u64(map_of(t, "compaction", CMAP), "created_boottime_ns");
	real0 = ltest_u64(map_of(t, "compaction", CMAP), "created_realtime_ns");

	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "LOADED");
	/* The same programs stay attached, on the same maps, counts intact. */
	assert_int_equal(prog_id(t, "compaction", "on_compaction_begin"), begin0);
	assert_int_equal(prog_id(t, "compaction", "on_compaction_end"), end0);
	assert_int_equal(map_id(t, "compaction", CMAP), map0);
	assert_true(json_object_get_boolean(json_object_object_get(
		map_of(t, "compaction", CMAP), "reused")));
	assert_int_equal(ltest_u64(map_of(t, "compaction", CMAP), "created_boottime_ns"), boot0);
	assert_int_equal(ltest_u64(map_of(t, "compaction", CMAP), "created_realtime_ns"), real0);
	assert_int_equal(ktest_hist_total(&t->kt, "compaction", CMAP, &total1), 0);
	assert_true(total1 >= total0);
	assert_int_equal(ltest_links_using_map(map0), 1);

	assert_int_equal(ktest_trace_start(&t->kt, events), 0);
	assert_compaction_counts_exact(t);
}

/* New code for the same maps: replaced, once, and the counts carry on. */
static void test_upgrade_replaces_once(void **state)
{
	struct ltest *t = *state;
	uint32_t old, map0;
	uint64_t total;

	assert_int_equal(ltest_add(t, TB("count"), "lc"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_renames_count(t, "lc", 3);
	old = prog_id(t, "lc", "on_rename");
	map0 = map_id(t, "lc", "rename_count_map");

	assert_int_equal(ltest_add(t, TB("count_v2"), "lc"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "LOADED");
	assert_int_not_equal(prog_id(t, "lc", "on_rename"), old);
	assert_int_equal(linked_prog(t, "lc", "on_rename"), prog_id(t, "lc", "on_rename"));
	assert_int_equal(map_id(t, "lc", "rename_count_map"), map0);
	assert_true(ltest_prog_gone(old));
	assert_int_equal(ltest_links_using_map(map0), 1);
	assert_renames_count(t, "lc", 4);
	assert_int_equal(ltest_rename_count(t, "lc", &total), 0);
	assert_int_equal(total, 7);
}

/* A new version the verifier rejects, or a corrupt file: the old one runs on. */
static void test_failed_load_keeps_working_program(void **state)
{
	struct ltest *t = *state;
	char map_pin[512];
	uint32_t old, map0;

	assert_int_equal(ltest_add(t, TB("count"), "lc"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	old = prog_id(t, "lc", "on_rename");
	map0 = map_id(t, "lc", "rename_count_map");
	pin_path(t, "map", "lc", "rename_count_map", map_pin, sizeof(map_pin));

	assert_int_equal(ltest_add(t, TB("reject"), "lc"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "FAILED_VERIFIER");
	assert_int_equal(linked_prog(t, "lc", "on_rename"), old);
	assert_renames_count(t, "lc", 2);

	assert_int_equal(ltest_add_bytes(t, "lc", "garbage", 7), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "FAILED_OBJECT");
	assert_int_equal(linked_prog(t, "lc", "on_rename"), old);
	assert_renames_count(t, "lc", 2);
	/* Its pins are still recorded, so --unload still finds them. */
	assert_int_equal(map_id(t, "lc", "rename_count_map"), map0);
	assert_true(status_pins_has(t, "lc", map_pin));
	assert_int_equal(kstats_pin_id(map_pin), map0);
}

/* Loads, but the kernel refuses the attach: the old program is put back. */
static void test_failed_attach_rolls_back(void **state)
{
	struct ltest *t = *state;
	uint32_t old;

	assert_int_equal(ltest_add(t, TB("count"), "lc"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	old = prog_id(t, "lc", "on_rename");

	assert_int_equal(ltest_add(t, TB("count_badattach"), "lc"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "FAILED_ATTACH");
	assert_string_equal(ltest_outcome(t, "lc", "on_rename"), "FAILED_ATTACH");
	assert_int_equal(linked_prog(t, "lc", "on_rename"), old);
	assert_int_equal(prog_id(t, "lc", "on_rename"), old);
	assert_int_equal(ltest_links_using_map(map_id(t, "lc", "rename_count_map")), 1);
	assert_renames_count(t, "lc", 3);
}

static void test_incompatible_map_refused(void **state)
{
	struct ltest *t = *state;
	char aside[600] = "";
	struct json_object *pins;
	uint32_t map0;
	size_t i;

	assert_int_equal(ltest_add(t, TB("count"), "lc"), 0);
	assert_int_equal(ltest_add(t, "bpf/compaction.bpf", "compaction"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_renames_count(t, "lc", 2);
	map0 = map_id(t, "lc", "rename_count_map");

	assert_int_equal(ltest_add(t, TB("count_wide"), "lc"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "REFUSED_INCOMPATIBLE_PIN");
	if (!strstr(ltest_str(ltest_obj(t, "lc"), "reason"), "max_entries is 1024"))
		fail_msg("reason: %s", ltest_str(ltest_obj(t, "lc"), "reason"));
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "LOADED");
	assert_int_equal(map_id(t, "lc", "rename_count_map"), map0);
	assert_renames_count(t, "lc", 2);

	assert_int_equal(ltest_run(t, "--replace-incompatible", NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "LOADED");
	assert_int_not_equal(map_id(t, "lc", "rename_count_map"), map0);
	assert_int_equal(ltest_links_using_map(map0), 0);
	assert_renames_count(t, "lc", 2);
	/* The old map, counts and all, waits aside; it is ours to unload. */
	pins = json_object_object_get(ltest_obj(t, "lc"), "pins");
	for (i = 0; i < json_object_array_length(pins); i++)
		if (strstr(json_object_get_string(json_object_array_get_idx(pins, i)), "/aside_"))
			snprintf(aside, sizeof(aside), "%s",
				 json_object_get_string(json_object_array_get_idx(pins, i)));
	assert_true(*aside);
	assert_int_equal(kstats_pin_id(aside), map0);
}

/* A pin the loader did not make: refused when incompatible, never removed. */
static void test_foreign_pins_untouched(void **state)
{
	struct ltest *t = *state;
	char path[512], other[512];
	int fd, fd2;

	assert_int_equal(ltest_add(t, TB("count"), "lc"), 0);
	assert_int_equal(mkdir(t->kt.pin_dir, 0750), 0);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "foreign", 4, 16, 1, NULL);
	fd2 = bpf_map_create(BPF_MAP_TYPE_ARRAY, "other", 4, 4, 1, NULL);
	assert_true(fd >= 0 && fd2 >= 0);
	pin_path(t, "map", "lc", "rename_count_map", path, sizeof(path));
	snprintf(other, sizeof(other), "%s/someone_elses_pin", t->kt.pin_dir);
	assert_int_equal(bpf_obj_pin(fd, path), 0);
	assert_int_equal(bpf_obj_pin(fd2, other), 0);
	close(fd);
	close(fd2);

	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "REFUSED_INCOMPATIBLE_PIN");
	assert_int_equal(ltest_run(t, "--unload", NULL), 0);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(access(other, F_OK), 0);
}

static void collect_ids(struct ltest *t, uint32_t *ids, size_t *n)
{
	struct json_object *objs = json_object_object_get(t->status, "objects"), *progs;
	size_t i, j;

	*n = 0;
	for (i = 0; i < json_object_array_length(objs); i++) {
		progs = json_object_object_get(json_object_array_get_idx(objs, i), "programs");
		for (j = 0; j < json_object_array_length(progs); j++) {
			uint32_t id = ltest_u64(json_object_array_get_idx(progs, j), "prog_id");

			if (id && *n < 16)
				ids[(*n)++] = id;
		}
	}
}

static void test_unload_leaves_nothing(void **state)
{
	struct ltest *t = *state;
	char other[512], flag[512];
	uint32_t ids[16];
	size_t n, i;
	int fd;

	assert_int_equal(ltest_add(t, TB("count"), "lc"), 0);
	assert_int_equal(ltest_add(t, "bpf/compaction.bpf", "compaction"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	collect_ids(t, ids, &n);
	assert_int_equal(n, 3);
	snprintf(other, sizeof(other), "%s/someone_elses_pin", t->kt.pin_dir);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "other", 4, 4, 1, NULL);
	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_pin(fd, other), 0);
	close(fd);

	assert_int_equal(ltest_run(t, "--unload", NULL), 0);
	for (i = 0; i < n; i++)
		assert_true(ltest_prog_gone(ids[i]));
	assert_int_equal(access(other, F_OK), 0);
	assert_int_equal(access(t->status_path, F_OK), -1);
	snprintf(flag, sizeof(flag), "%s/progs_loaded", t->run_dir);
	assert_int_equal(access(flag, F_OK), -1);
	/* Only the foreign pin is left, so the directory stays. */
	assert_int_equal(unlink(other), 0);
	assert_int_equal(rmdir(t->kt.pin_dir), 0);
}

/* Without a status file, --unload goes by the pin names of --obj-dir. */
static void test_unload_without_status(void **state)
{
	struct ltest *t = *state;
	uint32_t ids[16];
	size_t n, i;

	assert_int_equal(ltest_add(t, TB("count"), "lc"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	collect_ids(t, ids, &n);
	assert_int_equal(n, 1);
	assert_int_equal(unlink(t->status_path), 0);
	assert_int_equal(ltest_run(t, "--unload", NULL), 0);
	for (i = 0; i < n; i++)
		assert_true(ltest_prog_gone(ids[i]));
	assert_int_equal(access(t->kt.pin_dir, F_OK), -1);
}

/* An object removed from --obj-dir keeps its pins, listed, until --unload. */
static void test_absent_object_kept(void **state)
{
	struct ltest *t = *state;
	uint32_t id;

	assert_int_equal(ltest_add(t, TB("count"), "lc"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	id = prog_id(t, "lc", "on_rename");
	ltest_remove(t, "lc");
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "ABSENT");
	assert_renames_count(t, "lc", 2);
	assert_int_equal(ltest_run(t, "--unload", NULL), 0);
	assert_true(ltest_prog_gone(id));
}

/*
 * With the unit's capabilities only (no CAP_SYS_ADMIN: no program or BTF by
 * id), re-runs still keep, upgrade once, and roll back.
 */
static void test_rerun_with_unit_capabilities(void **state)
{
	struct ltest *t = *state;
	uint32_t first, second, map0;

	t->capped = true;
	assert_int_equal(ltest_add(t, TB("count"), "lc"), 0);
	assert_int_equal(ltest_add(t, "bpf/compaction.bpf", "compaction"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "LOADED");
	first = prog_id(t, "lc", "on_rename");
	map0 = map_id(t, "lc", "rename_count_map");

	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "LOADED");
	assert_string_equal(ltest_outcome(t, "lc", NULL), "LOADED");
	assert_int_equal(prog_id(t, "lc", "on_rename"), first);
	assert_int_equal(map_id(t, "lc", "rename_count_map"), map0);

	assert_int_equal(ltest_add(t, TB("count_v2"), "lc"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	second = prog_id(t, "lc", "on_rename");
	assert_int_not_equal(second, first);
	assert_int_equal(ltest_links_using_map(map0), 1);
	assert_renames_count(t, "lc", 3);

	assert_int_equal(ltest_add(t, TB("count_badattach"), "lc"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "FAILED_ATTACH");
	assert_int_equal(linked_prog(t, "lc", "on_rename"), second);
	assert_int_equal(ltest_links_using_map(map0), 1);
	assert_renames_count(t, "lc", 2);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, ltest_teardown)
	const struct CMUnitTest tests[] = {
		T(test_rerun_keeps_counts_no_double_count),
		T(test_upgrade_replaces_once),
		T(test_failed_load_keeps_working_program),
		T(test_failed_attach_rolls_back),
		T(test_incompatible_map_refused),
		T(test_foreign_pins_untouched),
		T(test_unload_leaves_nothing),
		T(test_unload_without_status),
		T(test_absent_object_kept),
		T(test_rerun_with_unit_capabilities),
	};

	return KTEST_MAIN("loader_rerun", tests, NULL, NULL);
}
