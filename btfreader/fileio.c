// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "kstats_fileio.h"
#include "kstats_hooks.h"
#include "kstats_reader.h"

int kstats_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

#define TEMP_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
#define TEMP_SFX 6

/* A new file .NAME.XXXXXX.tmp in dfd, never one that exists nor through a link, locked
 * while it is written (remove_stale() took one it had just unlinked: another). */
static int create_temp(int dfd, const char *name, mode_t mode, char *tmp, size_t len)
{
	static const char chars[] = TEMP_CHARS;
	char sfx[TEMP_SFX + 1] = "";
	int tries, fd = -EEXIST;
	struct timespec ts;
	struct stat st;
	uint64_t v;
	size_t i;

	for (tries = 0; tries < 100 && fd == -EEXIST; tries++) {
		/* Unpredictable where the kernel has entropy yet; O_EXCL keeps it safe either way. */
		if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			v = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^
			    (uint64_t)getpid() << 40;
		}
		for (i = 0; i < TEMP_SFX; i++, v /= sizeof(chars) - 1)
			sfx[i] = chars[v % (sizeof(chars) - 1)];
		/* A leading '.' keeps globbing collectors (*.prom) off the temp file. */
		if ((size_t)snprintf(tmp, len, ".%s.%s.tmp", name, sfx) >= len)
			return -ENAMETOOLONG;
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    mode);
		if (fd < 0)
			fd = -errno;
		else if (!flock(fd, LOCK_EX) && !fstat(fd, &st) && !st.st_nlink) {
			close(fd);
			fd = -EEXIST;
		}
	}
	return fd;
}

/* The temp files of name (NULL: of any name) that a killed writer left: create_temp()'s names
 * only, regular, ours, and unlocked (a live writer holds its lock).  Other files stay. */
static void remove_stale(int dfd, const char *name)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dp = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	struct stat st;
	size_t n, len;

	while (dp && (e = readdir(dp))) {
		len = strlen(e->d_name);
		n = name ? strlen(name) : len > TEMP_SFX + 6 ? len - TEMP_SFX - 6 : 0;
		if (!n || len != n + TEMP_SFX + 6 || e->d_name[0] != '.' ||
		    (name && strncmp(e->d_name + 1, name, n)) || e->d_name[n + 1] != '.' ||
		    strspn(e->d_name + n + 2, TEMP_CHARS) != TEMP_SFX ||
		    strcmp(e->d_name + n + 2 + TEMP_SFX, ".tmp"))
			continue;
		fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    !flock(fd, LOCK_EX | LOCK_NB))
			unlinkat(dfd, e->d_name, 0);
		if (fd >= 0)
			close(fd);
	}
	if (dp)
		closedir(dp);
	else if (fd >= 0)
		close(fd);
}

/* noreplace: renameat2(RENAME_NOREPLACE), else link(2), which never replaces either. */
static int rename_at(int dfd, const char *from, const char *to, bool noreplace)
{
	if (!renameat2(dfd, from, dfd, to, noreplace ? RENAME_NOREPLACE : 0))
		return 0;
	if (!noreplace || (errno != EINVAL && errno != ENOSYS))
		return -errno;
	if (linkat(dfd, from, dfd, to, 0))
		return -errno;
	return unlinkat(dfd, from, 0) ? -errno : 0;
}

static int open_dir(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return dfd < 0 ? -errno : dfd;
}

/* fsync only after success: the entries made durable, then closed. */
static int sync_close_dir(int dfd, int ret)
{
	if (!ret && fsync(dfd))
		ret = -errno;
	close(dfd);
	return ret;
}

int kstats_fsync_dir(const char *dir)
{
	int dfd = open_dir(dir);

	return dfd < 0 ? dfd : sync_close_dir(dfd, 0);
}

/* name in the directory dfd (closed) becomes buf, through a fsynced temp file. SIGTERM, SIGINT
 * and SIGHUP wait until the temp file is renamed or removed. */
