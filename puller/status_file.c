// SPDX-License-Identifier: GPL-2.0
/* Reads the loader status file (contract in status.h) with json-c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kstats.h"
#include "kstats_fileio.h"
#include "status.h"

/* The loader writes a few KiB; anything past this is not its file. */
#define STATUS_MAX_BYTES (16u << 20)

static int read_all(const char *path, char **buf, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;
	size_t len;

	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOENT)
			snprintf(err, errlen, "no loader status at %s; " KSTATS_FIX_LOAD
				 " (or pass --status-file)", path);
		else
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		kstats_add_fix(err, errlen, ret);
		return ret;
	}
	ret = kstats_read_fd(fd, STATUS_MAX_BYTES, buf, &len);
	close(fd);
	if (ret)
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-ret));
	return ret;
}

int kstats_status_load(const char *path, struct json_object **out,
		       char *err, size_t errlen)
{
	enum json_tokener_error jerr = json_tokener_success;
	char *buf = NULL;
	int64_t version;
	int ret = read_all(path, &buf, err, errlen);

	*out = NULL;
	if (ret) {
		free(buf);
		return ret;
	}
	*out = json_tokener_parse_verbose(buf, &jerr);
	free(buf);
	if (!*out || !json_object_is_type(*out, json_type_object)) {
		snprintf(err, errlen, "%s is not a loader status file: %s; " KSTATS_FIX_LOAD
			 " to rewrite it", path, *out ? "not a JSON object"
							: json_tokener_error_desc(jerr));
		json_object_put(*out);
		*out = NULL;
		return -EINVAL;
	}
	version = kstats_jint(*out, "version");
	if (version != KSTATS_STATUS_VERSION || !kstats_jarr(*out, "objects")) {
		snprintf(err, errlen, "%s: status version %lld, this kstats reads version %d "
			 "with an objects array; " KSTATS_FIX_LOAD " from the same release",
			 path, (long long)version, KSTATS_STATUS_VERSION);
		json_object_put(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

const char *kstats_jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}

int64_t kstats_jint(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return 0;
	return json_object_get_int64(v);
}

bool kstats_jbool(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) &&
	       json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

struct json_object *kstats_jarr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

int kstats_status_reason(const char *path, const char *obj, char *buf, size_t len)
{
	struct json_object *st, *objs, *o;
	char err[512];
	size_t i;
	int ret = kstats_status_load(path, &st, err, sizeof(err));

	if (ret)
		return ret;
	objs = kstats_jarr(st, "objects");
	ret = -ENOENT;
	for (i = 0; i < json_object_array_length(objs); i++) {
		o = json_object_array_get_idx(objs, i);
		if (strcmp(kstats_jstr(o, "name"), obj))
			continue;
		snprintf(buf, len, "%s%s%s", kstats_jstr(o, "outcome"),
			 *kstats_jstr(o, "reason") ? ": " : "", kstats_jstr(o, "reason"));
		ret = 0;
		break;
	}
	json_object_put(st);
	return ret;
}
