// SPDX-License-Identifier: GPL-2.0
/* kstats status output: per object a program table and a map table, or JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include <json-c/json.h>

#include "hist.h"
#include "kstats.h"
#include "kstats_tool.h"
#include "status.h"

/* A table whose column widths follow its cells; the last column is free. */
#define TABLE_COLS 8
#define CELL_LEN 96

struct table {
	size_t ncols, nrows;
	char (*cells)[TABLE_COLS][CELL_LEN];
};

static char *table_row(struct table *t)
{
	void *c = realloc(t->cells, (t->nrows + 1) * sizeof(*t->cells));

	if (!c)
		return NULL;
	t->cells = c;
	memset(t->cells[t->nrows], 0, sizeof(*t->cells));
	return t->cells[t->nrows++][0];
}

static void table_print(FILE *f, struct table *t, const char *indent)
{
	size_t w[TABLE_COLS] = {}, r, c;

	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++)
			if (kstats_display_width(t->cells[r][c]) > w[c])
				w[c] = kstats_display_width(t->cells[r][c]);
	for (r = 0; r < t->nrows; r++) {
		size_t last = 0;

		for (c = 0; c < t->ncols; c++)
			last = *t->cells[r][c] ? c : last;
		fputs(indent, f);
		for (c = 0; c < last; c++)
			kstats_put_padded(f, t->cells[r][c], w[c] + 2, false);
		fprintf(f, "%s\n", t->cells[r][last]);
	}
	free(t->cells);
	t->cells = NULL;
	t->nrows = 0;
}

#define CELL(t, c, ...) snprintf((t)->cells[(t)->nrows - 1][c], CELL_LEN, __VA_ARGS__)

static void table_header(struct table *t, const char *const *names)
{
	size_t c;

	if (!table_row(t))
		return;
	for (c = 0; c < t->ncols && names[c]; c++)
		CELL(t, c, "%s", names[c]);
}

static void fmt_ns(char *buf, size_t len, double ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%.0fns", ns);
	else
		kstats_fmt_value(buf, len, ns / 1000, kstats_unit(KSTATS_UNIT_USEC));
}

static void prog_row(struct table *t, const struct kstats_status_prog *p,
		     const struct prog_live *pl)
{
	char avg[32];

	if (!table_row(t))
		return;
	CELL(t, 0, "%s", p->name);
	CELL(t, 1, "%s", p->attach);
	CELL(t, 2, "%s", *p->attach_type ? p->attach_type : "-");
	CELL(t, 3, "%s%s", p->outcome, pl->detached ? ",DETACHED" : "");
	if (pl->have && pl->run_cnt) {
		fmt_ns(avg, sizeof(avg), (double)pl->run_time_ns / (double)pl->run_cnt);
		CELL(t, 4, "%llu", (unsigned long long)pl->run_cnt);
		CELL(t, 5, "%s", avg);
		CELL(t, 6, "%llu", (unsigned long long)pl->misses);
	} else {
		CELL(t, 4, "%s", pl->have ? "0" : pl->err ? status_probe_error(pl->err) : "-");
		CELL(t, 5, "-");
		CELL(t, 6, "%s", pl->have ? "0" : "-");
	}
	CELL(t, 7, "%s", p->reason);
}

static void map_row(struct table *t, const struct kstats_status_map *mp,
		    const struct map_live *ml)
{
	char mem[32];

	if (!table_row(t))
		return;
	CELL(t, 0, "%s", mp->name);
	if (!ml->have) {
		CELL(t, 1, "%s", status_map_error(ml));
		return;
	}
	CELL(t, 1, "%s", libbpf_bpf_map_type_str(ml->type) ?: "?");
	if (ml->counted) {
		CELL(t, 2, "%llu/%u", (unsigned long long)ml->entries, ml->max_entries);
		CELL(t, 3, "%.1f%%", ml->max_entries ? 100.0 * (double)ml->entries /
			 ml->max_entries : 0);
	} else {
		CELL(t, 2, "%u", ml->max_entries);
		CELL(t, 3, "-");
	}
	kstats_fmt_value(mem, sizeof(mem), (double)ml->memlock, kstats_unit(KSTATS_UNIT_BYTES));
	CELL(t, 4, "%s", mem);
	CELL(t, 5, ml->has_drops ? "%llu" : "-", (unsigned long long)ml->drops);
	if (mp->map_id && mp->map_id != ml->id)
		CELL(t, 6, "recreated since the loader ran (id %u, was %u)", ml->id,
		     mp->map_id);
	else
		CELL(t, 6, "%s", mp->reused ? "reused from an earlier load" : "");
}

