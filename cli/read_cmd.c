// SPDX-License-Identifier: GPL-2.0
/* kstats read: any pinned map, generically, with column names from BTF. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "fields.h"
#include "kstats.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats read --obj FILE.bpf --map NAME [--pin PATH | --pin-dir DIR]\n"
		"                   [--per-cpu] [--json]\n"
		"       kstats read --pin PATH [--per-cpu] [--json]\n"
		"Dump any pinned map, a row per entry sorted by key, columns named from the\n"
		"object's BTF (the map's own when the object is missing or does not match).\n"
		"Enums show names, bools true/false, char arrays text (other bytes \\xNN).\n\n"
		"  --obj FILE.bpf  object the map was loaded from\n"
		"  --map NAME      the map's name in the object\n"
		"  --pin PATH      the pinned map (default: DIR/map_<obj>_<NAME>)\n"
		"  --pin-dir DIR   pin directory (default: " KSTATS_DEFAULT_PIN_DIR ")\n"
		"  --per-cpu       per-CPU maps: a row per CPU instead of the sum\n"
		"  --json          a JSON array with one object per row\n\n"
		"Exit status: 0 ok, 1 runtime error, 2 bad usage, 3 map not pinned,\n"
		"5 permission denied.\n");
}

/* A value field named like a key field: both get "key." and "value.". */
static void qualify_clashes(struct kstats_fields *fs)
{
	struct kstats_field *k, *v;
	char name[KSTATS_PATH_LEN];

	for (k = fs->f; k < fs->f + fs->n; k++) {
		if (!k->c->in_key)
			continue;
		for (v = fs->f; v < fs->f + fs->n; v++) {
			if (v->c->in_key || strcmp(k->name, v->name))
				continue;
			snprintf(name, sizeof(name), "key.%s", k->name);
			snprintf(k->name, sizeof(k->name), "%s", name);
			snprintf(name, sizeof(name), "value.%s", v->name);
			snprintf(v->name, sizeof(v->name), "%s", name);
			break;
		}
	}
}

/* A JSON array, or tab-separated under a header line, strings quoted so an empty one shows. */
static int print_rows(const struct kstats_fields *fs, const int64_t *rows, size_t nrows,
		      bool json)
{
	size_t ncols = kstats_map_ncols(fs->m), r, i;
	json_object *obj, *v;

	for (i = 0; !json && i < fs->n; i++)
		printf("%s%s", i ? "\t" : "", fs->f[i].name);
	printf(json ? "[" : "\n");
	for (r = 0; r < nrows; r++) {
		obj = json_object_new_object();
		if (!obj)
			return -ENOMEM;
		for (i = 0; i < fs->n; i++) {
			const char *q = fs->f[i].is_string ? "\"" : "";

			v = kstats_field_json(fs, i, rows + r * ncols);
			if (!json)
				printf("%s%s%s%s", i ? "\t" : "", q, v ? json_object_get_string(v) : "",
				       q);
			json_object_object_add(obj, fs->f[i].name, v);
		}
		printf("%s\n%s", json && r ? "," : "", json ? json_object_to_json_string_ext(obj,
		       JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) : "");
		json_object_put(obj);
	}
	if (json)
		printf("%s]\n", nrows ? "\n" : "");
	return 0;
}

static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct kstats_map *m = arg;
	const int64_t *x = a, *y = b;
	size_t i;

	for (i = 0; i < kstats_map_nkey_cols(m); i++) {
		if (x[i] == y[i])
			continue;
		if (kstats_column_is_u64(kstats_map_column(m, i)))
			return (uint64_t)x[i] < (uint64_t)y[i] ? -1 : 1;
		return x[i] < y[i] ? -1 : 1;
	}
	return 0;
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
	char pin[4096], obj[256], err[KSTATS_ERR_LEN] = "";
	struct kstats_map_opts mo = {};
	struct kstats_map *m = NULL;
	struct kstats_fields fs = {};
	int64_t *rows = NULL;
	bool json = false;
	size_t nrows;
	int c, ret;

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
	if (!mo.pin_path && (kstats_obj_name(mo.obj_path, obj, sizeof(obj)) ||
			     kstats_pin_path(pin, sizeof(pin), pin_dir, "map", obj, mo.map_name))) {
		fprintf(stderr, "kstats read: %s: name too long; pass --pin\n", mo.obj_path);
		return KSTATS_EXIT_USAGE;
	}
	mo.pin_path = mo.pin_path ?: pin;
	ret = kstats_map_open(&mo, &m, err, sizeof(err));
	if (ret)
		goto out;
	if (*kstats_map_source_note(m))
		fprintf(stderr, "kstats read: note: %s\n", kstats_map_source_note(m));
	ret = kstats_fields_build(&fs, m) ?: kstats_read_rows(m, &rows, &nrows, err, sizeof(err));
	if (ret)
		goto out;
	qualify_clashes(&fs);
	qsort_r(rows, nrows, kstats_map_ncols(m) * sizeof(*rows), cmp_rows, m);
	ret = print_rows(&fs, rows, nrows, json);
out:
	if (!*err && ret)
		snprintf(err, sizeof(err), "%s", strerror(-ret));
	kstats_add_fix(err, sizeof(err), ret);
	if (ret)
		fprintf(stderr, "kstats read: %s%s\n", err,
			ret == -ENOENT ? "; " KSTATS_FIX_LOAD ", or pass --pin" : "");
	kstats_fields_free(&fs);
	free(rows);
	kstats_map_close(m);
	/* A map the object lacks, a --pin that is no map, an --obj that is no BPF object. */
	if (ret == -ESRCH || ret == -EMEDIUMTYPE || ret == -ENOEXEC)
		return KSTATS_EXIT_USAGE;
	return kstats_exit_code(ret);
}
