/* SPDX-License-Identifier: GPL-2.0 */
/* kstats dump's histograms: every object's .kstats.hists entries, their series
 * read from the maps, and their outputs (render.c). */
#ifndef KSTATS_HIST_H
#define KSTATS_HIST_H

#include <time.h>

#include "bpf_telemetry.h"
#include "kstats_reader.h"
#include "kstats_tool.h"

#define KSTATS_MAX_LABELS 8
#define KSTATS_LABEL_LEN 64
#define KSTATS_OBJ_LEN 64
#define LAST_BUCKET (BPF_TELEMETRY_NR_BUCKETS - 1)

/* One key of one histogram map. */
struct kstats_series {
	int64_t key[KSTATS_MAX_LABELS];			/* raw key leaves */
	char value[KSTATS_MAX_LABELS][KSTATS_LABEL_LEN];	/* resolved labels */
	uint64_t buckets[BPF_TELEMETRY_NR_BUCKETS];
};

struct kstats_hist {
	char metric[KSTATS_LABEL_LEN];
	char obj[KSTATS_OBJ_LEN];
	char obj_path[4096];
	char map[KSTATS_LABEL_LEN];
	char names_map[KSTATS_LABEL_LEN];
	char key_enum[KSTATS_LABEL_LEN];	/* enum naming an int key */
	unsigned int unit;			/* enum kstats_unit */
	bool selected;				/* read by kstats_snapshot_read */
	bool loaded;				/* its map is pinned and was read */
	int read_err;				/* -errno: pinned (or unknown) but unread */
	bool detached;				/* the loader status says: no program */
	struct kstats_histmap hm;		/* kept open between reads */
	struct kstats_names *names;		/* names_map's, kept open; NULL: none */
	uint32_t labels_of;			/* the map id the labels are of; 0: none */
	size_t nlabels;				/* 0: one system-wide series */
	char label[KSTATS_MAX_LABELS][KSTATS_LABEL_LEN];	/* label names */
	uint32_t enum_type[KSTATS_MAX_LABELS];	/* BTF enum of a label, or 0 */
	size_t enum_prefix[KSTATS_MAX_LABELS];	/* its enumerators' common prefix */
	struct kstats_series *series;		/* sorted by key */
	size_t nseries;
};

struct kstats_snapshot {
	struct kstats_hist *hists;
	size_t nhists;
	struct timespec realtime, boottime;	/* when it was read */
	bool is_delta;			/* the window is [since_*, realtime/boottime] */
	struct timespec since_realtime, since_boottime;
	struct timespec pulled;		/* kstats pull's last commit; 0: none seen */
	struct timespec shipped;	/* kstats ship's last success; 0: none seen */
	long ship_waiting;		/* atoms not acknowledged yet */
};

/* fn for each object of obj_dir, its metadata read once; a file that is no object is
 * skipped, with a warning on stderr if tool names the command. */
struct kstats_objmeta;
int kstats_each_object(const char *obj_dir, const char *tool,
		       int (*fn)(void *ctx, const char *path, const char *obj,
				 const struct kstats_objmeta *meta), void *ctx);
/* Catalog of every histogram in obj_dir's *.bpf objects (no map reads). */
int kstats_snapshot_init(struct kstats_snapshot *s, const char *obj_dir, char *err, size_t errlen);
/* One histogram per metric name (kstats_metric_same): the one st (or NULL) calls LOADED,
 * else one still attached, else the first; "kstats <tool>: warning: ..." for each dropped. */
void kstats_snapshot_unique(struct kstats_snapshot *s, const struct kstats_status *st,
			    const char *tool);
/* Selects metrics by name (case-insensitive), after _unique; none selects all. */
int kstats_snapshot_select(struct kstats_snapshot *s, char *const *names,
			   int n, char *err, size_t errlen);
/* Marks detached objects; decodes maps with the objects as the loader of st loaded them. */
void kstats_snapshot_as_loaded(struct kstats_snapshot *s, const struct kstats_status *st,
			       const char *status_file, const char *pin_dir);
/* Reads the selected pinned maps (unpinned: !loaded, unreadable: read_err and named on
 * stderr); returns the first error, the others are read all the same. */
