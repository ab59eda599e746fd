// SPDX-License-Identifier: GPL-2.0
/*
 * kstats status: what the loader did (from its status file) and what the
 * kernel holds now; also a health check (exit status, see usage()).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "kstats.h"
#include "kstats_tool.h"
#include "status.h"

#define STATS_SYSCTL "/proc/sys/kernel/bpf_stats_enabled"

struct status_opts {
	const char *status_file;
	double stats_secs;		/* 0: no measuring window */
	bool json;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats status [--status-file FILE] [--stats SEC] [--json]\n"
		"Per object and program: loaded or skipped and why, the attach type,\n"
		"run count and average ns per run; per map: entries used of max,\n"
		"memlock bytes, and drops of event streams.\n\n"
		"  --status-file FILE  loader status (default: " KSTATS_DEFAULT_STATUS_FILE ")\n"
		"  --stats SEC         measure run counts for SEC seconds with BPF\n"
		"                      run-time stats on (BPF_ENABLE_STATS: the kernel\n"
		"                      turns them off again when kstats exits; the\n"
		"                      kernel.bpf_stats_enabled sysctl is not changed)\n"
		"  --json              the status file, annotated with the live values\n"
		"  -h, --help          this text\n\n"
		"Exit status (a health check): 0 ok, 1 an object failed to load (or\n"
		"runtime error), 2 bad usage, 3 no status, or a map of a loaded object\n"
		"is gone (" KSTATS_FIX_LOAD "), 5 permission denied.  An object whose\n"
		"file is bad (FAILED_OBJECT, not critical) is a warning, not a failure.\n");
}

static int read_stats_sysctl(void)
{
	FILE *f = fopen(STATS_SYSCTL, "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void window_delta(struct prog_live *after, const struct prog_live *before, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		after[i].run_cnt -= before[i].run_cnt;
		after[i].run_time_ns -= before[i].run_time_ns;
		after[i].misses -= before[i].misses;
	}
}

static int measure(struct status_view *v, double secs)
{
	struct timespec ts = kstats_timespec(secs);
	struct prog_live *before;
	size_t n;
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd < 0) {
		int ret = -errno;

		fprintf(stderr, "kstats status: --stats: cannot enable BPF run-time stats: %s; "
			"needs CAP_SYS_ADMIN (root)\n", strerror(errno));
		return ret;
	}
	before = status_probe_progs(&v->st, &n);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	v->progs = status_probe_progs(&v->st, &v->nprogs);
	close(fd);
	if (before && v->progs && n == v->nprogs)
		window_delta(v->progs, before, n);
	free(before);
	v->window = secs;
	return 0;
}

/*
 * Whether an object failed in a way that breaks the pipeline; a bad file
 * (FAILED_OBJECT: empty, garbage, a dangling link) that is not critical is
 * skipped with one warning, as dump, pull and watch skip it.
 */
static bool any_failed(const struct kstats_status *st)
{
	char why[KSTATS_WHY_LEN];
	bool failed = false;
	size_t i;

	for (i = 0; i < st->nobjs; i++) {
		const struct kstats_status_obj *o = &st->objs[i];

		if (!kstats_status_failed(o))
			continue;
		if (strcmp(o->outcome, "FAILED_OBJECT") || o->critical) {
			failed = true;
			continue;
		}
		kstats_why(o, why, sizeof(why));
		fprintf(stderr, "kstats status: warning: %s: %s; skipped (fix or remove %s)\n",
			o->name, why, o->path);
	}
	return failed;
}

static int verdict(struct status_view *v)
{
	if (v->perm_denied)
		fprintf(stderr, "kstats status: some maps could not be opened: "
			"permission denied; %s\n", kstats_perm_fix());
	else if (v->maps_gone)
		fprintf(stderr, "kstats status: %u map(s) of loaded objects are gone (%s); "
			KSTATS_FIX_LOAD "\n", v->maps_gone, v->gone_example);
	return v->perm_denied ? -EACCES : v->maps_gone ? -ENOENT :
	       any_failed(&v->st) ? -EIO : 0;
}

static int parse_args(int argc, char **argv, struct status_opts *so)
{
	static const struct option opts[] = {
		{ "status-file", required_argument, NULL, 's' },
		{ "stats", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	char err[256];
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': so->status_file = optarg; break;
		case 'j': so->json = true; break;
		case 'S':
			if (kstats_parse_seconds("--stats", optarg, 3600, &so->stats_secs,
						 err, sizeof(err))) {
				fprintf(stderr, "kstats status: %s\n", err);
				return -EINVAL;
			}
			break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kstats status: unexpected argument '%s'; see --help\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int cmd_status(int argc, char **argv)
{
	struct status_opts so = { .status_file = KSTATS_DEFAULT_STATUS_FILE };
	struct status_view v = {};
	char err[1024];
	int ret = parse_args(argc, argv, &so);

	if (ret)
		return ret > 0 ? KSTATS_EXIT_OK : KSTATS_EXIT_USAGE;
	v.status_file = so.status_file;
	ret = kstats_status_read(so.status_file, &v.st, err, sizeof(err));
	if (ret) {
		kstats_add_fix(err, sizeof(err), ret);
		fprintf(stderr, "kstats status: %s\n", err);
		return kstats_exit_code(ret);
	}
	v.stats_enabled = read_stats_sysctl();
	if (so.stats_secs)
		ret = measure(&v, so.stats_secs);
	else
		v.progs = status_probe_progs(&v.st, &v.nprogs);
	if (!ret) {
		if (so.json) {
			status_annotate(&v);
			printf("%s\n", json_object_to_json_string_ext(v.st.json,
				JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
				JSON_C_TO_STRING_NOSLASHESCAPE));
		} else {
			status_print(stdout, &v);
		}
		ret = verdict(&v);
	}
	free(v.progs);
	kstats_status_free(&v.st);
	return kstats_exit_code(ret);
}
