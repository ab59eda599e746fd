// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "kstats.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "dump", cmd_dump, "show the loaded histograms" },
	{ "read", cmd_read, "dump any pinned map generically (BTF columns)" },
	{ "pull", cmd_pull, "emit the day's deltas as protobuf atoms (crash-safe)" },
	{ "atoms", cmd_atoms, "print emitted atoms as text, or as heatmaps" },
	{ "report", cmd_report, "an HTML page of latency heatmaps of the atoms" },
	{ "ship", cmd_ship, "send the atoms not yet acknowledged to ClickHouse" },
	{ "watch", cmd_watch, "print an event stream live (text or JSON lines)" },
	{ "status", cmd_status, "what the loader loaded, run counts, map fill" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: kstats COMMAND [OPTIONS]   (kstats COMMAND --help)\n\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\nExit status: 0 ok, 1 runtime error, 2 bad usage, "
		"3 nothing loaded (" KSTATS_FIX_LOAD "),\n4 another kstats pull holds "
		"the lock, 5 permission denied (" KSTATS_FIX_PERM ").\n"
		"KSTATS_DEBUG=1 also shows libbpf's own messages.\n");
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	size_t i;

	/* kstats says what failed in one line; libbpf's own lines only on request. */
	libbpf_set_print(getenv("KSTATS_DEBUG") && *getenv("KSTATS_DEBUG") ?
			 libbpf_print : NULL);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? KSTATS_EXIT_USAGE : KSTATS_EXIT_OK;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name) && cmds[i].fn)
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "kstats: unknown command '%s'; see kstats --help\n", argv[1]);
	return KSTATS_EXIT_USAGE;
}
