/* SPDX-License-Identifier: GPL-2.0 */
/* What kstats pull, kstats dump --interval and the atoms readers share (state.c): the
 * per-bucket delta, the window on both clocks, rows sorted by their int64 key, and where
 * the pull keeps its state. */
#ifndef KSTATS_DELTA_H
#define KSTATS_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf_telemetry.h"

#define PULL_NR_BUCKETS BPF_TELEMETRY_NR_BUCKETS
#define PULL_DEFAULT_STATE_DIR "/var/lib/kernelstats/state"
#define PULL_STATE_FILE "state"
/* In an atom's bucket field name: <what>_log2_buckets_<unit>. */
#define ATOM_BUCKETS_WORD "_log2_buckets_"

struct delta_key {
	uint64_t pending[PULL_NR_BUCKETS];
	unsigned int anomalies;	/* buckets that went backwards */
	unsigned int chunks;	/* atoms taken so far */
};

/* Narrower counters wrap (modular delta); a u64 below base (NULL: 0) is an anomaly. */
void delta_begin(struct delta_key *dk, const uint64_t *cur, const uint64_t *base,
		 unsigned int width);
/* INT32_MAX per bucket at most; true once for anomalies alone, at most PULL_MAX_SPLIT. */
bool delta_next_atom(struct delta_key *dk, int32_t *buckets);
/* cur minus what was not emitted (carried over). */
void delta_new_base(const struct delta_key *dk, const uint64_t *cur,
		    unsigned int width, uint64_t *base);

/* A pull window on both clocks (CLOCK_BOOTTIME, CLOCK_REALTIME), ns. */
struct window {
	uint64_t start_boot, start_real, end_boot, end_real;
	int64_t clock_step;	/* the wall clock was stepped by this much */
	bool reset;
};

/* Realtime minus boot-time change, 0 within max(1 s, 0.1%) (NTP slews <= 0.05%). */
int64_t window_clock_step(uint64_t start_boot, uint64_t end_boot, uint64_t start_real,
			  uint64_t end_real);
/* A stepped wall clock: the realtime start is end minus the boot-time length. */
void window_settle(struct window *w);

/* Rows whose first member is an int64 key: sorted by, and found by, its first nkey columns. */
void keyed_sort(void *rows, size_t n, size_t size, size_t nkey);
void *keyed_find(const void *rows, size_t n, size_t size, size_t nkey, const int64_t *key);

#endif /* KSTATS_DELTA_H */
