// SPDX-License-Identifier: GPL-2.0
/* Loads one object: variant choice, load, pin maps, attach and pin links. */
#include <errno.h>
#include <glob.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "loader.h"
#include "trust.h"

const char *obj_outcome_str(enum obj_outcome o)
{
	static const char *const names[] = {
		[OBJ_LOADED] = "LOADED",
		[OBJ_SKIPPED_NO_ATTACH_POINT] = "SKIPPED_NO_ATTACH_POINT",
		[OBJ_FAILED_OBJECT] = "FAILED_OBJECT",
		[OBJ_FAILED_VERIFIER] = "FAILED_VERIFIER",
		[OBJ_FAILED_PIN] = "FAILED_PIN",
	};

	return names[o];
}

static int resolve_owner(const char *uid, const char *gid, uid_t *u, gid_t *g)
{
	static bool warned;
	struct passwd *pw = getpwnam(uid);
	struct group *gr = getgrnam(gid);

	*u = pw ? pw->pw_uid : 0;
	*g = gr ? gr->gr_gid : 0;
	if ((!pw || !gr) && !warned) {
		warned = true;
		/* Without the group only root can read: safe, so warn and go on. */
		fprintf(stderr, "kstats-loader: warning: %s%s%s unknown, using root; "
			"run make install (creates group kstats)\n",
			pw ? "" : uid, !pw && !gr ? " and " : "", gr ? "" : gid);
	}
	return 0;
}

int apply_owner(const char *path, const char *uid, const char *gid,
		unsigned int mode)
{
	uid_t u;
	gid_t g;

	resolve_owner(uid, gid, &u, &g);
	if (chown(path, u, g) || chmod(path, mode))
		return -errno;
	return 0;
}

static bool tracefs_has_event(const char *tp)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events",
	};
	char pattern[256];
	glob_t g;
	size_t i;
	int found;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		if (access(roots[i], F_OK))
			continue;
		snprintf(pattern, sizeof(pattern), "%s/*/%s", roots[i], tp);
		found = !glob(pattern, GLOB_NOSORT, NULL, &g);
		if (found)
			globfree(&g);
		return found;
	}
	return true;	/* no tracefs to ask: let attach decide */
}

/* Stopgap until the loader branch: no kprobe PMU and no kprobe_events. */
static bool kernel_has_kprobes(void)
{
	return !access("/sys/bus/event_source/devices/kprobe", F_OK) ||
	       !access("/sys/kernel/tracing/kprobe_events", F_OK) ||
	       !access("/sys/kernel/debug/tracing/kprobe_events", F_OK);
}

static bool attach_point_exists(struct loader_ctx *ctx,
				const struct kstats_prog_meta *pm)
{
	char name[KSTATS_NAME_LEN + 16];

	switch (pm->variant) {
	case KSTATS_VARIANT_TP_BTF:
		if (!ctx->vmlinux_btf)
			return false;
		snprintf(name, sizeof(name), "btf_trace_%s", pm->attach);
		return btf__find_by_name_kind(ctx->vmlinux_btf, name, BTF_KIND_TYPEDEF) > 0;
	case KSTATS_VARIANT_RAW_TP:
		return tracefs_has_event(pm->attach);
	case KSTATS_VARIANT_KPROBE:
		return kernel_has_kprobes();
	default:
		return true;
	}
}

/*
 * Of the variants sharing one attach point, keeps the most preferred one
 * whose attach point exists and turns the others' autoload off.
 */
static int choose_variants(struct loader_ctx *ctx, struct bpf_object *obj,
			   const struct kstats_objmeta *meta, struct obj_result *res)
{
	struct bpf_program *prog, *other;
	const struct kstats_prog_meta *pm, *om;

	bpf_object__for_each_program(prog, obj) {
		pm = kstats_objmeta_prog(meta, bpf_program__name(prog));
		if (!pm) {
			snprintf(res->reason, sizeof(res->reason),
				 "program %s has no DEFINE_BPF_PROG metadata",
				 bpf_program__name(prog));
			return -EINVAL;
		}
		bool best = attach_point_exists(ctx, pm);

		bpf_object__for_each_program(other, obj) {
			om = kstats_objmeta_prog(meta, bpf_program__name(other));
			if (best && om && other != prog && !strcmp(om->attach, pm->attach) &&
			    om->variant < pm->variant && attach_point_exists(ctx, om))
				best = false;
		}
		bpf_program__set_autoload(prog, best);
	}
	bpf_object__for_each_program(prog, obj) {
		pm = kstats_objmeta_prog(meta, bpf_program__name(prog));
		bool any = false;

		bpf_object__for_each_program(other, obj) {
			om = kstats_objmeta_prog(meta, bpf_program__name(other));
			if (!strcmp(om->attach, pm->attach))
				any |= bpf_program__autoload(other);
		}
		if (!any) {
			snprintf(res->reason, sizeof(res->reason),
				 "no attach point for %s in this kernel", pm->attach);
			return -ENOENT;
		}
	}
	return 0;
}

