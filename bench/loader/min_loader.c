// SPDX-License-Identifier: GPL-2.0
/*
 * The loader's fair baseline for bench/loader/run.sh: the least libbpf code
 * that does kstats-loader's load work for objects it already chose, with
 * the programs it chose.  Per object: open, load those programs, attach
 * them, pin maps, links and programs under kstats-loader's pin names.
 * No metadata, no gating, no attach-point checks, no status file.
 *
 * Usage: min_loader PIN_DIR OBJ.bpf:SEC[,SEC...]...
 *   SEC is a program's section name with '/' as '_' (tp_btf_mm_compaction_begin),
 *   as in kstats-loader's prog_<obj>_<sec> pins.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

static char pin_dir[256];

static void section_key(const struct bpf_program *p, char *out, size_t len)
{
	char *c;

	snprintf(out, len, "%s", bpf_program__section_name(p));
	for (c = out; *c; c++)
		if (*c == '/')
			*c = '_';
}

static int wanted(const char *list, const char *key)
{
	size_t n = strlen(key);
	const char *p;

	for (p = list; (p = strstr(p, key)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

static int pin_maps(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m;
	char pin[512];

	bpf_object__for_each_map(m, obj) {
		if (bpf_map__is_internal(m))
			continue;
		snprintf(pin, sizeof(pin), "%s/map_%s_%s", pin_dir, name, bpf_map__name(m));
		if (bpf_map__set_pin_path(m, pin))
			return -1;
	}
	return 0;
}

static int attach_and_pin(struct bpf_object *obj, const char *name)
{
	struct bpf_program *p;
	struct bpf_link *link;
	char pin[1024], key[128];

	bpf_object__for_each_program(p, obj) {
		if (!bpf_program__autoload(p))
			continue;
		link = bpf_program__attach(p);
		if (!link)
			return -1;
		section_key(p, key, sizeof(key));
		snprintf(pin, sizeof(pin), "%s/link_%s_%s", pin_dir, name, bpf_program__name(p));
		if (bpf_link__pin(link, pin))
			return -1;
		bpf_link__destroy(link);
		snprintf(pin, sizeof(pin), "%s/prog_%s_%s", pin_dir, name, key);
		if (bpf_program__pin(p, pin))
			return -1;
	}
	return 0;
}

static int load_one(char *arg)
{
	char *list = strchr(arg, ':'), name[128], key[128], *dot;
	struct bpf_object *obj;
	struct bpf_program *p;
	int ret = -1;

	if (!list)
		return -1;
	*list++ = 0;
	snprintf(name, sizeof(name), "%s", basename(arg));
	dot = strrchr(name, '.');
	if (dot)
		*dot = 0;
	obj = bpf_object__open_file(arg, NULL);
	if (!obj)
		return -1;
	bpf_object__for_each_program(p, obj) {
		section_key(p, key, sizeof(key));
		bpf_program__set_autoload(p, wanted(list, key));
	}
	if (!pin_maps(obj, name) && !bpf_object__load(obj))
		ret = attach_and_pin(obj, name);
	bpf_object__close(obj);
	return ret;
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 3) {
		fprintf(stderr, "Usage: min_loader PIN_DIR OBJ.bpf:SEC[,SEC...]...\n");
		return 2;
	}
	snprintf(pin_dir, sizeof(pin_dir), "%s", argv[1]);
	for (i = 2; i < argc; i++)
		if (load_one(argv[i])) {
			fprintf(stderr, "min_loader: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
	return 0;
}