static void print_object(FILE *f, struct status_view *v, const struct kstats_status_obj *o,
			 size_t *prog_idx)
{
	struct table t = { .ncols = 8 };
	struct kstats_objmeta meta;
	struct map_live ml;
	char why[KSTATS_WHY_LEN];
	size_t j;

	kstats_why(o, why, sizeof(why));
	fprintf(f, "\n%s  %s\n", o->name, why);
	if (o->nprogs) {
		table_header(&t, (const char *const[]){ "program", "attach", "type", "outcome",
			"runs", "avg/run", "missed", NULL });
		for (j = 0; j < o->nprogs; j++, (*prog_idx)++)
			if (*prog_idx < v->nprogs)
				prog_row(&t, &o->progs[j], &v->progs[*prog_idx]);
		table_print(f, &t, "  ");
	}
	if (!o->nmaps)
		return;
	t.ncols = 7;
	table_header(&t, (const char *const[]){ "map", "type", "entries", "fill", "memlock",
		"drops", NULL });
	status_object_meta(o, &meta);
	for (j = 0; j < o->nmaps; j++) {
		status_map_live(v, o, &meta, &o->maps[j], &ml);
		map_row(&t, &o->maps[j], &ml);
	}
	kstats_objmeta_free(&meta);
	table_print(f, &t, "  ");
}

static void print_header(FILE *f, struct status_view *v)
{
	const char *rel = v->st.kernel_release;
	struct utsname u;

	fprintf(f, "loader status %s, kernel %s\n", v->status_file, *rel ? rel : "?");
	if (!uname(&u) && strcmp(u.release, rel))
		fprintf(f, "warning: the status is from kernel %s but %s is running; "
			KSTATS_FIX_LOAD "\n", rel, u.release);
	if (v->window)
		fprintf(f, "runs and avg/run: the last %gs (BPF run-time stats on meanwhile)\n",
			v->window);
	else if (v->stats_enabled == 1)
		fprintf(f, "runs and avg/run: since load (kernel.bpf_stats_enabled=1)\n");
	else
		fprintf(f, "runs and avg/run: counted only while BPF run-time stats are on "
			"(kernel.bpf_stats_enabled=%d); kstats status --stats 5 measures 5s\n",
			v->stats_enabled);
}

void status_print(FILE *f, struct status_view *v)
{
	size_t i, prog_idx = 0;

	print_header(f, v);
	for (i = 0; i < v->st.nobjs; i++)
		print_object(f, v, &v->st.objs[i], &prog_idx);
}

static struct json_object *json_u64(bool have, uint64_t v)
{
	return have ? json_object_new_uint64(v) : NULL;
}

static void annotate_prog(struct json_object *p, const struct prog_live *pl)
{
	bool runs = pl->have && pl->run_cnt;

	json_object_object_add(p, "run_cnt", json_u64(pl->have, pl->run_cnt));
	json_object_object_add(p, "run_time_ns", json_u64(pl->have, pl->run_time_ns));
	json_object_object_add(p, "avg_ns", runs ? json_object_new_double(
		(double)pl->run_time_ns / (double)pl->run_cnt) : NULL);
	json_object_object_add(p, "recursion_misses", json_u64(pl->have, pl->misses));
	json_object_object_add(p, "detached", json_object_new_boolean(pl->detached));
	json_object_object_add(p, "probe_error", pl->err ?
			       json_object_new_string(status_probe_error(pl->err)) : NULL);
}

static void annotate_map(struct json_object *mp, const struct map_live *ml)
{
	json_object_object_add(mp, "map_type", ml->have ?
			       json_object_new_string(libbpf_bpf_map_type_str(ml->type) ?: "?") : NULL);
	json_object_object_add(mp, "live_map_id", json_u64(ml->have, ml->id));
	json_object_object_add(mp, "max_entries", json_u64(ml->have, ml->max_entries));
	json_object_object_add(mp, "entries", json_u64(ml->counted, ml->entries));
	json_object_object_add(mp, "fill_percent", ml->counted && ml->max_entries ?
			       json_object_new_double(100.0 * (double)ml->entries /
						      ml->max_entries) : NULL);
	json_object_object_add(mp, "memlock_bytes", json_u64(ml->have, ml->memlock));
	json_object_object_add(mp, "drops", json_u64(ml->has_drops, ml->drops));
	json_object_object_add(mp, "probe_error", ml->err ?
			       json_object_new_string(status_map_error(ml)) : NULL);
}

void status_annotate(struct status_view *v)
{
	struct map_live ml;
	size_t i, j, k = 0;
	struct utsname u;

	for (i = 0; i < v->st.nobjs; i++) {
		const struct kstats_status_obj *o = &v->st.objs[i];
		struct kstats_objmeta meta;

		for (j = 0; j < o->nprogs; j++, k++)
			if (k < v->nprogs)
				annotate_prog(o->progs[j].json, &v->progs[k]);
		status_object_meta(o, &meta);
		for (j = 0; j < o->nmaps; j++) {
			status_map_live(v, o, &meta, &o->maps[j], &ml);
			annotate_map(o->maps[j].json, &ml);
		}
		kstats_objmeta_free(&meta);
	}
	json_object_object_add(v->st.json, "running_kernel_release",
			       uname(&u) ? NULL : json_object_new_string(u.release));
	json_object_object_add(v->st.json, "bpf_stats_enabled",
			       json_object_new_int(v->stats_enabled));
	json_object_object_add(v->st.json, "stats_window_seconds",
			       v->window ? json_object_new_double(v->window) : NULL);
}
