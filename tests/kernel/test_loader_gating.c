// SPDX-License-Identifier: GPL-2.0
/*
 * kstats-loader gating against the running kernel: every case loads real
 * objects next to compaction.bpf, which must still load.  task_rename
 * events come from prctl(PR_SET_NAME), so counts are exact.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "kstats_meta.h"
#include "kstats_pins.h"
#include "kmain.h"
#include "ltest.h"

#define TB(name) "tests/bpf/loader_" name ".bpf"

static int setup(void **state)
{
	return ltest_setup(state, 'g', true);
}

static bool pinned(struct ltest *t, const char *kind, const char *obj, const char *name)
{
	char path[512];

	kstats_pin_path(path, sizeof(path), t->kt.pin_dir, kind, obj, name);
	return !access(path, F_OK);
}

static void assert_compaction_loaded(struct ltest *t)
{
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "LOADED");
	assert_true(pinned(t, "link", "compaction", "on_compaction_end"));
}

static void assert_reason_has(struct ltest *t, const char *obj, const char *prog,
			      const char *text)
{
	struct json_object *o = ltest_obj(t, obj);
	const char *reason = ltest_str(prog ? ltest_named(o, "programs", prog) : o, "reason");

	if (!strstr(reason, text))
		fail_msg("%s/%s reason '%s' lacks '%s'", obj, prog ? prog : "", reason, text);
}

static void test_missing_tracepoint_skips(void **state)
{
	struct ltest *t = *state;

	assert_int_equal(ltest_add(t, TB("notp"), "lnotp"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lnotp", NULL), "SKIPPED_NO_ATTACH_POINT");
	assert_string_equal(ltest_outcome(t, "lnotp", "on_missing"), "SKIPPED_NO_ATTACH_POINT");
	assert_string_equal(ltest_outcome(t, "lnotp", "on_missing_raw"),
			    "SKIPPED_NO_ATTACH_POINT");
	assert_reason_has(t, "lnotp", NULL, "kstats_test_no_such_tracepoint");
	assert_false(pinned(t, "map", "lnotp", "rename_count_map"));
	assert_compaction_loaded(t);
}

static void test_optional_programs(void **state)
{
	struct ltest *t = *state;
	uint64_t count;

	assert_int_equal(ltest_add(t, TB("optional"), "lopt"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lopt", NULL), "LOADED");
	assert_string_equal(ltest_outcome(t, "lopt", "on_rename"), "LOADED");
	assert_string_equal(ltest_outcome(t, "lopt", "on_missing"), "SKIPPED_NO_ATTACH_POINT");
	assert_string_equal(ltest_outcome(t, "lopt", "on_rejected"), "FAILED_VERIFIER");
	assert_reason_has(t, "lopt", "on_rejected", "invalid mem access");
	assert_false(pinned(t, "link", "lopt", "on_rejected"));
	assert_int_equal(ltest_renames(5), 0);
	assert_int_equal(ltest_rename_count(t, "lopt", &count), 0);
	assert_int_equal(count, 5);
	assert_compaction_loaded(t);
}

static void test_verifier_rejects(void **state)
{
	struct ltest *t = *state;
	struct json_object *pins;

	assert_int_equal(ltest_add(t, TB("reject"), "lreject"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lreject", NULL), "FAILED_VERIFIER");
	assert_string_equal(ltest_outcome(t, "lreject", "on_rejected"), "FAILED_VERIFIER");
	/* The tail of the verifier log: its verdict and its summary. */
	assert_reason_has(t, "lreject", NULL, "R1 invalid mem access 'scalar'");
	assert_reason_has(t, "lreject", "on_rejected", "processed 2 insns");
	assert_true(json_object_object_get_ex(ltest_obj(t, "lreject"), "pins", &pins));
	assert_int_equal(json_object_array_length(pins), 0);
	assert_true(ltest_output_has(t, "FAILED_VERIFIER: raw_tp/task_rename: on_rejected: load: Permission denied"));
	assert_compaction_loaded(t);
}

