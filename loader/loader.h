/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KSTATS_LOADER_H
#define KSTATS_LOADER_H

#include <pthread.h>
#include <stdio.h>
#include <linux/types.h>
#include <syslog.h>
#include <bpf/libbpf.h>

#include "kstats_objmeta.h"
#include "kstats_tool.h"

/* The room of each string the loader writes in place in its kstats_status_obj. */
#define LOADER_PATH_LEN 512
#define LOADER_REASON_LEN 2048
#define LOADER_SECTION_LEN 128
#define LOADER_TYPE_LEN 16

/* Exit codes (--help, doc/loader.md). */
enum {
	EXIT_OK = 0,		/* everything loaded, or skipped/failed non-critically */
	EXIT_CRITICAL = 1,	/* a critical object failed */
	EXIT_USAGE = 2,		/* bad option, --kver or config file */
	EXIT_ENV = 3,		/* no BPF, no bpffs, unusable directory */
	EXIT_LOCKED = 4,	/* another loader held the run dir lock too long */
};

/* What counts against a critical object: a failure, or a refused pin. */
static inline bool outcome_failed(enum kstats_outcome o)
{
	return o >= KSTATS_FAILED_OBJECT && o <= KSTATS_REFUSED_INCOMPATIBLE_PIN;
}

/*
 * One object per metric: the first in sorted order that loads or stays attached claims it,
 * as kstats_snapshot_unique does; on threads an object waits for earlier ones sharing one.
 */
struct metric_claim {
	char metric[KSTATS_NAME_LEN];
	char obj[KSTATS_NAME_LEN];
	size_t idx;			/* of the object, in the run's order */
};

struct metric_turn {
	const struct kstats_objmeta *meta;	/* read, and the object not done */
	bool done;
};

/* BTF names of a map's key and value types: part of its shape. */
struct map_types {
	char key[KSTATS_NAME_LEN];
	char value[KSTATS_NAME_LEN];
};

struct loader_ctx {
	const char *obj_dir;
	const char *pin_dir;
	char run_dir[LOADER_PATH_LEN];
	char status_path[LOADER_PATH_LEN];
	char release[65];		/* uname -r */
	__u32 kver;			/* KSTATS_KVER code in force */
	int replace_incompatible;
	bool disable_all;
	char **disabled;		/* object names */
	size_t ndisabled;
	struct btf *vmlinux_btf;	/* parsed at most once per run (gate.c) */
	bool vmlinux_tried;
	struct kstats_status *prev;	/* previous status file, or NULL */
	double lock_timeout_s;		/* wait at most this for the run dir lock */
	/* object.c's metric claims, under lock: objects load on several threads. */
	pthread_mutex_t lock;
	pthread_cond_t turn_done;
	struct metric_claim *claims;	/* metrics of loaded objects */
	size_t nclaims;
	struct metric_turn *turns;	/* one per object, in order */
};

/* log.c: stdout/stderr, and /dev/kmsg once log_to_kmsg() was called. */
void log_to_kmsg(void);
extern int log_verbose;		/* libbpf's log too */
void log_line(FILE *f, const char *prefix, int prio, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define log_msg(prio, ...) log_line(stderr, "kstats-loader: ", prio, __VA_ARGS__)
/* "<obj> <OUTCOME>: <reason>" */
#define log_result(prio, ...) log_line(stdout, "", prio, __VA_ARGS__)
int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap);
void log_capture(char *buf, size_t len);
struct log_held *log_hold(void);
void log_unhold(void);
void log_release(struct log_held *h);

/* config.c */
struct kver_buf {
	char s[96];
};
int parse_kver(const char *s, __u32 *kver);
struct kver_buf kver_str(__u32 kver);
bool kver_in(__u32 kver, __u32 min, __u32 max, char *why, size_t len);
int add_disabled(struct loader_ctx *ctx, const char *list, char *err, size_t errlen);
int read_config(struct loader_ctx *ctx, const char *path, bool must_exist,
		char *err, size_t errlen);
int parse_config(struct loader_ctx *ctx, char *buf, size_t len, const char *path,
		 char *err, size_t errlen);
bool is_disabled(const struct loader_ctx *ctx, const char *obj);
void free_config(struct loader_ctx *ctx);
/* 0 when only root can change path or a directory above it; else -EPERM or -errno. */
int check_trusted(const char *path, char *why, size_t len);
/* The same for an object: fd, opened by its resolved path real, is judged itself. */
int check_trusted_fd(const char *path, const char *real, int fd, char *why, size_t len);

/* gate.c */
bool attach_point_exists(struct loader_ctx *ctx, const char *section,
			 char *why, size_t len);
bool attach_point_deferred(const char *section);
const char *variant_name(__u32 variant);

/* result.c: the status file, pins and owners */
void status_parse_prev(struct loader_ctx *ctx, const char *buf, size_t len);
void status_free_prev(struct loader_ctx *ctx);
void prev_map_created(const struct loader_ctx *ctx, const char *obj, const char *map,
		      __u32 map_id, uint64_t *boot_ns, uint64_t *real_ns);
