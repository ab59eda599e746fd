// SPDX-License-Identifier: GPL-2.0
/*
 * kstats read, the binary, on real pinned maps: JSON (parsed back with
 * json-c) and text output, enum names, char arrays as strings, the pin path
 * derived from --pin-dir, the map's own BTF with --pin alone, exit codes.
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
#include <sys/wait.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ktest.h"
#include "reader.h"
#include "../bpf/reader_layouts.h"

#define OUT_MAX (1 << 20)

static struct rtest_fixture fx;
static char kstats[300], out_file[64], err_file[64];
static char out[OUT_MAX], errout[4096];

#define NNAMES 4
static const char *const names[NNAMES] = {
	"compaction", "0123456789abcdef", "", "tab\there\\",
};

static int update(const char *map, const void *key, const void *value)
{
	return bpf_map_update_elem(rtest_map_fd(&fx, map), key, value, BPF_ANY);
}

static int fill_maps(void)
{
	static const enum rd_color colors[] = { RD_COLOR_RED, RD_COLOR_NEG, RD_COLOR_BLUE };
	int ret = 0;
	__u32 i;

	for (i = 0; i < NNAMES; i++) {
		struct rd_name_value nv = { .len = strlen(names[i]) };

		memcpy(nv.name, names[i], strlen(names[i]));	/* the 16-char one has no NUL */
		ret = ret ?: update("name_map", &i, &nv);
	}
	for (i = 0; i < 3; i++) {
		struct rd_flags_value fv = { .on = i == 1, .tag = 'a' + i, .last = 5, .delta = -1 };
		struct rd_small_key sk = { .a = 3 - i, .b = 1000 * i };
		struct rd_small_value sv = { .s = -(int)i, .u = UINT64_MAX - i };
		struct rd_id_key ck = { .id = i };
		struct rd_id_value cv = { .id = 100 + i, .n = 7 };

		ret = ret ?: update("flags_map", &colors[i], &fv);
		ret = ret ?: update("small_map", &sk, &sv);
		ret = ret ?: update("clash_map", &ck, &cv);
	}
	return ret;
}

static int setup(void **state)
{
	(void)state;
	if (rtest_fixture_setup(&fx, "cli"))
		return -1;
	if (fx.no_kernel)
		return 0;
	snprintf(kstats, sizeof(kstats), "%s/kstats", fx.t.build);
	snprintf(out_file, sizeof(out_file), "/tmp/kstats-test-%d-cli.out", (int)getpid());
	snprintf(err_file, sizeof(err_file), "/tmp/kstats-test-%d-cli.err", (int)getpid());
	return fill_maps();
}

static int teardown(void **state)
{
	(void)state;
	rtest_fixture_teardown(&fx);
	unlink(out_file);
	unlink(err_file);
	return 0;
}

