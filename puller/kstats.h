/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KSTATS_CLI_H
#define KSTATS_CLI_H

#include <stdint.h>
#include <stdio.h>

/* Exit codes, documented in kstats --help and README. */
#define KSTATS_EXIT_OK 0
#define KSTATS_EXIT_ERROR 1	/* runtime failure: map unreadable, I/O */
#define KSTATS_EXIT_USAGE 2	/* bad arguments */
#define KSTATS_EXIT_NOT_LOADED 3	/* nothing pinned: run kstats-loader */
#define KSTATS_EXIT_BUSY 4	/* kstats pull: another pull holds the lock */

#define KSTATS_DEFAULT_OBJ_DIR "build/bpf"

int cmd_dump(int argc, char **argv);
int cmd_read(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_atoms(int argc, char **argv);
int cmd_watch(int argc, char **argv);

/* bcc-style log2 histogram of 32 buckets; unit is enum kstats_unit. */
void print_log2_hist(FILE *f, const int64_t *buckets, unsigned int unit);

#endif /* KSTATS_CLI_H */
