// SPDX-License-Identifier: GPL-2.0
/*
 * SuspendResumeLatency from a real suspend-to-idle cycle, stopped at the
 * device level by /sys/power/pm_test, so that the guest resumes by itself.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guest.h"
#include "kstats_keys.h"

#define TEST "suspend/resume"
#define OBJ "suspendResume"
#define MAP "suspend_resume_latency_map"
#define PM "/sys/power/"
#define DELAY "/sys/module/suspend/parameters/pm_test_delay"

/* The kernel's action strings (kernel/power, drivers/base/power), by phase. */
static const struct {
	const char *action;
	enum kstats_suspend_phase phase;
	bool fires;		/* always fires in a freeze + pm_test=devices cycle */
} phases[] = {
	{ "suspend_enter", KSTATS_SUSPEND_PHASE_SUSPEND_ENTER, false },
	{ "sync_filesystems", KSTATS_SUSPEND_PHASE_SYNC_FILESYSTEMS, false },
	{ "freeze_processes", KSTATS_SUSPEND_PHASE_FREEZE_PROCESSES, true },
	{ "dpm_prepare", KSTATS_SUSPEND_PHASE_DPM_PREPARE, true },
	{ "dpm_suspend", KSTATS_SUSPEND_PHASE_DPM_SUSPEND, true },
	{ "dpm_suspend_late", KSTATS_SUSPEND_PHASE_DPM_SUSPEND_LATE, false },
	{ "dpm_suspend_noirq", KSTATS_SUSPEND_PHASE_DPM_SUSPEND_NOIRQ, false },
	{ "machine_suspend", KSTATS_SUSPEND_PHASE_MACHINE_SUSPEND, false },
	{ "dpm_resume_noirq", KSTATS_SUSPEND_PHASE_DPM_RESUME_NOIRQ, false },
	{ "dpm_resume_early", KSTATS_SUSPEND_PHASE_DPM_RESUME_EARLY, false },
	{ "dpm_resume", KSTATS_SUSPEND_PHASE_DPM_RESUME, true },
	{ "dpm_complete", KSTATS_SUSPEND_PHASE_DPM_COMPLETE, true },
	{ "resume_console", KSTATS_SUSPEND_PHASE_RESUME_CONSOLE, false },
	{ "thaw_processes", KSTATS_SUSPEND_PHASE_THAW_PROCESSES, true },
};

#define NPHASES (sizeof(phases) / sizeof(phases[0]))

/* "dpm_suspend[2] begin" */
static void mark(const struct trace_event *ev, void *arg)
{
	char action[48], edge[8];

	if (strcmp(ev->name, "suspend_resume") ||
	    sscanf(ev->args, "%47[^[][%*u] %7s", action, edge) != 2)
		return;
	pairs_mark(arg, action, !strcmp(edge, "begin"));
}

static int suspend_cycle(void)
{
	int ret;

	if (!access(DELAY, W_OK) && lab_write(DELAY, "1"))
		lab_info("cannot shorten %s", DELAY);
	ret = lab_write(PM "pm_test", "devices");
	if (ret)
		return ret;
	ret = lab_write(PM "state", "freeze");
	if (lab_write(PM "pm_test", "none"))
		lab_info("cannot reset " PM "pm_test");
	return ret;
}

static void check_phases(const struct hist *delta, const struct trace_pairs *p)
{
	const struct trace_pair *k;
	unsigned int i, grown = 0;
	uint64_t grew;

	for (i = 0; i < NPHASES; i++) {
		k = pairs_get(p, phases[i].action);
		grew = hist_key_total(delta, phases[i].phase);
		if (phases[i].fires && !k->pairs) {
			lab_fail(TEST, "tracefs saw no %s begin->end", phases[i].action);
			return;
		}
		if (!pairs_match(k, grew)) {
			lab_fail(TEST, "phase %s grew by %llu, tracefs saw %ld begin->end",
				 phases[i].action, (unsigned long long)grew, k->pairs);
			return;
		}
		grown += grew > 0;
	}
	lab_pass(TEST, "%u phases grew, each by its tracefs begin->end count", grown);
}

void test_suspend(const struct lab *lab)
{
	static const char *const events[] = { "power/suspend_resume", NULL };
	static struct trace_pairs pairs;
	struct hist before, after, delta;
	struct trace tr;
	int ret;

	if (lab_require(lab, TEST, OBJ, MAP))
		return;
	if (access(PM "pm_test", W_OK)) {
		lab_skip(TEST, "no " PM "pm_test%s", lab_config("CONFIG_PM_DEBUG") == 'n' ?
			 ": CONFIG_PM_DEBUG is not set in this kernel" : "");
		return;
	}
	if (trace_start(&tr, "suspend", events)) {
		lab_fail(TEST, "no tracefs instance for power:suspend_resume");
		return;
	}
	if (hist_read(lab, OBJ, MAP, &before)) {
		lab_fail(TEST, "cannot read map_" OBJ "_" MAP);
		goto out;
	}
	ret = suspend_cycle();
	if (ret) {
		lab_fail(TEST, "freeze with pm_test=devices: %s", strerror(-ret));
		goto out;
	}
	if (hist_read(lab, OBJ, MAP, &after) || trace_each(&tr, mark, &pairs)) {
		lab_fail(TEST, "cannot read the map or the trace after resume");
		goto out;
	}
	if (hist_delta(&before, &after, &delta))
		lab_fail(TEST, "a count went down across the cycle");
	else
		check_phases(&delta, &pairs);
out:
	trace_stop(&tr);
}
