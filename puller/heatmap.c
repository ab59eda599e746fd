// SPDX-License-Identifier: GPL-2.0
/* kstats atoms --heatmap: per metric and key, the last days that fit 80 columns. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atoms.h"

#define HEAT_LABEL_W 10
#define CELL_W 3
#define SHOWN_DAYS ((80 - HEAT_LABEL_W) / CELL_W)

static const char *const shades[] = { " ", "░", "▒", "▓", "█" };
/* xterm-256 colours near viridis, dark to bright. */
static const unsigned char colours[] = { 54, 60, 24, 30, 36, 71, 149, 226 };

static void heat_series(const struct days *d, const struct day_series *s, bool colour)
{
	int32_t from = d->last - SHOWN_DAYS + 1 > d->first ? d->last - SHOWN_DAYS + 1 : d->first;
	uint64_t all[DAYS_NB] = {}, max = 0, rows[DAYS_NB] = {};
	struct kstats_hist_stats st;
	char p50[32], p99[32], label[32], date[16];
	const struct day_cell *c;
	bool marks = false;
	size_t i;
	unsigned int l;
	int32_t day;
	int b;

	for (i = 0; i < s->ndays; i++)
		for (b = 0; b < DAYS_NB; b++) {
			all[b] += s->days[i].b[b];
			if (s->days[i].day >= from) {
				rows[b] += s->days[i].b[b];
				max = s->days[i].b[b] > max ? s->days[i].b[b] : max;
				marks |= s->days[i].reset || s->days[i].anomalies;
			}
		}
	kstats_hist_stats(all, &st);
	kstats_fmt_value(p50, sizeof(p50), st.p50, s->unit);
	kstats_fmt_value(p99, sizeof(p99), st.p99, s->unit);
	printf("\n%s%s\n%*s%zu days, %" PRIu64 " events, p50 ~%s, p99 ~%s\n",
	       s->msg->short_name, s->key, HEAT_LABEL_W, "", s->ndays, s->events, p50, p99);
	printf("%*s", HEAT_LABEL_W, "");
	for (day = from; day <= d->last; day++) {
		days_fmt(date, sizeof(date), day);
		if (day == from || (!strcmp(date + 8, "01") && day + 2 <= d->last)) {
			printf(" %-8.7s", date);
			day += 2;
		} else {
			printf("%*s", CELL_W, "");
		}
	}
	printf("\n%*s", HEAT_LABEL_W, "");
	for (day = from; day <= d->last; day++) {
		days_fmt(date, sizeof(date), day);
		printf(" %s", date + 8);
	}
	printf("\n");
	for (b = DAYS_NB - 1; b >= 0; b--) {
		if (!rows[b])
			continue;
		kstats_fmt_value(label, sizeof(label), (double)kstats_bucket_lo(b), s->unit);
		kstats_put_padded(stdout, label, HEAT_LABEL_W - 1, true);
		for (day = from; day <= d->last; day++) {
			c = days_cell(s, day);
			l = days_level(c ? c->b[b] : 0, max, colour ? sizeof(colours) : 4);
			if (!d->pulled[day - d->first])
				printf("  ·");
			else if (colour && l)
				printf(" \033[38;5;%um██\033[0m", colours[l - 1]);
			else
				printf(" %s%s", shades[l], shades[l]);
		}
		printf("\n");
	}
	if (marks) {
		printf("%*s", HEAT_LABEL_W - 1, "reset/!");
		for (day = from; day <= d->last; day++) {
			c = days_cell(s, day);
			printf("  %s", !c ? " " : c->reset ? "R" : c->anomalies ? "!" : " ");
		}
		printf("\n");
	}
	printf("%*s1 to %" PRIu64 " events per day and bucket, log scale; · no pull\n",
	       HEAT_LABEL_W, "", max);
}

int heatmap_print(const char *dir, char *const *files, int n)
{
	const char *nc = getenv("NO_COLOR");
	bool colour = isatty(STDOUT_FILENO) && !(nc && *nc);
	char *dirs[] = { (char *)dir };
	struct days d;
	size_t i, nbad;
	int ret;

	days_init(&d, "kstats atoms");
	ret = days_load(&d, dirs, 1, files, n);
	days_finish(&d, SIZE_MAX);
	if (!ret && !d.pulled)
		fprintf(stderr, "kstats atoms: no atoms in %s yet; run kstats pull\n",
			n ? "these files" : dir);
	for (i = 0; !ret && i < d.nseries && d.pulled; i++)
		heat_series(&d, &d.series[i], colour);
	nbad = d.nbad;
	days_free(&d);
	return ret ? KSTATS_EXIT_USAGE : nbad ? KSTATS_EXIT_ERROR : KSTATS_EXIT_OK;
}