// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bpf_telemetry.h"
#include "kstats.h"

#define BAR_WIDTH 40

static void print_bar(FILE *f, uint64_t count, uint64_t max)
{
	char bar[BAR_WIDTH + 1];
	unsigned int n = max ? (unsigned int)((long double)count * BAR_WIDTH / max) : 0;

	memset(bar, '*', n);
	memset(bar + n, ' ', BAR_WIDTH - n);
	bar[BAR_WIDTH] = 0;
	fprintf(f, "|%s|", bar);
}

void print_log2_hist(FILE *f, const int64_t *buckets, unsigned int unit)
{
	const char *label = unit == KSTATS_UNIT_BYTES ? "bytes" : "usecs";
	uint64_t max = 0;
	int i, last = -1;

	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++) {
		if ((uint64_t)buckets[i] > max)
			max = (uint64_t)buckets[i];
		if (buckets[i])
			last = i;
	}
	fprintf(f, "%10s%-20s: count    distribution\n", "", label);
	for (i = 0; i <= last; i++) {
		uint64_t lo = i ? 1ull << i : 0, hi = (1ull << (i + 1)) - 1;

		if (i == BPF_TELEMETRY_NR_BUCKETS - 1)
			fprintf(f, "%13" PRIu64 " -> %-13s: %-8" PRIu64 " ", lo, "inf",
				(uint64_t)buckets[i]);
		else
			fprintf(f, "%13" PRIu64 " -> %-13" PRIu64 ": %-8" PRIu64 " ", lo, hi,
				(uint64_t)buckets[i]);
		print_bar(f, (uint64_t)buckets[i], max);
		fputc('\n', f);
	}
}
