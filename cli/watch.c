// SPDX-License-Identifier: GPL-2.0
/* kstats watch: one event stream, live, as text or JSON lines. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "fields.h"
#include "hist.h"
#include "kstats.h"
#include "kstats_fileio.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "kstats_stream.h"

#define DEFAULT_QUEUE 65536
#define DROP_CHECK_MS 1000

struct watcher {
	struct kstats_stream *s;
	bool json;
	int id;				/* our consumer */
	uint64_t count, printed;
	uint64_t unprinted;		/* handed to us past --count or a write error */
	int64_t real_minus_mono_ns;
	struct kstats_fields fs;
	int write_err;
};

struct stream_ref {
	char obj_path[4096];
	char obj[KSTATS_NAME_LEN];
	char name[KSTATS_NAME_LEN];
	bool loaded;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats watch [STREAM] [--json] [--count N] [--queue N]\n"
		"                    [--obj-dir DIR] [--pin-dir DIR]\n"
		"Print a loaded event stream live, one line per record, until SIGINT\n"
		"(Ctrl-C), SIGTERM or N records; every record already read is printed\n"
		"before exiting.  STREAM is a stream name or OBJ:STREAM; without it,\n"
		"the only loaded stream.\n\n"
		"  --json          one JSON object per line\n"
		"  --count N       stop after N records\n"
		"  --queue N       records this watch may fall behind by (default %d)\n"
		"  --obj-dir DIR   objects (default: " KSTATS_OBJ_DIR_HELP ")\n"
		"  --pin-dir DIR   pinned maps (default: " KSTATS_DEFAULT_PIN_DIR ")\n\n"
		"Lost records are reported on stderr: those the kernel's ring buffer\n"
		"had no room for, and those this watch fell too far behind to keep.\n"
		"Reads are destructive: the summary accounts for every record read,\n"
		"printed or read but not printed (past --count).\n"
		"Exit status: 0 stopped by a signal or --count, 1 runtime error or the\n"
		"stream reloaded (run it again), 2 bad usage or unknown stream, 3 stream\n"
		"not loaded, 5 permission denied.\n",
		DEFAULT_QUEUE);
}

static int build_fields(struct watcher *w)
{
	static const char *const reserved[] = { "stream", "seq", "ts_ns" };
	int ret = kstats_fields_build(&w->fs, kstats_stream_columns(w->s));
	size_t i, j;

	/* A field named like a key watch adds itself is shown as record.<name>. */
	for (i = 0; !ret && i < w->fs.n; i++)
		for (j = 0; j < sizeof(reserved) / sizeof(reserved[0]); j++)
			if (!strcmp(w->fs.f[i].name, reserved[j]))
				snprintf(w->fs.f[i].name, sizeof(w->fs.f[i].name), "record.%s",
					 reserved[j]);
	return ret;
}

static int print_json(struct watcher *w, const struct kstats_stream_record *rec)
{
	json_object *o = json_object_new_object();
	size_t i;
	int ret;

	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "stream", json_object_new_string(kstats_stream_name(w->s)));
	json_object_object_add(o, "seq", json_object_new_uint64(rec->seq));
	json_object_object_add(o, "ts_ns", json_object_new_uint64(rec->ts_ns));
	for (i = 0; i < w->fs.n; i++)
		json_object_object_add(o, w->fs.f[i].name,
				       kstats_field_json(&w->fs, i, rec->vals));
	ret = puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)) < 0 ? -EIO : 0;
	json_object_put(o);
	return ret;
}

/* "HH:MM:SS.uuuuuu STREAM name=value ...": one line (stdout is line-buffered). */
static int print_text(struct watcher *w, const struct kstats_stream_record *rec)
{
	int64_t wall = (int64_t)rec->ts_ns + w->real_minus_mono_ns;
	time_t sec = (time_t)(wall / 1000000000);
	json_object *j;
	char hms[16];
	struct tm tm;
	size_t i;

	localtime_r(&sec, &tm);
	strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
	printf("%s.%06" PRId64 " %s", hms, wall % 1000000000 / 1000, kstats_stream_name(w->s));
	for (i = 0; i < w->fs.n; i++) {
		j = kstats_field_json(&w->fs, i, rec->vals);
		printf(" %s=%s", w->fs.f[i].name, j ? json_object_get_string(j) : "");
		json_object_put(j);
	}
	return putchar('\n') == EOF || ferror(stdout) ? -EIO : 0;
}

/* Runs on the stream's thread, one record at a time. */
static void on_record(void *ctx, const struct kstats_stream_record *rec)
{
	struct watcher *w = ctx;

	/* Reads are destructive and the stop drains the ring: what arrives past --count is
	 * counted, never silently eaten. */
	if (w->write_err || (w->count && w->printed >= w->count)) {
		w->unprinted++;
		return;
	}
	if ((w->json ? print_json(w, rec) : print_text(w, rec)) || fflush(stdout)) {
		w->write_err = errno ? errno : EIO;
		w->unprinted++;
	} else if (++w->printed != w->count) {
		return;
	}
	kstats_stream_request_stop(w->s);
}