/* tp_btf is refused by the verifier, the raw_tp build of the same body is not. */
static void test_verifier_fallback_to_raw_tp(void **state)
{
	struct ltest *t = *state;
	uint64_t count;

	assert_int_equal(ltest_add(t, TB("fallback"), "lfb"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lfb", NULL), "LOADED");
	assert_string_equal(ltest_outcome(t, "lfb", "on_rename"), "FAILED_VERIFIER");
	assert_reason_has(t, "lfb", "on_rename", "pointer arithmetic");
	assert_string_equal(ltest_outcome(t, "lfb", "on_rename_raw"), "LOADED");
	assert_true(pinned(t, "link", "lfb", "on_rename_raw"));
	assert_false(pinned(t, "link", "lfb", "on_rename"));
	assert_int_equal(ltest_renames(3), 0);
	assert_int_equal(ltest_rename_count(t, "lfb", &count), 0);
	assert_int_equal(count, 3);
	assert_compaction_loaded(t);
}

/* File offset and size of section name of an ELF file, through libelf. */
static void section_range(const char *path, const char *name, size_t *off, size_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf *elf;

	assert_true(fd >= 0);
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	*size = 0;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    !strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name)) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
		}
	elf_end(elf);
	close(fd);
	assert_true(*size > 0);
}

/* compaction.bpf with len bytes at offset (or all of section sec) overwritten. */
static void corrupt_copy(struct ltest *t, const char *as, const char *sec,
			 size_t offset, size_t len)
{
	char path[512];
	unsigned char *buf;
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/bpf/compaction.bpf", t->kt.build);
	if (sec)
		section_range(path, sec, &offset, &len);
	assert_int_equal(stat(path, &st), 0);
	buf = malloc(st.st_size);
	assert_non_null(buf);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, st.st_size, f), st.st_size);
	fclose(f);
	assert_true(offset + len <= (size_t)st.st_size);
	memset(buf + offset, 0xa5, len);
	assert_int_equal(ltest_add_bytes(t, as, buf, st.st_size), 0);
	free(buf);
}

