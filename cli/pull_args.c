// SPDX-License-Identifier: GPL-2.0
/* kstats pull: its options and their parsing. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kstats.h"
#include "kstats_tool.h"
#include "kstats_fileio.h"
#include "kstats_pins.h"
#include "pull_run.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats pull [OPTIONS]\n"
		"Turn the counts every histogram of the objects gained since the last\n"
		"pull into atoms (proto/kernelstats_atoms.proto), appended to the atoms\n"
		"directory as atoms-<pull id>.pb, and update the state.  Crash-safe;\n"
		"one pull at a time.\n\n"
		"  --obj-dir DIR       objects (BTF) (default: " KSTATS_OBJ_DIR_HELP ")\n"
		"  --pin-dir DIR       pinned maps (default: " KSTATS_DEFAULT_PIN_DIR ")\n"
		"  --state-dir DIR     state and lock (default: " PULL_DEFAULT_STATE_DIR ")\n"
		"  --out-dir DIR       atoms (default: " KSTATS_DEFAULT_ATOMS_DIR ")\n"
		"  --status-file FILE  loader status, for map creation times\n"
		"                      (default: " KSTATS_DEFAULT_STATUS_FILE ")\n"
		"  --max-age DUR       drop atom files older than DUR (30s, 12h, 7d; 0: "
		"never) (default 7d)\n"
		"  --max-files N       keep at most N atom files (0: no limit) (default 1000)\n"
		"  --max-bytes SIZE    keep at most SIZE bytes of atoms (50M, 1G; 0: no limit)\n"
		"                      (default 50M); the newest file is always kept\n"
		"  --lock-timeout SEC  wait this long for another pull (default 60)\n"
		"  -v, --verbose       notes on skipped maps and window starts\n"
		"  -h, --help          this text\n\n"
		"Exit status: 0 ok, 1 runtime error (a map unreadable, I/O), 2 bad usage\n"
		"or no histogram in --obj-dir, 3 nothing pinned (" KSTATS_FIX_LOAD "),\n"
		"4 another pull holds the lock, 5 every unreadable map was denied\n"
		"(" KSTATS_FIX_PERM ").  A histogram and an atom message that do not\n"
		"match are a warning line each (doc/writing-a-metric.md).\n");
}

static int parse_scaled(const char *s, const char *units, const uint64_t *scale,
			uint64_t *out)
{
	const char *end, *u;
	uint64_t v;

	if (kstats_strtou64(s, &v, &end))
		return -EINVAL;
	if (*end) {
		u = strchr(units, *end);
		if (!u || end[1])
			return -EINVAL;
		if (v > UINT64_MAX / scale[u - units])
			return -ERANGE;
		v *= scale[u - units];
	}
	*out = v;
	return 0;
}

static int parse_duration(const char *s, uint64_t *out)
{
	static const uint64_t scale[] = { 1, 60, 3600, 86400 };

	return parse_scaled(s, "smhd", scale, out);
}

static int parse_size(const char *s, uint64_t *out)
{
	static const uint64_t scale[] = { 1024, 1ull << 20, 1ull << 30 };

	return parse_scaled(s, "KMG", scale, out);
}

static int bad_arg(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "kstats pull: %s '%s': expected %s\n", opt, val, want);
	return KSTATS_EXIT_USAGE;
}

int cmd_pull(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "obj-dir", required_argument, NULL, 'o' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "out-dir", required_argument, NULL, 'O' },
		{ "status-file", required_argument, NULL, 'S' },
		{ "max-age", required_argument, NULL, 'a' },
		{ "max-files", required_argument, NULL, 'n' },
		{ "max-bytes", required_argument, NULL, 'b' },
		{ "lock-timeout", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct pull_opts o = {
		.obj_dir = kstats_default_obj_dir(), .pin_dir = KSTATS_DEFAULT_PIN_DIR,
		.state_dir = PULL_DEFAULT_STATE_DIR, .out_dir = KSTATS_DEFAULT_ATOMS_DIR,
		.status_file = KSTATS_DEFAULT_STATUS_FILE, .max_age_s = 7 * 86400,
		.max_files = 1000, .max_bytes = 50ull << 20, .lock_timeout_s = 60,
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': o.obj_dir = optarg; break;
		case 'p': o.pin_dir = optarg; break;
		case 's': o.state_dir = optarg; break;
		case 'O': o.out_dir = optarg; break;
		case 'S': o.status_file = optarg; break;
		case 'a':
			if (parse_duration(optarg, &o.max_age_s))
				return bad_arg("--max-age", optarg, "a duration like 7d");
			break;
		case 'n':
			if (parse_scaled(optarg, "", NULL, &o.max_files))
				return bad_arg("--max-files", optarg, "a file count");
			break;
		case 'b':
			if (parse_size(optarg, &o.max_bytes))
				return bad_arg("--max-bytes", optarg, "a size like 50M");
			break;
		case 't':
			if (parse_duration(optarg, &v) || v > 86400)
				return bad_arg("--lock-timeout", optarg, "seconds, at most 1d");
			o.lock_timeout_s = (unsigned int)v;
			break;
		case 'v': o.verbose = true; break;
		case 'h': usage(stdout); return KSTATS_EXIT_OK;
		default: usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return bad_arg("argument", argv[optind], "no arguments; see --help");
	if (pull_check_dirs(o.state_dir, o.out_dir))
		return KSTATS_EXIT_ERROR;
	return pull_run(&o);
}
