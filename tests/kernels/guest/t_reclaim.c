// SPDX-License-Identifier: GPL-2.0
/*
 * KswapdLatency and DirectReclaimLatency from real memory hogs: in the
 * small guest, anonymous memory with no swap wakes kswapd, then forces
 * direct reclaim until the OOM killer takes the hog.  Two hogs in two
 * process-state bands show that the key follows oom_score_adj.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>

#include "guest.h"
#include "kstats_keys.h"

#define KSWAPD "kswapd"
#define KSWAPD_OBJ "kswapd"
#define KSWAPD_MAP "kswapd_latency_map"
#define DIRECT "direct reclaim"
#define DIRECT_OBJ "directReclaim"
#define DIRECT_MAP "direct_reclaim_latency_map"
#define NHOGS 2
#define HOG_CHUNK (1u << 20)
#define HOG_TIMEOUT_S 60
#define SETTLE_POLLS 25		/* 5 s for kswapd to go back to sleep */

/* Lowest adj of two bands: an off-by-one in the mapping moves the key. */
static const int hog_adj[NHOGS] = { 500, 900 };

struct reclaim {
	struct trace tr;
	struct hist kswapd[2], direct[2];	/* before, after */
	struct trace_pairs nodes, tasks;
	int hog[NHOGS];
	bool kswapd_asleep;
};

/* Touches fresh anonymous memory until the OOM killer ends it. */
static void hog(int oom_score_adj)
{
	struct sysinfo si;
	unsigned long long limit, used = 0;
	char adj[16];
	char *p;

	snprintf(adj, sizeof(adj), "%d", oom_score_adj);
	if (lab_write("/proc/self/oom_score_adj", adj))
		_exit(2);
	alarm(HOG_TIMEOUT_S);
	limit = sysinfo(&si) ? 1ull << 32 : 2ull * si.totalram * si.mem_unit;
	while (used < limit) {
		p = mmap(NULL, HOG_CHUNK, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(0);
		memset(p, 0xa5, HOG_CHUNK);
		used += HOG_CHUNK;
	}
	_exit(0);
}

static int run_hog(struct reclaim *r, int i)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid)
		hog(hog_adj[i]);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	lab_info("memory hog %d (oom_score_adj %d) %s %d", (int)pid, hog_adj[i],
		 WIFSIGNALED(status) ? "killed by signal" : "exited with",
		 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	r->hog[i] = pid;
	return 0;
}

static void mark(const struct trace_event *ev, void *arg)
{
	struct reclaim *r = arg;
	char key[48];
	int nid;

	if (!strncmp(ev->name, "mm_vmscan_kswapd_", 17) &&
	    sscanf(ev->args, "nid=%d", &nid) == 1) {
		snprintf(key, sizeof(key), "%d", nid);
		pairs_mark(&r->nodes, key, !strcmp(ev->name, "mm_vmscan_kswapd_wake"));
		r->kswapd_asleep = !strcmp(ev->name, "mm_vmscan_kswapd_sleep");
	} else if (!strncmp(ev->name, "mm_vmscan_direct_reclaim_", 25)) {
		snprintf(key, sizeof(key), "%d", ev->pid);
		pairs_mark(&r->tasks, key,
			   !strcmp(ev->name, "mm_vmscan_direct_reclaim_begin"));
	}
}

static int count_pairs(struct reclaim *r)
{
	memset(&r->nodes, 0, sizeof(r->nodes));
	memset(&r->tasks, 0, sizeof(r->tasks));
	r->kswapd_asleep = true;
	return trace_each(&r->tr, mark, r);
}

/* kswapd keeps balancing for a while after a hog dies. */
static int settle(struct reclaim *r)
{
	int i, ret = 0;

	for (i = 0; i < SETTLE_POLLS; i++) {
		usleep(200 * 1000);
		ret = count_pairs(r);
		if (ret || r->kswapd_asleep)
			break;
	}
	return ret;
}

