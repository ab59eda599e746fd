// SPDX-License-Identifier: GPL-2.0
/* Atoms as JSON-each-row rows, one per metric, key and pull (kstats atoms --format
 * json-each-row), and kstats ship: the atoms ClickHouse has not acknowledged, as gzip'd
 * JSONEachRow POSTs (doc/fleet-atoms.md).  The record of the last pull acknowledged (state
 * dir/shipped) moves only after the server answered, so it is never ahead of it; a row sent
 * again collapses in the ReplacingMergeTree. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <json-c/json.h>
#include <sys/stat.h>

#include "atoms.h"
#include "kstats_fileio.h"
#include "pull.h"

#define SHIP_FILE "shipped"
#define SHIP_BATCH (8u << 20)	/* bytes of rows per POST, before gzip */
#define SHIP_QUERY "INSERT INTO kernelstats_ingest.atoms FORMAT JSONEachRow"

struct ship {
	const char *url, *out_dir, *state_dir, *user;	/* url NULL: rows to stdout */
	char host[256], password[256], err[256], answer[256];
	long timeout_s;
	uint64_t acked, done;		/* recorded; the last file whose rows are all taken */
	FILE *f;			/* the rows, to stdout or buf */
	char *buf;
	size_t len, sent, rows;
	int failed;			/* 0, or the exit code */
	bool have;			/* cur: a count split over atoms is one row */
	struct row {
		const ProtobufCMessageDescriptor *msg;
		int32_t atom_id;
		uint32_t anomalies;
		bool reset;
		uint64_t pull_id, start_ns, end_ns, b[BPF_TELEMETRY_NR_BUCKETS];
		char key[160], boot_id[64], kernel[65];
	} cur;
};

