/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kstats pull internals: per-bucket delta arithmetic (delta.c) and the
 * state: its maps and keys in memory, its file's load and save (state.c).
 */
#ifndef KSTATS_PULL_H
#define KSTATS_PULL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf_telemetry.h"

#define PULL_NR_BUCKETS BPF_TELEMETRY_NR_BUCKETS
#define PULL_MAX_KEY_COLS 4
/* Atoms one key may emit per pull when a delta exceeds INT32_MAX. */
#define PULL_MAX_SPLIT 64

/* One key's pending deltas during a pull. */
struct delta_key {
	uint64_t pending[PULL_NR_BUCKETS];
	unsigned int anomalies;	/* buckets that went backwards */
	unsigned int chunks;	/* atoms taken so far */
};

/*
 * Deltas of cur against base (NULL: zero) for counters of width bytes.
 * Narrower counters than 8 bytes wrap, so their delta is modular; a u64
 * counter below its baseline is an anomaly and contributes 0.
 */
void delta_begin(struct delta_key *dk, const uint64_t *cur, const uint64_t *base,
		 unsigned int width);
/*
 * Moves at most INT32_MAX per bucket into buckets.  Returns false once
 * nothing is left (the first call still returns true when only anomalies
 * need reporting) or PULL_MAX_SPLIT atoms were taken.
 */
bool delta_next_atom(struct delta_key *dk, int32_t *buckets);
/* Baseline after the pull: cur minus what was not emitted (carried over). */
void delta_new_base(const struct delta_key *dk, const uint64_t *cur,
		    unsigned int width, uint64_t *base);

/* A pull window on both clocks (CLOCK_BOOTTIME, CLOCK_REALTIME), ns. */
struct window {
	uint64_t start_boot, start_real, end_boot, end_real;
	int64_t clock_step;	/* the wall clock was stepped by this much */
	bool reset;
};

/*
 * The wall clock's step during a window: the realtime change minus the
 * boot-time change, or 0 when within max(1 s, 0.1% of the window) (NTP
 * slews at most 0.05%).  Boot time that went backwards (a forged state,
 * the test clock) counts as a window of length 0.
 */
int64_t window_clock_step(uint64_t start_boot, uint64_t end_boot, uint64_t start_real,
			  uint64_t end_real);
/*
 * Makes w sane across clock steps: boot time never runs backwards (start
 * clamped to end), and a stepped wall clock leaves the window its
 * boot-time length, its realtime start in the clock at its end, and the
 * step in clock_step.
 */
void window_settle(struct window *w);

/* One key of one map: its key columns and the counts already emitted. */
struct pull_key {
	int64_t key[PULL_MAX_KEY_COLS];
	uint64_t base[PULL_NR_BUCKETS];
};

struct pull_map_state {
	char obj[64];
	char map[64];
	uint32_t map_id;
	uint64_t start_boot_ns;		/* where the next window starts */
	uint64_t start_real_ns;
	size_t nkey_cols;
	struct pull_key *keys;		/* sorted by key */
	size_t nkeys;
};

struct pull_state {
	uint64_t pull_id;		/* the pull that wrote this state */
	char boot_id[64];
	struct pull_map_state *maps;
	size_t nmaps;
};

void state_free(struct pull_state *st);
/* Takes ownership of ms's keys, and sorts them. */
int state_add_map(struct pull_state *st, struct pull_map_state *ms);
const struct pull_map_state *state_find_map(const struct pull_state *st,
					    const char *obj, const char *map);
const struct pull_key *state_find_key(const struct pull_map_state *ms,
				      const int64_t *key);
void state_sort_keys(struct pull_map_state *ms);

/* Serialized form: "kernelstats-state VERSION CRC32 LEN\n" + JSON. */
int state_encode(const struct pull_state *st, char **buf, size_t *len);
int state_decode(const char *buf, size_t len, struct pull_state *st,
		 char *err, size_t errlen);
/* -ENOENT when absent, -EBADMSG (reason in err) when corrupt. */
int state_load(const char *path, struct pull_state *st, char *err, size_t errlen);

/* dir/name replaced crash-safely by st (kstats_file_replace()); 0 or -errno. */
int state_save(const char *dir, const char *name, const struct pull_state *st);
/*
 * Renames dir/name to a new name.corrupt-<secs>[-N] (into to) in dir, never
 * over an earlier copy; 0 or -errno.
 */
int state_move_aside(const char *dir, const char *name, char *to, size_t len);

#endif /* KSTATS_PULL_H */
