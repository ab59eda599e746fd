// SPDX-License-Identifier: GPL-2.0
/* kstats report --rows: JSON-each-row rows (ClickHouse's JSONEachRow, as kstats atoms
 * --format json-each-row and the fleet queries write them) into the page. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "atoms.h"
#include "kstats_fileio.h"
#include "pull.h"

#define ROW_MAX_LINE (64 * 1024)

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
