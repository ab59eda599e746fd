/* SPDX-License-Identifier: GPL-2.0 */
/* One object's load in progress, shared by object.c, variant.c and publish.c. */
#ifndef KSTATS_LOADER_OBJECT_H
#define KSTATS_LOADER_OBJECT_H

#include "kstats_objmeta.h"
#include "loader.h"

struct prog_plan {
	const struct kstats_prog_meta *meta;
	struct bpf_program *prog;	/* in the current open of the object */
	bool in_range;
	bool available;
	bool rejected;			/* failed to load in an earlier attempt */
	bool deferred;			/* available unchecked: the load checks it */
	bool chosen;
	char why[256];			/* why not available */
	char *log;			/* verifier log of the current attempt */
	int kept_fd;			/* identical program already attached */
};

struct obj_load {
	struct loader_ctx *ctx;
	size_t idx;			/* in the run's sorted order */
	struct obj_result *res;
	void *elf;			/* the file's bytes, read once */
	size_t elf_len;
	int untrusted;			/* check_trusted_fd() of the file read */
	struct kstats_objmeta meta;
	struct bpf_object *obj;
	struct prog_plan *pl;		/* parallel to res->progs */
	__u64 created_boot_ns;
	__u64 created_real_ns;
	char libbpf_err[512];		/* libbpf's first warning of a step */
};

/* variant.c: programs, their attach points, one variant per attach point. */
/* Larger than any object a build produces; bounds what one file costs. */
#define OBJECT_MAX_BYTES (64u << 20)

/* probe.c */
struct bpf_object *obj_open_mem(const char *name, const void *elf, size_t len);
int probe_open(struct obj_load *l);

int init_progs(struct obj_load *l);
enum outcome choose_variants(struct obj_load *l);
bool check_deferred(struct obj_load *l);

/* metric.c: one object per metric name. */
void metrics_known(struct obj_load *l);
int metrics_check(struct obj_load *l);
void metrics_claim(struct obj_load *l);

/* publish.c: maps, programs and links pinned all or nothing. */
void publish(struct obj_load *l);

#endif /* KSTATS_LOADER_OBJECT_H */
