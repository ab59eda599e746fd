// SPDX-License-Identifier: GPL-2.0
/* Atoms as JSON-each-row rows, ClickHouse's JSONEachRow (doc/fleet-atoms.md): written
 * per metric, key and pull, read back into kstats report's page. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "fleet.h"
#include "kstats.h"
#include "kstats_fileio.h"
#include "pull.h"

#define ROW_MAX_LINE (64 * 1024)
#define DAY_SECS 86400

static void put_str(struct json_object *o, const char *name, const char *s)
{
	json_object_object_add(o, name, json_object_new_string(s));
}

static void put_u64(struct json_object *o, const char *name, uint64_t v)
{
	json_object_object_add(o, name, json_object_new_uint64(v));
}

static void row_write(const struct rows_out *o, const struct row *r)
{
	struct json_object *obj = json_object_new_object(), *b = json_object_new_array();
	time_t end = (time_t)(r->end_ns / 1000000000ull);
	char day[16];
	struct tm tm;
	unsigned int i;

	strftime(day, sizeof(day), "%Y-%m-%d", gmtime_r(&end, &tm));
	put_str(obj, "day", day);
	put_str(obj, "host", o->host);
	put_str(obj, "kernel", r->kernel);
	put_str(obj, "metric", r->msg->short_name);
	put_u64(obj, "atom_id", (uint64_t)r->atom_id);
	put_str(obj, "key", r->key);
	put_str(obj, "boot_id", r->boot_id);
	put_u64(obj, "pull_id", r->pull_id);
	put_u64(obj, "window_start", r->start_ns);
	put_u64(obj, "window_end", r->end_ns);
	put_u64(obj, "reset", r->reset);
	put_u64(obj, "anomalies", r->anomalies);
	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
		json_object_array_add(b, json_object_new_uint64(r->b[i]));
	json_object_object_add(obj, "buckets", b);
	fprintf(o->f, "%s\n", json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
}

void rows_flush(struct rows_out *o)
{
	if (o->have)
		row_write(o, &o->cur);
	o->rows += o->have;
	o->have = false;
}

/* The atoms of one count split at 2^31 follow each other in a pull's file. */
static bool same_row(const struct row *x, const struct row *y)
{
	return x->msg == y->msg && x->pull_id == y->pull_id && x->end_ns == y->end_ns &&
	       !strcmp(x->key, y->key) && !strcmp(x->boot_id, y->boot_id);
}

void rows_atom(void *ctx, const Kernelstats__Atom *a)
{
	const ProtobufCMessage *m = atom_payload(a);
	const struct kstats_unit_info *unit;
	struct rows_out *o = ctx;
	struct row r = {
		.atom_id = a->atom_id, .anomalies = a->anomalies, .reset = a->reset,
		.pull_id = a->pull_id, .start_ns = a->window_start_realtime_ns,
		.end_ns = a->window_end_realtime_ns,
	};
	unsigned int from = 0, i;
	char key[sizeof(r.key) + 1] = "";
	FILE *f;

	if (!m || !atom_buckets(m, &from, r.b, &unit))
		return;
	r.msg = m->descriptor;
	f = fmemopen(key, sizeof(key) - 1, "w");
	if (f) {
		atom_key_print(f, m, "");
		fclose(f);
	}
	snprintf(r.key, sizeof(r.key), "%s", *key ? key + 1 : "");
	snprintf(r.boot_id, sizeof(r.boot_id), "%s", a->boot_id ?: "");
	snprintf(r.kernel, sizeof(r.kernel), "%s", a->kernel_release ?: "");
	if (o->have && same_row(&o->cur, &r)) {
		for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
			o->cur.b[i] = kstats_add_sat(o->cur.b[i], r.b[i]);
		o->cur.reset |= r.reset;
		o->cur.anomalies = r.anomalies > o->cur.anomalies ? r.anomalies :
				   o->cur.anomalies;
		return;
	}
	rows_flush(o);
	o->cur = r;
	o->have = true;
}

int rows_machine_id(char *buf, size_t len)
{
	char *id;
	size_t n;
	int ret = kstats_read_file("/etc/machine-id", 256, &id, &n);

	if (ret)
		return ret;
	n = strcspn(id, "\n");
	ret = n && n < len ? 0 : -EINVAL;
	if (!ret)
		snprintf(buf, len, "%.*s", (int)n, id);
	free(id);
	return ret;
}

struct rows_print {
	struct rows_out out;
	bool failed;
};

static void print_rows_of(void *ctx, const char *path)
{
	struct rows_print *p = ctx;
	struct atoms_file f;
	char why[512];

	if (atoms_file_read(path, &f, why, sizeof(why))) {
		fprintf(stderr, "kstats atoms: %s\n", why);
		p->failed = true;
		return;
	}
	if (atoms_file_each(&f, rows_atom, &p->out, why, sizeof(why))) {
		fprintf(stderr, "kstats atoms: %s: %s\n", path, why);
		p->failed = true;
	}
	rows_flush(&p->out);
	free(f.buf);
}