static int put_in(int dfd, const char *name, const void *buf, size_t len, mode_t mode,
		  bool noreplace)
{
	char tmp[NAME_MAX + 1];
	sigset_t term, old;
	struct stat st;
	int fd, ret = 0;

	/* Only a regular file, or nothing, is replaced: never a link, a FIFO, a device. */
	if (!noreplace && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		ret = errno == ENOENT ? 0 : -errno;
	else if (!noreplace && !S_ISREG(st.st_mode))
		ret = -EINVAL;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigaddset(&term, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &term, &old);
	if (!ret)
		remove_stale(dfd, name);
	fd = ret ?: create_temp(dfd, name, mode, tmp, sizeof(tmp));
	ret = fd < 0 ? fd : kstats_write_full(fd, buf, len);
	if (!ret && fsync(fd))
		ret = -errno;
	if (!ret)
		kstats_hook_temp(name, fd);
	ret = ret ?: rename_at(dfd, tmp, name, noreplace);
	if (ret && fd >= 0)
		unlinkat(dfd, tmp, 0);
	/* after the rename: the lock keeps remove_stale() off */
	if (fd >= 0 && close(fd) && !ret)
		ret = -errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return sync_close_dir(dfd, ret);
}

static int split_path(const char *path, char *dir, char *name)
{
	char bcopy[PATH_MAX];

	if ((size_t)snprintf(bcopy, sizeof(bcopy), "%s", path) >= sizeof(bcopy))
		return -ENAMETOOLONG;
	snprintf(name, NAME_MAX + 1, "%s", basename(bcopy));
	snprintf(bcopy, sizeof(bcopy), "%s", path);
	snprintf(dir, PATH_MAX, "%s", dirname(bcopy));
	return 0;
}

static int file_put(const char *path, const void *buf, size_t len, mode_t mode,
		    bool noreplace)
{
	char dir[PATH_MAX], name[NAME_MAX + 1];
	int dfd = split_path(path, dir, name) ?: open_dir(dir);

	return dfd < 0 ? dfd : put_in(dfd, name, buf, len, mode, noreplace);
}

int kstats_file_replace(const char *path, const void *buf, size_t len, mode_t mode)
{
	return file_put(path, buf, len, mode, false);
}

int kstats_file_create(const char *path, const void *buf, size_t len, mode_t mode)
{
	return file_put(path, buf, len, mode, true);
}

void kstats_remove_temps(const char *dir)
{
	int dfd = open_dir(dir);

	if (dfd >= 0) {
		remove_stale(dfd, NULL);
		close(dfd);
	}
}

int kstats_rename_in(const char *dir, const char *from, const char *to, bool noreplace)
{
	int dfd = open_dir(dir);

	return dfd < 0 ? dfd : sync_close_dir(dfd, rename_at(dfd, from, to, noreplace));
}

int kstats_unlink_in(const char *dir, const char *name)
{
	int dfd = open_dir(dir);

	return dfd < 0 ? dfd : sync_close_dir(dfd, unlinkat(dfd, name, 0) ? -errno : 0);
}

int kstats_boot_id(char *buf, size_t len)
{
	FILE *f;
	int ret = 0;

	if (kstats_hook_boot_id(buf, len))
		return 0;
	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		ret = -EIO;
	fclose(f);
	buf[ret ? 0 : strcspn(buf, "\n")] = 0;
	return ret;
}

int kstats_read_fd(int fd, size_t max, char **buf, size_t *len)
{
	size_t cap = 0, n = 0;
	char *p = NULL, *grown;
	ssize_t got;
	int ret = 0;

	while (!ret) {
		if (n + 1 >= cap) {
			cap = cap ? cap * 2 : 4096;
			grown = realloc(p, cap);
			if (!grown) {
				ret = -ENOMEM;
				break;
			}
			p = grown;
		}
		got = read(fd, p + n, cap - 1 - n);
		if (!got) {
			p[n] = 0;
			*buf = p;
			*len = n;
			return 0;
		}
		if (got < 0 && errno != EINTR)
			ret = -errno;
		else if (got > 0 && (n += (size_t)got) > max)
			ret = -EFBIG;
	}
	free(p);
	return ret;
}

/* Root's or ours; writable by others only when sticky above the leaf (/tmp): no one
 * else can redirect a write there. */
static bool dir_owned(const struct stat *st, bool leaf)
{
	return (!st->st_uid || st->st_uid == geteuid()) &&
	       (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (!leaf && (st->st_mode & S_ISVTX)));
}

static int check_dir_component(const char *given, const char *comp, bool leaf,
			       char *msg, size_t len)
{
	struct stat st;

	if (stat(comp, &st))
		return kstats_fail(msg, len, errno, "cannot stat %s: %s", comp, strerror(errno));
	if (dir_owned(&st, leaf))
		return 0;
	if (st.st_uid && st.st_uid != geteuid())
		return kstats_fail(msg, len, EPERM, "%s: %s is owned by uid %u, who could "
				   "redirect this process's writes; run: chown %u %s", given,
				   comp, (unsigned int)st.st_uid, (unsigned int)geteuid(), comp);
	return kstats_fail(msg, len, EPERM, "%s: %s is %s-writable (mode %04o), so others "
			   "could plant files there; run: chmod go-w %s", given, comp,
			   st.st_mode & S_IWOTH ? "world" : "group",
			   (unsigned int)(st.st_mode & 07777), comp);
}

/* Messages name given, the path the caller was asked about. */
static int check_up(const char *given, const char *path, kstats_path_check_fn check,
		    bool leaf, char *msg, size_t len)
{
	char *real = realpath(path, NULL), *slash;
	int ret;

	if (!real)
		return kstats_fail(msg, len, errno, "%s: %s", given, strerror(errno));
	for (;;) {
		ret = check(given, real, leaf, msg, len);
		if (ret || !strcmp(real, "/"))
			break;
		slash = strrchr(real, '/');
		slash[slash == real] = 0;	/* "/a" -> "/", "/a/b" -> "/a" */
		leaf = false;
	}
	free(real);
	return ret;
}

int kstats_check_path_up(const char *path, kstats_path_check_fn check,
			 char *msg, size_t len)
{
	return check_up(path, path, check, true, msg, len);
}

int kstats_open_regular(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	/* Regular files ignore O_NONBLOCK; cleared for later I/O. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* The components of path past skip opened under dfd (taken over), never through a symlink; with
 * mode, each made first and each must be dir_owned (someone may have made it meanwhile in a
 * sticky /tmp), else the last one must.  *bad: length of path up to the one that failed.  Those
 * above the last are opened O_PATH, a lookup by name (an SELinux domain may not read /var). */
static int open_below(int dfd, char *path, size_t skip, mode_t mode, size_t *bad)
{
	char *comp = path + skip, *next;
	struct stat st;
	int fd;

	while (*comp == '/')
		comp++;
	for (; *comp; comp = next) {
		next = comp + strcspn(comp, "/");
		*bad = (size_t)(next - path);
		if (*next)
			*next++ = 0;
		while (*next == '/')
			next++;
		if (mode && mkdirat(dfd, comp, mode) && errno != EEXIST)
			goto err_out;
		fd = openat(dfd, comp, (*next ? O_PATH : O_RDONLY) | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			goto err_out;
		close(dfd);
		dfd = fd;
		if ((mode || !*next) && (fstat(dfd, &st) || !dir_owned(&st, false))) {
			errno = EPERM;
			goto err_out;
		}
	}
	return dfd;
err_out:
	fd = -errno;
	close(dfd);
	return fd;
}

int kstats_file_replace_owned(const char *path, const void *buf, size_t len, mode_t mode,
			      char *msg, size_t msglen)
{
	char dir[PATH_MAX], walk[PATH_MAX], name[NAME_MAX + 1];
	size_t bad = 0, n = strlen(path);
	int dfd = split_path(path, dir, name), ret;
	struct stat st;

	if (!n || path[n - 1] == '/')
		return kstats_fail(msg, msglen, EISDIR, "'%s' names no file%s; pass a file path, "
				   "such as '%sFILE'", path, n ? ", a directory" : "", path);
	if (dfd)
		return kstats_fail(msg, msglen, -dfd, "%s", strerror(-dfd));
	memcpy(walk, dir, sizeof(walk));
	dfd = open(*dir == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dfd = dfd < 0 ? -errno : open_below(dfd, walk, 0, 0, &bad);
	if (dfd == -ELOOP || dfd == -ENOTDIR || dfd == -EPERM)
		return kstats_fail(msg, msglen, EPERM, "%.*s is %s; make it root's (or this "
				   "user's) and writable by no one else (mode 0755), or pass "
				   "another --output", (int)bad, dir, dfd == -EPERM ?
				   "another user's or writable by others" :
				   "a symlink or not a directory");
	if (dfd >= 0 && !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode)) {
		close(dfd);
		return kstats_fail(msg, msglen, EISDIR, "'%s' is a directory; pass a file path, "
				   "such as '%s/FILE'", path, path);
	}
	ret = dfd < 0 ? dfd : put_in(dfd, name, buf, len, mode, false);
	if (ret == -EINVAL)
		snprintf(msg, msglen, "'%s' is a symlink or not a regular file; pass another "
			 "path", path);
	else
		snprintf(msg, msglen, "%s", strerror(-ret));
	return ret;
}

int kstats_mkdir_private(const char *path, mode_t mode, bool create, char *msg,
			 size_t len)
{
	char buf[PATH_MAX], parent[PATH_MAX];
	size_t n = strlen(path), cut;
	struct stat st;
	int dfd, ret = 0;

	if (n >= sizeof(buf))
		return kstats_fail(msg, len, ENAMETOOLONG, "%s: %s", path, strerror(ENAMETOOLONG));
	memcpy(buf, path, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	/* The deepest directory that exists (parent: the first cut bytes, "." for none) is
	 * checked before anything is created. */
	for (cut = n; cut; ) {
		memcpy(parent, buf, cut);
		parent[cut] = 0;
		ret = stat(parent, &st) ? -errno : 0;
		if (ret != -ENOENT)
			break;
		while (cut && buf[cut - 1] != '/')
			cut--;
		while (cut > 1 && buf[cut - 1] == '/')
			cut--;
	}
	if (!cut)
		strcpy(parent, ".");
	if (cut && ret)
		return kstats_fail(msg, len, -ret, "%s: %s: %s", path, parent, strerror(-ret));
	if (cut == n)
		return check_up(buf, buf, check_dir_component, true, msg, len);
	/* A parent that gets a new entry: only who could also rename it may write it. */
	ret = check_up(path, parent, check_dir_component, false, msg, len);
	if (ret || !create)
		return ret;
	dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = dfd < 0 ? -errno : open_below(dfd, buf, cut, mode, &cut);
	if (ret < 0)
		return kstats_fail(msg, len, -ret, "%s: cannot create it: %s%s", path,
				   strerror(-ret), ret == -EPERM ? " (a directory on the way, "
				   "made meanwhile, is another user's or writable by others; "
				   "remove it)" : "");
	close(ret);
	return check_up(buf, buf, check_dir_component, true, msg, len);
}

int kstats_read_file(const char *path, size_t max, char **buf, size_t *len)
{
	int fd = kstats_open_regular(path, O_RDONLY, 0), ret;

	if (fd < 0)
		return fd;
	ret = kstats_read_fd(fd, max, buf, len);
	close(fd);
	return ret;
}

uint64_t kstats_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int kstats_flock_wait(int fd, uint64_t timeout_ns)
{
	const struct timespec pause = { 0, 50 * 1000 * 1000 };
	uint64_t deadline = kstats_clock_ns(CLOCK_MONOTONIC) + timeout_ns;

	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (kstats_clock_ns(CLOCK_MONOTONIC) >= deadline)
			return -EWOULDBLOCK;
		nanosleep(&pause, NULL);
	}
	return 0;
}
