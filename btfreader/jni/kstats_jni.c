// SPDX-License-Identifier: GPL-2.0
/* KernelTelemetryReader's native half: a handle is an open kstats_map and its rows.
 * The Java class serializes calls on a handle and never passes a closed one. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jni.h>

#include "kstats_tool.h"
#include "kstats_reader.h"

#define READER_CLASS "org/kernelstats/KernelTelemetryReader"
#define EXCEPTION_CLASS "org/kernelstats/KernelTelemetryException"

struct jni_reader {
	struct kstats_map *map;
	int64_t *rows;		/* max_rows * ncols */
	size_t max_rows, ncols;
	jint nread;		/* rows of the last read */
};

static jclass exception_class;
static jmethodID exception_ctor;	/* (String message, int errno) */

/* The message kstats read prints after "kstats read: ", minus its --pin hint. */
static void throw_error(JNIEnv *env, int ret, char *err, size_t errlen)
{
	jstring msg;
	jobject ex;
	size_t n;

	if (!*err)
		snprintf(err, errlen, "%s", strerror(-ret));
	kstats_add_fix(err, errlen, ret);
	n = strlen(err);
	if (ret == -ENOENT && n < errlen)
		snprintf(err + n, errlen - n, "; " KSTATS_FIX_LOAD);
	msg = (*env)->NewStringUTF(env, err);
	if (!msg)
		return;	/* OutOfMemoryError is pending */
	ex = (*env)->NewObject(env, exception_class, exception_ctor, msg, (jint)-ret);
	if (ex)
		(*env)->Throw(env, ex);
}

static void throw_plain(JNIEnv *env, const char *class_name, const char *msg)
{
	jclass c = (*env)->FindClass(env, class_name);

	if (c)
		(*env)->ThrowNew(env, c, msg);
}

static struct jni_reader *reader_of(jlong handle)
{
	return (struct jni_reader *)(intptr_t)handle;
}

/* Java arrays index with int: the whole map must fit one. */
static int alloc_rows(struct jni_reader *r, char *err, size_t errlen)
{
	r->ncols = kstats_map_ncols(r->map);
	r->max_rows = kstats_map_max_rows(r->map);
	if (!r->ncols || r->max_rows > (size_t)INT_MAX / r->ncols)
		return kstats_fail(err, errlen, E2BIG, "%zu rows of %zu columns do not fit a "
				   "Java long[]", r->max_rows, r->ncols);
	r->rows = calloc(r->max_rows ?: 1, r->ncols * sizeof(*r->rows));
	return r->rows ? 0 : -ENOMEM;
}

/* The JVM fixes every native's parameters: most ignore env or the class. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void JNICALL native_close(JNIEnv *env, jclass cls, jlong handle)
{
	struct jni_reader *r = reader_of(handle);

	kstats_map_close(r->map);
	free(r->rows);
	free(r);
}

static jlong JNICALL native_open(JNIEnv *env, jclass cls, jstring obj, jstring map,
				 jstring pin)
{
	const char *pin_path = (*env)->GetStringUTFChars(env, pin, NULL);
	const char *obj_path = obj ? (*env)->GetStringUTFChars(env, obj, NULL) : NULL;
	const char *map_name = map ? (*env)->GetStringUTFChars(env, map, NULL) : NULL;
	struct kstats_map_opts mo = { .obj_path = obj_path, .map_name = map_name,
				      .pin_path = pin_path };
	char err[KSTATS_ERR_LEN] = "";
	struct jni_reader *r = NULL;
	int ret;

	if (!pin_path || (obj && !obj_path) || (map && !map_name))
		goto out;	/* OutOfMemoryError is pending */
	r = calloc(1, sizeof(*r));
	ret = r ? kstats_map_open(&mo, &r->map, err, sizeof(err)) : -ENOMEM;
	ret = ret ?: alloc_rows(r, err, sizeof(err));
	if (ret) {
		throw_error(env, ret, err, sizeof(err));
		if (r)
			native_close(env, cls, (jlong)(intptr_t)r);
		r = NULL;
	}
out:
	if (pin_path)
		(*env)->ReleaseStringUTFChars(env, pin, pin_path);
	if (obj_path)
		(*env)->ReleaseStringUTFChars(env, obj, obj_path);
	if (map_name)
		(*env)->ReleaseStringUTFChars(env, map, map_name);
	return (jlong)(intptr_t)r;
}


static jobjectArray JNICALL native_columns(JNIEnv *env, jclass cls, jlong handle)
{
	struct jni_reader *r = reader_of(handle);
	jclass string_class = (*env)->FindClass(env, "java/lang/String");
	jobjectArray names;
	size_t i;

	if (!string_class)
		return NULL;
	names = (*env)->NewObjectArray(env, r->ncols, string_class, NULL);
	for (i = 0; names && i < r->ncols; i++) {
		jstring s = (*env)->NewStringUTF(env, kstats_map_column(r->map, i)->name);

		if (!s)
			return NULL;
		(*env)->SetObjectArrayElement(env, names, i, s);
		(*env)->DeleteLocalRef(env, s);
	}
	return names;
}

