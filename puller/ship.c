// SPDX-License-Identifier: GPL-2.0
/*
 * kstats ship: the atoms ClickHouse has not acknowledged, as gzip'd JSONEachRow
 * POSTs (doc/fleet-atoms.md).  The record of what was acknowledged
 * (state dir/shipped) moves only after the server answered, so it is never
 * ahead of it; a resent row collapses in the ReplacingMergeTree.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <curl/curl.h>
#include <sys/stat.h>
#include <zlib.h>

#include "fleet.h"
#include "kstats.h"
#include "kstats_fileio.h"
#include "pull.h"

#define SHIP_FILE "shipped"
#define SHIP_BATCH (8u << 20)	/* rows per POST, before gzip */
#define SHIP_QUERY "INSERT INTO kernelstats_ingest.atoms FORMAT JSONEachRow"

struct ship {
	const char *url, *out_dir, *state_dir, *user;
	char host[256], password[256], err[CURL_ERROR_SIZE], answer[256];
	long connect_s, timeout_s;
	uint64_t acked, done;		/* recorded; last file whose rows are all buffered */
	struct rows_out rows;
	char *buf;
	size_t len, sent;
	int failed;			/* 0, or the exit code */
};

static int ship_record(struct ship *s, uint64_t id)
{
	char path[4096], line[32];
	int n = snprintf(line, sizeof(line), "%" PRIu64 "\n", id), ret;

	snprintf(path, sizeof(path), "%s/" SHIP_FILE, s->state_dir);
	ret = kstats_file_replace(path, line, (size_t)n, 0640);
	if (ret)
		fprintf(stderr, "kstats ship: %s: %s; the state dir must be writable "
			"(--state-dir)\n", path, strerror(-ret));
	else
		s->acked = id;
	return ret;
}

/* The last pull id acknowledged, 0 if none yet; the file is the state's. */
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

static int gzip(const char *in, size_t len, Bytef **out, size_t *outlen)
{
	z_stream z = {};
	int ret;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	*outlen = deflateBound(&z, len);
	*out = malloc(*outlen);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = *out;
	z.avail_out = (uInt)*outlen;
	ret = *out && deflate(&z, Z_FINISH) == Z_STREAM_END ? 0 : -ENOMEM;
	*outlen = z.total_out;
	deflateEnd(&z);
	return ret;
}

static size_t keep_answer(char *data, size_t size, size_t n, void *ctx)
{
	struct ship *s = ctx;
	size_t have = strlen(s->answer);

	snprintf(s->answer + have, sizeof(s->answer) - have, "%.*s", (int)(size * n), data);
	return size * n;
}

static void set_url(struct ship *s, CURL *c)
{
	char *q = curl_easy_escape(c, SHIP_QUERY, 0), url[4096];

	/* Acknowledged only once every shard has the rows (schema.sql). */
	snprintf(url, sizeof(url), "%s%squery=%s&insert_distributed_sync=1&"
		 "prefer_localhost_replica=0", s->url,
		 strchr(s->url, '?') ? "&" : "?", q);
	curl_free(q);
	curl_easy_setopt(c, CURLOPT_URL, url);
}

/* One POST; 0 only when the server answered 200 as ClickHouse does (no body). */
static int post(struct ship *s, const Bytef *body, size_t len)
{
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Encoding: gzip");
	CURL *c = curl_easy_init();
	long code = 0;
	CURLcode rc;

	if (!c || !hdr) {
		curl_slist_free_all(hdr);
		return snprintf(s->err, sizeof(s->err), "out of memory"), -ENOMEM;
	}
	s->err[0] = s->answer[0] = 0;
	set_url(s, c);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, s->connect_s);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, s->timeout_s);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s->err);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_answer);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	if (s->user) {
		curl_easy_setopt(c, CURLOPT_USERNAME, s->user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, s->password);
	}
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	curl_slist_free_all(hdr);
	if (rc != CURLE_OK && !*s->err)
		snprintf(s->err, sizeof(s->err), "%s", curl_easy_strerror(rc));
	else if (rc == CURLE_OK && code != 200)
		snprintf(s->err, sizeof(s->err), "HTTP %ld: %.*s", code,
			 (int)strcspn(s->answer, "\n"), s->answer);
	else if (rc == CURLE_OK && *s->answer)
		snprintf(s->err, sizeof(s->err), "HTTP 200 with an answer ClickHouse "
			 "does not give to an INSERT: is --url ClickHouse's HTTP port?");
	return *s->err ? -EIO : 0;
}

/* The buffered rows to the server; then the record moves to the last whole file. */
static void ship_batch(struct ship *s)
{
	Bytef *gz = NULL;
	size_t gzlen;

	if (s->failed || fflush(s->rows.f) || !s->len)
		return;
	if (gzip(s->buf, s->len, &gz, &gzlen) || post(s, gz, gzlen)) {
		fprintf(stderr, "kstats ship: %s: %s; not acknowledged, the atoms wait for "
			"the next run (fix the server or --url)\n", s->url,
			*s->err ? s->err : "out of memory");
		s->failed = KSTATS_EXIT_ERROR;
	}
	free(gz);
	s->sent += s->failed ? 0 : s->rows.rows;
	s->rows.rows = 0;
	fclose(s->rows.f);
	free(s->buf);
	s->rows.f = open_memstream(&s->buf, &s->len);
	if (!s->rows.f)
		s->failed = KSTATS_EXIT_ERROR;
	if (!s->failed && s->done > s->acked && ship_record(s, s->done))
		s->failed = KSTATS_EXIT_ERROR;
}

