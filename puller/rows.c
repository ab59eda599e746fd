// SPDX-License-Identifier: GPL-2.0
/* kstats report --rows: JSON-each-row rows (ClickHouse's JSONEachRow, as kstats atoms
 * --format json-each-row and the fleet queries write them) into the page. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "atoms.h"
#include "kstats_fileio.h"
#include "pull.h"

#define ROW_MAX_LINE (64 * 1024)
#define HOST_SLOTS (2 * ROWS_MAX_HOSTS)
#define FNV_BASIS 14695981039346656037ull
#define FNV_PRIME 1099511628211ull

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
	c->day = end && !*end ? (int32_t)(timegm(&tm) / 86400) : -1;
	if (c->day < 0 || c->day > UINT16_MAX)	/* ClickHouse's Date: 1970 to 2149 */
		return "day is not YYYY-MM-DD from 1970-01-01 to 2149-06-06";
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

void days_load_rows(struct days *d, const char *path)
{
	int fd = strcmp(path, "-") ? kstats_open_regular(path, O_RDONLY, 0) : dup(STDIN_FILENO);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	char *line = malloc(ROW_MAX_LINE), key[200];
	uint64_t *hosts = calloc(HOST_SLOTS, sizeof(*hosts));
	struct json_object *o, *v;
	const char *bad = NULL, *s;
	struct atom_shape shape;
	struct day_cell c;
	size_t n = 0, i;
	uint64_t h;

	d->by_rows = true;
	if (!f || !line)
		days_bad(d, "%s: %s; pass a regular file of rows, or - for a pipe", path,
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
		if (o && !bad) {
			days_add(d, shape.msg, strcmp(key, " ") ? key : "", shape.unit, &c);
			d->rows++;
		}
		/* Its host counted once: a 64-bit hash of the name in one of HOST_SLOTS. */
		if (o && !bad && hosts && json_object_object_get_ex(o, "host", &v)) {
			for (h = FNV_BASIS, s = json_object_get_string(v); s && *s; s++)
				h = (h ^ (unsigned char)*s) * FNV_PRIME;
			h |= 1;		/* 0: a free slot */
			for (i = h % HOST_SLOTS; hosts[i] && hosts[i] != h;)
				i = (i + 1) % HOST_SLOTS;
			if (!hosts[i] && d->hosts < ROWS_MAX_HOSTS) {
				hosts[i] = h;
				d->hosts++;
			}
		}
		json_object_put(o);
	}
	if (bad)
		days_bad(d, "%s:%zu: %s", path, n, bad);
	days_over(d, path, "rows", "narrow the query or use --since");
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	free(line);
	free(hosts);
}
