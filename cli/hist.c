// SPDX-License-Identifier: GPL-2.0
/* Histogram arithmetic and unit formatting shared by every renderer. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hist.h"
#include "kstats_meta.h"

#define LAST_BUCKET (BPF_TELEMETRY_NR_BUCKETS - 1)

uint64_t kstats_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t kstats_bucket_lo(unsigned int i)
{
	return i ? 1ull << i : 0;
}

uint64_t kstats_bucket_hi(unsigned int i)
{
	return i >= LAST_BUCKET ? UINT64_MAX : (1ull << (i + 1)) - 1;
}

/*
 * The value at rank q * count, interpolated linearly inside its bucket's
 * [lo, hi + 1) as Prometheus' histogram_quantile() does.  A rank in the
 * open last bucket gives that bucket's lower bound.
 */
static double quantile(const uint64_t *b, uint64_t count, double q, bool *open)
{
	double rank = q * (double)count, cum = 0;
	unsigned int i;

	*open = false;
	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++) {
		double lo = (double)kstats_bucket_lo(i);
		double width = i ? lo : 2;

		if (!b[i] || cum + (double)b[i] < rank) {
			cum += (double)b[i];
			continue;
		}
		if (i == LAST_BUCKET) {
			*open = true;
			return lo;
		}
		return lo + width * (rank - cum) / (double)b[i];
	}
	return 0;
}

void kstats_hist_stats(const uint64_t *b, struct kstats_hist_stats *st)
{
	unsigned int i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++) {
		st->count = kstats_add_sat(st->count, b[i]);
		st->total_min += (double)b[i] * (double)kstats_bucket_lo(i);
		if (i < LAST_BUCKET)
			st->total_max += (double)b[i] * (double)kstats_bucket_hi(i);
	}
	if (b[LAST_BUCKET])
		st->total_max = -1;
	if (!st->count)
		return;
	st->p50 = quantile(b, st->count, 0.50, &st->p50_open);
	st->p99 = quantile(b, st->count, 0.99, &st->p99_open);
}

const char *kstats_unit_name(unsigned int unit)
{
	return kstats_unit_or_count(unit)->name;
}

void kstats_fmt_value(char *buf, size_t len, double v, unsigned int unit)
{
	const struct kstats_unit_info *u = kstats_unit_or_count(unit);
	const char *const *names = u->steps;
	size_t n = u->nsteps, i = 0;
	double step = u->step;

	/* Round first, so 999.96µs prints as 1ms, not as 1000µs. */
	while (i + 1 < n) {
		char probe[32];
		double shown;

		snprintf(probe, sizeof(probe), "%.4g", v);
		sscanf(probe, "%lf", &shown);
		if (shown < step)
			break;
		v /= step;
		i++;
	}
	snprintf(buf, len, "%.4g%s", v, names[i]);
}

size_t kstats_display_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

void kstats_put_padded(FILE *f, const char *s, size_t width, bool right)
{
	size_t w = kstats_display_width(s);

	if (!right)
		fputs(s, f);
	for (; w < width; w++)
		fputc(' ', f);
	if (right)
		fputs(s, f);
}
