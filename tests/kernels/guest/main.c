// SPDX-License-Identifier: GPL-2.0
/* kstats-guest: loads every object with the real loader, then runs the tests. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest.h"
#include "ktest.h"
#include "kstats_objmeta.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats-guest [--obj-dir DIR] [--pin-dir DIR] [--tools-dir DIR]\n"
		"The kernel lab's test driver, run as the guest's init program: loads\n"
		"every object with kstats-loader, fires real events and prints one\n"
		"'@@ PASS|FAIL|SKIP: test' line per test.  Exit status: 0 when no\n"
		"test failed, 1 otherwise, 2 on bad usage.\n");
}


/* "compaction       LOADED: 2 programs attached, 2 maps pinned" */
static void parse_outcome(struct lab *lab, const char *line)
{
	struct lab_outcome *o = &lab->outcomes[lab->noutcomes];
	const char *reason;

	if (lab->noutcomes == LAB_MAX_OBJS ||
	    sscanf(line, "%63s %39[A-Z_]:", o->obj, o->outcome) != 2)
		return;
	reason = strstr(line, ": ");
	snprintf(o->reason, sizeof(o->reason), "%s", reason ? reason + 2 : "");
	o->reason[strcspn(o->reason, "\n")] = 0;
	lab->noutcomes++;
}

/* The claim under test: every object built against the host's BTF loads here. */
static void report_loads(const struct lab *lab)
{
	const struct lab_outcome *o;
	struct dirent **ents;
	char test[96], obj[64];
	int n, i;

	n = kstats_scan_objects(lab->obj_dir, &ents);
	if (n <= 0) {
		lab_fail("load", "no *.bpf objects in %s", lab->obj_dir);
		return;
	}
	for (i = 0; i < n; i++) {
		snprintf(obj, sizeof(obj), "%.*s", (int)strlen(ents[i]->d_name) - 4,
			 ents[i]->d_name);
		snprintf(test, sizeof(test), "load %s", obj);
		o = lab_outcome_of(lab, obj);
		if (!o)
			lab_fail(test, "the loader printed no outcome for %s", obj);
		else if (!strcmp(o->outcome, "LOADED"))
			lab_pass(test, "%s", o->reason);
		else if (!strncmp(o->outcome, "SKIPPED", 7))
			lab_skip(test, "%s: %s", o->outcome, o->reason);
		else
			lab_fail(test, "%s: %s", o->outcome, o->reason);
		free(ents[i]);
	}
	free(ents);
}

static void run_loader(struct lab *lab)
{
	const char *argv[] = { "kstats-loader", "--obj-dir", lab->obj_dir,
			       "--pin-dir", lab->pin_dir, NULL };
	static char out[8192];
	char *line, *save;
	int ret;

	ret = lab_run_tool(lab, argv, out, sizeof(out));
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lab_info("loader: %s", line);
		parse_outcome(lab, line);
	}
	lab_info("loader: exit status %d", ret);
	report_loads(lab);
}

static void dump_works(const struct lab *lab)
{
	const char *argv[] = { "kstats", "dump", "--obj-dir", lab->obj_dir,
			       "--pin-dir", lab->pin_dir, NULL };
	static char out[65536];
	int ret = lab_run_tool(lab, argv, out, sizeof(out));

	if (ret)
		lab_fail("kstats dump", "exit status %d", ret);
	else if (!strstr(out, "CompactionDuration"))
		lab_fail("kstats dump", "no CompactionDuration in its output");
	else
		lab_pass("kstats dump", "shows CompactionDuration");
}

static const struct {
	const char *name;
	void (*run)(const struct lab *lab);
} tests[] = {
	{ "compaction", test_compaction },
	{ "kstats dump", dump_works },
	{ "suspend/resume", test_suspend },
	{ "dma-buf", test_dmabuf },
	{ "cma", test_cma },
	{ "reclaim", test_reclaim },
	{ "kstats pull", test_pull },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "obj-dir", required_argument, NULL, 'o' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "tools-dir", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	static struct lab lab = { .obj_dir = "/bpf", .tools_dir = "/bin",
				  .pin_dir = "/sys/fs/bpf/kernelstats" };
	uint64_t start;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': lab.obj_dir = optarg; break;
		case 'p': lab.pin_dir = optarg; break;
		case 't': lab.tools_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The memory hog must be the OOM killer's only choice. */
	if (lab_write("/proc/self/oom_score_adj", "-1000"))
		lab_info("cannot protect the driver from the OOM killer");
	start = ktest_now_ns();
	run_loader(&lab);
	lab_info("loader took %.1fs", (ktest_now_ns() - start) / 1e9);
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		start = ktest_now_ns();
		tests[i].run(&lab);
		lab_info("%s took %.1fs", tests[i].name, (ktest_now_ns() - start) / 1e9);
	}
	return lab_failed() ? 1 : 0;
}
