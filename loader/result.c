// SPDX-License-Identifier: GPL-2.0
/* An object run's outcome and pins, those kept from earlier runs, and the status file. */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "kstats_fileio.h"
#include "kstats_pins.h"
#include "loader.h"

/* The previous status (from buf, the fuzzer's, else the file) if about this pin dir. */
void status_parse_prev(struct loader_ctx *ctx, const char *buf, size_t len)
{
	struct kstats_status *st = calloc(1, sizeof(*st));
	char err[1024];
	int ret;

	status_free_prev(ctx);
	if (!st)
		return;
	ret = buf ? kstats_status_parse(buf, len, ctx->status_path, st, err, sizeof(err)) :
	      kstats_status_read(ctx->status_path, st, err, sizeof(err));
	if (ret && ret != -ENOENT)
		log_msg(LOG_WARNING, "warning: ignoring unreadable status: %s; its pins are "
			"not known to this run", err);
	else if (!ret && strcmp(st->pin_dir, ctx->pin_dir))
		log_msg(LOG_WARNING, "warning: ignoring %s: it is about pin dir %s, not %s",
			ctx->status_path, *st->pin_dir ? st->pin_dir : "(none)", ctx->pin_dir);
	else if (!ret) {
		ctx->prev = st;
		return;
	}
	kstats_status_free(st);
	free(st);
}

void status_free_prev(struct loader_ctx *ctx)
{
	if (ctx->prev)
		kstats_status_free(ctx->prev);
	free(ctx->prev);
	ctx->prev = NULL;
}

static const struct kstats_status_map *prev_map(const struct loader_ctx *ctx,
						const char *obj, const char *map,
						__u32 map_id)
{
	const struct kstats_status_map *m =
		kstats_status_obj_map(kstats_status_obj(ctx->prev, obj), map);

	return m && m->map_id == map_id ? m : NULL;
}

/* Creation times carry over only for the very same map. */
void prev_map_created(const struct loader_ctx *ctx, const char *obj, const char *map,
		      __u32 map_id, uint64_t *boot_ns, uint64_t *real_ns)
{
	const struct kstats_status_map *m = prev_map(ctx, obj, map, map_id);

	*boot_ns = m ? m->created_boot_ns : 0;
	*real_ns = m ? m->created_real_ns : 0;
}

/* Into key and value, of KSTATS_NAME_LEN; both "" when not known. */
int prev_map_types(const struct loader_ctx *ctx, const char *obj, const char *map,
		   __u32 map_id, char *key, char *value)
{
	const struct kstats_status_map *m = prev_map(ctx, obj, map, map_id);
	bool known = m && *m->key_type && *m->value_type;

	snprintf(key, KSTATS_NAME_LEN, "%s", known ? m->key_type : "");
	snprintf(value, KSTATS_NAME_LEN, "%s", known ? m->value_type : "");
	return known ? 0 : -ENOENT;
}

/* The loader writes its strings in place: n pairs (char **, room of its kind). */
static int make_rooms(int n, ...)
{
	char **s[8];
	va_list ap;
	int i, ret = 0;

	va_start(ap, n);
	for (i = 0; i < n; i++) {
		s[i] = va_arg(ap, char **);
		if (!(*s[i] = calloc(1, va_arg(ap, int))))
			ret = -ENOMEM;
	}
	va_end(ap);
	for (i = 0; ret && i < n; i++) {
		free(*s[i]);
		*s[i] = NULL;
	}
	return ret;
}

int obj_init(struct kstats_status_obj *o)
{
	return make_rooms(4, &o->name, KSTATS_NAME_LEN, &o->path, LOADER_PATH_LEN,
			  &o->reason, LOADER_REASON_LEN, &o->copy, LOADER_PATH_LEN);
}

