// SPDX-License-Identifier: GPL-2.0
/* Kernel version in force, loader.conf's disabled objects, and object trust. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kstats_fileio.h"
#include "loader.h"

/* Far above any real file; bounds what a hostile one costs. */
#define CONFIG_MAX_BYTES (64u << 10)
#define OBJ_NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"

/* "X.Y[.Z][anything]"; like LINUX_VERSION_CODE, parts above 255 saturate. */
int parse_kver(const char *s, __u32 *kver)
{
	unsigned int v[3] = { 0, 0, 0 };
	unsigned long x;
	char *end;
	int n = 0;

	for (; n < 3 && isdigit((unsigned char)*s); s = end + 1) {
		errno = 0;
		x = strtoul(s, &end, 10);
		if (errno)
			return -EINVAL;
		v[n++] = x > 255 ? 255 : x;
		if (*end != '.')
			break;
	}
	if (n < 2)
		return -EINVAL;
	*kver = KSTATS_KVER(v[0], v[1], v[2]);
	return 0;
}

struct kver_buf kver_str(__u32 kver)
{
	struct kver_buf b;

	if (kver == KSTATS_KVER_INF)
		snprintf(b.s, sizeof(b.s), "inf");
	else
		snprintf(b.s, sizeof(b.s), "%u.%u.%u", kver >> 16, (kver >> 8) & 0xff,
			 kver & 0xff);
	return b;
}

