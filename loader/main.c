// SPDX-License-Identifier: GPL-2.0
/*
 * kstats-loader: loads every *.bpf in the object directory, pins maps and
 * links under the pin directory, and prints one line per object.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kstats_pins.h"
#include "loader.h"
#include "trust.h"

#define DEFAULT_OBJ_DIR "build/bpf"

static bool verbose;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats-loader [OPTIONS]\n"
		"Load every *.bpf object in the object directory, pin its maps and\n"
		"links, and print one line per object.\n\n"
		"  --obj-dir DIR   objects to load (default: " DEFAULT_OBJ_DIR ")\n"
		"  --pin-dir DIR   where to pin (default: " KSTATS_DEFAULT_PIN_DIR ")\n"
		"  -v, --verbose   show libbpf's log\n"
		"  -h, --help      this text\n\n"
		"Exit status: 0 when every object loaded or was skipped cleanly,\n"
		"1 when an object failed, 2 on bad usage or an unusable environment.\n");
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || (!verbose && level == LIBBPF_INFO))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int bpf_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && !strcmp(d->d_name + n - 4, ".bpf");
}

static int prepare_pin_dir(const char *pin_dir)
{
	char err[512];
	int ret = kstats_ensure_bpffs(pin_dir, err, sizeof(err));

	if (ret) {
		fprintf(stderr, "kstats-loader: %s\n", err);
		return ret;
	}
	if (mkdir(pin_dir, 0750) && errno != EEXIST) {
		ret = -errno;
		fprintf(stderr, "kstats-loader: cannot create %s: %s\n", pin_dir,
			strerror(errno));
		return ret;
	}
	ret = apply_owner(pin_dir, "root", "kstats", 0750);
	if (ret)
		fprintf(stderr, "kstats-loader: %s: %s\n", pin_dir, strerror(-ret));
	return ret;
}

static int load_all(struct loader_ctx *ctx)
{
	struct dirent **ents;
	struct obj_result res;
	char path[4096];
	int n, i, failed = 0;

	if (check_trusted(ctx->obj_dir, res.reason, sizeof(res.reason)) == -EPERM) {
		fprintf(stderr, "kstats-loader: untrusted object directory: %s\n", res.reason);
		return 2;
	}
	n = scandir(ctx->obj_dir, &ents, bpf_filter, alphasort);
	if (n < 0) {
		fprintf(stderr, "kstats-loader: cannot read object directory %s: %s; "
			"pass --obj-dir\n", ctx->obj_dir, strerror(errno));
		return 2;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", ctx->obj_dir, ents[i]->d_name);
		load_object(ctx, path, &res);
		if (res.outcome == OBJ_LOADED)
			printf("%-16s %s: %u programs attached, %u maps pinned\n", res.name,
			       obj_outcome_str(res.outcome), res.progs_attached,
			       res.maps_pinned);
		else
			printf("%-16s %s: %s\n", res.name, obj_outcome_str(res.outcome),
			       res.reason);
		failed |= res.outcome >= OBJ_FAILED_OBJECT;
		free(ents[i]);
	}
	free(ents);
	if (!n)
		fprintf(stderr, "kstats-loader: no *.bpf objects in %s\n", ctx->obj_dir);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "obj-dir", required_argument, NULL, 'o' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct loader_ctx ctx = { .obj_dir = DEFAULT_OBJ_DIR,
				  .pin_dir = KSTATS_DEFAULT_PIN_DIR };
	int c, ret;

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': ctx.obj_dir = optarg; break;
		case 'p': ctx.pin_dir = optarg; break;
		case 'v': verbose = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kstats-loader: unexpected argument '%s'; see --help\n",
			argv[optind]);
		return 2;
	}
	libbpf_set_print(libbpf_log);
	if (prepare_pin_dir(ctx.pin_dir))
		return 2;
	ctx.vmlinux_btf = btf__load_vmlinux_btf();
	if (!ctx.vmlinux_btf)
		fprintf(stderr, "kstats-loader: warning: no vmlinux BTF; tp_btf "
			"programs fall back to raw_tp\n");
	ret = load_all(&ctx);
	btf__free(ctx.vmlinux_btf);
	return ret;
}