int prog_init(struct kstats_status_prog *p)
{
	return make_rooms(7, &p->name, KSTATS_NAME_LEN, &p->section, LOADER_SECTION_LEN,
			  &p->attach, KSTATS_NAME_LEN, &p->attach_type, LOADER_TYPE_LEN,
			  &p->reason, LOADER_REASON_LEN, &p->prog_pin, LOADER_PATH_LEN,
			  &p->link_pin, LOADER_PATH_LEN);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Objects this run did not process: as they were after an env error, else kept as ABSENT. */
static void carry_prev(const struct loader_ctx *ctx, const struct kstats_status_obj *res,
		       size_t n, bool as_they_were, struct json_object *objs)
{
	const struct kstats_status_obj *o;
	struct json_object *kept, *copy;
	size_t i, j;

	for (i = 0; ctx->prev && i < ctx->prev->nobjs; i++) {
		o = &ctx->prev->objs[i];
		for (j = 0; j < n && strcmp(res[j].name, o->name); j++)
			;
		if (!*o->name || j < n)
			continue;
		if (as_they_were) {
			json_object_array_add(objs, json_object_get(o->json));
			continue;
		}
		kept = json_object_new_array();
		for (j = 0; j < o->npins; j++)
			if (pin_of(ctx, o->pins[j], o->name) && !access(o->pins[j], F_OK))
				json_object_array_add(kept, json_object_new_string(o->pins[j]));
		copy = NULL;
		if (!json_object_array_length(kept) ||
		    json_object_deep_copy(o->json, &copy, NULL)) {
			json_object_put(kept);
			continue;
		}
		json_object_object_add(copy, "pins", kept);
		json_object_object_add(copy, "outcome", json_object_new_string("ABSENT"));
		json_object_object_add(copy, "reason", json_object_new_string(
			"no longer in the object directory; its pins stay until "
			"kstats-loader --unload"));
		json_object_array_add(objs, copy);
	}
}

/* The results are the file's structs: written as they are, pins in order. */
int status_write(const struct loader_ctx *ctx, struct kstats_status_obj *res,
		 size_t n, __u64 started_ns, const char *error)
{
	char boot_id[64], none[1] = "";
	struct kstats_status st = {
		.kernel_release = (char *)ctx->release, .kernel_version = ctx->kver,
		.boot_id = boot_id, .started_boot_ns = started_ns,
		.finished_boot_ns = kstats_clock_ns(CLOCK_BOOTTIME),
		.obj_dir = (char *)ctx->obj_dir, .pin_dir = (char *)ctx->pin_dir,
		.error = error ? (char *)error : none, .objs = res, .nobjs = n };
	struct json_object *root, *objs;
	const char *text;
	size_t i;
	int ret = -ENOMEM;

	kstats_boot_id(boot_id, sizeof(boot_id));
	for (i = 0; i < n; i++)
		if (res[i].npins)
			qsort(res[i].pins, res[i].npins, sizeof(*res[i].pins), cmp_str);
	root = kstats_status_json(&st);
	if (root && json_object_object_get_ex(root, "objects", &objs)) {
		carry_prev(ctx, res, n, error, objs);
		text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_NOSLASHESCAPE);
		ret = kstats_file_replace(ctx->status_path, text, strlen(text), 0644);
	}
	json_object_put(root);
	return ret;
}

/* Owners cached per run (a lookup reads /etc/passwd, then every NSS module); one scratch. */
#define OWNERS_CACHED 4
static struct owner {
	char uid[64], gid[64];
	uid_t u;
	gid_t g;
} owners[OWNERS_CACHED + 1];

/* getpwnam(3): these errnos, or none, mean "no such entry". */
static int lookup_error(int err)
{
	return err == ENOENT || err == ESRCH || err == EBADF || err == EPERM ? 0 : err;
}

int apply_owner(const char *path, const char *uid, const char *gid,
		unsigned int mode)
{
	/* The cache, and getpwnam()'s static result, are the threads'. */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static unsigned int next;
	static bool warned;
	struct passwd *pw;
	struct group *gr;
	struct owner *o;
	uid_t u;
	gid_t g;
	int err;

	pthread_mutex_lock(&lock);
	for (o = owners; o < owners + OWNERS_CACHED; o++)
		if (*o->uid && !strcmp(o->uid, uid) && !strcmp(o->gid, gid))
			goto cached;
	errno = 0;
	pw = getpwnam(uid);
	err = pw ? 0 : lookup_error(errno);
	errno = 0;
	gr = getgrnam(gid);
	err = err ?: gr ? 0 : lookup_error(errno);
	if (err && !warned)
		log_msg(LOG_WARNING, "warning: cannot look up %s:%s (%s); pins "
			"left to root only: run the loader again", uid, gid, strerror(err));
	else if ((!pw || !gr) && !warned)	/* only root can read: safe, so go on */
		log_msg(LOG_WARNING, "warning: %s%s%s unknown, using root; run make "
			"install (creates group kstats)", pw ? "" : uid,
			!pw && !gr ? " and " : "", gr ? "" : gid);
	warned |= !pw || !gr;
	/* An error is not cached: the next pin looks again. */
	o = &owners[err ? OWNERS_CACHED : next++ % OWNERS_CACHED];
	o->u = pw ? pw->pw_uid : 0;
	o->g = gr ? gr->gr_gid : 0;
	if (!err && (snprintf(o->uid, sizeof(o->uid), "%s", uid) >= (int)sizeof(o->uid) ||
		     snprintf(o->gid, sizeof(o->gid), "%s", gid) >= (int)sizeof(o->gid)))
		o->uid[0] = 0;	/* too long to keep: looked up each time */
cached:
	u = o->u;
	g = o->g;
	pthread_mutex_unlock(&lock);
	return chown(path, u, g) || chmod(path, mode) ? -errno : 0;
}

bool owns_pin(const struct kstats_status_obj *res, const char *path)
{
	size_t i;

	for (i = 0; i < res->npins; i++)
		if (!strcmp(res->pins[i], path))
			return true;
	return false;
}

