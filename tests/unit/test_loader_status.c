// SPDX-License-Identifier: GPL-2.0
/*
 * The typed loader-status reader (btfreader/kstats_status.h): tolerant of
 * what a newer writer may add or change in type, strict about the version,
 * and hostile-file safe (no symlink followed, no FIFO opened blocking).
 * No kernel needed.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <json-c/json.h>

#include "kstats_status.h"
#include "ktest.h"

static char dir[64], path[128];

static int setup(void **state)
{
	(void)state;
	if (ktest_tmpdir(dir, sizeof(dir), "status"))
		return -1;
	snprintf(path, sizeof(path), "%s/loader-status.json", dir);
	return 0;
}

static int teardown(void **state)
{
	char target[160];

	(void)state;
	unlink(path);
	snprintf(target, sizeof(target), "%s/target", dir);
	unlink(target);
	return rmdir(dir);
}

static int parse(const char *json, struct kstats_status *st, char *err, size_t len)
{
	return kstats_status_parse(json, strlen(json), "test.json", st, err, len);
}

static void test_typed_fields(void **state)
{
	static const char json[] =
		"{\"version\":1,\"kernel_release\":\"6.1\",\"pin_dir\":\"/p\",\"objects\":["
		"{\"name\":\"a\",\"path\":\"/o/a.bpf\",\"outcome\":\"LOADED\",\"critical\":true,"
		"\"programs\":[{\"name\":\"p\",\"prog_id\":7,\"link_pin\":\"/p/l\"}],"
		"\"maps\":[{\"name\":\"m\",\"pin\":\"/p/m\",\"map_id\":9,\"reused\":true,"
		"\"created_boottime_ns\":100,\"created_realtime_ns\":200,"
		"\"key_type\":\"__u32\",\"value_type\":\"acc\"}],"
		"\"pins\":[\"/p/m\",3,\"/p/l\"]}]}";
	const struct kstats_status_map *m;
	struct kstats_status st;
	char err[256];

	(void)state;
	assert_int_equal(parse(json, &st, err, sizeof(err)), 0);
	assert_string_equal(st.kernel_release, "6.1");
	assert_string_equal(st.pin_dir, "/p");
	assert_string_equal(st.boot_id, "");
	assert_int_equal(st.nobjs, 1);
	assert_true(st.objs[0].critical);
	assert_int_equal(st.objs[0].outcome, KSTATS_LOADED);	/* a value, not a string */
	assert_false(kstats_outcome_failed(st.objs[0].outcome));
	assert_int_equal(st.objs[0].progs[0].outcome, KSTATS_UNKNOWN);	/* none given */
	assert_int_equal(st.objs[0].nprogs, 1);
	assert_int_equal(st.objs[0].progs[0].prog_id, 7);
	assert_string_equal(st.objs[0].progs[0].section, "");
	m = kstats_status_map_by_id(&st, 9);
	assert_non_null(m);
	assert_string_equal(m->pin, "/p/m");
	assert_true(m->reused);
	assert_int_equal(m->created_boot_ns, 100);
	assert_int_equal(m->created_real_ns, 200);
	assert_string_equal(m->key_type, "__u32");
	assert_string_equal(m->value_type, "acc");
	assert_ptr_equal(kstats_status_obj_map(&st.objs[0], "m"), m);
	assert_null(kstats_status_obj_map(&st.objs[0], "x"));
	assert_null(kstats_status_obj_map(NULL, "m"));
	/* Pins: the strings, in order; anything else is skipped. */
	assert_int_equal(st.objs[0].npins, 2);
	assert_string_equal(st.objs[0].pins[0], "/p/m");
	assert_string_equal(st.objs[0].pins[1], "/p/l");
	assert_ptr_equal(kstats_status_obj(&st, "a"), &st.objs[0]);
	assert_null(kstats_status_obj(&st, "b"));
	assert_null(kstats_status_map_by_id(&st, 0));
	kstats_status_free(&st);
}

/* A newer writer's extra members and odd types read as absent, never fail. */
static void test_tolerant(void **state)
{
	static const char json[] =
		"{\"version\":1,\"future\":{\"x\":1},\"objects\":[7,null,"
		"{\"name\":5,\"outcome\":\"FAILED_OBJECT\",\"critical\":\"yes\",\"new\":[],"
		"\"programs\":{},\"maps\":[1,{\"name\":\"m\",\"map_id\":-3,"
		"\"created_boottime_ns\":\"100\"},{\"map_id\":4294967296}]}]}";
	struct kstats_status st;
	char err[256];

	(void)state;
	assert_int_equal(parse(json, &st, err, sizeof(err)), 0);
	assert_int_equal(st.nobjs, 1);
	assert_string_equal(st.objs[0].name, "");
	assert_false(st.objs[0].critical);
	assert_int_equal(st.objs[0].outcome, KSTATS_FAILED_OBJECT);
	assert_true(kstats_outcome_failed(st.objs[0].outcome));
	assert_int_equal(st.objs[0].nprogs, 0);
	assert_int_equal(st.objs[0].nmaps, 2);
	assert_int_equal(st.objs[0].maps[0].map_id, 0);
	assert_int_equal(st.objs[0].maps[0].created_boot_ns, 0);
	assert_int_equal(st.objs[0].maps[1].map_id, 0);	/* past u32: not an id */
	assert_string_equal(st.objs[0].maps[0].key_type, "");
	assert_int_equal(st.objs[0].npins, 0);
	kstats_status_free(&st);
}