int prev_map_types(const struct loader_ctx *ctx, const char *obj, const char *map,
		   __u32 map_id, char *key, char *value);
int status_write(const struct loader_ctx *ctx, struct kstats_status_obj *res,
		 size_t n, __u64 started_ns, const char *error);
int apply_owner(const char *path, const char *uid, const char *gid,
		unsigned int mode);
/* Returns o. */
enum kstats_outcome set_outcome(struct kstats_status_obj *res, enum kstats_outcome o,
				const char *fmt, ...) __attribute__((format(printf, 3, 4)));
struct kstats_status_map *add_map(struct kstats_status_obj *res, const char *name,
			   const struct loader_ctx *ctx);
bool owns_pin(const struct kstats_status_obj *res, const char *path);
int own_pin(struct kstats_status_obj *res, const char *path);
void prune_pins(struct kstats_status_obj *res);
bool is_pin_kind(const char *path, const char *kind);
bool in_pin_dir(const struct loader_ctx *ctx, const char *path);
int object_name_check(const char *name, char *fix, size_t len);
bool pin_of(const struct loader_ctx *ctx, const char *path, const char *obj);
int copy_path(const struct loader_ctx *ctx, const char *obj, char *buf, size_t len);
int unload_all(struct loader_ctx *ctx, const char *flag);
void adopt_prev_pins(struct loader_ctx *ctx, struct kstats_status_obj *res);
int obj_init(struct kstats_status_obj *res);
int prog_init(struct kstats_status_prog *p);

/* One object's load in progress (object.c). */
struct prog_plan {
	const struct kstats_prog_meta *meta;
	struct bpf_program *prog;	/* in the current open of the object */
	bool in_range;
	bool available;
	bool rejected;			/* failed to load in an earlier attempt */
	bool deferred;			/* available unchecked: the load checks it */
	bool chosen;
	char why[256];			/* why not available */
	char *log;			/* verifier log of the current attempt */
};

struct obj_load {
	struct loader_ctx *ctx;
	size_t idx;			/* in the run's sorted order */
	struct kstats_status_obj *res;
	void *elf;			/* the file's bytes, read once */
	size_t elf_len;
	int untrusted;			/* check_trusted_fd() of the file read */
	struct kstats_objmeta meta;
	struct bpf_object *obj;
	struct prog_plan *pl;		/* parallel to res->progs */
	__u64 created_boot_ns;
	__u64 created_real_ns;
	char libbpf_err[512];		/* libbpf's first warning of a step */
	bool probed;			/* had its share of the probing budget */
};

/* Larger than any object a build produces; bounds what one file costs. */
#define OBJECT_MAX_BYTES (64u << 20)

/* variants.c: a program's gating, and the variant chosen per attach point. */
int init_progs(struct obj_load *l);
bool check_deferred(struct obj_load *l);
enum kstats_outcome choose_variants(struct obj_load *l);

/* publish.c: a pinned map's reuse, then the object's pins and links at once. */
enum kstats_outcome prepare_map(struct obj_load *l, struct bpf_map *map);
void publish(struct obj_load *l);

/* object.c: the idx-th object of the run, in sorted order. */
void load_object(struct loader_ctx *ctx, size_t idx, const char *path,
		 struct kstats_status_obj *res);

/* probe.c: libbpf opens an object in a child first. */
void probe_start(size_t nobjs);
/* argv[1] of the prober that replaces a crashed one (never for users). */
#define PROBE_SERVER_ARG "--probe-server"
#define PROBE_SERVER_FD 3	/* its socket */
void probe_server_main(void) __attribute__((noreturn));
struct bpf_object *obj_open_mem(const char *name, const void *elf, size_t len);
int probe_open(struct obj_load *l);
/* An object done without probe_open(): the budget is shared by those left. */
void probe_skip(void);

/* pin.c: shape checks, atomic publication, link replacement. */
int pin_open(const char *path);
void map_type_names(const struct btf *obj_btf, struct bpf_map *map, char *key, char *value);
int map_shape_check(const struct btf *obj_btf, struct bpf_map *map, int pinned_fd,
		    const struct map_types *known, char *why, size_t len);
bool ring_consumable(struct bpf_map *map, int fd, char *why, size_t len);

struct pin_txn {
	const char *pin_dir;
	struct pin_entry *e;
	size_t n;
};
int txn_pin(struct pin_txn *txn, int fd, const char *final, const char *aside,
	    const char *uid, const char *gid, unsigned int mode);
int txn_commit(struct pin_txn *txn, char *why, size_t len);
void txn_abort(struct pin_txn *txn);
void txn_remove_stale(const char *pin_dir);

struct link_swap *swap_begin(const struct kstats_status_obj *res, char *why, size_t len);
int swap_keep(struct link_swap *sw, const char *link_pin, int new_prog_fd,
	      __u32 *prog_id);
int swap_detach(struct link_swap *sw, char *why, size_t len);
void swap_rollback(struct link_swap *sw);
void swap_free(struct link_swap *sw);

#endif /* KSTATS_LOADER_H */
