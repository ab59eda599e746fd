/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the kstats dump/status tests: a private object directory and
 * pin directory loaded by the real loader, known accumulator values written
 * into the pinned maps, the kstats binary run with captured output, and
 * golden files under tests/golden/dump (KSTATS_UPDATE_GOLDEN=1 rewrites
 * them from the current output).
 */
#ifndef KSTATS_DUMPTEST_H
#define KSTATS_DUMPTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ktest.h"

struct dumptest {
	struct ktest kt;
	char tmp[200];		/* mktemp dir (0755): objects, outputs, status */
	char kstats[300];	/* the kstats binary */
};

struct dt_result {
	int status;		/* exit status, 128 + signal */
	char *out, *err;
};

/*
 * objs: paths relative to the build tree ("bpf/compaction.bpf",
 * "tests/bpf/dumpLabels.bpf"), linked into the private object dir.
 */
int dt_init(struct dumptest *d, const char *tag, const char *const *objs);
void dt_fini(struct dumptest *d);
/* Links one more object into the object dir (without loading it). */
int dt_add_object(struct dumptest *d, const char *rel);

/* Writes value at key into the pinned map obj/map (BPF_ANY). */
int dt_map_update(struct dumptest *d, const char *obj, const char *map,
		  const void *key, const void *value);
int dt_map_lookup(struct dumptest *d, const char *obj, const char *map,
		  const void *key, void *value);
int dt_map_delete(struct dumptest *d, const char *obj, const char *map,
		  const void *key);
/* An accumulator with the given (bucket, count) pairs, -1 terminated. */
void dt_buckets(uint64_t *buckets, const int64_t *pairs);

/* Runs kstats with args (NULL terminated); as_nobody drops to uid 65534. */
int dt_run(struct dumptest *d, struct dt_result *r, bool as_nobody,
	   const char *const *args);
/* Runs "sh -c cmd" with input on stdin. */
int dt_sh(const char *cmd, const char *input, struct dt_result *r);
void dt_result_free(struct dt_result *r);
/* Starts kstats with stdout and stderr on pipes; returns the pid. */
pid_t dt_spawn(struct dumptest *d, const char *const *args, int *out_fd,
	       int *err_fd);
/* Everything up to EOF (malloc'd), or NULL. */
char *dt_read_all(int fd);
/* Reads one line from fd (without the newline) into buf; -ETIMEDOUT. */
int dt_read_line(int fd, char *buf, size_t len, int timeout_ms);

/* 0 when text equals tests/golden/dump/name; prints a diff otherwise. */
int dt_golden(const char *name, const char *text);
/* Path of a file in the temp dir. */
const char *dt_path(struct dumptest *d, const char *name, char *buf, size_t len);
/* 0 if every output of the jq filter on json is true and there is one. */
int dt_jq_all(const char *filter, const char *json);
bool dt_have(const char *tool);

#endif /* KSTATS_DUMPTEST_H */
