// SPDX-License-Identifier: GPL-2.0
/*
 * bench/jni's C side, loaded into the same JVM as the Java reader so that
 * both read the same map under the same load, turn about: creates and pins
 * the map, and times the plain C reader (kstats_map_read into int64 rows).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jni.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_telemetry.h"
#include "kstats_reader.h"

struct c_reader {
	struct kstats_map *map;
	int64_t *rows;
};

/* libbpf's notes on the object's .kstats.* sections are no news here. */
static int warnings_only(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/*
 * compaction.bpf's histogram map, made a hash of entries and created alone
 * (no program loads), so that it has the object's BTF.
 */
static int create_map_fd(const char *obj_path, __u32 entries)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *map;
	int ret;

	libbpf_set_print(warnings_only);
	obj = bpf_object__open_file(obj_path, NULL);
	if (!obj)
		return -errno;
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, false);
	map = bpf_object__find_map_by_name(obj, "compaction_duration_map");
	ret = map ? 0 : -ENOENT;
	ret = ret ?: bpf_map__set_type(map, BPF_MAP_TYPE_HASH);
	ret = ret ?: bpf_map__set_max_entries(map, entries);
	ret = ret ?: bpf_object__load(obj);
	if (!ret)
		ret = dup(bpf_map__fd(map));
	ret = ret == -1 ? -errno : ret;
	bpf_object__close(obj);
	return ret;
}

static int fill_and_pin(int fd, __u32 entries, const char *pin)
{
	struct bpf_telemetry_accumulator *vals = calloc(entries, sizeof(*vals));
	__u32 *keys = calloc(entries, sizeof(*keys)), count = entries, k, b;
	int ret = -ENOMEM;

	if (keys && vals) {
		for (k = 0; k < entries; k++) {
			keys[k] = k * 7919;
			for (b = 0; b < BPF_TELEMETRY_NR_BUCKETS; b++)
				vals[k].buckets[b] = k + b;
		}
		ret = bpf_map_update_batch(fd, keys, vals, &count, NULL) ? -errno : 0;
		ret = ret ?: (bpf_obj_pin(fd, pin) ? -errno : 0);
	}
	free(keys);
	free(vals);
	return ret;
}

/* null, or why the map could not be made. */
JNIEXPORT jstring JNICALL Java_ReadBench_createMap(JNIEnv *env, jclass cls, jstring obj,
						   jstring pin, jint entries)
{
	const char *o = (*env)->GetStringUTFChars(env, obj, NULL);
	const char *p = (*env)->GetStringUTFChars(env, pin, NULL);
	int fd = o && p ? create_map_fd(o, entries) : -ENOMEM, ret;

	(void)cls;
	ret = fd < 0 ? fd : fill_and_pin(fd, entries, p);
	if (fd >= 0)
		close(fd);
	if (o)
		(*env)->ReleaseStringUTFChars(env, obj, o);
	if (p)
		(*env)->ReleaseStringUTFChars(env, pin, p);
	return ret ? (*env)->NewStringUTF(env, strerror(-ret)) : NULL;
}

JNIEXPORT jlong JNICALL Java_ReadBench_cOpen(JNIEnv *env, jclass cls, jstring pin)
{
	const char *p = (*env)->GetStringUTFChars(env, pin, NULL);
	struct kstats_map_opts mo = { .pin_path = p };
	struct c_reader *r = calloc(1, sizeof(*r));
	char err[KSTATS_ERR_LEN] = "";

	(void)cls;
	if (p && r && !kstats_map_open(&mo, &r->map, err, sizeof(err)))
		r->rows = calloc(kstats_map_max_rows(r->map),
				 kstats_map_ncols(r->map) * sizeof(*r->rows));
	if (p)
		(*env)->ReleaseStringUTFChars(env, pin, p);
	if (r && !r->rows) {
		fprintf(stderr, "bench_native: %s\n", err);
		kstats_map_close(r->map);
		free(r);
		r = NULL;
	}
	return (jlong)(intptr_t)r;
}

/* One read: its time in ns, or -1. */
JNIEXPORT jlong JNICALL Java_ReadBench_cRead(JNIEnv *env, jclass cls, jlong handle)
{
	struct c_reader *r = (struct c_reader *)(intptr_t)handle;
	char err[KSTATS_ERR_LEN];
	struct timespec t0, t1;
	size_t n;
	int ret;

	(void)env;
	(void)cls;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = kstats_map_read(r->map, r->rows, kstats_map_max_rows(r->map), &n, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ret ? -1 : (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
}

JNIEXPORT void JNICALL Java_ReadBench_cClose(JNIEnv *env, jclass cls, jlong handle)
{
	struct c_reader *r = (struct c_reader *)(intptr_t)handle;

	(void)env;
	(void)cls;
	kstats_map_close(r->map);
	free(r->rows);
	free(r);
}
