// SPDX-License-Identifier: GPL-2.0
/* Atom ids, maps and builders of the built-in metrics (include/kstats_keys.h). */
#include <stdio.h>

#include "registry.h"

#define SET_BUCKETS(m, field, s) do {					\
	(m)->n_##field = PULL_NR_BUCKETS;				\
	(m)->field = (s)->buckets;					\
} while (0)

#define SET_PAYLOAD(s, CASE, member, m) do {				\
	(s)->atom.payload_case = KERNELSTATS__ATOM__PAYLOAD_##CASE;	\
	(s)->atom.member = (m);						\
} while (0)

/* The name field, or NULL (absent) when the id has no name. */
static char *slot_name(struct atom_slot *s, const char *name)
{
	if (!*name)
		return NULL;
	snprintf(s->name, sizeof(s->name), "%s", name);
	return s->name;
}

static void build_kswapd(struct atom_slot *s, const int64_t *key, const char *name)
{
	Kernelstats__KswapdLatency *m = &s->msg.kswapd;

	(void)name;
	kernelstats__kswapd_latency__init(m);
	m->has_node_id = 1;
	m->node_id = (uint32_t)key[0];
	SET_BUCKETS(m, latency_log2_buckets_usec, s);
	SET_PAYLOAD(s, KSWAPD_LATENCY, kswapd_latency, m);
}

static void build_direct_reclaim(struct atom_slot *s, const int64_t *key,
				 const char *name)
{
	Kernelstats__DirectReclaimLatency *m = &s->msg.direct_reclaim;

	(void)name;
	kernelstats__direct_reclaim_latency__init(m);
	m->has_process_state = 1;
	m->process_state = (Kernelstats__ProcessState)key[0];
	SET_BUCKETS(m, latency_log2_buckets_usec, s);
	SET_PAYLOAD(s, DIRECT_RECLAIM_LATENCY, direct_reclaim_latency, m);
}

static void build_compaction(struct atom_slot *s, const int64_t *key,
			     const char *name)
{
	Kernelstats__CompactionDuration *m = &s->msg.compaction;

	(void)key;
	(void)name;
	kernelstats__compaction_duration__init(m);
	SET_BUCKETS(m, duration_log2_buckets_usec, s);
	SET_PAYLOAD(s, COMPACTION_DURATION, compaction_duration, m);
}

static void build_cma(struct atom_slot *s, const int64_t *key, const char *name)
{
	Kernelstats__CmaAllocationLatency *m = &s->msg.cma;

	kernelstats__cma_allocation_latency__init(m);
	m->has_pool_id = 1;
	m->pool_id = (uint32_t)key[0];
	m->pool_name = slot_name(s, name);
	SET_BUCKETS(m, latency_log2_buckets_usec, s);
	SET_PAYLOAD(s, CMA_ALLOCATION_LATENCY, cma_allocation_latency, m);
}

static void build_dmabuf(struct atom_slot *s, const int64_t *key, const char *name)
{
	Kernelstats__DmabufRequestSizes *m = &s->msg.dmabuf;

	kernelstats__dmabuf_request_sizes__init(m);
	m->has_exporter_id = 1;
	m->exporter_id = (uint32_t)key[0];
	m->exporter_name = slot_name(s, name);
	SET_BUCKETS(m, size_log2_buckets_bytes, s);
	SET_PAYLOAD(s, DMABUF_REQUEST_SIZES, dmabuf_request_sizes, m);
}

static void build_suspend_resume(struct atom_slot *s, const int64_t *key,
				 const char *name)
{
	Kernelstats__SuspendResumeLatency *m = &s->msg.suspend_resume;

	(void)name;
	kernelstats__suspend_resume_latency__init(m);
	m->has_phase = 1;
	m->phase = (Kernelstats__SuspendPhase)key[0];
	SET_BUCKETS(m, latency_log2_buckets_usec, s);
	SET_PAYLOAD(s, SUSPEND_RESUME_LATENCY, suspend_resume_latency, m);
}

const struct pull_metric pull_metrics[] = {
	{ 100001, "kswapd", "kswapd_latency_map", NULL, build_kswapd },
	{ 100002, "directReclaim", "direct_reclaim_latency_map", NULL,
	  build_direct_reclaim },
	{ 100003, "compaction", "compaction_duration_map", NULL, build_compaction },
	{ 100004, "cma", "cma_alloc_latency_map", "cma_pool_names_map", build_cma },
	{ 100005, "dmabuf", "dmabuf_request_sizes_map", "dmabuf_exporter_names_map",
	  build_dmabuf },
	{ 100006, "suspendResume", "suspend_resume_latency_map", NULL,
	  build_suspend_resume },
};

const size_t pull_nmetrics = sizeof(pull_metrics) / sizeof(pull_metrics[0]);
