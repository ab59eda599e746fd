/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text from files, maps and atoms, made safe to print: printable ASCII as
 * is, any other byte and '\' as \xNN.  One record stays one line, and
 * nothing reaches a terminal or the kernel log as a command.
 */
#ifndef KSTATS_ESCAPE_H
#define KSTATS_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Room for any n bytes escaped, with the NUL. */
#define KSTATS_ESCAPED_SIZE(n) (4 * (n) + 1)

/*
 * The len bytes at s escaped into out (outlen >= 1), whole escapes only,
 * NUL-terminated.  Returns how many bytes of s it took.
 */
size_t kstats_escape(char *out, size_t outlen, const char *s, size_t len);

void kstats_fputs_escaped(const char *s, FILE *f);

#endif /* KSTATS_ESCAPE_H */