int rows_print(const char *dir, char *const *files, int n)
{
	char host[256];
	struct rows_print p = { .out = { .f = stdout, .host = host } };
	int i;

	if (rows_machine_id(host, sizeof(host)))
		snprintf(host, sizeof(host), "unknown");
	for (i = 0; i < n; i++)
		print_rows_of(&p, files[i]);
	if (!n && atoms_each_path(dir, print_rows_of, &p) < 0) {
		fprintf(stderr, "kstats atoms: cannot read %s: %s; pass --out-dir or a FILE\n",
			dir, strerror(errno));
		return KSTATS_EXIT_USAGE;
	}
	return p.failed ? KSTATS_EXIT_ERROR : KSTATS_EXIT_OK;
}

/* A 64-bit count as ClickHouse writes it (quoted) or as we do (a number). */
static int get_u64(struct json_object *v, uint64_t *out)
{
	const char *s;
	char *end;

	if (json_object_is_type(v, json_type_int)) {
		*out = json_object_get_uint64(v);
		return json_object_get_int64(v) < 0 ? -ERANGE : 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return -EINVAL;
	s = json_object_get_string(v);
	errno = 0;
	*out = strtoull(s, &end, 10);
	return *s >= '0' && *s <= '9' && !*end && !errno ? 0 : -EINVAL;
}

static const char *row_parse(struct json_object *o, struct atom_shape *shape, char *key,
			     size_t keylen, struct day_cell *c)
{
	struct json_object *day, *metric, *k, *b, *v;
	char why[256];
	const char *end;
	uint64_t n;
	struct tm tm = {};
	size_t i;

	if (!json_object_object_get_ex(o, "day", &day) ||
	    !json_object_object_get_ex(o, "metric", &metric) ||
	    !json_object_object_get_ex(o, "buckets", &b) ||
	    !json_object_is_type(b, json_type_array))
		return "a row needs day, metric, key and buckets (FORMAT JSONEachRow)";
	end = strptime(json_object_get_string(day), "%Y-%m-%d", &tm);
	if (!end || *end)
		return "day is not YYYY-MM-DD";
	c->day = (int32_t)(timegm(&tm) / DAY_SECS);
	if (atom_shape_init(shape, &kernelstats__atom__descriptor,
			    json_object_get_string(metric), why, sizeof(why)))
		return "a metric this kstats does not know (newer schema?): update kstats";
	k = json_object_object_get_ex(o, "key", &k) ? k : NULL;
	snprintf(key, keylen, "%s%s", k && *json_object_get_string(k) ? " " : "",
		 k ? json_object_get_string(k) : "");
	if (json_object_array_length(b) > BPF_TELEMETRY_NR_BUCKETS)
		return "more than 32 buckets";
	for (i = 0; i < json_object_array_length(b); i++)
		if (get_u64(json_object_array_get_idx(b, i), &c->b[i]))
			return "a bucket is not an unsigned 64-bit count";
	if (json_object_object_get_ex(o, "reset", &v) && !get_u64(v, &n))
		c->reset = n;
	if (json_object_object_get_ex(o, "anomalies", &v) && !get_u64(v, &n))
		c->anomalies = (uint32_t)n;
	return NULL;
}

int rows_read(const char *path, void (*fn)(void *ctx, const ProtobufCMessageDescriptor *msg,
					   const char *key, const struct kstats_unit_info *unit,
					   const struct day_cell *c),
	      void *ctx, char *why, size_t len)
{
	int fd = strcmp(path, "-") ? kstats_open_regular(path, O_RDONLY, 0) : dup(STDIN_FILENO);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char *line = malloc(ROW_MAX_LINE), key[200];
	const char *bad = NULL;
	struct json_object *o;
	struct atom_shape shape;
	struct day_cell c;
	size_t n = 0;

	if (!f || !line) {
		snprintf(why, len, "%s: %s; pass a regular file of rows, or - for a pipe", path,
			 fd < 0 ? strerror(-fd) : "out of memory");
		goto out;
	}
	while (!bad && fgets(line, ROW_MAX_LINE, f)) {
		n++;
		if (!strchr(line, '\n') && !feof(f)) {
			bad = "a line over 64 KiB; not a row of kstats atoms --format json-each-row";
			break;
		}
		memset(&c, 0, sizeof(c));
		o = json_tokener_parse(line);
		bad = o ? row_parse(o, &shape, key, sizeof(key), &c) : *line == '\n' ? NULL :
		      "not JSON: one object a line (FORMAT JSONEachRow)";
		if (o && !bad)
			fn(ctx, shape.msg, key, shape.unit, &c);
		json_object_put(o);
	}
	if (bad)
		snprintf(why, len, "%s:%zu: %s", path, n, bad);
out:
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	free(line);
	return !f || !line ? -EINVAL : bad ? -EBADMSG : 0;
}
