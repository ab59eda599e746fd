// SPDX-License-Identifier: GPL-2.0
/* kstats atoms (atoms as text) and both commands' options: kstats atoms, kstats report. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "atoms.h"
#include "kstats_fileio.h"
#include "delta.h"	/* window_clock_step() */

static void print_atom(void *ctx, const Kernelstats__Atom *a)
{
	const ProtobufCMessage *payload = atom_payload(a);
	uint64_t sb = a->window_start_boottime_ns, eb = a->window_end_boottime_ns;
	uint64_t b[BPF_TELEMETRY_NR_BUCKETS], real_ns = a->window_start_realtime_ns;
	int64_t step = a->has_wall_clock_step_ns ? a->wall_clock_step_ns :
		       window_clock_step(sb, eb, real_ns, a->window_end_realtime_ns);
	time_t sec = (time_t)(real_ns / 1000000000ull);
	const struct kstats_unit_info *unit;
	const ProtobufCFieldDescriptor *f;
	unsigned int from = 0;
	char buf[32];
	struct tm tm;
	size_t n;

	(void)ctx;
	printf("\n%s (atom %d) pull %" PRIu64 " boot ",
	       payload ? payload->descriptor->short_name : "unknown payload",
	       a->atom_id, a->pull_id);
	atoms_put_escaped(a->boot_id ? a->boot_id : "?", stdout);
	/* The window: its realtime start, boot-time length, and what went wrong with a clock. */
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", gmtime_r(&sec, &tm));
	printf("\n  window %s.%03u UTC", buf, (unsigned int)(real_ns / 1000000 % 1000));
	if (eb >= sb)
		printf(" + %.3fs", (eb - sb) / 1e9);
	else
		printf(" + 0s (its boot-time end is %.3fs before its start)", (sb - eb) / 1e9);
	if (step)
		printf("  wall clock set %+.3fs in the window", step / 1e9);
	if (a->reset)
		printf("  reset (counts since the map's creation)");
	if (a->anomalies)
		printf("  anomalies %u", a->anomalies);
	printf("\n");
	if (!payload)
		return;
	if (atom_key_print(stdout, payload, " "))
		printf("\n");
	while ((f = atom_buckets(payload, &from, b, &unit))) {
		n = *(const size_t *)((const char *)payload + f->quantifier_offset);
		if (n != BPF_TELEMETRY_NR_BUCKETS)
			printf("  %s: %zu buckets, expected %d\n", f->name, n,
			       BPF_TELEMETRY_NR_BUCKETS);
		print_log2_hist(stdout, b, unit);
	}
}

/* failed: set when path is unreadable or holds atoms that do not decode. */
static void print_file(void *failed, const char *path)
{
	struct atoms_file f;
	char why[512];

	if (atoms_file_read(path, &f, why, sizeof(why))) {
		fprintf(stderr, "kstats atoms: %s\n", why);
		*(bool *)failed = true;
		return;
	}
	printf("# %s: %zu atoms\n", path, f.count);
	if (atoms_file_each(&f, print_atom, NULL, why, sizeof(why))) {
		fprintf(stderr, "kstats atoms: %s: %s\n", path, why);
		*(bool *)failed = true;
	}
	free(f.buf);
}

