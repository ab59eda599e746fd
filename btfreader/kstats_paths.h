/* SPDX-License-Identifier: GPL-2.0 */
/* Where the tools find the objects when no --obj-dir is given. */
#ifndef KSTATS_PATHS_H
#define KSTATS_PATHS_H

/*
 * bpf/ beside the running binary when that exists (a build tree: build/kstats
 * and build/bpf/), else the installed object directory, KSTATS_BPFDIR.
 */
const char *kstats_default_obj_dir(void);

#define KSTATS_OBJ_DIR_HELP "bpf/ beside the binary, else the installed objects"

#endif /* KSTATS_PATHS_H */
