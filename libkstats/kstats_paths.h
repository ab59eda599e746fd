/* SPDX-License-Identifier: GPL-2.0 */
/* Where the tools find the objects when no --obj-dir is given. */
#ifndef KSTATS_PATHS_H
#define KSTATS_PATHS_H


#define KSTATS_INSTALLED_OBJ_DIR "/usr/lib/kernelstats/bpf"

/*
 * bpf/ beside the running binary (a build tree: build/kstats, build/bpf/),
 * else ../lib/kernelstats/bpf from it (an installed PREFIX), else
 * KSTATS_INSTALLED_OBJ_DIR.
 */
const char *kstats_default_obj_dir(void);

#define KSTATS_OBJ_DIR_HELP "bpf/ beside the binary, else ../lib/kernelstats/bpf from it"

#endif /* KSTATS_PATHS_H */