static void ship_atom(void *ctx, const Kernelstats__Atom *a)
{
	struct ship *s = ctx;

	if (s->failed)
		return;
	rows_atom(&s->rows, a);
	fflush(s->rows.f);
	if (s->len >= SHIP_BATCH)
		ship_batch(s);
}

static void ship_file(void *ctx, const char *path)
{
	const char *name = strrchr(path, '/') + 1;
	struct ship *s = ctx;
	struct atoms_file f;
	char why[512];
	uint64_t id;

	if (s->failed || sscanf(name, "atoms-%" SCNu64, &id) != 1 || id <= s->acked)
		return;
	if (atoms_file_read(path, &f, why, sizeof(why))) {
		fprintf(stderr, "kstats ship: skipped %s\n", why);
		return;
	}
	if (atoms_file_each(&f, ship_atom, s, why, sizeof(why)))
		fprintf(stderr, "kstats ship: %s: %s\n", path, why);
	rows_flush(&s->rows);
	s->done = id;
	free(f.buf);
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
	if (ret == -EPERM)
		fprintf(stderr, "kstats ship: %s: must be the kstats user's, readable by it "
			"only: chown kstats and chmod 0600 it\n", path);
	else if (ret)
		fprintf(stderr, "kstats ship: --password-file %s: %s\n", path, strerror(-ret));
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
		"Send every atom ClickHouse has not acknowledged yet, as gzip'd JSONEachRow\n"
		"rows into kernelstats_ingest.atoms (dist/clickhouse/schema.sql).  The record of\n"
		"what was acknowledged is the state dir's file '" SHIP_FILE "'.\n\n"
		"  --url URL        ClickHouse's HTTP interface, e.g. http://ch1:8123/\n"
		"  --out-dir DIR    atoms directory (default: " KSTATS_DEFAULT_ATOMS_DIR ")\n"
		"  --state-dir DIR  (default: " PULL_DEFAULT_STATE_DIR ")\n"
		"  --host NAME      the rows' host (default: /etc/machine-id)\n"
		"  --user NAME      ClickHouse user (the ingest user: schema.sql)\n"
		"  --password-file FILE  its password, a file only its owner may read\n"
		"  --timeout SECS   per POST, connecting included (default: 60)\n"
		"  -h, --help       this text\n\n"
		"Exit status: 0 all acknowledged, 1 the server did not acknowledge (the\n"
		"atoms wait for the next run) or the record could not be written, 2 bad usage.\n");
}

static int ship_args(struct ship *s, int argc, char **argv)
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
	const char *pw = NULL;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'u': s->url = optarg; break;
		case 'O': s->out_dir = optarg; break;
		case 's': s->state_dir = optarg; break;
		case 'H': snprintf(s->host, sizeof(s->host), "%s", optarg); break;
		case 'U': s->user = optarg; break;
		case 'P': pw = optarg; break;
		case 't':
			s->timeout_s = strtol(optarg, &end, 10);
			if (*end || s->timeout_s < 1 || s->timeout_s > 3600) {
				fprintf(stderr, "kstats ship: --timeout %s: give 1 to 3600 "
					"seconds\n", optarg);
				return KSTATS_EXIT_USAGE;
			}
			break;
		case 'h': ship_usage(stdout); return -1;
		default: ship_usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (!s->url || optind < argc || !s->user != !pw) {
		fprintf(stderr, "kstats ship: %s\n", optind < argc ? "unexpected argument" :
			s->url ? "--user and --password-file go together" :
			"give --url, ClickHouse's HTTP interface (http://HOST:8123/)");
		return KSTATS_EXIT_USAGE;
	}
	if (!*s->host && rows_machine_id(s->host, sizeof(s->host))) {
		fprintf(stderr, "kstats ship: no /etc/machine-id: name this host with --host\n");
		return KSTATS_EXIT_USAGE;
	}
	return pw && read_password(s, pw) ? KSTATS_EXIT_USAGE : 0;
}

int cmd_ship(int argc, char **argv)
{
	struct ship s = {
		.out_dir = KSTATS_DEFAULT_ATOMS_DIR, .state_dir = PULL_DEFAULT_STATE_DIR,
		.connect_s = 10, .timeout_s = 60,
	};
	int ret = ship_args(&s, argc, argv);

	if (ret)
		return ret < 0 ? KSTATS_EXIT_OK : ret;
	s.connect_s = s.connect_s < s.timeout_s ? s.connect_s : s.timeout_s;
	s.acked = ship_acked(s.state_dir);
	s.rows.host = s.host;
	s.rows.f = open_memstream(&s.buf, &s.len);
	if (!s.rows.f || curl_global_init(CURL_GLOBAL_DEFAULT))
		return KSTATS_EXIT_ERROR;
	if (atoms_each_path(s.out_dir, ship_file, &s) < 0) {
		fprintf(stderr, "kstats ship: cannot read %s: %s; pass --out-dir\n", s.out_dir,
			strerror(errno));
		s.failed = KSTATS_EXIT_USAGE;
	}
	ship_batch(&s);
	if (!s.failed && ship_record(&s, s.acked))
		s.failed = KSTATS_EXIT_ERROR;
	if (s.rows.f)
		fclose(s.rows.f);
	free(s.buf);
	curl_global_cleanup();
	if (!s.failed)
		printf("kstats ship: %zu rows acknowledged by %s\n", s.sent, s.url);
	return s.failed;
}
