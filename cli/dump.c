// SPDX-License-Identifier: GPL-2.0
/* kstats dump: the loaded histograms, once or as deltas per interval. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "hist.h"
#include "kstats.h"
#include "kstats_fileio.h"
#include "kstats_pins.h"
#include "kstats_status.h"
#include "delta.h"

enum dump_format { FMT_ASCII, FMT_JSON, FMT_PROMETHEUS, FMT_OPENMETRICS, FMT_RULES };

struct dump_opts {
	const char *obj_dir, *pin_dir, *status_file, *output, *state_dir;
	int fmt;			/* enum dump_format */
	struct kstats_render_opts render;
	double interval;		/* 0: one cumulative dump */
	uint64_t count;			/* intervals; 0: until interrupted */
	bool filtered;			/* metrics were named */
	struct kstats_status status;	/* render.status points here once read */
};

static volatile sig_atomic_t stopping;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats dump [OPTIONS] [METRIC...]\n"
		"Show the loaded histograms (all, or the named metrics) as log2\n"
		"histograms with count, p50, p99 and total.\n\n"
		"  --all             show all 32 buckets and keys with no events\n"
		"  --json            JSON, schema kstats.dump/1 (see kstats(1))\n"
		"  --prometheus      Prometheus text format (node_exporter textfile)\n"
		"  --openmetrics     OpenMetrics 1.0 text (scrapers that read it)\n"
		"  --rules           Prometheus recording and alerting rules (YAML) for\n"
		"                    the metrics of --obj-dir; reads no map\n"
		"  --output FILE     write to FILE atomically (temp file, fsync, rename)\n"
		"  --interval SEC    live: every SEC seconds, the events of that interval\n"
		"                    (--prometheus, --openmetrics: the cumulative\n"
		"                    counts, rewritten)\n"
		"  --count N         with --interval: stop after N intervals\n"
		"  --obj-dir DIR     objects (default: " KSTATS_OBJ_DIR_HELP ")\n"
		"  --pin-dir DIR     pinned maps (default: " KSTATS_DEFAULT_PIN_DIR ")\n"
		"  --status-file F   loader status, for why a metric is not loaded\n"
		"                    (default: " KSTATS_DEFAULT_STATUS_FILE ")\n"
		"  --state-dir DIR   kstats pull's state, for --prometheus' last pull\n"
		"                    (default: " PULL_DEFAULT_STATE_DIR ")\n"
		"  -h, --help        this text\n\n"
		"Exit status: 0 ok, 1 runtime error, 2 bad usage or unknown metric,\n"
		"3 not loaded (" KSTATS_FIX_LOAD "), 5 permission denied.\n");
}

static int render_to(FILE *f, const struct dump_opts *o, const struct kstats_snapshot *s)
{
	switch (o->fmt) {
	case FMT_JSON:
		return kstats_render_json(f, s, &o->render, !o->interval || o->output);
	case FMT_PROMETHEUS:
	case FMT_OPENMETRICS:
		return kstats_render_prometheus(f, s, o->fmt == FMT_OPENMETRICS);
	case FMT_RULES:
		return kstats_render_rules(f, s);
	default:
		return kstats_render_ascii(f, s, &o->render);
	}
}

/* --output: a reader (node_exporter, another user: 0644 less the umask) sees the old file
 * or the new one, only in a directory of root's or ours via no symlink (file_replace_owned). */
static int render(const struct dump_opts *o, const struct kstats_snapshot *s)
{
	char msg[4096 + 256], *buf = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	if (!o->output) {
		ret = render_to(stdout, o, s);
		return fflush(stdout) ? -errno : ret;
	}
	f = open_memstream(&buf, &len);
	if (!f)
		return -errno;
	ret = render_to(f, o, s);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (!ret) {
		ret = kstats_file_replace_owned(o->output, buf, len, 0644, msg, sizeof(msg));
		if (ret) {
			fprintf(stderr, "kstats dump: cannot write %s: %s\n", o->output, msg);
			ret = -EIO;	/* a runtime error, whatever the errno */
		}
	}
	free(buf);
	return ret;
}

/* Names the metrics asked for but not loaded, and why (not those kstats_snapshot_read()
 * named); returns how many selected metrics are loaded. */
static size_t report_missing(const struct dump_opts *o, const struct kstats_snapshot *s,
			     int read_ret, size_t *missing)
{
	char why[KSTATS_WHY_LEN];
	const char *fix;
	size_t i, loaded = 0;

	*missing = 0;
	for (i = 0; i < s->nhists; i++) {
		const struct kstats_hist *h = &s->hists[i];

		if (!h->selected)
			continue;
		loaded += h->loaded;
		if (h->loaded || h->read_err || !o->filtered || read_ret)
			continue;
		(*missing)++;
		fix = kstats_why(o->render.status ? kstats_status_obj(o->render.status, h->obj)
				 : NULL, why, sizeof(why));
		fprintf(stderr, "kstats dump: %s is not loaded under %s (%s: %s)%s%s\n",
			h->metric, o->pin_dir, h->obj, why, *fix ? "; " : "", fix);
	}
	if (!loaded && !o->filtered && !read_ret)
		fprintf(stderr, "kstats dump: no metric is loaded under %s; " KSTATS_FIX_LOAD "\n",
			o->pin_dir);
	return loaded;
}

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* An export is written whatever it could read: no file outlives what it says. */
static bool exporting(const struct dump_opts *o)
{
	return o->fmt == FMT_PROMETHEUS || o->fmt == FMT_OPENMETRICS;
}

