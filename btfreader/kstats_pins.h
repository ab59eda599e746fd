/* SPDX-License-Identifier: GPL-2.0 */
/* Pin names (doc/design.md "Names") and bpffs handling, shared by every tool. */
#ifndef KSTATS_PINS_H
#define KSTATS_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#define KSTATS_DEFAULT_PIN_DIR "/sys/fs/bpf/kernelstats"
#define KSTATS_BPFFS "/sys/fs/bpf"

/* dir/<kind>_<obj>_<name>, with '/' in name turned into '_'. */
int kstats_pin_path(char *buf, size_t len, const char *dir, const char *kind,
		    const char *obj, const char *name);

bool kstats_is_bpffs(const char *path);

/* The fd of pin, and its inode (the same before and after) into st; -EAGAIN:
 * the pin was replaced (a new inode) three times meanwhile. */
int kstats_pin_get(const char *pin, unsigned int file_flags, struct stat *st);
/* 0 while pin is still the inode st, 1 when it is another one, or -errno. */
int kstats_pin_changed(const char *pin, const struct stat *st);

/* The id of the BPF object fd (prog, map or link), or of the one pinned at pin now; or 0. */
__u32 kstats_fd_obj_id(int fd);
__u32 kstats_pin_id(const char *pin);

/* Mounts bpffs on /sys/fs/bpf when pin_dir lies under it and it is missing. */
int kstats_ensure_bpffs(const char *pin_dir, char *err, size_t errlen);

#endif /* KSTATS_PINS_H */
