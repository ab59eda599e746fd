// SPDX-License-Identifier: GPL-2.0
/* kstats read: any pinned map, generically, with column names from BTF. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "hist.h"
#include "kstats.h"
#include "kstats_escape.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "kstats_reader.h"

/* What is shown: one column, or a char array as one string. */
struct field {
	char name[KSTATS_PATH_LEN];
	size_t col, len;
	bool is_string;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats read --obj FILE.bpf --map NAME [--pin PATH | --pin-dir DIR]\n"
		"                   [--per-cpu] [--json]\n"
		"       kstats read --pin PATH [--per-cpu] [--json]\n"
		"Dump any pinned map, one row per entry sorted by key, with columns named\n"
		"from the object's BTF, or from the map's own BTF when the object is\n"
		"missing or does not match the map.  Enums show their names, char\n"
		"arrays their text.\n\n"
		"  --obj FILE.bpf  object the map was loaded from\n"
		"  --map NAME      the map's name in the object\n"
		"  --pin PATH      the pinned map (default: DIR/map_<obj>_<NAME>)\n"
		"  --pin-dir DIR   pin directory (default: " KSTATS_DEFAULT_PIN_DIR ")\n"
		"  --per-cpu       per-CPU maps: a row per CPU instead of the sum\n"
		"  --json          a JSON array with one object per row\n\n"
		"Exit status: 0 ok, 1 runtime error, 2 bad usage, 3 map not pinned,\n"
		"5 permission denied.\n");
}

/* "name[0]", "name[1]", ... as one string field named "name". */
static size_t char_run(const struct kstats_map *m, size_t c, size_t end,
		       struct field *f)
{
	const struct kstats_column *first = kstats_map_column(m, c);
	const char *br = strrchr(first->name, '[');
	size_t base = br ? (size_t)(br - first->name) : 0, n;
	char want[KSTATS_PATH_LEN + 16];

	if (!br || strcmp(br, "[0]") || first->kind != KSTATS_LEAF_CHAR)
		return 0;
	for (n = 0; c + n < end; n++) {
		const struct kstats_column *col = kstats_map_column(m, c + n);

		snprintf(want, sizeof(want), "%.*s[%zu]", (int)base, first->name, n);
		if (col->kind != KSTATS_LEAF_CHAR || strcmp(col->name, want) ||
		    col->offset != first->offset + n)
			break;
	}
	snprintf(f->name, sizeof(f->name), "%.*s", (int)base, first->name);
	f->col = c;
	f->len = n;
	f->is_string = true;
	return n;
}

/* A value field named like a key field: both get "key." and "value.". */
static void qualify_clashes(const struct kstats_map *m, struct field *fields, size_t n)
{
	char name[KSTATS_PATH_LEN];
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (!kstats_map_column(m, fields[i].col)->in_key)
			continue;
		for (j = 0; j < n; j++) {
			if (kstats_map_column(m, fields[j].col)->in_key ||
			    strcmp(fields[i].name, fields[j].name))
				continue;
			snprintf(name, sizeof(name), "key.%s", fields[i].name);
			snprintf(fields[i].name, sizeof(fields[i].name), "%s", name);
			snprintf(name, sizeof(name), "value.%s", fields[j].name);
			snprintf(fields[j].name, sizeof(fields[j].name), "%s", name);
			break;
		}
	}
}

static struct field *build_fields(const struct kstats_map *m, size_t *nfields)
{
	size_t ncols = kstats_map_ncols(m), nkey = kstats_map_nkey_cols(m), c = 0, n = 0;
	struct field *fields = calloc(ncols ?: 1, sizeof(*fields));

	while (fields && c < ncols) {
		struct field *f = &fields[n++];
		/* A string never spans key and value. */
		size_t run = char_run(m, c, c < nkey ? nkey : ncols, f);

		if (!run) {
			snprintf(f->name, sizeof(f->name), "%s", kstats_map_column(m, c)->name);
			f->col = c;
			f->len = 1;
			run = 1;
		}
		c += run;
	}
	*nfields = n;
	if (fields)
		qualify_clashes(m, fields, n);
	return fields;
}

/* Up to the first NUL, escaped (kstats_escape); malloc'ed. */
static char *string_of(const int64_t *row, const struct field *f)
{
	char *raw = malloc(f->len + 1), *s = malloc(KSTATS_ESCAPED_SIZE(f->len));
	size_t n;

	if (raw && s) {
		for (n = 0; n < f->len && row[f->col + n]; n++)
			raw[n] = (char)row[f->col + n];
		kstats_escape(s, KSTATS_ESCAPED_SIZE(f->len), raw, n);
	} else {
		free(s);
		s = NULL;
	}
	free(raw);
	return s;
}

static bool is_unsigned64(const struct kstats_column *c)
{
	return c->size == 8 && !c->is_signed;
}

static json_object *field_json(const struct kstats_map *m, const int64_t *row,
			       const struct field *f)
{
	const struct kstats_column *c = kstats_map_column(m, f->col);
	const char *e = kstats_column_enum_name(m, c, row[f->col]);
	json_object *j;
	char *s;

	if (f->is_string) {
		s = string_of(row, f);
		j = json_object_new_string(s ? s : "");
		free(s);
		return j;
	}
	if (e)
		return json_object_new_string(e);
	if (is_unsigned64(c))
		return json_object_new_uint64((uint64_t)row[f->col]);
	return json_object_new_int64(row[f->col]);
}

