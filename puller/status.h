/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The loader's status file (written by kstats-loader, read here):
 * {"version":1,"kernel_release":"...","objects":[{"name","path","outcome",
 *  "reason","critical","programs":[{"name","section","attach","attach_type",
 *  "outcome","reason","prog_id","link_pin"}],"maps":[{"name","pin","map_id",
 *  "reused","created_boottime_ns","created_realtime_ns"}]}]}
 */
#ifndef KSTATS_STATUS_H
#define KSTATS_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#define KSTATS_STATUS_VERSION 1

/* Parses path; -ENOENT/-EACCES/-EINVAL with the fix in err. */
int kstats_status_load(const char *path, struct json_object **out,
		       char *err, size_t errlen);
/* Member key of o as a string ("" when absent), integer or bool (0) or array (NULL). */
const char *kstats_jstr(struct json_object *o, const char *key);
int64_t kstats_jint(struct json_object *o, const char *key);
bool kstats_jbool(struct json_object *o, const char *key);
struct json_object *kstats_jarr(struct json_object *o, const char *key);

#endif /* KSTATS_STATUS_H */