/* Runs kstats read ARGS... (NULL-terminated); stdout in out, stderr in errout. */
static int run_read(const char *first, ...)
{
	const char *argv[16] = { kstats, "read" };
	int argc = 2, status;
	va_list ap;
	pid_t pid;

	va_start(ap, first);
	for (const char *a = first; a && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = a;
	va_end(ap);
	pid = ktest_spawn(argv, out_file, err_file);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	ktest_read_file(out_file, out, sizeof(out));
	ktest_read_file(err_file, errout, sizeof(errout));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_map(const char *map, bool json)
{
	return run_read("--obj", fx.obj_path, "--map", map, "--pin-dir", fx.t.pin_dir,
			json ? "--json" : NULL, NULL);
}

static json_object *parse_rows(size_t want)
{
	json_object *rows = json_tokener_parse(out);

	if (!rows || !json_object_is_type(rows, json_type_array))
		fail_msg("not a JSON array: %.200s", out);
	assert_int_equal(json_object_array_length(rows), want);
	return rows;
}

static json_object *field(json_object *row, const char *name)
{
	json_object *v;

	if (!json_object_object_get_ex(row, name, &v))
		fail_msg("row lacks \"%s\": %s", name, json_object_to_json_string(row));
	return v;
}

/* Pin derived from --pin-dir; enum names; rows sorted by (signed) key. */
static void test_json_enums_and_bools(void **state)
{
	static const char *const keys[] = { "RD_COLOR_NEG", "RD_COLOR_RED", "RD_COLOR_BLUE" };
	json_object *rows, *row;
	int i;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	assert_int_equal(run_map("flags_map", true), 0);
	rows = parse_rows(3);
	for (i = 0; i < 3; i++) {
		row = json_object_array_get_idx(rows, i);
		assert_string_equal(json_object_get_string(field(row, "key")), keys[i]);
		assert_int_equal(json_object_get_int64(field(row, "last")), 5);	/* no name */
		assert_int_equal(json_object_get_int64(field(row, "delta")), -1);
	}
	row = json_object_array_get_idx(rows, 0);	/* NEG was written second */
	assert_int_equal(json_object_get_int64(field(row, "on")), 1);
	assert_int_equal(json_object_get_int64(field(row, "tag")), 'b');
	json_object_put(rows);
}

/* Text up to the NUL; a full array has none; control bytes and \\ escaped. */
static void test_json_strings(void **state)
{
	static const char *const shown[NNAMES] = {
		"compaction", "0123456789abcdef", "", "tab\\x09here\\x5c",
	};
	json_object *rows, *row;
	int i;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	assert_int_equal(run_map("name_map", true), 0);
	rows = parse_rows(NNAMES);
	for (i = 0; i < NNAMES; i++) {
		row = json_object_array_get_idx(rows, i);
		assert_int_equal(json_object_get_int64(field(row, "key")), i);
		assert_string_equal(json_object_get_string(field(row, "name")), shown[i]);
		assert_int_equal(json_object_get_int64(field(row, "len")), strlen(names[i]));
		assert_int_equal(json_object_object_length(row), 3);
	}
	json_object_put(rows);
}

static void test_json_u64_and_map_btf(void **state)
{
	char pin[512];
	json_object *rows, *row;
	int i;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	rtest_pin_path(&fx.t, "reader_layouts", "small_map", pin, sizeof(pin));
	assert_int_equal(run_read("--pin", pin, "--json", NULL), 0);
	rows = parse_rows(3);
	for (i = 0; i < 3; i++) {	/* sorted by a = 3 - i */
		row = json_object_array_get_idx(rows, i);
		assert_int_equal(json_object_get_int64(field(row, "a")), 1 + i);
		assert_int_equal(json_object_get_uint64(field(row, "u")), UINT64_MAX - (2 - i));
		assert_int_equal(json_object_get_int64(field(row, "s")), -(2 - i));
	}
	json_object_put(rows);
}

static void test_text(void **state)
{
	(void)state;
	RTEST_NEED_KERNEL(&fx);
	assert_int_equal(run_map("small_map", false), 0);
	assert_string_equal(out, "a\tb\ts\tu\n"
			    "1\t2000\t-2\t18446744073709551613\n"
			    "2\t1000\t-1\t18446744073709551614\n"
			    "3\t0\t0\t18446744073709551615\n");
	assert_int_equal(run_map("name_map", false), 0);
	assert_non_null(strstr(out, "key\tname\tlen\n0\t\"compaction\"\t10\n"));
}

/* kstats read --obj --map map --pin-dir, as text or --json. */
static void assert_bool(json_object *rows, size_t i, bool want)
{
	json_object *on = field(json_object_array_get_idx(rows, i), "on");

	assert_true(json_object_is_type(on, json_type_boolean));
	assert_int_equal(json_object_get_boolean(on), want);
}

/*
 * The formatting kstats watch shares (issue 28): a bool as true or false
 * (read printed 1 and 0 before), a string's control bytes and backslash
 * as \xNN, in text and JSON.
 */
static void test_bools_and_escapes(void **state)
{
	json_object *rows;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	assert_int_equal(run_map("flags_map", true), 0);
	rows = parse_rows(3);
	assert_bool(rows, 0, true);
	assert_bool(rows, 1, false);
	json_object_put(rows);
	assert_int_equal(run_map("flags_map", false), 0);
	assert_string_equal(out, "key\ton\ttag\tlast\tdelta\n"
			    "RD_COLOR_NEG\ttrue\t98\t5\t-1\n"
			    "RD_COLOR_RED\tfalse\t97\t5\t-1\n"
			    "RD_COLOR_BLUE\tfalse\t99\t5\t-1\n");
	assert_int_equal(run_map("name_map", false), 0);
	assert_non_null(strstr(out, "\n3\t\"tab\\x09here\\x5c\"\t9\n"));
}

/* Key and value fields of one name are told apart, not merged. */
static void test_name_clash(void **state)
{
	json_object *rows, *row;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	assert_int_equal(run_map("clash_map", true), 0);
	rows = parse_rows(3);
	row = json_object_array_get_idx(rows, 2);
	assert_int_equal(json_object_get_int64(field(row, "key.id")), 2);
	assert_int_equal(json_object_get_int64(field(row, "value.id")), 102);
	assert_int_equal(json_object_get_int64(field(row, "n")), 7);
	json_object_put(rows);
	assert_int_equal(run_map("clash_map", false), 0);
	assert_non_null(strstr(out, "key.id\tvalue.id\tn\n0\t100\t7\n"));
}

static void test_per_cpu_rows(void **state)
{
	json_object *rows, *row;

	(void)state;
	RTEST_NEED_KERNEL(&fx);
	assert_int_equal(run_read("--obj", fx.obj_path, "--map", "pcpu_array_map",
				  "--pin-dir", fx.t.pin_dir, "--per-cpu", "--json", NULL), 0);
	rows = parse_rows(RD_ARRAY_ENTRIES * fx.ncpus);
	row = json_object_array_get_idx(rows, RD_ARRAY_ENTRIES);	/* sorted by cpu, key */
	assert_int_equal(json_object_get_int64(field(row, "cpu")), fx.ncpus > 1 ? 1 : 0);
	assert_int_equal(json_object_get_int64(field(row, "key")), 0);
	json_object_put(rows);
}

static void test_exit_codes(void **state)
{
	(void)state;
	RTEST_NEED_KERNEL(&fx);
	assert_int_equal(run_read("--help", NULL), 0);
	assert_non_null(strstr(out, "Usage: kstats read"));
	assert_int_equal(run_read(NULL), 2);
	assert_non_null(strstr(errout, "--obj FILE.bpf with --map NAME, or --pin PATH"));
	assert_int_equal(run_read("--obj", fx.obj_path, NULL), 2);
	assert_int_equal(run_read("--obj", fx.obj_path, "--map", "small_map",
				  "--pin-dir", "/sys/fs/bpf/kernelstats-test-none", NULL), 3);
	assert_non_null(strstr(errout, "run kstats-loader"));
	assert_int_equal(run_map("nope", false), 2);
	assert_non_null(strstr(errout, "defines no map named nope"));
	assert_int_equal(run_map("union_map", false), 1);
	assert_non_null(strstr(errout, "union is not supported"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_enums_and_bools),
		cmocka_unit_test(test_json_strings),
		cmocka_unit_test(test_json_u64_and_map_btf),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_bools_and_escapes),
		cmocka_unit_test(test_name_clash),
		cmocka_unit_test(test_per_cpu_rows),
		cmocka_unit_test(test_exit_codes),
	};

	return cmocka_run_group_tests_name("reader_cli", tests, setup, teardown);
}
