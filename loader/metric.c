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
 *
 * Objects load on several threads, so an object waits, before its check,
 * for each earlier one that declares one of its metrics (or has not read
 * its metadata yet) to finish, and only earlier objects' claims count:
 * the outcome is that of a sequential run.  Objects are taken in order, so
 * every earlier one is being loaded and waits only on earlier ones still.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"

struct metric_claim {
	char metric[KSTATS_NAME_LEN];
	char obj[KSTATS_NAME_LEN];
	size_t idx;			/* of the object, in the run's order */
};

struct metric_turn {
	const struct kstats_objmeta *meta;	/* read, and the object not done */
	bool done;
};

int metrics_init(struct loader_ctx *ctx, size_t nobjs)
{
	ctx->turns = calloc(nobjs ? nobjs : 1, sizeof(*ctx->turns));
	ctx->nturns = ctx->turns ? nobjs : 0;
	return ctx->turns ? 0 : -ENOMEM;
}

/* The first claim of an object before idx, as a sequential run saw it. */
static const struct metric_claim *claimed(const struct loader_ctx *ctx,
					  const char *metric, size_t idx)
{
	const struct metric_claim *c, *first = NULL;

	for (c = ctx->claims; c < ctx->claims + ctx->nclaims; c++)
		if (c->idx < idx && (!first || c->idx < first->idx) &&
		    kstats_metric_same(c->metric, metric))
			first = c;
	return first;
}

static bool share_metric(const struct kstats_objmeta *a, const struct kstats_objmeta *b)
{
	size_t i, j;

	for (i = 0; i < a->nhists; i++)
		for (j = 0; j < b->nhists; j++)
			if (kstats_metric_same(a->hists[i].metric, b->hists[j].metric))
				return true;
	return false;
}

/* Under ctx->lock: until no earlier object can still claim l's metrics. */
static void wait_earlier(struct obj_load *l)
{
	struct loader_ctx *ctx = l->ctx;
	struct metric_turn *t;
	size_t i;

	for (i = 0; i < l->idx && i < ctx->nturns; i++) {
		t = &ctx->turns[i];
		while (!t->done && (!t->meta || share_metric(t->meta, &l->meta)))
			pthread_cond_wait(&ctx->turn_done, &ctx->lock);
	}
}

static void set_turn(struct obj_load *l, const struct kstats_objmeta *meta, bool done)
{
	if (l->idx >= l->ctx->nturns)
		return;
	l->ctx->turns[l->idx].meta = meta;
	l->ctx->turns[l->idx].done = done;
	pthread_cond_broadcast(&l->ctx->turn_done);
}

/* Its metadata is read: later objects that share no metric go on. */
void metrics_known(struct obj_load *l)
{
	pthread_mutex_lock(&l->ctx->lock);
	set_turn(l, &l->meta, false);
	pthread_mutex_unlock(&l->ctx->lock);
}

/* 0, or the object's outcome set: a metric twice, or claimed by another. */
static int check(struct obj_load *l)
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
		c = claimed(l->ctx, h[i].metric, l->idx);
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

int metrics_check(struct obj_load *l)
{
	int ret;

	pthread_mutex_lock(&l->ctx->lock);
	wait_earlier(l);
	ret = check(l);
	pthread_mutex_unlock(&l->ctx->lock);
	return ret;
}

static bool attached(const struct obj_result *res)
{
	size_t i;

	for (i = 0; i < res->nprogs; i++)
		if (res->progs[i].prog_id)
			return true;
	return false;
}

static void claim(struct obj_load *l)
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
		c->idx = l->idx;
	}
}

/* After its turn: a loaded or still attached object's metrics are its own. */
void metrics_claim(struct obj_load *l)
{
	pthread_mutex_lock(&l->ctx->lock);
	claim(l);
	set_turn(l, NULL, true);
	pthread_mutex_unlock(&l->ctx->lock);
}

void metrics_free(struct loader_ctx *ctx)
{
	free(ctx->claims);
	ctx->claims = NULL;
	ctx->nclaims = 0;
	free(ctx->turns);
	ctx->turns = NULL;
	ctx->nturns = 0;
}
