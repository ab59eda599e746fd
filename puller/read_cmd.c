// SPDX-License-Identifier: GPL-2.0
/* kstats read: any pinned map, generically, with column names from BTF. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kstats.h"
#include "kstats_reader.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats read [--obj FILE.bpf] --map NAME --pin PATH [--json]\n"
		"Dump any pinned map, one row per entry, with column names taken\n"
		"from the object's BTF (or the map's own BTF without --obj).\n");
}

static void print_rows(const struct kstats_map *m, const int64_t *rows,
		       size_t nrows, bool json)
{
	size_t ncols = kstats_map_ncols(m), r, c;

	if (!json) {
		for (c = 0; c < ncols; c++)
			printf("%s%s", c ? "\t" : "", kstats_map_column(m, c)->name);
		printf("\n");
	}
	for (r = 0; r < nrows; r++) {
		const int64_t *row = rows + r * ncols;

		printf(json ? "{" : "");
		for (c = 0; c < ncols; c++) {
			const struct kstats_column *col = kstats_map_column(m, c);

			if (json)
				printf("%s\"%s\":", c ? "," : "", col->name);
			else if (c)
				printf("\t");
			if (col->size == 8 && !col->is_signed)
				printf("%" PRIu64, (uint64_t)row[c]);
			else
				printf("%" PRId64, row[c]);
		}
		printf(json ? "}\n" : "\n");
	}
}

int cmd_read(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "obj", required_argument, NULL, 'o' },
		{ "map", required_argument, NULL, 'm' },
		{ "pin", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct kstats_map_opts mo = {};
	char err[KSTATS_ERR_LEN] = "";
	struct kstats_map *m = NULL;
	int64_t *rows = NULL;
	bool json = false;
	size_t nrows;
	int c, ret;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': mo.obj_path = optarg; break;
		case 'm': mo.map_name = optarg; break;
		case 'p': mo.pin_path = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return KSTATS_EXIT_OK;
		default: usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (!mo.pin_path || (mo.obj_path && !mo.map_name)) {
		fprintf(stderr, "kstats read: --pin is required, and --map with --obj\n");
		return KSTATS_EXIT_USAGE;
	}
	ret = kstats_map_open(&mo, &m, err, sizeof(err));
	if (!ret) {
		rows = calloc(kstats_map_max_rows(m), kstats_map_ncols(m) * sizeof(*rows));
		ret = rows ? kstats_map_read(m, rows, kstats_map_max_rows(m), &nrows,
					     err, sizeof(err)) : -ENOMEM;
	}
	if (ret) {
		fprintf(stderr, "kstats read: %s\n", *err ? err : strerror(-ret));
		ret = ret == -ENOENT ? KSTATS_EXIT_NOT_LOADED : KSTATS_EXIT_ERROR;
	} else {
		print_rows(m, rows, nrows, json);
	}
	free(rows);
	kstats_map_close(m);
	return ret;
}