static void test_versioned(void **state)
{
	static const char *const bad[] = {
		"{\"objects\":[]}",
		"{\"version\":2,\"objects\":[]}",
		"{\"version\":\"1\",\"objects\":[]}",
		"{\"version\":1,\"objects\":{}}",
		"[1,2]",
		"{\"version\":1,\"objects\":[",
		"",
	};
	struct kstats_status st;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &st, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "test.json"));
		assert_non_null(strstr(err, "run kstats-loader"));
		assert_null(st.json);
	}
	assert_int_equal(parse("{\"version\":2,\"objects\":[]}", &st, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "status version 2, this kstats reads version 1"));
	assert_int_equal(parse("{\"version\":1,\"objects\":[", &st, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "truncated"));
}

static void write_file(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Never through a symlink, never blocking on a FIFO; a missing file says the fix. */
static void test_hostile_files(void **state)
{
	struct kstats_status st;
	char err[512], target[160];

	(void)state;
	assert_int_equal(kstats_status_read(path, &st, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no loader status at"));

	snprintf(target, sizeof(target), "%s/target", dir);
	write_file(target, "{\"version\":1,\"objects\":[]}");
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(kstats_status_read(path, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is a symlink or not a regular file"));
	assert_int_equal(unlink(path), 0);

	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(kstats_status_read(path, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is a symlink or not a regular file"));
	assert_int_equal(unlink(path), 0);

	assert_int_equal(rename(target, path), 0);
	assert_int_equal(kstats_status_read(path, &st, err, sizeof(err)), 0);
	assert_int_equal(st.nobjs, 0);
	kstats_status_free(&st);
}

/* What the loader writes reads back as the same structs, members in schema order. */
static void test_round_trip(void **state)
{
	struct kstats_status_prog prog = { .name = "p", .section = "tp_btf/x", .attach = "x",
		.attach_type = "tp_btf", .outcome = KSTATS_LOADED, .reason = "", .prog_id = 7,
		.link_pin = "/p/link_a_p", .prog_pin = "/p/prog_a_x", .kept = true };
	struct kstats_status_map maps[2] = {
		{ .name = "m", .pin = "/p/map_a_m", .map_id = 9, .reused = true,
		  .created_boot_ns = 100, .created_real_ns = 200, .key_type = "__u32",
		  .value_type = "acc" },
		{ .name = "n", .pin = "/p/map_a_n", .key_type = "", .value_type = "" },
	};
	char *pins[] = { "/p/link_a_p", "/p/map_a_m" };
	/* A name that is not UTF-8 is written as the text \xNN: the file stays UTF-8. */
	struct kstats_status_obj obj = { .name = "a", .path = "/o/a\xe9\xc3.bpf",
		.copy = "/r/a.bpf", .outcome = KSTATS_REFUSED_INCOMPATIBLE_PIN,
		.reason = "caf\xc3\xa9", .critical = true, .progs = &prog, .nprogs = 1, .maps = maps,
		.nmaps = 2, .pins = pins, .npins = 2 };
	struct kstats_status st = { .kernel_release = "6.1", .kernel_version = 393472,
		.boot_id = "b", .started_boot_ns = 1, .finished_boot_ns = 2, .obj_dir = "/o",
		.pin_dir = "/p", .error = "", .objs = &obj, .nobjs = 1 }, back;
	struct json_object *j = kstats_status_json(&st);
	const char *text;
	char err[256];

	(void)state;
	assert_non_null(j);
	text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	assert_non_null(strstr(text, "{\"version\":1,\"kernel_release\":\"6.1\","
		"\"kernel_version\":393472,\"boot_id\":\"b\",\"started_boottime_ns\":1,"
		"\"finished_boottime_ns\":2,\"obj_dir\":\"/o\",\"pin_dir\":\"/p\","
		"\"objects\":[{\"name\":\"a\",\"path\":\"/o/a\\\\xe9\\\\xc3.bpf\","
		"\"copy\":\"/r/a.bpf\",\"outcome\":\"REFUSED_INCOMPATIBLE_PIN\","
		"\"reason\":\"caf\xc3\xa9\""));
	assert_non_null(strstr(text, "\"prog_id\":7,\"link_pin\":\"/p/link_a_p\","
		"\"prog_pin\":\"/p/prog_a_x\",\"kept\":true}"));
	assert_non_null(strstr(text, "\"created_realtime_ns\":0}"));	/* no types: omitted */
	assert_null(strstr(text, "\"error\""));
	assert_int_equal(parse(text, &back, err, sizeof(err)), 0);
	assert_int_equal(back.nobjs, 1);
	assert_int_equal(back.kernel_version, 393472);
	assert_int_equal(back.objs[0].nmaps, 2);
	assert_int_equal(back.objs[0].outcome, KSTATS_REFUSED_INCOMPATIBLE_PIN);
	assert_int_equal(back.objs[0].progs[0].outcome, KSTATS_LOADED);
	assert_string_equal(back.objs[0].copy, "/r/a.bpf");
	assert_int_equal(back.objs[0].maps[0].created_real_ns, 200);
	assert_string_equal(back.objs[0].maps[0].value_type, "acc");
	assert_true(back.objs[0].progs[0].kept);
	assert_int_equal(back.objs[0].npins, 2);
	assert_string_equal(back.objs[0].pins[1], "/p/map_a_m");
	kstats_status_free(&back);
	json_object_put(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_typed_fields),
		cmocka_unit_test(test_tolerant),
		cmocka_unit_test(test_versioned),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test_setup_teardown(test_hostile_files, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
