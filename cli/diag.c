// SPDX-License-Identifier: GPL-2.0
/* Maps failures to exit codes and to the fix the message names. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "kstats.h"
#include "kstats_pins.h"
#include "kstats_reader.h"

int kstats_exit_code(int err)
{
	return !err ? KSTATS_EXIT_OK : err == -EPERM || err == -EACCES ? KSTATS_EXIT_PERM :
	       err == -ENOENT || err == -ENODEV ? KSTATS_EXIT_NOT_LOADED : KSTATS_EXIT_ERROR;
}

int kstats_check_pin_dir(const char *pin_dir, char *msg, size_t len)
{
	char anc[PATH_MAX], *slash;
	struct stat st;

	if (!stat(pin_dir, &st)) {
		if (kstats_is_bpffs(pin_dir))
			return 0;
		return kstats_fail(msg, len, ENODEV, "%s is not on bpffs (bpffs is not mounted "
				   "there); " KSTATS_FIX_LOAD ", which mounts it, or: mount -t bpf "
				   "bpf /sys/fs/bpf", pin_dir);
	}
	/* Not strerror(errno): kstats_perm_fix() may change errno first. */
	if (errno == EACCES)
		return kstats_fail(msg, len, EACCES, "cannot access %s: %s; %s", pin_dir,
				   strerror(EACCES), kstats_perm_fix());
	/* The nearest existing ancestor: bpffs there, or nothing mounts it. */
	snprintf(anc, sizeof(anc), "%s", pin_dir);
	while (stat(anc, &st) && (slash = strrchr(anc, '/')) && (slash != anc || slash[1]))
		slash[slash == anc] = 0;	/* "/x" becomes "/" */
	if (!kstats_is_bpffs(anc))
		return kstats_fail(msg, len, ENODEV, "bpffs is not mounted (no bpffs at %s or "
				   "above); " KSTATS_FIX_LOAD ", which mounts it, or: mount -t bpf "
				   "bpf /sys/fs/bpf", pin_dir);
	return kstats_fail(msg, len, ENOENT, "nothing is loaded: %s does not exist; "
			   KSTATS_FIX_LOAD, pin_dir);
}