static int set_map_pins(struct loader_ctx *ctx, struct bpf_object *obj,
			struct obj_result *res)
{
	char path[4096];
	struct bpf_map *map;
	int ret;

	bpf_object__for_each_map(map, obj) {
		ret = kstats_pin_path(path, sizeof(path), ctx->pin_dir, "map",
				      res->name, bpf_map__name(map));
		if (!ret)
			ret = bpf_map__set_pin_path(map, path);
		if (ret)
			return ret;
	}
	return 0;
}

static int own_maps(struct bpf_object *obj, const struct kstats_objmeta *meta,
		    struct obj_result *res)
{
	const struct kstats_map_meta *mm;
	struct bpf_map *map;
	int ret;

	bpf_object__for_each_map(map, obj) {
		mm = kstats_objmeta_map(meta, bpf_map__name(map));
		ret = mm ? apply_owner(bpf_map__pin_path(map), mm->uid, mm->gid, mm->mode)
			 : apply_owner(bpf_map__pin_path(map), "root", "root", 0600);
		if (ret) {
			snprintf(res->reason, sizeof(res->reason), "%s: %s",
				 bpf_map__pin_path(map), strerror(-ret));
			return ret;
		}
		res->maps_pinned++;
	}
	return 0;
}

/* Attaches prog and pins its link; an existing link pin is left attached. */
static int attach_prog(struct loader_ctx *ctx, struct bpf_program *prog,
		       const struct kstats_prog_meta *pm, struct obj_result *res)
{
	char link_path[4096], prog_path[4096];
	struct bpf_link *link;
	int ret;

	ret = kstats_pin_path(link_path, sizeof(link_path), ctx->pin_dir, "link",
			      res->name, bpf_program__name(prog));
	if (!ret)
		ret = kstats_pin_path(prog_path, sizeof(prog_path), ctx->pin_dir,
				      "prog", res->name, bpf_program__section_name(prog));
	if (ret)
		return ret;
	if (!access(link_path, F_OK)) {
		res->progs_attached++;
		return 0;
	}
	link = bpf_program__attach(prog);
	if (!link) {
		ret = -errno;
		snprintf(res->reason, sizeof(res->reason), "attach %s: %s",
			 bpf_program__name(prog), strerror(errno));
		return ret;
	}
	unlink(prog_path);
	ret = bpf_link__pin(link, link_path);
	if (!ret)
		ret = bpf_program__pin(prog, prog_path);
	if (!ret)
		ret = apply_owner(link_path, pm->uid, pm->gid, pm->mode);
	if (!ret)
		ret = apply_owner(prog_path, pm->uid, pm->gid, pm->mode);
	if (ret)
		snprintf(res->reason, sizeof(res->reason), "pin %s: %s",
			 bpf_program__name(prog), strerror(-ret));
	else
		res->progs_attached++;
	bpf_link__destroy(link);	/* the pin keeps it attached */
	return ret;
}

static int attach_all(struct loader_ctx *ctx, struct bpf_object *obj,
		      const struct kstats_objmeta *meta, struct obj_result *res)
{
	struct bpf_program *prog;
	int ret;

	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;
		ret = attach_prog(ctx, prog,
				  kstats_objmeta_prog(meta, bpf_program__name(prog)), res);
		if (ret)
			return ret;
	}
	return 0;
}

int load_object(struct loader_ctx *ctx, const char *path, struct obj_result *res)
{
	struct kstats_objmeta meta;
	struct bpf_object *obj = NULL;
	char err[512];
	int ret;

	memset(res, 0, sizeof(*res));
	if (kstats_obj_name(path, res->name, sizeof(res->name)))
		snprintf(res->name, sizeof(res->name), "?");
	res->outcome = OBJ_FAILED_OBJECT;
	if (check_trusted(path, res->reason, sizeof(res->reason)))
		return -EPERM;
	ret = kstats_objmeta_read(path, &meta, err, sizeof(err));
	if (ret) {
		snprintf(res->reason, sizeof(res->reason), "%s", err);
		return ret;
	}
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		ret = -errno;
		snprintf(res->reason, sizeof(res->reason), "libbpf cannot open: %s",
			 strerror(errno));
		goto out;
	}
	ret = choose_variants(ctx, obj, &meta, res);
	if (ret) {
		if (ret == -ENOENT)
			res->outcome = OBJ_SKIPPED_NO_ATTACH_POINT;
		goto out;
	}
	ret = set_map_pins(ctx, obj, res);
	if (ret) {
		snprintf(res->reason, sizeof(res->reason), "pin path: %s", strerror(-ret));
		goto out;
	}
	res->outcome = OBJ_FAILED_VERIFIER;
	ret = bpf_object__load(obj);
	if (ret) {
		snprintf(res->reason, sizeof(res->reason), "load: %s", strerror(-ret));
		goto out;
	}
	res->outcome = OBJ_FAILED_PIN;
	ret = own_maps(obj, &meta, res);
	if (!ret)
		ret = attach_all(ctx, obj, &meta, res);
	if (!ret)
		res->outcome = OBJ_LOADED;
out:
	bpf_object__close(obj);
	kstats_objmeta_free(&meta);
	return ret;
}
