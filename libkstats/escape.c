// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "kstats_escape.h"

size_t kstats_escape(char *out, size_t outlen, const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\') {
			if (n + 2 > outlen)
				break;
			out[n++] = c;
		} else {
			if (n + 5 > outlen)
				break;
			n += snprintf(out + n, outlen - n, "\\x%02x", c);
		}
	}
	out[n] = 0;
	return i;
}

void kstats_fputs_escaped(const char *s, FILE *f)
{
	size_t len = strlen(s), took;
	char buf[256];

	for (; len; s += took, len -= took) {
		took = kstats_escape(buf, sizeof(buf), s, len);
		fputs(buf, f);
	}
}
