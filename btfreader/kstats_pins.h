/* SPDX-License-Identifier: GPL-2.0 */
/* Pin names (DESIGN.md "Names") and bpffs handling, shared by every tool. */
#ifndef KSTATS_PINS_H
#define KSTATS_PINS_H

#include <stdbool.h>
#include <stddef.h>

#define KSTATS_DEFAULT_PIN_DIR "/sys/fs/bpf/kernelstats"
#define KSTATS_BPFFS "/sys/fs/bpf"

/* dir/<kind>_<obj>_<name>, with '/' in name turned into '_'. */
int kstats_pin_path(char *buf, size_t len, const char *dir, const char *kind,
		    const char *obj, const char *name);

bool kstats_is_bpffs(const char *path);
/* Known to be on another filesystem (statfs may itself be denied on bpffs). */
bool kstats_off_bpffs(const char *path);
/* What a BPF fd is, from its inode name: "map", "program", "link" or "object". */
const char *kstats_fd_kind(int fd);

/* Mounts bpffs on /sys/fs/bpf when pin_dir lies under it and it is missing. */
int kstats_ensure_bpffs(const char *pin_dir, char *err, size_t errlen);

#endif /* KSTATS_PINS_H */
