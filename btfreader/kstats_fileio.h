/* SPDX-License-Identifier: GPL-2.0 */
/* Crash-safe file writes shared by the loader, pull and dump (doc/design.md). */
#ifndef KSTATS_FILEIO_H
#define KSTATS_FILEIO_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

/* fsync(2) of a directory: its new entries survive a crash; 0 or -errno. */
int kstats_fsync_dir(const char *dir);
/* The one crash-safe writer: buf into a new ".NAME.XXXXXX.tmp" (O_EXCL, O_NOFOLLOW),
 * fsynced, renamed over NAME (a regular file only, else -EINVAL), directory fsynced. */
int kstats_file_replace(const char *path, const void *buf, size_t len, mode_t mode);
/* Like kstats_file_replace(), but -EEXIST rather than replace anything at path. */
int kstats_file_create(const char *path, const void *buf, size_t len, mode_t mode);
/* kstats_file_replace() into a directory opened one component at a time, never via a
 * symlink, only if root's or ours and no one else's to write.  -EPERM: reason in msg. */
int kstats_file_replace_owned(const char *path, const void *buf, size_t len, mode_t mode,
			      char *msg, size_t msglen);
/* dir/from renamed to dir/to, dir fsynced; noreplace: -EEXIST when to exists. */
int kstats_rename_in(const char *dir, const char *from, const char *to, bool noreplace);
/* The temp files a killed writer left in dir (kstats_file_replace()'s, ours, unlocked). */
void kstats_remove_temps(const char *dir);
/* dir/name removed, then dir fsynced; 0 or -errno. */
int kstats_unlink_in(const char *dir, const char *name);
int kstats_write_full(int fd, const void *buf, size_t len);
/* fd read to its end into *buf (malloc'ed, NUL-terminated); -EFBIG past max bytes. */
int kstats_read_fd(int fd, size_t max, char **buf, size_t *len);
/* kstats_open_regular(path, O_RDONLY) then kstats_read_fd(); 0 or -errno. */
int kstats_read_file(const char *path, size_t max, char **buf, size_t *len);
/* mkdir -p that creates nothing it would refuse: dir and all above the caller's or root's
 * and writable by no one else (above it, a sticky /tmp may be); mkdirat() under opened
 * parents.  Without create, only the checks.  Fix in msg. */
int kstats_mkdir_private(const char *dir, mode_t mode, bool create, char *msg,
			 size_t len);

/* check on path's real path (leaf), then on each directory above up to "/". */
typedef int (*kstats_path_check_fn)(const char *given, const char *comp, bool leaf,
				    char *msg, size_t len);
int kstats_check_path_up(const char *path, kstats_path_check_fn check,
			 char *msg, size_t len);
/* open(2) of a regular file only (else -EINVAL), never via a symlink or blocking on a FIFO. */
int kstats_open_regular(const char *path, int flags, mode_t mode);
/* flock(LOCK_EX) retried every 50 ms for at most timeout_ns, then -EWOULDBLOCK. */
int kstats_flock_wait(int fd, uint64_t timeout_ns);
uint64_t kstats_clock_ns(clockid_t id);
/* /proc/sys/kernel/random/boot_id, its newline dropped; 0 or -errno. */
int kstats_boot_id(char *buf, size_t len);

#endif /* KSTATS_FILEIO_H */