/* { key columns, max rows }, then per column { kind | size << 8 | signed << 16, byte offset }. */
static jintArray JNICALL native_layout(JNIEnv *env, jclass cls, jlong handle)
{
	struct jni_reader *r = reader_of(handle);
	jintArray out = (*env)->NewIntArray(env, 2 + 2 * r->ncols);
	jint v[2] = { kstats_map_nkey_cols(r->map), r->max_rows };
	size_t i;

	if (out)
		(*env)->SetIntArrayRegion(env, out, 0, 2, v);
	for (i = 0; out && i < r->ncols; i++) {
		const struct kstats_column *c = kstats_map_column(r->map, i);

		v[0] = c->kind | c->size << 8 | c->is_signed << 16;
		v[1] = c->offset;
		(*env)->SetIntArrayRegion(env, out, 2 + 2 * i, 2, v);
	}
	return out;
}

static jstring JNICALL native_note(JNIEnv *env, jclass cls, jlong handle)
{
	return (*env)->NewStringUTF(env, kstats_map_source_note(reader_of(handle)->map));
}

static jlong JNICALL native_map_id(JNIEnv *env, jclass cls, jlong handle)
{
	return kstats_map_id(reader_of(handle)->map);
}

static jstring JNICALL native_enum_name(JNIEnv *env, jclass cls, jlong handle,
				       jint col, jlong value)
{
	struct jni_reader *r = reader_of(handle);
	const struct kstats_column *c = kstats_map_column(r->map, col);
	const char *name = c ? kstats_column_enum_name(r->map, c, value) : NULL;

	return name ? (*env)->NewStringUTF(env, name) : NULL;
}

/* One read into dst (NULL: a new array of exactly the rows read). */
static jlongArray read_into(JNIEnv *env, jlong handle, jlongArray dst)
{
	struct jni_reader *r = reader_of(handle);
	char err[KSTATS_ERR_LEN] = "";
	size_t n, len;
	int ret = kstats_map_read(r->map, r->rows, r->max_rows, &n, err, sizeof(err));

	if (ret) {
		throw_error(env, ret, err, sizeof(err));
		return NULL;
	}
	len = n * r->ncols;
	if (!dst)
		dst = (*env)->NewLongArray(env, len);
	else if ((size_t)(*env)->GetArrayLength(env, dst) < len)
		throw_plain(env, "java/lang/IllegalArgumentException",
			    "the array is shorter than the rows read");
	if (!dst || (*env)->ExceptionCheck(env))
		return NULL;
	(*env)->SetLongArrayRegion(env, dst, 0, len, (const jlong *)r->rows);
	r->nread = n;
	return dst;
}

static jint JNICALL native_read(JNIEnv *env, jclass cls, jlong handle, jlongArray dst)
{
	return read_into(env, handle, dst) ? reader_of(handle)->nread : 0;
}

static jlongArray JNICALL native_read_new(JNIEnv *env, jclass cls, jlong handle)
{
	return read_into(env, handle, NULL);
}

static const JNINativeMethod methods[] = {
	{ "nativeOpen", "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)J",
	  (void *)native_open },
	{ "nativeClose", "(J)V", (void *)native_close },
	{ "nativeColumns", "(J)[Ljava/lang/String;", (void *)native_columns },
	{ "nativeLayout", "(J)[I", (void *)native_layout },
	{ "nativeNote", "(J)Ljava/lang/String;", (void *)native_note },
	{ "nativeEnumName", "(JIJ)Ljava/lang/String;", (void *)native_enum_name },
	{ "nativeMapId", "(J)J", (void *)native_map_id },
	{ "nativeRead", "(J[J)I", (void *)native_read },
	{ "nativeReadNew", "(J)[J", (void *)native_read_new },
};

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
	JNIEnv *env;
	jclass reader, ex;

	if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
		return JNI_ERR;
	reader = (*env)->FindClass(env, READER_CLASS);
	ex = (*env)->FindClass(env, EXCEPTION_CLASS);
	if (!reader || !ex)
		return JNI_ERR;
	exception_class = (*env)->NewGlobalRef(env, ex);
	exception_ctor = (*env)->GetMethodID(env, ex, "<init>", "(Ljava/lang/String;I)V");
	if (!exception_class || !exception_ctor ||
	    (*env)->RegisterNatives(env, reader, methods,
				    sizeof(methods) / sizeof(methods[0])))
		return JNI_ERR;
	return JNI_VERSION_1_8;
}

#pragma GCC diagnostic pop
