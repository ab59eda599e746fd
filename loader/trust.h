/* SPDX-License-Identifier: GPL-2.0 */
/* Refuses BPF code that anyone but root could have written. */
#ifndef KSTATS_TRUST_H
#define KSTATS_TRUST_H

#include <stddef.h>

/*
 * 0 when only root can change path (an object directory or object file)
 * or any directory above it (a sticky root directory such as /tmp may be
 * shared); else -EPERM, or -errno when path cannot be resolved, with a
 * one-line reason naming the fix in why.
 */
int check_trusted(const char *path, char *why, size_t len);
/* The same for an object: fd, opened by its resolved path real, is judged itself. */
int check_trusted_fd(const char *path, const char *real, int fd, char *why, size_t len);

#endif /* KSTATS_TRUST_H */