int own_pin(struct kstats_status_obj *res, const char *path)
{
	char **grown;

	if (owns_pin(res, path))
		return 0;
	grown = realloc(res->pins, (res->npins + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	res->pins = grown;
	if (!(res->pins[res->npins] = strdup(path)))
		return -ENOMEM;
	res->npins++;
	return 0;
}

/* A direct entry of the pin dir: all the status file may make us touch. */
bool in_pin_dir(const struct loader_ctx *ctx, const char *path)
{
	size_t n = strlen(ctx->pin_dir);

	return path && !strncmp(path, ctx->pin_dir, n) && path[n] == '/' &&
	       path[n + 1] && !strchr(path + n + 1, '/') && strcmp(path + n + 1, "..");
}

/* Flat pin names <kind>_<obj>_<name> need [A-Za-z][A-Za-z0-9]*; else -EINVAL and a fix. */
int object_name_check(const char *name, char *fix, size_t len)
{
	bool up = false;
	size_t i, n;

	n = snprintf(fix, len, "%s", isalpha((unsigned char)name[0]) ? "" : "obj");
	for (i = 0; name[i] && n + 1 < len; i++) {
		if (isalnum((unsigned char)name[i]) && up && n)
			fix[n++] = toupper((unsigned char)name[i]);
		else if (isalnum((unsigned char)name[i]))
			fix[n++] = name[i];
		up = !isalnum((unsigned char)name[i]);
	}
	fix[n] = 0;
	return strcmp(fix, name) ? -EINVAL : 0;
}

/* Whether path is one of obj's pins, or one moved aside (aside_<ns>_<pin>). */
bool pin_of(const struct loader_ctx *ctx, const char *path, const char *obj)
{
	static const char *const kinds[] = { "map_", "link_", "prog_" };
	size_t i, k, n = strlen(obj);
	const char *base;

	if (!in_pin_dir(ctx, path) || !n)
		return false;
	base = strrchr(path, '/') + 1;
	if (!strncmp(base, "aside_", 6)) {
		base += 6 + strspn(base + 6, "0123456789");
		if (*base++ != '_')
			return false;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		k = strlen(kinds[i]);
		if (!strncmp(base, kinds[i], k) && !strncmp(base + k, obj, n) &&
		    base[k + n] == '_')
			return true;
	}
	return false;
}

bool is_pin_kind(const char *path, const char *kind)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, kind, strlen(kind));
}

enum kstats_outcome set_outcome(struct kstats_status_obj *res, enum kstats_outcome o,
				const char *fmt, ...)
{
	va_list ap;

	res->outcome = o;
	va_start(ap, fmt);
	vsnprintf(res->reason, LOADER_REASON_LEN, fmt, ap);
	va_end(ap);
	return o;
}

struct kstats_status_map *add_map(struct kstats_status_obj *res, const char *name,
			   const struct loader_ctx *ctx)
{
	struct kstats_status_map *grown, *m;
	size_t i;

	for (i = 0; i < res->nmaps; i++)
		if (!strcmp(res->maps[i].name, name))
			return &res->maps[i];
	grown = realloc(res->maps, (res->nmaps + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	res->maps = grown;
	m = memset(&res->maps[res->nmaps], 0, sizeof(*m));
	if (make_rooms(4, &m->name, KSTATS_NAME_LEN, &m->pin, LOADER_PATH_LEN,
		       &m->key_type, KSTATS_NAME_LEN, &m->value_type, KSTATS_NAME_LEN))
		return NULL;
	res->nmaps++;
	snprintf(m->name, KSTATS_NAME_LEN, "%s", name);
	if (kstats_pin_path(m->pin, LOADER_PATH_LEN, ctx->pin_dir, "map", res->name, name))
		m->pin[0] = 0;
	return m;
}

/* Pins the loader made for this object that still exist stay listed. */
void adopt_prev_pins(struct loader_ctx *ctx, struct kstats_status_obj *res)
{
	const struct kstats_status_obj *o = kstats_status_obj(ctx->prev, res->name);
	size_t i;

	for (i = 0; o && i < o->npins; i++)
		if (pin_of(ctx, o->pins[i], res->name) && !access(o->pins[i], F_OK))
			own_pin(res, o->pins[i]);
	if (o && *o->copy && !copy_path(ctx, res->name, res->copy, LOADER_PATH_LEN) &&
	    (strcmp(res->copy, o->copy) || access(res->copy, F_OK)))
		res->copy[0] = 0;
}

/* <run-dir>/<obj>.bpf, for a valid object name only; -EINVAL else. */
int copy_path(const struct loader_ctx *ctx, const char *obj, char *buf, size_t len)
{
	char fix[KSTATS_NAME_LEN];

	*buf = 0;
	if (object_name_check(obj, fix, sizeof(fix)) ||
	    (size_t)snprintf(buf, len, "%s/%s.bpf", ctx->run_dir, obj) >= len)
		return -EINVAL;
	return 0;
}

/* Forgets owned pins that no longer exist. */
void prune_pins(struct kstats_status_obj *res)
{
	size_t i;

	for (i = res->npins; i--;)
		if (access(res->pins[i], F_OK)) {
			free(res->pins[i]);
			res->pins[i] = res->pins[--res->npins];
		}
}