static void print_field(const struct kstats_map *m, const int64_t *row,
			const struct field *f)
{
	const struct kstats_column *c = kstats_map_column(m, f->col);
	const char *e = kstats_column_enum_name(m, c, row[f->col]);
	char *s;

	if (f->is_string) {
		s = string_of(row, f);
		printf("\"%s\"", s ? s : "");
		free(s);
	} else if (e) {
		printf("%s", e);
	} else if (is_unsigned64(c)) {
		printf("%" PRIu64, (uint64_t)row[f->col]);
	} else {
		printf("%" PRId64, row[f->col]);
	}
}

static int print_json(const struct kstats_map *m, const int64_t *rows, size_t nrows,
		      const struct field *fields, size_t nfields)
{
	size_t ncols = kstats_map_ncols(m), r, i;

	printf("[");
	for (r = 0; r < nrows; r++) {
		json_object *obj = json_object_new_object();

		if (!obj)
			return -ENOMEM;
		for (i = 0; i < nfields; i++)
			json_object_object_add(obj, fields[i].name,
					       field_json(m, rows + r * ncols, &fields[i]));
		printf("%s\n%s", r ? "," : "",
		       json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(obj);
	}
	printf("%s]\n", nrows ? "\n" : "");
	return 0;
}

static void print_text(const struct kstats_map *m, const int64_t *rows, size_t nrows,
		       const struct field *fields, size_t nfields)
{
	size_t ncols = kstats_map_ncols(m), r, i;

	for (i = 0; i < nfields; i++)
		printf("%s%s", i ? "\t" : "", fields[i].name);
	printf("\n");
	for (r = 0; r < nrows; r++) {
		for (i = 0; i < nfields; i++) {
			printf("%s", i ? "\t" : "");
			print_field(m, rows + r * ncols, &fields[i]);
		}
		printf("\n");
	}
}

static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct kstats_map *m = arg;
	const int64_t *x = a, *y = b;
	size_t i;

	for (i = 0; i < kstats_map_nkey_cols(m); i++) {
		const struct kstats_column *c = kstats_map_column(m, i);

		if (x[i] == y[i])
			continue;
		if (is_unsigned64(c))
			return (uint64_t)x[i] < (uint64_t)y[i] ? -1 : 1;
		return x[i] < y[i] ? -1 : 1;
	}
	return 0;
}

/*
 * A map name the object lacks, a --pin that is no map, an --obj that is no
 * BPF object: usage errors; the rest as every command.
 */
static int exit_code(int ret)
{
	return ret == -ESRCH || ret == -EMEDIUMTYPE || ret == -ENOEXEC ?
	       KSTATS_EXIT_USAGE : kstats_exit_code(ret);
}

static int read_and_print(const struct kstats_map_opts *mo, bool json)
{
	char err[KSTATS_ERR_LEN] = "";
	struct kstats_map *m = NULL;
	struct field *fields = NULL;
	int64_t *rows = NULL;
	size_t nrows, nfields, ncols;
	int ret;

	ret = kstats_map_open(mo, &m, err, sizeof(err));
	if (ret)
		goto out;
	if (*kstats_map_source_note(m))
		fprintf(stderr, "kstats read: note: %s\n", kstats_map_source_note(m));
	ncols = kstats_map_ncols(m);
	fields = build_fields(m, &nfields);
	ret = fields ? kstats_read_rows(m, &rows, &nrows, err, sizeof(err)) : -ENOMEM;
	if (ret)
		goto out;
	qsort_r(rows, nrows, ncols * sizeof(*rows), cmp_rows, m);
	if (json)
		ret = print_json(m, rows, nrows, fields, nfields);
	else
		print_text(m, rows, nrows, fields, nfields);
out:
	if (!*err && ret)
		snprintf(err, sizeof(err), "%s", strerror(-ret));
	kstats_add_fix(err, sizeof(err), ret);
	if (ret)
		fprintf(stderr, "kstats read: %s%s\n", err,
			ret == -ENOENT ? "; run kstats-loader, or pass --pin" : "");
	free(fields);
	free(rows);
	kstats_map_close(m);
	return ret ? exit_code(ret) : KSTATS_EXIT_OK;
}

int cmd_read(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "obj", required_argument, NULL, 'o' },
		{ "map", required_argument, NULL, 'm' },
		{ "pin", required_argument, NULL, 'p' },
		{ "pin-dir", required_argument, NULL, 'd' },
		{ "per-cpu", no_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *pin_dir = KSTATS_DEFAULT_PIN_DIR;
	struct kstats_map_opts mo = {};
	char pin[4096], obj[256];
	bool json = false;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': mo.obj_path = optarg; break;
		case 'm': mo.map_name = optarg; break;
		case 'p': mo.pin_path = optarg; break;
		case 'd': pin_dir = optarg; break;
		case 'c': mo.per_cpu_rows = true; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return KSTATS_EXIT_OK;
		default: usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (optind < argc || (mo.obj_path && !mo.map_name) || (!mo.obj_path && !mo.pin_path)) {
		fprintf(stderr, "kstats read: pass --obj FILE.bpf with --map NAME, or --pin PATH; "
			"see kstats read --help\n");
		return KSTATS_EXIT_USAGE;
	}
	if (!mo.pin_path) {
		if (kstats_obj_name(mo.obj_path, obj, sizeof(obj)) ||
		    kstats_pin_path(pin, sizeof(pin), pin_dir, "map", obj, mo.map_name)) {
			fprintf(stderr, "kstats read: %s: name too long; pass --pin\n",
				mo.obj_path);
			return KSTATS_EXIT_USAGE;
		}
		mo.pin_path = pin;
	}
	return read_and_print(&mo, json);
}
