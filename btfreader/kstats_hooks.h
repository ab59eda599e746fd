/* SPDX-License-Identifier: GPL-2.0 */
/* Test hooks (tests/hooks/hooks.c, -DKSTATS_TEST_HOOKS); shipped, each is empty. */
#ifndef KSTATS_HOOKS_H
#define KSTATS_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef KSTATS_TEST_HOOKS
/* The pull reached point (tests/hooks/fault_points.c). */
void kstats_hook_point(const char *point);
/* The temp file that becomes name is written and fsynced, not renamed. */
void kstats_hook_temp(const char *name, int fd);
/* Replaces the clocks' readings (CLOCK_BOOTTIME, CLOCK_REALTIME, ns). */
void kstats_hook_clock(uint64_t *boot, uint64_t *real);
/* True with a boot id in buf in place of the kernel's. */
bool kstats_hook_boot_id(char *buf, size_t len);
#else
static inline void kstats_hook_point(const char *point) { (void)point; }
static inline void kstats_hook_temp(const char *name, int fd) { (void)name; (void)fd; }
static inline void kstats_hook_clock(uint64_t *boot, uint64_t *real) { (void)boot; (void)real; }
static inline bool kstats_hook_boot_id(char *buf, size_t len) { (void)buf; (void)len; return false; }
#endif

#endif /* KSTATS_HOOKS_H */