struct stream_refs {
	const char *pin_dir;
	struct stream_ref *v;
	size_t n;
};

static int add_streams(void *ctx, const char *path, const char *obj,
		       const struct kstats_objmeta *meta)
{
	struct stream_refs *refs = ctx;
	struct stream_ref *r = realloc(refs->v, (refs->n + meta->nstreams + 1) * sizeof(*r));
	char pin[4096];
	size_t j;

	if (!r)
		return -ENOMEM;
	refs->v = r;
	for (j = 0; j < meta->nstreams; j++) {
		r = &refs->v[refs->n++];
		snprintf(r->obj_path, sizeof(r->obj_path), "%s", path);
		snprintf(r->obj, sizeof(r->obj), "%s", obj);
		snprintf(r->name, sizeof(r->name), "%s", meta->streams[j].name);
		/* EACCES: maybe there; opening it says it is root's. */
		r->loaded = !kstats_pin_path(pin, sizeof(pin), refs->pin_dir, "map", obj,
					     meta->streams[j].ringbuf) &&
			    (!access(pin, F_OK) || errno == EACCES);
	}
	return 0;
}

static bool ref_matches(const struct stream_ref *r, const char *want)
{
	size_t n = strlen(r->obj);

	if (!want)
		return r->loaded;
	if (!strncmp(want, r->obj, n) && want[n] == ':')
		want += n + 1;
	return !strcmp(want, r->name);
}

/* Picks the stream to watch, or explains why not; returns an exit code. */
static int pick_stream(const char *obj_dir, const char *pin_dir, const char *want,
		       struct stream_ref *out)
{
	struct stream_refs all = { .pin_dir = pin_dir };
	size_t i, hits = 0, hit = 0;
	int ret = kstats_each_object(obj_dir, NULL, add_streams, &all);
	struct stream_ref *refs = all.v;

	if (ret) {
		fprintf(stderr, "kstats watch: cannot read object directory %s: %s%s\n",
			obj_dir, strerror(-ret), ret == -ENOMEM ? "" : "; pass --obj-dir");
		free(refs);
		return ret == -ENOMEM ? KSTATS_EXIT_ERROR : KSTATS_EXIT_USAGE;
	}
	for (i = 0; i < all.n; i++)
		if (ref_matches(&refs[i], want)) {
			hits++;
			hit = i;
		}
	if (hits == 1 && refs[hit].loaded) {
		*out = refs[hit];
		ret = KSTATS_EXIT_OK;
	} else if (hits == 1) {
		fprintf(stderr, "kstats watch: stream %s is not loaded under %s; "
			KSTATS_FIX_LOAD "\n", want, pin_dir);
		ret = KSTATS_EXIT_NOT_LOADED;
	} else if (!hits && !want) {
		fprintf(stderr, "kstats watch: no stream is loaded under %s; "
			KSTATS_FIX_LOAD "\n", pin_dir);
		ret = KSTATS_EXIT_NOT_LOADED;
	} else {
		if (!hits)
			fprintf(stderr, "kstats watch: unknown stream %s; known streams:\n", want);
		else
			fprintf(stderr, "kstats watch: %s names several streams; "
				"name one as OBJ:STREAM:\n", want ? want : "no stream");
		for (i = 0; i < all.n; i++)
			if (!hits || !want || ref_matches(&refs[i], want))
				fprintf(stderr, "  %s:%s%s\n", refs[i].obj, refs[i].name,
					refs[i].loaded ? "" : " (not loaded)");
		ret = KSTATS_EXIT_USAGE;
	}
	free(refs);
	return ret;
}

/* The losses since the last report, on stderr; *seen keeps the totals. */
static void report_losses(struct watcher *w, uint64_t seen[2])
{
	struct kstats_consumer_stats cs = {};
	struct kstats_stream_stats st;
	char err[KSTATS_ERR_LEN];

	if (kstats_stream_get_stats(w->s, &st, err, sizeof(err)))
		return;
	kstats_stream_consumer_stats(w->s, w->id, &cs);
	if (st.kernel_drops > seen[0])
		fprintf(stderr, "kstats watch: %s: %" PRIu64 " records lost in the kernel "
			"(ring buffer full)\n", kstats_stream_name(w->s),
			st.kernel_drops - seen[0]);
	if (cs.dropped > seen[1])
		fprintf(stderr, "kstats watch: %s: %" PRIu64 " records lost: this watch "
			"fell behind (raise --queue)\n", kstats_stream_name(w->s),
			cs.dropped - seen[1]);
	seen[0] = st.kernel_drops;
	seen[1] = cs.dropped;
}