static void rows_flush(struct ship *s)
{
	const struct row *r = &s->cur;
	struct json_object *obj, *b;
	char day[16];
	const char *strs[][2] = { { "day", day }, { "host", s->host }, { "kernel", r->kernel },
		{ "metric", r->msg ? r->msg->short_name : "" }, { "key", r->key },
		{ "boot_id", r->boot_id } };
	const struct { const char *name; uint64_t v; } nums[] = { { "atom_id", r->atom_id },
		{ "pull_id", r->pull_id }, { "window_start", r->start_ns },
		{ "window_end", r->end_ns }, { "reset", r->reset }, { "anomalies", r->anomalies } };
	unsigned int i;

	if (!s->have)
		return;
	obj = json_object_new_object();
	b = json_object_new_array();
	days_fmt(day, sizeof(day), (int32_t)(r->end_ns / 1000000000ull / DAY_SECS));
	for (i = 0; i < 6; i++) {
		json_object_object_add(obj, strs[i][0], json_object_new_string(strs[i][1]));
		json_object_object_add(obj, nums[i].name, json_object_new_uint64(nums[i].v));
	}
	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
		json_object_array_add(b, json_object_new_uint64(r->b[i]));
	json_object_object_add(obj, "buckets", b);
	fprintf(s->f, "%s\n", json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
	s->rows++;
	s->have = false;
}

static void ship_batch(struct ship *s);

static void ship_atom(void *ctx, const Kernelstats__Atom *a)
{
	const ProtobufCMessage *m = atom_payload(a);
	const struct kstats_unit_info *unit;
	struct ship *s = ctx;
	struct row r = { .atom_id = a->atom_id, .anomalies = a->anomalies, .reset = a->reset,
		.pull_id = a->pull_id, .end_ns = a->window_end_realtime_ns,
		.start_ns = a->window_start_realtime_ns };
	char key[sizeof(r.key) + 1] = "";
	unsigned int from = 0, i;
	FILE *f;

	if (s->failed || !m || !atom_buckets(m, &from, r.b, &unit))
		return;
	f = fmemopen(key, sizeof(key) - 1, "w");
	if (f) {
		atom_key_print(f, m, "");
		fclose(f);
	}
	r.msg = m->descriptor;
	snprintf(r.key, sizeof(r.key), "%s", *key ? key + 1 : "");
	snprintf(r.boot_id, sizeof(r.boot_id), "%s", a->boot_id ?: "");
	snprintf(r.kernel, sizeof(r.kernel), "%s", a->kernel_release ?: "");
	/* The atoms of one count split at 2^31 follow each other: one row. */
	if (s->have && r.msg == s->cur.msg && r.pull_id == s->cur.pull_id &&
	    r.end_ns == s->cur.end_ns && !strcmp(r.key, s->cur.key) &&
	    !strcmp(r.boot_id, s->cur.boot_id)) {
		for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
			s->cur.b[i] = kstats_add_sat(s->cur.b[i], r.b[i]);
		return;
	}
	rows_flush(s);
	s->cur = r;
	s->have = true;
	if (s->url && !fflush(s->f) && s->len >= SHIP_BATCH)
		ship_batch(s);
}

uint64_t ship_acked(const char *state_dir)
{
	char path[4096], *buf;
	uint64_t id = 0;
	size_t len;

	snprintf(path, sizeof(path), "%s/" SHIP_FILE, state_dir);
	if (!kstats_read_file(path, 64, &buf, &len)) {
		id = strtoull(buf, NULL, 10);
		free(buf);
	}
	return id;
}

static void count_waiting(void *ctx, const char *path)
{
	struct ship *s = ctx;
	struct atoms_file f;
	const char *name = strrchr(path, '/');
	uint64_t id;
	char why[512];

	if (sscanf(name ? name + 1 : path, "atoms-%" SCNu64, &id) == 1 && id > s->acked &&
	    !atoms_file_read(path, &f, why, sizeof(why))) {
		s->sent += f.count;
		free(f.buf);
	}
}

long ship_waiting(const char *state_dir, const char *out_dir, struct timespec *when)
{
	struct ship s = { .acked = ship_acked(state_dir) };
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/" SHIP_FILE, state_dir);
	out_dir = out_dir ?: KSTATS_DEFAULT_ATOMS_DIR;
	if (lstat(path, &st) || !S_ISREG(st.st_mode))
		return -1;
	*when = st.st_mtim;
	atoms_each_path(out_dir, count_waiting, &s);
	return (long)s.sent;
}

static int ship_record(struct ship *s, uint64_t id)
{
	char path[4096], line[32];
	int n = snprintf(line, sizeof(line), "%" PRIu64 "\n", id), ret;

	snprintf(path, sizeof(path), "%s/" SHIP_FILE, s->state_dir);
	ret = kstats_file_replace(path, line, (size_t)n, 0640);
	if (ret)
		fprintf(stderr, "kstats ship: %s: %s; give a writable --state-dir\n", path,
			strerror(-ret));
	s->acked = ret ? s->acked : id;
	return ret;
}

static void ship_file(void *ctx, const char *path)
{
	const char *name = strrchr(path, '/');
	struct ship *s = ctx;
	struct atoms_file f;
	char why[512];
	uint64_t id = 0;

	if (s->url && (sscanf(name ? name + 1 : path, "atoms-%" SCNu64, &id) != 1 ||
		       id <= s->acked))
		return;
	if (!s->failed && atoms_file_read(path, &f, why, sizeof(why))) {
		fprintf(stderr, "kstats %s: %s\n", s->url ? "ship: skipped" : "atoms", why);
		s->failed = s->url ? 0 : KSTATS_EXIT_ERROR;
	} else if (!s->failed) {
		if (atoms_file_each(&f, ship_atom, s, why, sizeof(why)))
			fprintf(stderr, "kstats %s: %s: %s\n", s->url ? "ship" : "atoms", path, why);
		rows_flush(s);
		s->done = id;
		free(f.buf);
	}
}

static int ship_run(struct ship *s, char *const *files, int n)
{
	char *id = NULL;
	size_t len;
	int i;

	if (!*s->host && !kstats_read_file("/etc/machine-id", 256, &id, &len))
		snprintf(s->host, sizeof(s->host), "%.*s", (int)strcspn(id, "\n"), id);
	free(id);
	if (!*s->host) {
		fprintf(stderr, "kstats: no /etc/machine-id: name this host with --host\n");
		return KSTATS_EXIT_USAGE;
	}
	s->f = s->url ? open_memstream(&s->buf, &s->len) : stdout;
	if (!s->f)
		return KSTATS_EXIT_ERROR;
	for (i = 0; i < n; i++)
		ship_file(s, files[i]);
	if (!n && atoms_each_path(s->out_dir, ship_file, s) < 0) {
		fprintf(stderr, "kstats: cannot read %s: %s; pass --out-dir\n", s->out_dir,
			strerror(errno));
		s->failed = KSTATS_EXIT_USAGE;
	}
	if (s->url) {
		ship_batch(s);
		/* Its time says when the last ship succeeded (kstats status). */
		if (!s->failed && ship_record(s, s->acked))
			s->failed = KSTATS_EXIT_ERROR;
		fclose(s->f);
		free(s->buf);
	}
	return s->failed;
}

int rows_print(const char *dir, char *const *files, int n)
{
	struct ship s = { .out_dir = dir };

	return ship_run(&s, files, n);
}

#ifdef KSTATS_NO_CURL	/* the static guest builds (mk/fleet.mk): no kstats ship */
static void ship_batch(struct ship *s)
{
	(void)s;
}
#else
#include <curl/curl.h>
#include <zlib.h>

_Static_assert(sizeof(((struct ship *)0)->err) >= CURL_ERROR_SIZE, "curl's error buffer");

static size_t keep_answer(char *data, size_t size, size_t n, void *ctx)
{
	struct ship *s = ctx;
	size_t have = strlen(s->answer);

	snprintf(s->answer + have, sizeof(s->answer) - have, "%.*s", (int)(size * n), data);
	return size * n;
}

/* The rows taken so far in one POST; 0 only when the server answered 200 as ClickHouse does
 * (no body).  Then the record moves to the last whole file. */
static void ship_batch(struct ship *s)
{
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Encoding: gzip");
	CURL *c = curl_easy_init();
	char *q = c ? curl_easy_escape(c, SHIP_QUERY, 0) : NULL, url[4096];
	z_stream z = {};
	Bytef *gz = NULL;
	CURLcode rc;
	long code = 0;

	if (s->failed || fflush(s->f) || !s->len)
		goto out;
	z.next_in = (Bytef *)s->buf;	/* as of the fflush() */
	z.avail_in = (uInt)s->len;
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
		z.avail_out = (uInt)deflateBound(&z, s->len);
		z.next_out = gz = malloc(z.avail_out);
		if (gz && deflate(&z, Z_FINISH) != Z_STREAM_END) {
			free(gz);
			gz = NULL;
		}
		deflateEnd(&z);
	}
	s->err[0] = s->answer[0] = 0;
	/* Acknowledged once every shard has the rows (schema.sql). */
	snprintf(url, sizeof(url), "%s%squery=%s&insert_distributed_sync=1&"
		 "prefer_localhost_replica=0", s->url, strchr(s->url, '?') ? "&" : "?", q ?: "");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, gz);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)z.total_out);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, s->timeout_s < 10 ? s->timeout_s : 10);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, s->timeout_s);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s->err);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_answer);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_USERNAME, s->user);
	curl_easy_setopt(c, CURLOPT_PASSWORD, s->user ? s->password : NULL);
	rc = gz && hdr && q ? curl_easy_perform(c) : CURLE_OUT_OF_MEMORY;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (rc != CURLE_OK && !*s->err)
		snprintf(s->err, sizeof(s->err), "%s", gz && hdr && q ? curl_easy_strerror(rc) :
			 "out of memory");
	else if (rc == CURLE_OK && code != 200)
		snprintf(s->err, sizeof(s->err), "HTTP %ld: %.*s", code,
			 (int)strcspn(s->answer, "\n"), s->answer);
	else if (rc == CURLE_OK && *s->answer)
		snprintf(s->err, sizeof(s->err), "HTTP 200 with an answer ClickHouse does "
			 "not give to an INSERT: is --url ClickHouse's HTTP port?");
	if (*s->err) {
		fprintf(stderr, "kstats ship: %s: %s; not acknowledged, the atoms wait for "
			"the next run (fix the server or --url)\n", s->url, s->err);
		s->failed = KSTATS_EXIT_ERROR;
	}
	s->sent += s->failed ? 0 : s->rows;
	s->rows = 0;
	fclose(s->f);
	free(s->buf);
	s->buf = NULL;
	s->f = open_memstream(&s->buf, &s->len);
	if (!s->f)
		s->failed = KSTATS_EXIT_ERROR;
	else if (!s->failed && s->done > s->acked && ship_record(s, s->done))
		s->failed = KSTATS_EXIT_ERROR;