static void truncated_copy(struct ltest *t, const char *as, long keep)
{
	char path[512];
	unsigned char buf[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bpf/compaction.bpf", t->kt.build);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, keep, f), keep);
	fclose(f);
	assert_int_equal(ltest_add_bytes(t, as, buf, keep), 0);
}

static void test_bad_files(void **state)
{
	static const char *const bad[] = {
		"empty", "text", "trunc16", "trunc200", "trunc2000", "elfx86",
		"shoff", "btf", "symtab", "progmeta", "nometa", "metaver",
	};
	struct ltest *t = *state;
	char path[512];
	size_t i, off, size;

	assert_int_equal(ltest_add_bytes(t, "empty", "", 0), 0);
	assert_int_equal(ltest_add_bytes(t, "text", "not an object\n", 14), 0);
	truncated_copy(t, "trunc16", 16);
	truncated_copy(t, "trunc200", 200);
	truncated_copy(t, "trunc2000", 2000);
	assert_int_equal(ltest_add(t, "tests/kernel/test_loader_gating", "elfx86"), 0);
	corrupt_copy(t, "shoff", NULL, 0x28, 8);	/* e_shoff: far past the end */
	corrupt_copy(t, "btf", ".BTF", 0, 0);
	corrupt_copy(t, "symtab", ".symtab", 0, 0);
	corrupt_copy(t, "progmeta", ".kstats.progs", 0, 0);
	assert_int_equal(ltest_add(t, "tests/bpf/bucket_probe.bpf", "nometa"), 0);
	snprintf(path, sizeof(path), "%s/bpf/compaction.bpf", t->kt.build);
	section_range(path, ".kstats.progs", &off, &size);
	corrupt_copy(t, "metaver", NULL,
		     off + offsetof(struct kstats_prog_meta, version), 4);

	assert_int_equal(ltest_run(t, NULL), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strcmp(ltest_outcome(t, bad[i], NULL), "FAILED_OBJECT"))
			fail_msg("%s: %s: %s", bad[i], ltest_outcome(t, bad[i], NULL),
				 ltest_str(ltest_obj(t, bad[i]), "reason"));
	assert_reason_has(t, "nometa", NULL, "no metadata");
	assert_reason_has(t, "metaver", NULL, "metadata version");
	assert_compaction_loaded(t);
}

static void run_kver(struct ltest *t, const char *kver)
{
	assert_int_equal(ltest_run(t, "--kver", kver, NULL), 0);
}

/* Object range [5.4.0, 7.0.0); on_old [0, 6.1.0); on_new [6.1.0, inf). */
static void test_kernel_version_edges(void **state)
{
	struct ltest *t = *state;

	assert_int_equal(ltest_add(t, TB("kver"), "lkver"), 0);
	run_kver(t, "5.3.255");
	assert_string_equal(ltest_outcome(t, "lkver", NULL), "SKIPPED_KERNEL_VERSION");
	assert_int_equal(ltest_u64(t->status, "kernel_version"), KSTATS_KVER(5, 3, 255));
	run_kver(t, "5.4.0");
	assert_string_equal(ltest_outcome(t, "lkver", NULL), "LOADED");
	assert_string_equal(ltest_outcome(t, "lkver", "on_old"), "LOADED");
	run_kver(t, "6.0.255");
	assert_string_equal(ltest_outcome(t, "lkver", "on_old"), "LOADED");
	assert_string_equal(ltest_outcome(t, "lkver", "on_new"), "SKIPPED_KERNEL_VERSION");
	run_kver(t, "6.1.0");
	assert_string_equal(ltest_outcome(t, "lkver", "on_old"), "SKIPPED_KERNEL_VERSION");
	assert_string_equal(ltest_outcome(t, "lkver", "on_new"), "LOADED");
	run_kver(t, "6.255.255");
	assert_string_equal(ltest_outcome(t, "lkver", "on_new"), "LOADED");
	run_kver(t, "7.0.0");
	assert_string_equal(ltest_outcome(t, "lkver", NULL), "SKIPPED_KERNEL_VERSION");
	assert_compaction_loaded(t);
}

static void test_kernel_version_from_env(void **state)
{
	struct ltest *t = *state;

	assert_int_equal(ltest_add(t, TB("kver"), "lkver"), 0);
	setenv("KSTATS_KVER", "5.3.0", 1);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lkver", NULL), "SKIPPED_KERNEL_VERSION");
	/* The flag wins over the environment. */
	assert_int_equal(ltest_run(t, "--kver", "6.0.0", NULL), 0);
	assert_string_equal(ltest_outcome(t, "lkver", "on_old"), "LOADED");
	setenv("KSTATS_KVER", "six", 1);
	assert_int_equal(ltest_run(t, NULL), 2);
	assert_true(ltest_output_has(t, "KSTATS_KVER='six'"));
	unsetenv("KSTATS_KVER");
	assert_int_equal(ltest_run(t, "--kver", "x.y", NULL), 2);
}

/* Switching variants across runs: the old one is detached, never both. */
static void test_variant_switch_never_doubles(void **state)
{
	struct ltest *t = *state;
	uint64_t before, after;
	struct json_object *map;

	assert_int_equal(ltest_add(t, TB("kver"), "lkver"), 0);
	run_kver(t, "6.0.0");
	assert_true(pinned(t, "link", "lkver", "on_old"));
	run_kver(t, "6.1.0");
	assert_false(pinned(t, "link", "lkver", "on_old"));
	assert_true(pinned(t, "link", "lkver", "on_new"));
	map = ltest_named(ltest_obj(t, "lkver"), "maps", "rename_count_map");
	assert_int_equal(ltest_links_using_map(ltest_u64(map, "map_id")), 1);
	assert_int_equal(ltest_rename_count(t, "lkver", &before), 0);
	assert_int_equal(ltest_renames(4), 0);
	assert_int_equal(ltest_rename_count(t, "lkver", &after), 0);
	assert_int_equal(after - before, 4);
}

static void write_config(struct ltest *t, const char *text, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/loader.conf", t->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_disabled(void **state)
{
	struct ltest *t = *state;
	uint64_t before, after;
	char conf[256];

	assert_int_equal(ltest_add(t, TB("count"), "lc"), 0);
	assert_int_equal(ltest_add(t, TB("notp"), "lnotp"), 0);
	assert_int_equal(ltest_run(t, "--disable", "lc", NULL), 0);
	assert_string_equal(ltest_outcome(t, "lc", NULL), "SKIPPED_DISABLED");
	assert_string_equal(ltest_outcome(t, "lc", "on_rename"), "SKIPPED_DISABLED");
	assert_false(pinned(t, "map", "lc", "rename_count_map"));
	assert_compaction_loaded(t);

	write_config(t, "# all off\n  disable = all  # everything\n", conf, sizeof(conf));
	assert_int_equal(ltest_run(t, "--config", conf, NULL), 0);
	assert_string_equal(ltest_outcome(t, "compaction", NULL), "SKIPPED_DISABLED");
	assert_string_equal(ltest_outcome(t, "lc", NULL), "SKIPPED_DISABLED");

	write_config(t, "disable = lnotp, lc\n", conf, sizeof(conf));
	assert_int_equal(ltest_run(t, "--config", conf, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lnotp", NULL), "SKIPPED_DISABLED");
	assert_compaction_loaded(t);

	/* Disabling a loaded object detaches it and keeps its counts. */
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_int_equal(ltest_renames(2), 0);
	assert_int_equal(ltest_rename_count(t, "lc", &before), 0);
	assert_int_equal(before, 2);
	assert_int_equal(ltest_run(t, "--disable", "lc", NULL), 0);
	assert_false(pinned(t, "link", "lc", "on_rename"));
	assert_int_equal(ltest_renames(3), 0);
	assert_int_equal(ltest_rename_count(t, "lc", &after), 0);
	assert_int_equal(after, before);
}

static void test_bad_config(void **state)
{
	struct ltest *t = *state;
	char conf[256];

	write_config(t, "disable = lc\nenable = all\n", conf, sizeof(conf));
	assert_int_equal(ltest_run(t, "--config", conf, NULL), 2);
	assert_true(ltest_output_has(t, "loader.conf:2: unknown key 'enable'"));
	write_config(t, "disable lc\n", conf, sizeof(conf));
	assert_int_equal(ltest_run(t, "--config", conf, NULL), 2);
	write_config(t, "disable = ../x\n", conf, sizeof(conf));
	assert_int_equal(ltest_run(t, "--config", conf, NULL), 2);
	assert_int_equal(ltest_run(t, "--config", "/nonexistent/loader.conf", NULL), 2);
	assert_int_equal(ltest_run(t, "--disable", "a b", NULL), 2);
}

static void test_critical_object_fails_run(void **state)
{
	struct ltest *t = *state;
	char flag[512];

	assert_int_equal(ltest_add(t, TB("critical"), "lcrit"), 0);
	assert_int_equal(ltest_run(t, NULL), 1);
	assert_string_equal(ltest_outcome(t, "lcrit", NULL), "FAILED_VERIFIER");
	assert_true(json_object_get_boolean(json_object_object_get(ltest_obj(t, "lcrit"),
								   "critical")));
	/* Said as kstats status says it (issue 28: it was "[critical]" here). */
	assert_true(ltest_output_has(t, "mark_read 0 (critical)"));
	assert_compaction_loaded(t);
	snprintf(flag, sizeof(flag), "%s/progs_loaded", t->run_dir);
	assert_int_equal(access(flag, F_OK), 0);
	/* Disabled, it is no failure. */
	assert_int_equal(ltest_run(t, "--disable", "lcrit", NULL), 0);
}

/* kprobe variants come after tp_btf and raw_tp, and need kprobes. */
static void test_kprobe_variant(void **state)
{
	struct ltest *t = *state;
	bool kprobes = !access("/sys/bus/event_source/devices/kprobe", F_OK) ||
		       !access("/sys/kernel/tracing/kprobe_events", F_OK);

	assert_int_equal(ltest_add(t, TB("kprobe"), "lkp"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "lkp", NULL), "LOADED");
	assert_string_equal(ltest_outcome(t, "lkp", "on_rename"), "LOADED");
	assert_string_equal(ltest_outcome(t, "lkp", "on_rename_kprobe"),
			    kprobes ? "SKIPPED_VARIANT" : "SKIPPED_NO_ATTACH_POINT");
	assert_string_equal(ltest_outcome(t, "lkp", "on_missing_kprobe"),
			    kprobes ? "LOADED" : "SKIPPED_NO_ATTACH_POINT");
	if (!kprobes)
		assert_reason_has(t, "lkp", "on_missing_kprobe", "no kprobes");
	assert_compaction_loaded(t);
}

static void test_cma_skips_cleanly(void **state)
{
	struct ltest *t = *state;
	char path[512];

	snprintf(path, sizeof(path), "%s/bpf/cma.bpf", t->kt.build);
	if (access(path, F_OK))
		skip();	/* no CMA object built yet */
	if (!access("/sys/kernel/tracing/events/cma", F_OK))
		skip();	/* this kernel has CMA tracepoints: nothing to skip */
	assert_int_equal(ltest_add(t, "bpf/cma.bpf", "cma"), 0);
	assert_int_equal(ltest_run(t, NULL), 0);
	assert_string_equal(ltest_outcome(t, "cma", NULL), "SKIPPED_NO_ATTACH_POINT");
	assert_compaction_loaded(t);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, ltest_teardown)
	const struct CMUnitTest tests[] = {
		T(test_missing_tracepoint_skips),
		T(test_optional_programs),
		T(test_verifier_rejects),
		T(test_verifier_fallback_to_raw_tp),
		T(test_bad_files),
		T(test_kernel_version_edges),
		T(test_kernel_version_from_env),
		T(test_variant_switch_never_doubles),
		T(test_disabled),
		T(test_bad_config),
		T(test_critical_object_fails_run),
		T(test_kprobe_variant),
		T(test_cma_skips_cleanly),
	};

	return KTEST_MAIN("loader_gating", tests, NULL, NULL);
}
