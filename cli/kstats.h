/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KSTATS_CLI_H
#define KSTATS_CLI_H

#include <time.h>

#include "kstats_tool.h"

/* Exit codes, documented in kstats --help, kstats(1) and README. */
#define KSTATS_EXIT_OK 0
#define KSTATS_EXIT_ERROR 1	/* runtime failure: map unreadable, I/O, a failed object */
#define KSTATS_EXIT_USAGE 2	/* bad arguments, unknown metric */
#define KSTATS_EXIT_NOT_LOADED 3	/* nothing pinned, bpffs missing: run kstats-loader */
#define KSTATS_EXIT_BUSY 4	/* kstats pull: another pull holds the lock */
#define KSTATS_EXIT_PERM 5	/* permission denied: needs CAP_BPF and group kstats */

#define KSTATS_DEFAULT_STATUS_FILE "/run/kernelstats/loader-status.json"
#define KSTATS_DEFAULT_ATOMS_DIR "/var/lib/kernelstats/atoms"

int cmd_dump(int argc, char **argv);
int cmd_read(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_atoms(int argc, char **argv);
int cmd_report(int argc, char **argv);
/* Weak: the static guest builds have no libcurl, and no kstats ship. */
int cmd_ship(int argc, char **argv) __attribute__((weak));
/* Atoms of out_dir (NULL: default) not acknowledged, and when kstats ship last was; -1: never. */
long ship_waiting(const char *state_dir, const char *out_dir, struct timespec *when);

struct dirent;
/* scandir filter of the atoms-<pull id>.pb files kstats pull writes. */
int kstats_atoms_filter(const struct dirent *d);
int cmd_watch(int argc, char **argv);
int cmd_status(int argc, char **argv);

/* Log2 histogram of 32 buckets, as kstats dump shows one. */
void print_log2_hist(FILE *f, const uint64_t *buckets, const struct kstats_unit_info *u);

/* diag.c: the exit code for a -errno: permission, not loaded, or runtime. */
int kstats_exit_code(int err);
/* 0: pin_dir is on bpffs; else -ENOENT (nothing loaded), -ENODEV (no bpffs) or -EACCES. */
int kstats_check_pin_dir(const char *pin_dir, char *msg, size_t len);

static inline struct timespec kstats_timespec(double secs)
{
	return (struct timespec){ (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
}

#endif /* KSTATS_CLI_H */