static void report_usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats report [--out-dir DIR]... [--rows FILE] [-o FILE] [--since DATE]\n"
		"                     [--until DATE]\n"
		"Write one self-contained HTML page (inline SVG, no script, opens offline)\n"
		"with a latency heatmap per metric and key: a column per UTC day, a row per\n"
		"log2 bucket, colour by count, p50 and p99 drawn over.  Several --out-dir\n"
		"(one per host) add up.\n\n"
		"  --out-dir DIR   atoms directory, repeatable (default: "
		KSTATS_DEFAULT_ATOMS_DIR ")\n"
		"  --rows FILE     JSON-each-row rows with day, metric, key, buckets (kstats\n"
		"                  atoms --format json-each-row, the fleet query of\n"
		"                  doc/fleet-atoms.md); - reads stdin\n"
		"  -o, --output FILE  write the page there, atomically (default: stdout)\n"
		"  --since DATE    first UTC day shown, YYYY-MM-DD (default: the first atom's)\n"
		"  --until DATE    last UTC day shown, YYYY-MM-DD (default: the last atom's)\n"
		"  -h, --help      this text\n\n"
		"Exit status: 0 page written, 1 page written but a file or directory was\n"
		"skipped (named on stderr and on the page) or no atom is in the range, or\n"
		"the page could not be written, 2 bad usage.\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out-dir", required_argument, NULL, 'O' },
		{ "output", required_argument, NULL, 'o' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "rows", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	char *dirs[MAX_DIRS] = { (char *)KSTATS_DEFAULT_ATOMS_DIR }, *out = NULL, *buf = NULL;
	const char *end, *range[2] = {}, *rows = NULL;
	char msg[512];
	size_t len = 0;
	int c, ndirs = 0, ret;
	struct days d;
	struct tm tm;
	FILE *f;

	days_init(&d, "kstats report");
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'O':
			if (ndirs == MAX_DIRS) {
				fprintf(stderr, "kstats report: at most %d --out-dir; merge "
					"directories first\n", MAX_DIRS);
				return KSTATS_EXIT_USAGE;
			}
			dirs[ndirs++] = optarg;
			break;
		case 'o': out = optarg; break;
		case 'R': rows = optarg; break;
		case 'S':
		case 'U':
			range[c == 'U'] = optarg;
			memset(&tm, 0, sizeof(tm));
			end = strptime(optarg, "%Y-%m-%d", &tm);
			if (end && !*end) {
				*(c == 'S' ? &d.since : &d.until) = (int32_t)(timegm(&tm) / DAY_SECS);
				break;
			}
			fprintf(stderr, "kstats report: --%s %s: give a UTC day as YYYY-MM-DD\n",
				c == 'S' ? "since" : "until", optarg);
			return KSTATS_EXIT_USAGE;
		case 'h': report_usage(stdout); return KSTATS_EXIT_OK;
		default: report_usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kstats report: unexpected '%s'; directories go with "
			"--out-dir\n", argv[optind]);
		return KSTATS_EXIT_USAGE;
	}
	if (d.since > d.until) {
		fprintf(stderr, "kstats report: --since %s is after --until %s; give the earlier "
			"day to --since\n", range[0], range[1]);
		return KSTATS_EXIT_USAGE;
	}
	ndirs = ndirs ?: !rows;
	days_load(&d, dirs, ndirs, NULL, 0);
	if (rows)
		days_load_rows(&d, rows);
	if (!d.atoms && d.outside)
		fprintf(stderr, "kstats report: all %zu atoms read are outside --since and "
			"--until; widen the range\n", d.outside);
	days_finish(&d, PAGE_CELLS);
	f = open_memstream(&buf, &len);
	if (!f) {
		days_free(&d);
		return KSTATS_EXIT_ERROR;
	}
	page_put(f, &d, dirs, ndirs);
	ret = fclose(f) ? -ENOMEM : 0;
	if (!ret && out)
		ret = kstats_file_replace_owned(out, buf, len, 0644, msg, sizeof(msg));
	else if (!ret && fwrite(buf, 1, len, stdout) != len)
		ret = -EIO;
	if (ret)
		fprintf(stderr, "kstats report: cannot write %s: %s\n", out ? out : "stdout",
			out ? msg : strerror(-ret));
	free(buf);
	days_free(&d);
	return ret || d.nbad || (!d.atoms && d.outside) ? KSTATS_EXIT_ERROR : KSTATS_EXIT_OK;
}

static void atoms_usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats atoms [--out-dir DIR] [--heatmap | --format FORMAT] [FILE...]\n"
		"Print atoms written by kstats pull as text: each atom's window, key\n"
		"and histogram.  Without FILE, every atoms-*.pb in the atoms directory,\n"
		"oldest first; FILE '-' reads stdin.\n\n"
		"  --out-dir DIR   atoms directory (default: " KSTATS_DEFAULT_ATOMS_DIR ")\n"
		"  --heatmap       per metric and key, a heatmap of the last days that fit\n"
		"                  80 columns: buckets as rows, UTC days as columns, shaded\n"
		"                  by count (256 colours on a terminal unless NO_COLOR)\n"
		"  --format json-each-row  one JSON object per atom (ClickHouse's\n"
		"                  JSONEachRow: doc/fleet-atoms.md); text is the default\n"
		"  -h, --help      this text\n\n"
		"Exit status: 0 ok, 1 a file is unreadable or not atoms, 2 bad usage.\n");
}

int cmd_atoms(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out-dir", required_argument, NULL, 'O' },
		{ "heatmap", no_argument, NULL, 'H' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *dir = KSTATS_DEFAULT_ATOMS_DIR;
	bool heatmap = false, failed = false, rows = false;
	int c, n;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'O': dir = optarg; break;
		case 'H': heatmap = true; break;
		case 'F':
			rows = !strcmp(optarg, "json-each-row");
			if (rows || !strcmp(optarg, "text"))
				break;
			fprintf(stderr, "kstats atoms: --format %s: use text or json-each-row\n",
				optarg);
			return KSTATS_EXIT_USAGE;
		case 'h': atoms_usage(stdout); return KSTATS_EXIT_OK;
		default: atoms_usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (heatmap)
		return heatmap_print(dir, argv + optind, argc - optind);
	if (rows)
		return rows_print(dir, argv + optind, argc - optind);
	if (optind == argc) {
		n = atoms_each_path(dir, print_file, &failed);
		if (n < 0) {
			fprintf(stderr, "kstats atoms: cannot read %s: %s; pass --out-dir or a FILE\n",
				dir, strerror(errno));
			return KSTATS_EXIT_USAGE;
		}
		if (!n)
			fprintf(stderr, "kstats atoms: no atoms in %s yet; run kstats pull\n", dir);
	}
	for (; optind < argc; optind++)
		print_file(&failed, argv[optind]);
	return failed ? KSTATS_EXIT_ERROR : KSTATS_EXIT_OK;
}