/* Like runqlat's interval/count: the events of each interval. */
static int live(struct dump_opts *o, struct kstats_snapshot *s)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct kstats_snapshot prev, next;
	struct timespec ts;
	uint64_t n;
	int ret;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = kstats_snapshot_dup(&prev, s);
	if (ret)
		return ret;
	fprintf(stderr, "Showing the events of every %gs interval; Ctrl-C to end.\n",
		o->interval);
	for (n = 0; !ret && (!o->count || n < o->count); n++) {
		ts = kstats_timespec(o->interval);
		while (!stopping && nanosleep(&ts, &ts) && errno == EINTR)
			;
		ret = kstats_snapshot_read(s, o->pin_dir);
		if (exporting(o)) {
			/* Cumulative; a map named unread may be read next time. */
			ret = render(o, s);
		} else if (!ret && !(ret = kstats_snapshot_dup(&next, s))) {
			kstats_snapshot_subtract(s, &prev);	/* next keeps the counts */
			ret = render(o, s);
			kstats_snapshot_free(&prev);
			prev = next;
		}
		if (stopping)	/* after the interval it cut short is shown */
			break;
	}
	kstats_snapshot_free(&prev);
	return ret;
}

static int bad_usage(const char *err)
{
	fprintf(stderr, "kstats dump: %s\n", err);
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct dump_opts *o)
{
	const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, &o->fmt, FMT_JSON },
		{ "prometheus", no_argument, &o->fmt, FMT_PROMETHEUS },
		{ "openmetrics", no_argument, &o->fmt, FMT_OPENMETRICS },
		{ "rules", no_argument, &o->fmt, FMT_RULES },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "output", required_argument, NULL, 'O' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "obj-dir", required_argument, NULL, 'o' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "status-file", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	unsigned int formats = 0;	/* 1 << each format asked for */
	char err[256];
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'a': o->render.all = true; break;
		case 0: formats |= 1u << o->fmt; break;
		case 'S': o->state_dir = optarg; break;
		case 'O': o->output = optarg; break;
		case 'o': o->obj_dir = optarg; break;
		case 'p': o->pin_dir = optarg; break;
		case 's': o->status_file = optarg; break;
		case 'i':
			if (kstats_parse_seconds("--interval", optarg, 86400, &o->interval,
						 err, sizeof(err)))
				return bad_usage(err);
			break;
		case 'c':
			if (kstats_parse_count("--count", optarg, UINT64_MAX, &o->count,
					       err, sizeof(err)))
				return bad_usage(err);
			break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -EINVAL;
		}
	}
	if (formats & (formats - 1))
		return bad_usage("--json, --prometheus, --openmetrics and --rules exclude each other");
	if (o->fmt == FMT_RULES && o->interval)
		return bad_usage("--rules reads no map: drop --interval");
	if (o->count && !o->interval)
		return bad_usage("--count needs --interval");
	o->filtered = optind < argc;
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_opts o = { .obj_dir = kstats_default_obj_dir(),
			       .pin_dir = KSTATS_DEFAULT_PIN_DIR,
			       .status_file = KSTATS_DEFAULT_STATUS_FILE,
			       .state_dir = PULL_DEFAULT_STATE_DIR };
	char err[1024], path[4096];
	struct kstats_snapshot s;
	size_t i, missing, loaded;
	struct stat st;
	int read_ret, ret = parse_args(argc, argv, &o);

	if (ret)
		return ret > 0 ? KSTATS_EXIT_OK : KSTATS_EXIT_USAGE;
	ret = kstats_snapshot_init(&s, o.obj_dir, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "kstats dump: %s\n", err);
		/* A missing or empty object directory is a wrong --obj-dir. */
		return ret == -ENOENT || ret == -ENOTDIR ? KSTATS_EXIT_USAGE
							 : kstats_exit_code(ret);
	}
	/* Which of two objects declaring a metric to show, why one is not loaded. */
	if (!kstats_status_read(o.status_file, &o.status, err, sizeof(err)))
		o.render.status = &o.status;	/* a missing or bad file leaves it NULL */
	kstats_snapshot_unique(&s, o.render.status, "dump");
	kstats_snapshot_as_loaded(&s, o.render.status, o.status_file, o.pin_dir);
	ret = kstats_snapshot_select(&s, argv + optind, argc - optind, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "kstats dump: %s\n", err);
		kstats_snapshot_free(&s);
		kstats_status_free(&o.status);
		return KSTATS_EXIT_USAGE;
	}
	if (o.fmt == FMT_RULES) {	/* the label names of each metric, from its object alone */
		for (i = 0; i < s.nhists && !ret; i++) {
			struct kstats_map *m;

			if (!s.hists[i].selected)
				continue;
			ret = kstats_labels_declared(&s.hists[i], &m, err, sizeof(err));
			kstats_map_close(m);
		}
		if (ret)
			fprintf(stderr, "kstats dump: %s\n", err);
		ret = ret ?: render(&o, &s);
		goto out;
	}
	/* When kstats pull last committed: the state is replaced whole by each (state.c). */
	if (snprintf(path, sizeof(path), "%s/" PULL_STATE_FILE, o.state_dir) <
	    (int)sizeof(path) && !lstat(path, &st) && S_ISREG(st.st_mode))
		s.pulled = st.st_mtim;
	s.ship_waiting = ship_waiting(o.state_dir, NULL, &s.shipped);
	read_ret = kstats_snapshot_read(&s, o.pin_dir);
	loaded = report_missing(&o, &s, read_ret, &missing);
	if (!loaded && !exporting(&o)) {
		ret = read_ret ?: -ENOENT;
		goto out;
	}
	ret = o.interval ? live(&o, &s) : render(&o, &s);
	if (!ret)
		ret = read_ret ?: missing || !loaded ? -ENOENT : 0;
out:
	kstats_snapshot_free(&s);
	kstats_status_free(&o.status);
	return kstats_exit_code(ret);
}
