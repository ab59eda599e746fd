// SPDX-License-Identifier: GPL-2.0
/*
 * kstats pull: clocks and where a window starts.  A map's first window
 * starts at its creation: the loader status says when, else its programs'
 * load time, else boot.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "kstats_fileio.h"
#include "kstats_hooks.h"
#include "kstats_pins.h"
#include "pull_run.h"
#include "kstats_status.h"

void pull_now(uint64_t *boot, uint64_t *real)
{
	*boot = kstats_clock_ns(CLOCK_BOOTTIME);
	*real = kstats_clock_ns(CLOCK_REALTIME);
	kstats_hook_clock(boot, real);
}

/* Map creation times and loaded objects only: a missing status is no error. */
const struct kstats_status *pull_loader_status(struct pull_run *r)
{
	char err[1024];
	int ret;

	if (!r->status_read) {
		r->status_read = true;
		ret = kstats_status_read(r->o->status_file, &r->status, err, sizeof(err));
		if (ret && ret != -ENOENT)
			fprintf(stderr, "kstats pull: warning: %s; using program load times\n",
				err);
	}
	return &r->status;
}

static bool status_created(struct pull_run *r, uint32_t map_id, uint64_t *boot,
			   uint64_t *real)
{
	const struct kstats_status_map *m = kstats_status_map_by_id(pull_loader_status(r), map_id);

	if (!m || !m->created_boot_ns)
		return false;
	*boot = m->created_boot_ns;
	*real = m->created_real_ns;
	return true;
}

/* Earliest load time (boot-time ns) of a pinned program of obj using map_id. */
static bool prog_created(const char *pin_dir, const char *obj, uint32_t map_id,
			 uint64_t *boot)
{
	char pattern[4096];
	glob_t g;
	size_t i;
	bool found = false;

	if (kstats_pin_path(pattern, sizeof(pattern) - 1, pin_dir, "prog", obj, "*"))
		return false;
	if (glob(pattern, 0, NULL, &g))
		return false;
	for (i = 0; i < g.gl_pathc; i++) {
		LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = BPF_F_RDONLY);
		__u32 ids[64], len, k;
		struct bpf_prog_info info;
		int fd = bpf_obj_get_opts(g.gl_pathv[i], &opts);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		info.nr_map_ids = 64;
		info.map_ids = (__u64)(unsigned long)ids;
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			for (k = 0; k < info.nr_map_ids && k < 64; k++)
				if (ids[k] == map_id && (!found || info.load_time < *boot)) {
					*boot = info.load_time;
					found = true;
				}
		}
		close(fd);
	}
	globfree(&g);
	return found;
}

void pull_creation_time(struct pull_run *r, const struct pull_metric *pm,
			const struct metric_read *mr, uint64_t *boot, uint64_t *real)
{
	const char *how = "the loader status";

	*real = 0;
	if (!status_created(r, mr->hm.map_id, boot, real)) {
		how = "its programs' load time";
		if (!prog_created(r->o->pin_dir, pm->h->obj, mr->hm.map_id, boot)) {
			how = "boot (creation time unknown)";
			*boot = 0;
		}
	}
	if (*boot > mr->end_boot)
		*boot = mr->end_boot;
	if (!*real)
		*real = mr->end_real - (mr->end_boot - *boot);
	if (r->o->verbose)
		fprintf(stderr, "kstats pull: %s/%s: map id %u, window starts at %s\n",
			pm->h->obj, pm->h->map, mr->hm.map_id, how);
}
