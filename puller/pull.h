/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kstats pull internals: per-bucket delta arithmetic (delta.c), the state
 * file and crash-safe writes (state.c), fault injection for crash tests.
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
/* Takes ownership of ms's keys. */
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

/*
 * dir/name written crash-safely: dir/.name.tmp, fsync, rename, fsync dir.
 * fault names the injection points "<fault>-partial" and "<fault>-temp".
 */
int durable_write(const char *dir, const char *name, const void *buf, size_t len,
		  const char *fault);
/* Like durable_write(), but -EEXIST rather than replace an existing dir/name. */
int durable_create(const char *dir, const char *name, const void *buf, size_t len,
		   const char *fault);
int durable_rename(const char *dir, const char *from, const char *to);
/* Removes dir/name, durably; 0 or -errno. */
int state_drop(const char *dir, const char *name);
/*
 * Renames dir/name to a new dir/name.corrupt-<secs>[-N] (into to), never
 * over an earlier copy; 0 or -errno.
 */
int state_move_aside(const char *dir, const char *name, char *to, size_t len);

/* The last pull id: pulls stop there rather than wrap to 0. */
#define PULL_MAX_ID UINT64_MAX
/* The id after the state's and the newest atoms file's; -EOVERFLOW at the end. */
int pull_next_id(uint64_t state_id, uint64_t atoms_id, uint64_t *next);

/* Why kstats_open_regular() failed, for a message. */
const char *pull_open_error(int err);
/*
 * Creates state_dir and out_dir, or refuses (one line on stderr, -EPERM,
 * nothing created) a dir others could plant files in or redirect.
 */
int pull_check_dirs(const char *state_dir, const char *out_dir);

/* Fault injection for the crash tests: SIGKILL at the named point. */
struct pull_fault_point {
	const char *name;
	const char *needs;	/* what the pull must see to get there */
	const char *where;
};
extern const struct pull_fault_point pull_fault_points[];
extern const size_t pull_nfault_points;
int pull_fault_set(const char *name);
void pull_fault(const char *point);

#endif /* KSTATS_PULL_H */