bool kver_in(__u32 kver, __u32 min, __u32 max, char *why, size_t len)
{
	if (kver >= min && kver < max)
		return true;
	snprintf(why, len, "kernel %s is outside [%s, %s)", kver_str(kver).s,
		 kver_str(min).s, kver_str(max).s);
	return false;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int add_disabled(struct loader_ctx *ctx, const char *list, char *err, size_t errlen)
{
	char *copy = strdup(list), *tok, *save = NULL, **grown;
	int ret = copy ? 0 : -ENOMEM;
	size_t n;

	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		tok = trim(tok);
		if (!strcmp(tok, "all")) {
			ctx->disable_all = true;
			continue;
		}
		if (!*tok || strlen(tok) >= KSTATS_NAME_LEN || tok[strspn(tok, OBJ_NAME_CHARS)]) {
			snprintf(err, errlen, "'%s' is not an object name; expected "
				 "all or names like compaction", tok);
			ret = -EINVAL;
			break;
		}
		/* Room for one more name: the capacity doubles at each power of two. */
		n = ctx->ndisabled;
		grown = n >= 8 && (n & (n - 1)) ? ctx->disabled :
			realloc(ctx->disabled, (n < 8 ? 8 : 2 * n) * sizeof(*grown));
		if (grown)
			ctx->disabled = grown;
		if (!grown || !(grown[ctx->ndisabled] = strdup(tok))) {
			ret = -ENOMEM;
			break;
		}
		ctx->ndisabled++;
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	free(copy);
	return ret;
}

static int config_line(struct loader_ctx *ctx, char *line, char *err, size_t errlen)
{
	char *eq, *key, *val;

	line[strcspn(line, "#")] = 0;
	line = trim(line);
	if (!*line)
		return 0;
	eq = strchr(line, '=');
	if (!eq)
		return kstats_fail(err, errlen, EINVAL, "expected 'key = value', got '%s'", line);
	*eq = 0;
	key = trim(line);
	val = trim(eq + 1);
	if (strcmp(key, "disable"))
		return kstats_fail(err, errlen, EINVAL, "unknown key '%s'; the only key is "
				   "disable", key);
	if (!*val)
		return kstats_fail(err, errlen, EINVAL, "disable needs a value: all, or "
				   "object names");
	return add_disabled(ctx, val, err, errlen);
}

/* buf holds len bytes of the file named path, and room for one more. */
int parse_config(struct loader_ctx *ctx, char *buf, size_t len, const char *path,
		 char *err, size_t errlen)
{
	char why[256], *line, *nl, *end = buf + len;
	int lineno = 0, ret = 0;

	for (line = buf; !ret && line < end; line = nl + 1) {
		nl = memchr(line, '\n', end - line) ?: end;
		lineno++;
		if (memchr(line, 0, nl - line)) {
			snprintf(why, sizeof(why), "a NUL byte; the file must be text: "
				 "remove it");
			ret = -EINVAL;
		} else {
			*nl = 0;
			ret = config_line(ctx, line, why, sizeof(why));
		}
		if (ret)
			snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
	}
	return ret;
}

/* Read whole: a cut line would turn the tail of a long comment into a line. */
int read_config(struct loader_ctx *ctx, const char *path, bool must_exist,
		char *err, size_t errlen)
{
	size_t len;
	char *buf;
	int ret = kstats_read_file(path, CONFIG_MAX_BYTES, &buf, &len);

	if (ret == -ENOENT && !must_exist)
		return 0;
	if (ret == -EFBIG)
		snprintf(err, errlen, "config %s is larger than %u bytes, the limit; "
			 "shorten it", path, CONFIG_MAX_BYTES);
	else if (ret)
		snprintf(err, errlen, "cannot read config %s: %s", path,
			 ret == -ELOOP ? "it is a symbolic link; name the file itself" :
			 ret == -EINVAL ? "not a regular file; replace it with one" :
			 strerror(-ret));
	if (ret)
		return ret;
	ret = parse_config(ctx, buf, len, path, err, errlen);
	free(buf);
	return ret;
}

bool is_disabled(const struct loader_ctx *ctx, const char *obj)
{
	size_t i;

	for (i = 0; i < ctx->ndisabled && strcmp(ctx->disabled[i], obj); i++)
		;
	return ctx->disable_all || i < ctx->ndisabled;
}

void free_config(struct loader_ctx *ctx)
{
	size_t i;

	for (i = 0; i < ctx->ndisabled; i++)
		free(ctx->disabled[i]);
	free(ctx->disabled);
}

/* Who can write an object or a dir above it loads kernel code: each must be root's only. */
static int judge(const char *path, const char *comp, int fd, bool leaf,
		 char *why, size_t len)
{
	/* "dir/x.bpf: /abs/dir is ..." names the given path when they differ. */
	const char *given = strcmp(path, comp) ? path : "", *sep = *given ? ": " : "";
	struct stat st;

	if (fd >= 0 ? fstat(fd, &st) : stat(comp, &st))
		return kstats_fail(why, len, errno, "%s%scannot stat %s: %s", given, sep, comp,
				   strerror(errno));
	if (st.st_uid)
		return kstats_fail(why, len, EPERM, "%s%s%s is owned by uid %u, not root, so "
				   "its owner could load code into the kernel; run: chown "
				   "root %s", given, sep, comp, (unsigned int)st.st_uid, comp);
	/* Above the leaf, a sticky root directory (/tmp) keeps root's entries. */
	if (!leaf && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX))
		return 0;
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return kstats_fail(why, len, EPERM, "%s%s%s is %s-writable (mode %04o), so "
				   "others could load code into the kernel; run: chmod go-w "
				   "%s", given, sep, comp, st.st_mode & S_IWOTH ? "world" :
				   "group", (unsigned int)(st.st_mode & 07777), comp);
	return 0;
}

static int check_component(const char *path, const char *comp, bool leaf,
			   char *why, size_t len)
{
	return judge(path, comp, -1, leaf, why, len);
}

int check_trusted(const char *path, char *why, size_t len)
{
	return kstats_check_path_up(path, check_component, why, len);
}

int check_trusted_fd(const char *path, const char *real, int fd, char *why, size_t len)
{
	return judge(path, real, fd, true, why, len) ?:
	       kstats_check_path_up(real, check_component, why, len);
}
