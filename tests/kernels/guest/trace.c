// SPDX-License-Identifier: GPL-2.0
/* Tracefs instances that count the same events independently of BPF. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "guest.h"

#define INSTANCES "/sys/kernel/tracing/instances"

static int trace_set(const struct trace *tr, const char *file, const char *val)
{
	char path[320];

	snprintf(path, sizeof(path), "%s/%s", tr->dir, file);
	return lab_write(path, val);
}

int trace_start(struct trace *tr, const char *tag, const char *const *events)
{
	char file[160];
	int ret;

	snprintf(tr->dir, sizeof(tr->dir), INSTANCES "/kstats-lab-%s", tag);
	if (mkdir(tr->dir, 0700) && errno != EEXIST) {
		ret = -errno;
		lab_info("cannot create %s: %s", tr->dir, strerror(errno));
		*tr->dir = 0;
		return ret;
	}
	ret = trace_set(tr, "trace_clock", "mono");
	ret = ret ?: trace_set(tr, "buffer_size_kb", "4096");
	for (; !ret && *events; events++) {
		snprintf(file, sizeof(file), "events/%s/enable", *events);
		ret = trace_set(tr, file, "1");
		if (ret)
			lab_info("cannot enable %s: %s", *events, strerror(-ret));
	}
	if (ret)
		trace_stop(tr);
	return ret;
}

void trace_stop(struct trace *tr)
{
	if (*tr->dir && rmdir(tr->dir))
		lab_info("cannot remove %s: %s", tr->dir, strerror(errno));
	*tr->dir = 0;
}

static char *skip_spaces(char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/*
 * "  comm-123  [000] d..1.  1234.567890: event_name: args"; the comm may hold
 * '-' and spaces, the pid is what follows its last '-'.
 */
static int parse_line(char *line, struct trace_event *ev)
{
	char *cpu = strstr(line, "] "), *p, *colon, *space, *dash;
	unsigned long sec, usec;

	if (line[0] == '#' || !cpu)
		return -EINVAL;
	*cpu = 0;
	p = strrchr(line, '[');
	if (!p)
		return -EINVAL;
	*p = 0;
	dash = strrchr(line, '-');
	ev->pid = dash ? atoi(dash + 1) : -1;
	p = skip_spaces(cpu + 2);
	colon = strchr(p, ':');
	space = strchr(p, ' ');
	if (space && colon && space < colon)	/* the irq-flags column */
		p = skip_spaces(space);
	if (sscanf(p, "%lu.%lu:", &sec, &usec) != 2)
		return -EINVAL;
	ev->ns = sec * 1000000000ull + usec * 1000ull;
	p = skip_spaces(strchr(p, ':') + 1);
	colon = strchr(p, ':');
	if (!colon)
		return -EINVAL;
	*colon = 0;
	ev->name = p;
	ev->args = skip_spaces(colon + 1);
	return 0;
}

int trace_each(const struct trace *tr, trace_cb cb, void *arg)
{
	char path[320], line[1024];
	struct trace_event ev;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", tr->dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!parse_line(line, &ev))
			cb(&ev, arg);
	}
	fclose(f);
	return 0;
}

struct count_arg {
	const char *event;
	int pid;
	uint64_t from, to;
	long n;
};

static void count_one(const struct trace_event *ev, void *arg)
{
	struct count_arg *c = arg;

	c->n += !strcmp(ev->name, c->event) && (c->pid < 0 || ev->pid == c->pid) &&
		ev->ns >= c->from && ev->ns <= c->to;
}

long trace_count(const struct trace *tr, const char *event, int pid,
		 uint64_t from_ns, uint64_t to_ns)
{
	struct count_arg c = { event, pid, from_ns, to_ns, 0 };
	int ret = trace_each(tr, count_one, &c);

	return ret ? ret : c.n;
}

static struct trace_pair *pairs_find(struct trace_pairs *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->k[i].key, key))
			return &p->k[i];
	if (p->n == TRACE_MAX_PAIRS)
		return NULL;
	snprintf(p->k[p->n].key, sizeof(p->k[p->n].key), "%s", key);
	return &p->k[p->n++];
}

/* Mirrors SAVE_FIRST_START_TIME and GET_LATENCY_BUCKET: the first begin wins. */
void pairs_mark(struct trace_pairs *p, const char *key, bool begin)
{
	struct trace_pair *k = pairs_find(p, key);

	if (!k)
		return;
	if (!k->seen && !begin)
		k->ambiguous = true;	/* its begin may predate the trace */
	k->seen = true;
	if (begin) {
		k->open = true;
	} else if (k->open) {
		k->open = false;
		k->pairs++;
	}
}

const struct trace_pair *pairs_get(const struct trace_pairs *p, const char *key)
{
	static const struct trace_pair none;
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->k[i].key, key))
			return &p->k[i];
	return &none;
}

bool pairs_match(const struct trace_pair *k, uint64_t count)
{
	return count == (uint64_t)k->pairs ||
	       (k->ambiguous && count == (uint64_t)k->pairs + 1);
}
