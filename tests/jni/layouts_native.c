// SPDX-License-Identifier: GPL-2.0
/*
 * JniReaderTest's native helper: creates the maps of reader_layouts.bpf
 * with libbpf (no programs), fills those with enums, char arrays, signed
 * and u64 values and a key/value name clash, and pins them as the loader
 * would: DIR/map_reader_layouts_<name>.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <jni.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../bpf/reader_layouts.h"

static const char *const names[] = { "jni", "sixteen_chars_ok", "", "tab\there\\" };

static int fill(struct bpf_object *obj)
{
	int small = bpf_object__find_map_fd_by_name(obj, "small_map");
	int flags = bpf_object__find_map_fd_by_name(obj, "flags_map");
	int name = bpf_object__find_map_fd_by_name(obj, "name_map");
	int clash = bpf_object__find_map_fd_by_name(obj, "clash_map");
	static const enum rd_color colors[] = { RD_COLOR_NEG, RD_COLOR_GREEN, RD_COLOR_BLUE };
	int ret = 0;
	__u32 i;

	for (i = 0; i < 4; i++) {
		struct rd_name_value nv = { .len = strlen(names[i]) };

		memcpy(nv.name, names[i], strlen(names[i]));	/* the 16-char one: no NUL */
		ret = ret ?: bpf_map_update_elem(name, &i, &nv, BPF_ANY);
	}
	for (i = 0; i < 3; i++) {
		struct rd_flags_value fv = { .on = i != 1, .tag = 'x' + i, .last = colors[2 - i],
					     .delta = -7 * (int)i };
		struct rd_small_key sk = { .a = 200 + i, .b = 65535 - i };
		struct rd_small_value sv = { .s = INT32_MIN + (int)i, .u = UINT64_MAX - 7 * i };
		struct rd_id_key ck = { .id = 10 * i };
		struct rd_id_value cv = { .id = i, .n = 3 };

		ret = ret ?: bpf_map_update_elem(flags, &colors[i], &fv, BPF_ANY);
		ret = ret ?: bpf_map_update_elem(small, &sk, &sv, BPF_ANY);
		ret = ret ?: bpf_map_update_elem(clash, &ck, &cv, BPF_ANY);
	}
	return ret ? -errno : 0;
}

static int load_and_pin(const char *path, const char *dir)
{
	static const char *const pinned[] = { "small_map", "flags_map", "name_map", "clash_map" };
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	char pin[512];
	size_t i;
	int ret;

	if (!obj)
		return -errno;
	ret = bpf_object__load(obj) ?: fill(obj);
	for (i = 0; !ret && i < sizeof(pinned) / sizeof(pinned[0]); i++) {
		snprintf(pin, sizeof(pin), "%s/map_reader_layouts_%s", dir, pinned[i]);
		ret = bpf_map__pin(bpf_object__find_map_by_name(obj, pinned[i]), pin);
	}
	bpf_object__close(obj);
	return ret;
}

/* null, or why the maps are not pinned. */
JNIEXPORT jstring JNICALL Java_JniReaderTest_pinLayouts(JNIEnv *env, jclass cls, jstring obj,
							jstring dir)
{
	const char *o = (*env)->GetStringUTFChars(env, obj, NULL);
	const char *d = (*env)->GetStringUTFChars(env, dir, NULL);
	int ret = o && d ? load_and_pin(o, d) : -ENOMEM;

	(void)cls;
	if (o)
		(*env)->ReleaseStringUTFChars(env, obj, o);
	if (d)
		(*env)->ReleaseStringUTFChars(env, dir, d);
	return ret ? (*env)->NewStringUTF(env, strerror(-ret)) : NULL;
}
