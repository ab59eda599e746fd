// SPDX-License-Identifier: GPL-2.0
/* kstats dump: every histogram map of every object, as log2 histograms. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf_telemetry.h"
#include "kstats.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "kstats_reader.h"

struct dump_opts {
	const char *obj_dir;
	const char *pin_dir;
	unsigned int shown, missing;
};

static void print_key(const struct kstats_map *m, const int64_t *row)
{
	size_t i, nkey = kstats_map_nkey_cols(m);

	for (i = 0; i < nkey; i++) {
		const struct kstats_column *c = kstats_map_column(m, i);
		const char *e = kstats_column_enum_name(m, c, row[i]);

		if (e)
			printf(" %s=%s", c->name, e);
		else
			printf(" %s=%" PRId64, c->name, row[i]);
	}
}

static int dump_hist(struct dump_opts *o, const char *obj_path, const char *obj,
		     const struct kstats_hist_meta *h)
{
	struct kstats_map_opts mo = { .obj_path = obj_path, .map_name = h->map };
	char pin[4096], err[KSTATS_ERR_LEN] = "";
	struct kstats_map *m = NULL;
	int64_t *rows = NULL;
	size_t nrows, i, ncols;
	int ret;

	ret = kstats_pin_path(pin, sizeof(pin), o->pin_dir, "map", obj, h->map);
	if (ret)
		return ret;
	if (access(pin, F_OK)) {
		o->missing++;
		return 0;
	}
	mo.pin_path = pin;
	ret = kstats_map_open(&mo, &m, err, sizeof(err));
	if (!ret) {
		rows = calloc(kstats_map_max_rows(m), kstats_map_ncols(m) * sizeof(*rows));
		ret = rows ? kstats_map_read(m, rows, kstats_map_max_rows(m), &nrows,
					     err, sizeof(err)) : -ENOMEM;
	}
	if (ret) {
		fprintf(stderr, "kstats: %s: %s\n", h->metric, *err ? err : strerror(-ret));
		goto out;
	}
	ncols = kstats_map_ncols(m);
	if (ncols - kstats_map_nkey_cols(m) != BPF_TELEMETRY_NR_BUCKETS) {
		fprintf(stderr, "kstats: %s: value is not a %d-bucket accumulator\n",
			h->metric, BPF_TELEMETRY_NR_BUCKETS);
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < nrows; i++) {
		const int64_t *row = rows + i * ncols;

		printf("\n%s", h->metric);
		if (kstats_map_max_rows(m) > 1)
			print_key(m, row);
		printf("\n");
		print_log2_hist(stdout, row + kstats_map_nkey_cols(m), h->unit);
	}
	if (!nrows)
		printf("\n%s: no events yet\n", h->metric);
	o->shown++;
out:
	free(rows);
	kstats_map_close(m);
	return ret;
}

static int dump_object(struct dump_opts *o, const char *file)
{
	struct kstats_objmeta meta;
	char path[4096], obj[64], err[512];
	size_t i;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", o->obj_dir, file);
	if (kstats_obj_name(path, obj, sizeof(obj)))
		return -EINVAL;
	ret = kstats_objmeta_read(path, &meta, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "kstats: %s\n", err);
		return ret;
	}
	for (i = 0; i < meta.nhists && !ret; i++)
		ret = dump_hist(o, path, obj, &meta.hists[i]);
	kstats_objmeta_free(&meta);
	return ret;
}

static int bpf_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && !strcmp(d->d_name + n - 4, ".bpf");
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats dump [--obj-dir DIR] [--pin-dir DIR]\n"
		"Print every loaded histogram as a log2 histogram.\n\n"
		"  --obj-dir DIR   objects (default: " KSTATS_DEFAULT_OBJ_DIR ")\n"
		"  --pin-dir DIR   pinned maps (default: " KSTATS_DEFAULT_PIN_DIR ")\n");
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "obj-dir", required_argument, NULL, 'o' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct dump_opts o = { KSTATS_DEFAULT_OBJ_DIR, KSTATS_DEFAULT_PIN_DIR, 0, 0 };
	struct dirent **ents;
	int c, n, i, failed = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': o.obj_dir = optarg; break;
		case 'p': o.pin_dir = optarg; break;
		case 'h': usage(stdout); return KSTATS_EXIT_OK;
		default: usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	n = scandir(o.obj_dir, &ents, bpf_filter, alphasort);
	if (n < 0) {
		fprintf(stderr, "kstats: cannot read object directory %s: %s; pass --obj-dir\n",
			o.obj_dir, strerror(errno));
		return KSTATS_EXIT_USAGE;
	}
	for (i = 0; i < n; i++) {
		failed |= dump_object(&o, ents[i]->d_name) != 0;
		free(ents[i]);
	}
	free(ents);
	if (!o.shown && !failed) {
		fprintf(stderr, "kstats: no metric is loaded under %s; run kstats-loader\n",
			o.pin_dir);
		return KSTATS_EXIT_NOT_LOADED;
	}
	return failed ? KSTATS_EXIT_ERROR : KSTATS_EXIT_OK;
}