out:
	curl_free(q);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	free(gz);
}

static int read_password(struct ship *s, const char *path)
{
	int fd = kstats_open_regular(path, O_RDONLY, 0), ret = fd;
	struct stat st;
	char *buf = NULL;
	size_t len;

	if (fd >= 0 && (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)))
		ret = -EPERM;
	else if (fd >= 0)
		ret = kstats_read_fd(fd, sizeof(s->password) - 1, &buf, &len);
	if (fd >= 0)
		close(fd);
	if (ret)
		fprintf(stderr, "kstats ship: --password-file %s: %s\n", path, ret == -EPERM ?
			"must be the kstats user's and readable by it only: chown, chmod 0600" :
			strerror(-ret));
	else
		snprintf(s->password, sizeof(s->password), "%.*s", (int)strcspn(buf, "\r\n"), buf);
	free(buf);
	return ret;
}

static void ship_usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats ship --url URL [--out-dir DIR] [--state-dir DIR] [--host NAME]\n"
		"                   [--user NAME --password-file FILE] [--timeout SECS]\n"
		"Send the atoms ClickHouse has not acknowledged yet, as gzip'd JSONEachRow\n"
		"rows into kernelstats_ingest.atoms (dist/clickhouse/schema.sql).  The last\n"
		"pull acknowledged is recorded in the state dir's file '" SHIP_FILE "'.\n\n"
		"  --url URL        ClickHouse's HTTP interface, e.g. http://ch1:8123/\n"
		"  --out-dir DIR    atoms directory (default: " KSTATS_DEFAULT_ATOMS_DIR ")\n"
		"  --state-dir DIR  (default: " PULL_DEFAULT_STATE_DIR ")\n"
		"  --host NAME      the rows' host (default: /etc/machine-id)\n"
		"  --user NAME      ClickHouse user (the ingest user: users.xml)\n"
		"  --password-file FILE  its password, a file only its owner may read\n"
		"  --timeout SECS   per POST, connecting (at most 10 s) included (default: 60)\n"
		"  -h, --help       this text\n\n"
		"Exit status: 0 all acknowledged, 1 the server did not acknowledge (the\n"
		"atoms wait for the next run) or the record could not be written, 2 bad usage.\n");
}

