// SPDX-License-Identifier: GPL-2.0
/* Per-bucket deltas against the baseline (doc/design.md "Atoms and deltas"). */
#include <string.h>

#include "pull.h"

static uint64_t width_mask(unsigned int width)
{
	return width >= 8 ? UINT64_MAX : (1ull << (width * 8)) - 1;
}

void delta_begin(struct delta_key *dk, const uint64_t *cur, const uint64_t *base,
		 unsigned int width)
{
	uint64_t mask = width_mask(width);
	int i;

	memset(dk, 0, sizeof(*dk));
	for (i = 0; i < PULL_NR_BUCKETS; i++) {
		uint64_t b = base ? base[i] : 0;

		if (width < 8)
			dk->pending[i] = (cur[i] - b) & mask;
		else if (cur[i] >= b)
			dk->pending[i] = cur[i] - b;
		else
			dk->anomalies++;
	}
}

bool delta_next_atom(struct delta_key *dk, int32_t *buckets)
{
	bool any = false;
	int i;

	if (dk->chunks >= PULL_MAX_SPLIT)
		return false;
	for (i = 0; i < PULL_NR_BUCKETS; i++) {
		uint64_t take = dk->pending[i] > INT32_MAX ? INT32_MAX : dk->pending[i];

		buckets[i] = (int32_t)take;
		dk->pending[i] -= take;
		any |= take != 0;
	}
	if (!any && (dk->chunks || !dk->anomalies))
		return false;
	dk->chunks++;
	return true;
}

void delta_new_base(const struct delta_key *dk, const uint64_t *cur,
		    unsigned int width, uint64_t *base)
{
	uint64_t mask = width_mask(width);
	int i;

	/* An anomalous bucket has nothing pending: it re-bases to cur. */
	for (i = 0; i < PULL_NR_BUCKETS; i++)
		base[i] = (cur[i] - dk->pending[i]) & mask;
}

int64_t window_clock_step(uint64_t start_boot, uint64_t end_boot, uint64_t start_real,
			  uint64_t end_real)
{
	uint64_t boot_d = end_boot > start_boot ? end_boot - start_boot : 0;
	int64_t step = (int64_t)(end_real - start_real - boot_d);
	uint64_t slack = boot_d / 1000 > 1000000000ull ? boot_d / 1000 : 1000000000ull;

	return step > (int64_t)slack || step < -(int64_t)slack ? step : 0;
}

void window_settle(struct window *w)
{
	uint64_t boot_d;

	if (w->end_boot < w->start_boot)
		w->start_boot = w->end_boot;
	boot_d = w->end_boot - w->start_boot;
	w->clock_step = window_clock_step(w->start_boot, w->end_boot, w->start_real,
					  w->end_real);
	if (w->clock_step)
		w->start_real = w->end_real > boot_d ? w->end_real - boot_d : 0;
}
