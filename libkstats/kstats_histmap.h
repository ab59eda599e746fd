/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One read of a pinned histogram map (a log2 accumulator per key), the one
 * path that kstats dump and kstats pull both take.
 */
#ifndef KSTATS_HISTMAP_H
#define KSTATS_HISTMAP_H

#include <stddef.h>
#include <stdint.h>

#include "bpf_telemetry.h"
#include "kstats_reader.h"


struct kstats_histmap {
	struct kstats_map *map;		/* open: columns, BTF, enum names */
	uint32_t map_id;		/* the same before and after the read */
	int64_t *rows;			/* nrows x ncols: key leaves, then buckets */
	size_t nrows, ncols, nkey;
	unsigned int width;		/* bytes per bucket counter */
};

/*
 * Opens the map pinned at pin with the types of obj_path's map (else the
 * map's own BTF, also when the object fails otherwise: it no longer defines
 * the map, its BTF is bad; the object's error is the one reported), checks
 * that the value is BPF_TELEMETRY_NR_BUCKETS unsigned counters of one width, and
 * reads every row.  A map replaced while being read (its pin's id changed)
 * is read again, up to 3 times, then -EAGAIN.  0 or -errno with the reason
 * in err; free with kstats_histmap_free() either way.
 */
int kstats_histmap_read(const char *obj_path, const char *map_name, const char *pin,
			struct kstats_histmap *h, char *err, size_t errlen);
void kstats_histmap_free(struct kstats_histmap *h);

/* Every row of m into *rows (malloc'd, max_rows * ncols); 0 or -errno. */
int kstats_read_rows(struct kstats_map *m, int64_t **rows, size_t *nrows,
		     char *err, size_t errlen);
/* The id of the map pinned at pin; 0 or -errno. */
int kstats_pin_map_id(const char *pin, uint32_t *id);

#endif /* KSTATS_HISTMAP_H */
