// SPDX-License-Identifier: GPL-2.0
/*
 * CmaAllocationLatency from real CMA allocations, made through the CMA
 * debugfs (CONFIG_CMA_DEBUGFS).  Kernels without CMA skip: the loader finds
 * no cma tracepoints and says so.
 */
#include <glob.h>
#include <stdio.h>
#include <string.h>

#include "guest.h"
#include "ktest.h"

#define TEST "cma"
#define OBJ "cma"
#define MAP "cma_alloc_latency_map"
#define FINISH "cma_alloc_finish"
#define PAGES "8"
#define ALLOCS 4

static int alloc_pages(const char *pool_dir, const char *file)
{
	char path[512];
	int i, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", pool_dir, file);
	for (i = 0; !ret && i < ALLOCS; i++)
		ret = lab_write(path, PAGES);
	return ret;
}

static void check_pool(const struct lab *lab, const char *pool_dir)
{
	static const char *const events[] = { "cma/" FINISH, NULL };
	struct hist before, after;
	struct trace tr;
	uint64_t from, grew;
	long finishes;

	if (trace_start(&tr, "cma", events)) {
		lab_fail(TEST, "no tracefs instance for " FINISH);
		return;
	}
	from = ktest_now_ns();
	if (hist_read(lab, OBJ, MAP, &before) || alloc_pages(pool_dir, "alloc") ||
	    hist_read(lab, OBJ, MAP, &after)) {
		lab_fail(TEST, "cannot allocate from %s or read the map", pool_dir);
		goto out;
	}
	alloc_pages(pool_dir, "free");
	finishes = trace_count(&tr, FINISH, -1, from, ktest_now_ns());
	grew = hist_total(&after) - hist_total(&before);
	if (finishes < ALLOCS || grew != (uint64_t)finishes)
		lab_fail(TEST, "grew by %llu for %ld " FINISH " (%d allocations)",
			 (unsigned long long)grew, finishes, ALLOCS);
	else
		lab_pass(TEST, "grew by %llu = tracefs " FINISH " count", (unsigned long long)grew);
out:
	trace_stop(&tr);
}

/* Where the kernel's config came along (/boot/config), say why CMA is absent. */
static void explain_absence(void)
{
	char line[256];
	bool cma = false;
	FILE *f = fopen("/boot/config", "re");

	if (!f)
		return;
	while (!cma && fgets(line, sizeof(line), f))
		cma = !strcmp(line, "CONFIG_CMA=y\n");
	fclose(f);
	if (!cma)
		lab_info("cma: this kernel's config has no CONFIG_CMA=y");
}

void test_cma(const struct lab *lab)
{
	glob_t g;

	explain_absence();
	if (lab_require(lab, TEST, OBJ, MAP))
		return;
	if (glob("/sys/kernel/debug/cma/*/alloc", 0, NULL, &g)) {
		lab_skip(TEST, "CMA present but no /sys/kernel/debug/cma/*/alloc to "
			 "allocate from (CONFIG_CMA_DEBUGFS)");
		return;
	}
	*strrchr(g.gl_pathv[0], '/') = 0;
	check_pool(lab, g.gl_pathv[0]);
	globfree(&g);
}
