// SPDX-License-Identifier: GPL-2.0
/* Atoms as JSON-each-row rows (ClickHouse's JSONEachRow, doc/fleet-atoms.md): one per
 * metric, key and pull, and read back into kstats report's page. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "fleet.h"
#include "kstats_fileio.h"
#include "pull.h"

#define ROW_MAX_LINE (64 * 1024)

static void row_write(const struct rows_out *o, const struct row *r)
{
	struct json_object *obj = json_object_new_object(), *b = json_object_new_array();
	time_t end = (time_t)(r->end_ns / 1000000000ull);
	char day[16];
	struct tm tm;
	const char *strs[][2] = { { "day", day }, { "host", o->host }, { "kernel", r->kernel },
		{ "metric", r->msg->short_name }, { "key", r->key }, { "boot_id", r->boot_id } };
	const struct { const char *name; uint64_t v; } nums[] = { { "atom_id", r->atom_id },
		{ "pull_id", r->pull_id }, { "window_start", r->start_ns },
		{ "window_end", r->end_ns }, { "reset", r->reset }, { "anomalies", r->anomalies } };
	unsigned int i;

	strftime(day, sizeof(day), "%Y-%m-%d", gmtime_r(&end, &tm));
	for (i = 0; i < 6; i++) {
		json_object_object_add(obj, strs[i][0], json_object_new_string(strs[i][1]));
		json_object_object_add(obj, nums[i].name, json_object_new_uint64(nums[i].v));
	}
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

void rows_atom(void *ctx, const Kernelstats__Atom *a)
{
	const ProtobufCMessage *m = atom_payload(a);
	const struct kstats_unit_info *unit;
	struct rows_out *o = ctx;
	struct row r = { .atom_id = a->atom_id, .anomalies = a->anomalies, .reset = a->reset,
		.pull_id = a->pull_id, .end_ns = a->window_end_realtime_ns,
		.start_ns = a->window_start_realtime_ns };
	char key[sizeof(r.key) + 1] = "";
	unsigned int from = 0, i;
	FILE *f = fmemopen(key, sizeof(key) - 1, "w");

	if (f && m)
		atom_key_print(f, m, "");
	if (f)
		fclose(f);
	if (!m || !atom_buckets(m, &from, r.b, &unit))
		return;
	r.msg = m->descriptor;
	snprintf(r.key, sizeof(r.key), "%s", *key ? key + 1 : "");
	snprintf(r.boot_id, sizeof(r.boot_id), "%s", a->boot_id ?: "");
	snprintf(r.kernel, sizeof(r.kernel), "%s", a->kernel_release ?: "");
	/* The atoms of one count split at 2^31 follow each other: one row. */
	if (o->have && r.msg == o->cur.msg && r.pull_id == o->cur.pull_id &&
	    r.end_ns == o->cur.end_ns && !strcmp(r.key, o->cur.key) &&
	    !strcmp(r.boot_id, o->cur.boot_id)) {
		for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
			o->cur.b[i] = kstats_add_sat(o->cur.b[i], r.b[i]);
		return;
	}
	rows_flush(o);
	o->cur = r;
	o->have = true;
}

/* A count as ClickHouse writes it ("5": quoted) or as kstats does (5). */
static bool get_u64(struct json_object *v, uint64_t *out)
{
	const char *s = json_object_get_string(v);
	char *end;

	errno = 0;
	*out = s ? strtoull(s, &end, 10) : 0;
	return s && *s >= '0' && *s <= '9' && !*end && !errno;
}

static const char *row_parse(struct json_object *o, struct atom_shape *shape, char *key,
			     size_t keylen, struct day_cell *c)
{
	struct json_object *day, *metric, *k = NULL, *b, *v;
	struct tm tm = {};
	const char *end;
	char why[256];
	uint64_t n;
	size_t i;

	if (!json_object_object_get_ex(o, "day", &day) ||
	    !json_object_object_get_ex(o, "metric", &metric) ||
	    !json_object_object_get_ex(o, "buckets", &b) || !json_object_is_type(b, json_type_array))
		return "a row needs day, metric, key and buckets (FORMAT JSONEachRow)";
	end = strptime(json_object_get_string(day), "%Y-%m-%d", &tm);
	if (!end || *end)
		return "day is not YYYY-MM-DD";
	c->day = (int32_t)(timegm(&tm) / 86400);
	if (atom_shape_init(shape, &kernelstats__atom__descriptor,
			    json_object_get_string(metric), why, sizeof(why)))
		return "a metric this kstats does not know (newer schema?): update kstats";
	json_object_object_get_ex(o, "key", &k);
	snprintf(key, keylen, " %s", k ? json_object_get_string(k) : "");
	if (json_object_array_length(b) > BPF_TELEMETRY_NR_BUCKETS)
		return "more than 32 buckets";
	for (i = 0; i < json_object_array_length(b); i++)
		if (!get_u64(json_object_array_get_idx(b, i), &c->b[i]))
			return "a bucket is not an unsigned 64-bit count";
	if (json_object_object_get_ex(o, "reset", &v) && get_u64(v, &n))
		c->reset = n;
	if (json_object_object_get_ex(o, "anomalies", &v) && get_u64(v, &n))
		c->anomalies = (uint32_t)n;
	return NULL;
}

int rows_read(const char *path, days_fn fn, void *ctx, char *why, size_t len)
{
	int fd = strcmp(path, "-") ? kstats_open_regular(path, O_RDONLY, 0) : dup(STDIN_FILENO);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char *line = malloc(ROW_MAX_LINE), key[200];
	struct atom_shape shape;
	struct json_object *o;
	const char *bad = NULL;
	struct day_cell c;
	size_t n = 0;

	if (!f || !line)
		snprintf(why, len, "%s: %s; pass a regular file of rows, or - for a pipe", path,
			 fd < 0 ? strerror(-fd) : "out of memory");
	while (f && line && !bad && fgets(line, ROW_MAX_LINE, f)) {
		n++;
		if (!strchr(line, '\n') && !feof(f)) {
			bad = "a line over 64 KiB: not a row of kstats atoms --format json-each-row";
			break;
		}
		memset(&c, 0, sizeof(c));
		o = json_tokener_parse(line);
		bad = o ? row_parse(o, &shape, key, sizeof(key), &c) : *line == '\n' ? NULL :
		      "not JSON: one object a line (FORMAT JSONEachRow)";
		if (o && !bad)
			fn(ctx, shape.msg, strcmp(key, " ") ? key : "", shape.unit, &c);
		json_object_put(o);
	}
	if (bad)
		snprintf(why, len, "%s:%zu: %s", path, n, bad);
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	free(line);
	return !f || !line ? -EINVAL : bad ? -EBADMSG : 0;
}
