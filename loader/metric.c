// SPDX-License-Identifier: GPL-2.0
/*
 * One object per metric name.  Two objects that declare one metric (two
 * copies of an object, say compaction.bpf and Compaction.bpf) would export
 * it twice: two HELP lines in the Prometheus text, two atoms for the same
 * events.  The first object in sorted order that loads, or that failed but
 * still has a program attached (a failed re-run leaves the previous one
 * counting), claims its metrics; a later one declaring a claimed name is
 * skipped.  Dump and pull keep the same one from the status file
 * (kstats_snapshot_unique: loaded, else attached, else first in order).
 * A corrupt copy, attached to nothing, claims nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"

struct metric_claim {
	char metric[KSTATS_NAME_LEN];
	char obj[KSTATS_NAME_LEN];
};

static const struct metric_claim *claimed(const struct loader_ctx *ctx,
					  const char *metric)
{
	size_t i;

	for (i = 0; i < ctx->nclaims; i++)
		if (kstats_metric_same(ctx->claims[i].metric, metric))
			return &ctx->claims[i];
	return NULL;
}

/* 0, or the object's outcome set: a metric twice, or claimed by another. */
int metrics_check(struct obj_load *l)
{
	const struct kstats_hist_meta *h = l->meta.hists, *o;
	const struct metric_claim *c;
	size_t i;

	for (i = 0; i < l->meta.nhists; i++) {
		for (o = h; o < &h[i] && !kstats_metric_same(o->metric, h[i].metric); o++)
			;
		if (o < &h[i]) {
			set_outcome(l->res, OUT_FAILED_OBJECT, "maps %s and %s both declare "
				    "metric %s; rebuild it with one", o->map, h[i].map,
				    h[i].metric);
			return -EEXIST;
		}
		c = claimed(l->ctx, h[i].metric);
		if (c) {
			set_outcome(l->res, OUT_SKIPPED_DUPLICATE_METRIC, "metric %s is "
				    "exported by object %s, first in sorted order; remove "
				    "%s or disable one of the two", h[i].metric, c->obj,
				    l->res->path);
			return -EEXIST;
		}
	}
	return 0;
}

static bool attached(const struct obj_result *res)
{
	size_t i;

	for (i = 0; i < res->nprogs; i++)
		if (res->progs[i].prog_id)
			return true;
	return false;
}

/* After its turn: a loaded or still attached object's metrics are its own. */
void metrics_claim(struct obj_load *l)
{
	struct metric_claim *grown;
	size_t i;

	if ((l->res->outcome != OUT_LOADED && !attached(l->res)) || !l->meta.nhists)
		return;
	grown = realloc(l->ctx->claims,
			(l->ctx->nclaims + l->meta.nhists) * sizeof(*grown));
	if (!grown)
		return;	/* the next object with a claimed name may load too */
	l->ctx->claims = grown;
	for (i = 0; i < l->meta.nhists; i++) {
		struct metric_claim *c = &grown[l->ctx->nclaims++];

		memcpy(c->metric, l->meta.hists[i].metric, sizeof(c->metric));
		memcpy(c->obj, l->res->name, sizeof(c->obj));
	}
}

void metrics_free(struct loader_ctx *ctx)
{
	free(ctx->claims);
	ctx->claims = NULL;
	ctx->nclaims = 0;
}