/* Until a signal, --count or an error; reports losses as they happen. */
static int run(struct watcher *w, const sigset_t *sigs)
{
	struct kstats_stream_stats st;
	char err[KSTATS_ERR_LEN] = "";
	int ret = kstats_stream_get_stats(w->s, &st, err, sizeof(err));
	uint64_t seen[2];

	if (ret) {
		fprintf(stderr, "kstats watch: %s\n", err);
		return ret;
	}
	seen[0] = st.kernel_drops;
	seen[1] = 0;
	while (!ret && (ret = kstats_stream_wait(w->s, sigs, DROP_CHECK_MS)) == -ETIME) {
		report_losses(w, seen);
		ret = kstats_stream_check_pin(w->s, err, sizeof(err));
	}
	if (ret < 0)
		fprintf(stderr, "kstats watch: %s%s\n", *err ? "" : "waiting: ",
			*err ? err : strerror(-ret));
	*err = 0;
	ret = kstats_stream_stop(w->s, err, sizeof(err)) ?: (ret < 0 ? ret : 0);
	if (*err)
		fprintf(stderr, "kstats watch: %s\n", err);
	return ret;
}

static void print_summary(struct watcher *w)
{
	struct kstats_consumer_stats cs = {};
	struct kstats_stream_stats st;
	char err[KSTATS_ERR_LEN];

	if (kstats_stream_get_stats(w->s, &st, err, sizeof(err))) {
		fprintf(stderr, "kstats watch: %s\n", err);
		return;
	}
	kstats_stream_consumer_stats(w->s, w->id, &cs);
	fprintf(stderr, "kstats watch: %s: %" PRIu64 " records read, %" PRIu64 " lost in the "
		"kernel (ring buffer full), %" PRIu64 " lost by this watch (queue full)%s; "
		"%" PRIu64 " printed, %" PRIu64 " read but not printed (%s)\n",
		kstats_stream_name(w->s), st.delivered,
		st.kernel_drops - st.kernel_drops_at_open, cs.dropped,
		st.malformed ? ", some malformed (object and loaded program differ)" : "",
		w->printed, w->unprinted, w->write_err ? "output failed" : "past --count");
}

int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "count", required_argument, NULL, 'c' },
		{ "queue", required_argument, NULL, 'q' },
		{ "obj-dir", required_argument, NULL, 'o' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *obj_dir = kstats_default_obj_dir();
	struct watcher w = {};
	struct stream_ref ref;
	struct kstats_stream_opts so = { .obj_path = ref.obj_path, .stream = ref.name,
					 .pin_dir = KSTATS_DEFAULT_PIN_DIR };
	uint64_t queue = DEFAULT_QUEUE;
	char err[KSTATS_ERR_LEN] = "";
	sigset_t sigs;
	int c, ret;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': w.json = true; break;
		case 'c':
		case 'q':
			if (kstats_parse_count(c == 'c' ? "--count" : "--queue", optarg,
					       c == 'c' ? UINT64_MAX : 1u << 24,
					       c == 'c' ? &w.count : &queue, err, sizeof(err))) {
				fprintf(stderr, "kstats watch: %s\n", err);
				return KSTATS_EXIT_USAGE;
			}
			break;
		case 'o': obj_dir = optarg; break;
		case 'p': so.pin_dir = optarg; break;
		case 'h': usage(stdout); return KSTATS_EXIT_OK;
		default: usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "kstats watch: one stream at a time; see --help\n");
		return KSTATS_EXIT_USAGE;
	}
	/* Before any thread exists: a signal must not kill us mid-record. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	ret = pick_stream(obj_dir, so.pin_dir, optind < argc ? argv[optind] : NULL, &ref);
	if (ret)
		return ret;
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = kstats_stream_open(&so, &w.s, err, sizeof(err)) ?: build_fields(&w);
	if (!ret)
		ret = w.id = kstats_stream_add_consumer(w.s, (uint32_t)queue, on_record, &w,
							err, sizeof(err));
	if (ret >= 0)
		ret = kstats_stream_start(w.s, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "kstats watch: %s\n", *err ? err : strerror(-ret));
		ret = kstats_exit_code(ret);
		goto out;
	}
	w.real_minus_mono_ns = (int64_t)(kstats_clock_ns(CLOCK_REALTIME) -
					 kstats_clock_ns(CLOCK_MONOTONIC));
	ret = run(&w, &sigs);
	print_summary(&w);
	if (w.write_err && w.write_err != EPIPE)
		fprintf(stderr, "kstats watch: writing: %s\n", strerror(w.write_err));
	ret = ret || (w.write_err && w.write_err != EPIPE) ? KSTATS_EXIT_ERROR : KSTATS_EXIT_OK;
out:
	kstats_stream_close(w.s);
	kstats_fields_free(&w.fs);
	return ret;
}