int kstats_snapshot_read(struct kstats_snapshot *s, const char *pin_dir);
int kstats_snapshot_dup(struct kstats_snapshot *dst, const struct kstats_snapshot *src);
/* cur - prev with the pull's rule (state.c): a recreated map counts from zero, a counter
 * narrower than u64 wraps, a u64 bucket below prev shows 0, warned about on stderr. */
void kstats_snapshot_subtract(struct kstats_snapshot *cur, const struct kstats_snapshot *prev);
void kstats_snapshot_free(struct kstats_snapshot *s);
/* h's map under pin_dir into h->hm, its handle kept: 0, 1 not pinned (the handle let go),
 * or -errno with err. */
int kstats_hist_fetch(struct kstats_hist *h, const char *pin_dir, char *err, size_t errlen);

/* Labels (labels.c): names and values of a histogram map's keys. */
struct kstats_names;
int kstats_labels_init(struct kstats_hist *h, const struct kstats_map *m, char *err, size_t errlen);
/* The labels of h from its object alone, in *m (the caller closes it). */
int kstats_labels_declared(struct kstats_hist *h, struct kstats_map **m, char *err, size_t errlen);
/* h's id -> struct kstats_name dictionary into h->names (NULL if unpinned),
 * its map kept open for the next read. */
int kstats_hist_names(struct kstats_hist *h, const char *pin_dir, char *err, size_t errlen);
const char *kstats_names_find(const struct kstats_names *names, int64_t id);
void kstats_names_free(struct kstats_names *names);
void kstats_labels_resolve(const struct kstats_hist *h, struct kstats_series *s);
/* A label that holds a NUMA node id: shown as "node N". */
bool kstats_label_is_node(const char *name);

struct kstats_hist_stats {
	uint64_t count;			/* saturates at UINT64_MAX */
	double p50, p99;		/* base unit (us or bytes) */
	bool p50_open, p99_open;	/* in the open last bucket: a lower bound */
	double total_min, total_max;	/* total_max < 0: unbounded */
};

void kstats_hist_stats(const uint64_t *buckets, struct kstats_hist_stats *st);
uint64_t kstats_add_sat(uint64_t a, uint64_t b);
/* Bucket i holds [lo, hi]; hi of the last bucket is UINT64_MAX. */
uint64_t kstats_bucket_lo(unsigned int i);
uint64_t kstats_bucket_hi(unsigned int i);
/* "2.048ms", "512µs", "4KiB": 4 significant digits, unit-scaled. */
void kstats_fmt_value(char *buf, size_t len, double v, const struct kstats_unit_info *u);
/* Bucket i's bounds [lo, hi) as kstats_fmt_value writes them; the last's hi is inf. */
void kstats_fmt_bucket(char *lo, char *hi, size_t len, unsigned int i,
		       const struct kstats_unit_info *u, const char *inf);
/* An id this build does not know gets the plain count unit. */
const struct kstats_unit_info *kstats_unit_or_count(unsigned int id);
/* Columns a UTF-8 string takes. */
size_t kstats_display_width(const char *s);
/* s padded with spaces to width columns, flush right or left. */
void kstats_put_padded(FILE *f, const char *s, size_t width, bool right);

/* Outputs: 0 or -errno. */
struct kstats_render_opts {
	bool all;		/* every bucket and every zero series */
	const struct kstats_status *status;	/* why metrics are not loaded; or NULL */
};

int kstats_render_ascii(FILE *f, const struct kstats_snapshot *s,
			const struct kstats_render_opts *o);
int kstats_render_json(FILE *f, const struct kstats_snapshot *s,
		       const struct kstats_render_opts *o, bool pretty);
/* prom.c: Prometheus text 0.0.4, or OpenMetrics 1.0 (with # EOF). */
int kstats_render_prometheus(FILE *f, const struct kstats_snapshot *s, bool openmetrics);
/* Prometheus rules (YAML) for the histograms, labels from kstats_labels_declared. */
int kstats_render_rules(FILE *f, const struct kstats_snapshot *s);

#endif /* KSTATS_HIST_H */