int cmd_ship(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "out-dir", required_argument, NULL, 'O' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "host", required_argument, NULL, 'H' },
		{ "user", required_argument, NULL, 'U' },
		{ "password-file", required_argument, NULL, 'P' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct ship s = { .out_dir = KSTATS_DEFAULT_ATOMS_DIR, .timeout_s = 60,
			  .state_dir = PULL_DEFAULT_STATE_DIR };
	const char *pw = NULL;
	char *end;
	int c, ret;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'u': s.url = optarg; break;
		case 'O': s.out_dir = optarg; break;
		case 's': s.state_dir = optarg; break;
		case 'H': snprintf(s.host, sizeof(s.host), "%s", optarg); break;
		case 'U': s.user = optarg; break;
		case 'P': pw = optarg; break;
		case 't':
			s.timeout_s = strtol(optarg, &end, 10);
			if (!*end && s.timeout_s >= 1 && s.timeout_s <= 3600)
				break;
			fprintf(stderr, "kstats ship: --timeout %s: give 1 to 3600 seconds\n", optarg);
			return KSTATS_EXIT_USAGE;
		case 'h': ship_usage(stdout); return KSTATS_EXIT_OK;
		default: ship_usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (!s.url || optind < argc || !s.user != !pw) {
		fprintf(stderr, "kstats ship: %s\n", optind < argc ? "unexpected argument" :
			s.url ? "--user and --password-file go together" :
			"give --url, ClickHouse's HTTP interface (http://HOST:8123/)");
		return KSTATS_EXIT_USAGE;
	}
	if (pw && read_password(&s, pw))
		return KSTATS_EXIT_USAGE;
	s.acked = ship_acked(s.state_dir);
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		return KSTATS_EXIT_ERROR;
	ret = ship_run(&s, NULL, 0);
	curl_global_cleanup();
	if (!ret)
		printf("kstats ship: %zu rows acknowledged by %s\n", s.sent, s.url);
	return ret;
}
#endif