static void check_kswapd(struct reclaim *r)
{
	struct hist delta;
	const struct trace_pair *k;
	long total = 0;
	size_t i;
	char key[24];

	if (hist_delta(&r->kswapd[0], &r->kswapd[1], &delta)) {
		lab_fail(KSWAPD, "a count went down between the reads");
		return;
	}
	for (i = 0; i < r->nodes.n; i++)
		total += r->nodes.k[i].pairs;
	if (!total) {
		lab_fail(KSWAPD, "the memory hog never got kswapd from wake to sleep");
		return;
	}
	if (!r->kswapd_asleep)
		lab_info("kswapd still awake after %d polls", SETTLE_POLLS);
	for (i = 0; i < delta.nkeys; i++) {
		snprintf(key, sizeof(key), "%lld", (long long)delta.keys[i]);
		k = pairs_get(&r->nodes, key);
		if (!pairs_match(k, hist_key_total(&delta, delta.keys[i]))) {
			lab_fail(KSWAPD, "node %s grew by %llu, tracefs saw %ld wake->sleep",
				 key, (unsigned long long)hist_key_total(&delta, delta.keys[i]),
				 k->pairs);
			return;
		}
	}
	for (i = 0; i < r->nodes.n; i++) {
		int64_t nid = strtoll(r->nodes.k[i].key, NULL, 10);

		if (r->nodes.k[i].pairs && !hist_key_total(&delta, nid)) {
			lab_fail(KSWAPD, "node %s: tracefs saw %ld wake->sleep, no key grew",
				 r->nodes.k[i].key, r->nodes.k[i].pairs);
			return;
		}
	}
	lab_pass(KSWAPD, "grew by %llu = tracefs wake->sleep pairs",
		 (unsigned long long)hist_total(&delta));
}

static void check_direct(struct reclaim *r)
{
	enum kstats_process_state state;
	const struct trace_pair *k;
	struct hist delta;
	uint64_t grew;
	char key[24];
	int i;

	if (hist_delta(&r->direct[0], &r->direct[1], &delta)) {
		lab_fail(DIRECT, "a count went down between the reads");
		return;
	}
	for (i = 0; i < NHOGS; i++) {
		state = kstats_process_state_from_adj(hog_adj[i]);
		snprintf(key, sizeof(key), "%d", r->hog[i]);
		k = pairs_get(&r->tasks, key);
		grew = hist_key_total(&delta, state);
		if (!k->pairs) {
			lab_fail(DIRECT, "memory hog %d never entered direct reclaim", i);
			return;
		}
		if (!pairs_match(k, grew)) {
			lab_fail(DIRECT, "key %d (oom_score_adj %d) grew by %llu, tracefs "
				 "saw %ld begin->end of its hog", state, hog_adj[i],
				 (unsigned long long)grew, k->pairs);
			return;
		}
	}
	lab_pass(DIRECT, "keys %d and %d (oom_score_adj %d, %d) grew by their "
		 "hog's tracefs begin->end pairs",
		 kstats_process_state_from_adj(hog_adj[0]),
		 kstats_process_state_from_adj(hog_adj[1]), hog_adj[0], hog_adj[1]);
}

static int run_hogs(struct reclaim *r)
{
	int i, ret = 0;

	for (i = 0; !ret && i < NHOGS; i++)
		ret = run_hog(r, i) ?: settle(r);
	return ret;
}

static int read_maps(const struct lab *lab, struct reclaim *r, bool kswapd,
		     bool direct, int which)
{
	int ret = 0;

	if (kswapd)
		ret = hist_read(lab, KSWAPD_OBJ, KSWAPD_MAP, &r->kswapd[which]);
	if (!ret && direct)
		ret = hist_read(lab, DIRECT_OBJ, DIRECT_MAP, &r->direct[which]);
	return ret;
}

void test_reclaim(const struct lab *lab)
{
	static const char *const events[] = {
		"vmscan/mm_vmscan_kswapd_wake", "vmscan/mm_vmscan_kswapd_sleep",
		"vmscan/mm_vmscan_direct_reclaim_begin",
		"vmscan/mm_vmscan_direct_reclaim_end", NULL,
	};
	static struct reclaim r;
	bool kswapd = !lab_require(lab, KSWAPD, KSWAPD_OBJ, KSWAPD_MAP);
	bool direct = !lab_require(lab, DIRECT, DIRECT_OBJ, DIRECT_MAP);
	const char *why = NULL;

	if (!kswapd && !direct)
		return;
	if (trace_start(&r.tr, "reclaim", events))
		why = "no tracefs instance for the vmscan events";
	else if (read_maps(lab, &r, kswapd, direct, 0))
		why = "cannot read the maps before the hog";
	else if (run_hogs(&r))
		why = "cannot run the memory hogs or read their trace";
	else if (read_maps(lab, &r, kswapd, direct, 1))
		why = "cannot read the maps after the hog";
	if (why) {
		if (kswapd)
			lab_fail(KSWAPD, "%s", why);
		if (direct)
			lab_fail(DIRECT, "%s", why);
	} else {
		if (kswapd)
			check_kswapd(&r);
		if (direct)
			check_direct(&r);
	}
	trace_stop(&r.tr);
}
