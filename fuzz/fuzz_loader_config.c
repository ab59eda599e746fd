// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as loader.conf (loader/config.c).
 * Beyond "no crash, no leak": a file that parses disables only names an
 * object can have, and a file that does not names its line in the error.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"

static void check_names(const struct loader_ctx *ctx)
{
	size_t i;
	const char *c;

	for (i = 0; i < ctx->ndisabled; i++) {
		if (!*ctx->disabled[i])
			abort();
		for (c = ctx->disabled[i]; *c; c++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_-", *c))
				abort();	/* a control byte or separator got through */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct loader_ctx ctx = {};
	char err[512] = "", *buf = malloc(size + 1);
	int ret;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	ret = parse_config(&ctx, buf, size, "loader.conf", err, sizeof(err));
	if (ret && strncmp(err, "loader.conf:", 12) && ret != -ENOMEM)
		abort();	/* every refusal names its line */
	if (!ret)
		check_names(&ctx);
	free_config(&ctx);
	free(buf);
	return 0;
}
