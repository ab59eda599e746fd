// SPDX-License-Identifier: GPL-2.0
/*
 * CmaAllocationLatency from real CMA allocations, made through the CMA
 * debugfs (CONFIG_CMA_DEBUGFS) or, without it, by rebinding a virtio-blk
 * device that uses the DMA API (qemu's iommu_platform=on): its virtqueues
 * come from the default CMA area through dma_alloc_coherent.  Each pool's
 * key must grow by the tracefs cma_alloc_finish count of that pool.
 * Kernels without CMA skip: the loader finds no cma tracepoints.
 */
#include <glob.h>
#include <stdio.h>
#include <string.h>

#include "guest.h"
#include "kstats_keys.h"

#define TEST "cma"
#define OBJ "cma"
#define MAP "cma_alloc_latency_map"
#define NAMES "cma_pool_names_map"
#define FINISH "cma_alloc_finish"
#define PAGES "8"
#define ALLOCS 4
#define VIRTIO_BLK "/sys/bus/virtio/drivers/virtio_blk/"
#define MAX_POOLS 8

typedef int (*cma_user)(const char *target);

/* Four allocations of 8 pages from the debugfs pool dir, then their frees. */
static int debugfs_allocs(const char *pool_dir)
{
	char alloc[512], free[512];
	int i, ret = 0;

	snprintf(alloc, sizeof(alloc), "%s/alloc", pool_dir);
	snprintf(free, sizeof(free), "%s/free", pool_dir);
	for (i = 0; !ret && i < ALLOCS; i++)
		ret = lab_write(alloc, PAGES);
	for (i = 0; i < ALLOCS; i++)
		lab_write(free, PAGES);
	return ret;
}

/* Unbinds and binds the virtio device: its probe allocates the queues again. */
static int virtio_rebinds(const char *dev)
{
	int i, ret = 0;

	for (i = 0; !ret && i < 2; i++) {
		ret = lab_write(VIRTIO_BLK "unbind", dev);
		ret = ret ?: lab_write(VIRTIO_BLK "bind", dev);
	}
	return ret;
}

struct pools {
	size_t n;
	char name[MAX_POOLS][KSTATS_NAME_MAX + 1];
	long finishes[MAX_POOLS];
};

/* The pool's slot in p, or p->n when it has none. */
static size_t pool_index(const struct pools *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n && strcmp(p->name[i], name); i++)
		;
	return i;
}

/* "name=reserved pfn=0x... ": one more finish for that pool. */
static void count_finish(const struct trace_event *ev, void *arg)
{
	struct pools *p = arg;
	char name[KSTATS_NAME_MAX + 1];
	size_t i;

	_Static_assert(KSTATS_NAME_MAX == 32, "the width below");
	if (strcmp(ev->name, FINISH) || sscanf(ev->args, "name=%32s", name) != 1)
		return;
	i = pool_index(p, name);
	if (i == MAX_POOLS)
		return;
	if (i == p->n)
		snprintf(p->name[p->n++], sizeof(p->name[0]), "%s", name);
	p->finishes[i]++;
}

/* Every grown key is a pool that tracefs saw, grown by its finish count. */
static void check(const struct lab *lab, const struct hist *delta,
		  const struct pools *p)
{
	char name[KSTATS_NAME_MAX + 1];
	long finishes = 0;
	size_t i, k;

	for (i = 0; i < p->n; i++)
		finishes += p->finishes[i];
	if (!finishes || hist_total(delta) != (uint64_t)finishes) {
		lab_fail(TEST, "grew by %llu for %ld tracefs " FINISH,
			 (unsigned long long)hist_total(delta), finishes);
		return;
	}
	for (k = 0; k < delta->nkeys; k++) {
		if (!hist_key_total(delta, delta->keys[k]))
			continue;
		if (hist_name(lab, OBJ, NAMES, delta->keys[k], name, sizeof(name))) {
			lab_fail(TEST, "pool id %lld has no name", (long long)delta->keys[k]);
			return;
		}
		i = pool_index(p, name);
		if (i == p->n || hist_key_total(delta, delta->keys[k]) != (uint64_t)p->finishes[i]) {
			lab_fail(TEST, "pool '%s' grew by %llu, tracefs saw %ld " FINISH, name,
				 (unsigned long long)hist_key_total(delta, delta->keys[k]),
				 i == p->n ? 0 : p->finishes[i]);
			return;
		}
	}
	lab_pass(TEST, "grew by %ld = tracefs " FINISH " count, per pool: '%s'%s",
		 finishes, p->name[0], p->n > 1 ? " and others" : "");
}

static void measure(const struct lab *lab, cma_user use, const char *target)
{
	static const char *const events[] = { "cma/" FINISH, NULL };
	struct hist before, after, delta;
	struct pools pools = {};
	struct trace tr;
	int ret;

	if (trace_start(&tr, "cma", events)) {
		lab_fail(TEST, "no tracefs instance for " FINISH);
		return;
	}
	if (hist_read(lab, OBJ, MAP, &before)) {
		lab_fail(TEST, "cannot read map_" OBJ "_" MAP);
		goto out;
	}
	ret = use(target);
	if (ret) {
		lab_fail(TEST, "allocating through %s: %s", target, strerror(-ret));
		goto out;
	}
	if (hist_read(lab, OBJ, MAP, &after) || trace_each(&tr, count_finish, &pools))
		lab_fail(TEST, "cannot read the map or the trace after allocating");
	else if (hist_delta(&before, &after, &delta))
		lab_fail(TEST, "a count went down across the allocations");
	else
		check(lab, &delta, &pools);
out:
	trace_stop(&tr);
}

/* The first path matching pattern, cut at its last '/' when cut is set. */
static bool first_match(const char *pattern, bool cut, char *out, size_t len)
{
	glob_t g;

	if (glob(pattern, 0, NULL, &g))
		return false;
	if (cut)
		*strrchr(g.gl_pathv[0], '/') = 0;
	snprintf(out, len, "%s", cut ? g.gl_pathv[0] : strrchr(g.gl_pathv[0], '/') + 1);
	globfree(&g);
	return true;
}

void test_cma(const struct lab *lab)
{
	char target[256];

	if (lab_config("CONFIG_CMA") == 'n') {
		lab_skip(TEST, "CONFIG_CMA is not set in this kernel (so no cma tracepoints)");
		return;
	}
	if (lab_require(lab, TEST, OBJ, MAP))
		return;
	if (first_match("/sys/kernel/debug/cma/*/alloc", true, target, sizeof(target))) {
		lab_info("cma: allocating from debugfs %s", target);
		measure(lab, debugfs_allocs, target);
	} else if (first_match(VIRTIO_BLK "virtio*", false, target, sizeof(target))) {
		lab_info("cma: rebinding virtio-blk %s", target);
		measure(lab, virtio_rebinds, target);
	} else {
		lab_skip(TEST, "CMA present but nothing to allocate from it: no "
			 "/sys/kernel/debug/cma (CONFIG_CMA_DEBUGFS) and no virtio-blk device");
	}
}
