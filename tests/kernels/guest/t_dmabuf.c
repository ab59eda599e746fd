// SPDX-License-Identifier: GPL-2.0
/*
 * DmabufRequestSizes from real exports: vgem dumb buffers of chosen sizes,
 * exported with PRIME.  Each export lands in the bucket of its size.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <libdrm/drm.h>

#include "guest.h"
#include "kstats_keys.h"

#define TEST "dma-buf"
#define OBJ "dmabuf"
#define MAP "dmabuf_request_sizes_map"
#define NAMES "dmabuf_exporter_names_map"

static const struct {
	unsigned int pages, exports;
} requests[] = { { 1, 3 }, { 3, 1 }, { 16, 2 }, { 256, 1 } };

static int open_vgem(void)
{
	char name[16];
	struct drm_version v;
	glob_t g;
	size_t i;
	int fd = -1;

	if (glob("/dev/dri/card*", 0, NULL, &g))
		return -ENODEV;
	for (i = 0; i < g.gl_pathc && fd < 0; i++) {
		fd = open(g.gl_pathv[i], O_RDWR | O_CLOEXEC);
		memset(&v, 0, sizeof(v));
		memset(name, 0, sizeof(name));
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (fd >= 0 && (ioctl(fd, DRM_IOCTL_VERSION, &v) || strcmp(name, "vgem"))) {
			close(fd);
			fd = -1;
		}
	}
	globfree(&g);
	return fd >= 0 ? fd : -ENODEV;
}

/*
 * One dumb buffer of pages pages, exported once; 0 or -errno.  A row of
 * 32-bit pixels is one page: vgem rounds a buffer up to whole pages, and
 * arm64 kernels have 4, 16 or 64 KiB ones.
 */
static int export_one(int card, unsigned int pages, unsigned int page, const char **why)
{
	struct drm_mode_create_dumb create = { .height = pages, .width = page / 4,
					       .bpp = 32 };
	struct drm_mode_destroy_dumb destroy = {};
	struct drm_prime_handle prime = {};
	int ret = 0;

	if (ioctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &create)) {
		*why = "DRM_IOCTL_MODE_CREATE_DUMB";
		return -errno;
	}
	if (create.size != (__u64)pages * page) {
		*why = "vgem sized the buffer differently";
		ret = -EINVAL;
		goto out;
	}
	prime.handle = create.handle;
	prime.flags = DRM_CLOEXEC | DRM_RDWR;
	if (ioctl(card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime)) {
		*why = "DRM_IOCTL_PRIME_HANDLE_TO_FD";
		ret = -errno;
		goto out;
	}
	close(prime.fd);
out:
	destroy.handle = create.handle;
	ioctl(card, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy);
	return ret;
}

static int export_all(int card, uint64_t *expected)
{
	unsigned int page = (unsigned int)sysconf(_SC_PAGESIZE);
	const char *why = "";
	unsigned int i, j;
	int ret;

	for (i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
		for (j = 0; j < requests[i].exports; j++) {
			ret = export_one(card, requests[i].pages, page, &why);
			if (ret) {
				lab_fail(TEST, "%u-page buffer: %s: %s", requests[i].pages,
					 why, strerror(-ret));
				return ret;
			}
			expected[bpf_telemetry_bucket((uint64_t)requests[i].pages * page)]++;
		}
	return 0;
}

/* Every export is one count in its size's bucket, under one named exporter. */
static void check(const struct lab *lab, const struct hist *delta,
		  const uint64_t *expected)
{
	char name[KSTATS_NAME_MAX + 1] = "";
	unsigned int b;
	size_t i, grown = 0;
	int64_t key = 0;

	for (b = 0; b < BPF_TELEMETRY_NR_BUCKETS; b++)
		if (hist_bucket_total(delta, b) != expected[b]) {
			lab_fail(TEST, "bucket %u grew by %llu, %llu exports fall in it", b,
				 (unsigned long long)hist_bucket_total(delta, b),
				 (unsigned long long)expected[b]);
			return;
		}
	for (i = 0; i < delta->nkeys; i++)
		if (hist_key_total(delta, delta->keys[i])) {
			key = delta->keys[i];
			grown++;
		}
	if (grown != 1)
		lab_fail(TEST, "%zu exporter keys grew for one exporter", grown);
	else if (hist_name(lab, OBJ, NAMES, key, name, sizeof(name)))
		lab_fail(TEST, "exporter id %lld has no name in %s", (long long)key, NAMES);
	else
		lab_pass(TEST, "every export in its size's bucket, exporter %lld '%s'",
			 (long long)key, name);
}

/* The loader picked one variant of the hook chain; say which. */
static void show_hook(const struct lab *lab)
{
	char pattern[300];
	glob_t g;
	size_t i;

	snprintf(pattern, sizeof(pattern), "%s/link_" OBJ "_*", lab->pin_dir);
	if (glob(pattern, 0, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc; i++)
		lab_info("dma-buf hooked by %s", strrchr(g.gl_pathv[i], '/') + 1);
	globfree(&g);
}

void test_dmabuf(const struct lab *lab)
{
	uint64_t expected[BPF_TELEMETRY_NR_BUCKETS] = {};
	struct hist before, after, delta;
	int card;

	if (lab_require(lab, TEST, OBJ, MAP))
		return;
	show_hook(lab);
	card = open_vgem();
	if (card < 0) {
		lab_skip(TEST, "no vgem card in /dev/dri%s", lab_config("CONFIG_DRM_VGEM") == 'n' ?
			 ": CONFIG_DRM_VGEM is not set in this kernel" : "");
		return;
	}
	if (hist_read(lab, OBJ, MAP, &before))
		lab_fail(TEST, "cannot read map_" OBJ "_" MAP);
	else if (!export_all(card, expected)) {
		if (hist_read(lab, OBJ, MAP, &after))
			lab_fail(TEST, "cannot read map_" OBJ "_" MAP " after the exports");
		else if (hist_delta(&before, &after, &delta))
			lab_fail(TEST, "a count went down across the exports");
		else
			check(lab, &delta, expected);
	}
	close(card);
}
