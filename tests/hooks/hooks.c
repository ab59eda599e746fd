// SPDX-License-Identifier: GPL-2.0
/*
 * The test hooks of kstats (btfreader/kstats_hooks.h), linked only into the
 * test build, $(BUILD)/hooks/kstats (mk/pull_hooks.mk):
 *   KSTATS_FAULT=POINT           SIGKILL at a crash point (fault_points.c)
 *   KSTATS_FAULT=output-temp     SIGKILL, output-term SIGTERM, when the temp file
 *                                of another file (dump --output, report -o) is written
 *   KSTATS_CLOCK=BOOT_NS:REAL_NS the clocks' readings
 *   KSTATS_BOOT_ID=ID            the boot id (tests fake a reboot)
 * A value that is not one of these is a usage error (exit 2) at start.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "hooks.h"
#include "kstats_hooks.h"

static const char *fault;
static bool fixed_clock;
static uint64_t fixed_boot_ns, fixed_real_ns;

static void bad_env(const char *name, const char *val, const char *want)
{
	fprintf(stderr, "kstats: %s '%s': expected %s\n", name, val, want);
	exit(2);
}

__attribute__((constructor)) static void read_env(void)
{
	const char *f = getenv("KSTATS_FAULT"), *c = getenv("KSTATS_CLOCK");
	size_t i;

	for (i = 0; f && *f && i < kstats_nfault_points; i++)
		if (!strcmp(f, kstats_fault_points[i].name))
			fault = kstats_fault_points[i].name;
	if (f && (!strcmp(f, "output-temp") || !strcmp(f, "output-term")))
		fault = f;
	if (f && *f && !fault)
		bad_env("KSTATS_FAULT", f, "a point of tests/hooks/fault_points.c");
	if (!c || !*c)
		return;
	if (sscanf(c, "%" SCNu64 ":%" SCNu64, &fixed_boot_ns, &fixed_real_ns) != 2)
		bad_env("KSTATS_CLOCK", c, "BOOT_NS:REAL_NS");
	fixed_clock = true;
}

void kstats_hook_point(const char *point)
{
	bool term = fault && !strcmp(fault, "output-term");

	if (fault && !strcmp(fault, point)) {
		fprintf(stderr, "kstats: fault point %s: %s\n", point, term ? "SIGTERM" : "SIGKILL");
		kill(getpid(), term ? SIGTERM : SIGKILL);
	}
}

/* The crash points' prefix for the files the pull writes. */
static const char *file_point(const char *name)
{
	if (!strcmp(name, "state.pending"))
		return "pending";
	if (!strcmp(name, "state"))
		return "state";
	return strncmp(name, "atoms-", 6) ? "output" : "atoms";
}

/* "<file>-partial" leaves half the temp file, "<file>-temp" all of it. */
void kstats_hook_temp(const char *name, int fd)
{
	const char *prefix = file_point(name);
	size_t n = prefix ? strlen(prefix) : 0;
	struct stat st;

	if (!fault || !prefix || strncmp(fault, prefix, n) || fault[n] != '-')
		return;
	if (!strcmp(fault + n, "-partial") &&
	    (fstat(fd, &st) || !st.st_size || ftruncate(fd, st.st_size / 2)))
		return;
	kstats_hook_point(fault);
}

void kstats_hook_clock(uint64_t *boot, uint64_t *real)
{
	if (!fixed_clock)
		return;
	*boot = fixed_boot_ns;
	*real = fixed_real_ns;
}

bool kstats_hook_boot_id(char *buf, size_t len)
{
	const char *id = getenv("KSTATS_BOOT_ID");

	if (!id || !*id)
		return false;
	snprintf(buf, len, "%s", id);
	return true;
}
