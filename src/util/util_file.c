/* util_file.c: files written whole or not at all (temporary file, fsync, rename; hog_output for programs), and whole files read. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* Creates path's temporary file: PATH.tmp.XXXXXX with a fresh suffix, by
 * open(O_EXCL) with mode 0666 (0600 for a private file) so that the kernel
 * applies the umask (mkstemp makes 0600, and reading the umask means
 * setting it, which races with every other thread of the process). */
static int temp_create(char *tmp, size_t suffix_at, mode_t mode)
{
    static _Atomic uint64_t counter;
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    uint64_t seed = hog_mix64((uint64_t)getpid() << 32 ^ (uint64_t)(hog_now() * 1e9));
    for (int attempt = 0; attempt < 100; attempt++) {
        uint64_t x = hog_mix64(seed + atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed));
        for (size_t i = 0; i < 6; i++, x /= 62)
            tmp[suffix_at + i] = digits[x % 62];
        int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd >= 0 ? fd : -errno;
    }
    return -EEXIST;
}

static int atomic_open(hog_atomic_file *f, const char *path, int private_)
{
    memset(f, 0, sizeof(*f));
    f->fd = -1;
    struct stat old;
    int replacing = lstat(path, &old) == 0;
    if (replacing && S_ISDIR(old.st_mode))
        return -EISDIR;
    if (replacing && !S_ISREG(old.st_mode) && !S_ISLNK(old.st_mode))
        return HOG_ENOTFILE;
    size_t n = strlen(path);
    f->path = hog_strdup(path);
    f->tmp_path = hog_malloc(n + 16);
    if (!f->path || !f->tmp_path) {
        hog_atomic_abort(f);
        return -ENOMEM;
    }
    snprintf(f->tmp_path, n + 16, "%s.tmp.XXXXXX", path);
    f->fd = temp_create(f->tmp_path, n + 5, private_ ? 0600 : 0666);
    if (f->fd < 0) {
        int rc = f->fd;
        hog_free(f->tmp_path);
        f->tmp_path = NULL; /* nothing was created: nothing to remove */
        hog_atomic_abort(f);
        return rc;
    }
    /* A private file was created 0600 less the umask, so no other user
     * could open it even for a moment; the umask may have taken the
     * owner's own bits, which come back here. */
    if (private_ && fchmod(f->fd, 0600) < 0) {
        int rc = -errno;
        hog_atomic_abort(f);
        return rc;
    }
    /* A replaced file keeps its mode, and its owner where this process may
     * give it (root; or a group the user is in): a 0600 model stays 0600. */
    if (!private_ && replacing && S_ISREG(old.st_mode)) {
        (void)fchmod(f->fd, old.st_mode & 07777);
        if (fchown(f->fd, old.st_uid, old.st_gid) < 0)
            (void)fchown(f->fd, (uid_t)-1, old.st_gid);
    }
    return 0;
}

int hog_atomic_open(hog_atomic_file *f, const char *path)
{
    return atomic_open(f, path, 0);
}

int hog_atomic_open_private(hog_atomic_file *f, const char *path)
{
    return atomic_open(f, path, 1);
}

int hog_atomic_write(hog_atomic_file *f, const void *buf, size_t len)
{
    return hog_atomic_pwrite(f, buf, len, f->end);
}

int hog_atomic_write_crc(hog_atomic_file *f, uint32_t *crc, const void *buf, size_t len)
{
    if (len == 0)
        return 0;
    *crc = hog_crc32(*crc, buf, len);
    return hog_atomic_write(f, buf, len);
}

int hog_atomic_direct(hog_atomic_file *f, int on)
{
    int fl = fcntl(f->fd, F_GETFL);
    if (fl < 0 || fcntl(f->fd, F_SETFL, on ? fl | O_DIRECT : fl & ~O_DIRECT) < 0)
        return -errno;
    f->direct = on;
    return 0;
}

int hog_atomic_pwrite(hog_atomic_file *f, const void *buf, size_t len, uint64_t off)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = pwrite(f->fd, p, len, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EINVAL && f->direct) { /* an alignment this file system refuses */
                int rc = hog_atomic_direct(f, 0);
                if (rc < 0)
                    return rc;
                continue;
            }
            return -errno;
        }
        p += w;
        len -= (size_t)w;
        off += (uint64_t)w;
    }
    if (off > f->end)
        f->end = off;
    /* Only a hint: the kernel may refuse it (a pipe, an old file system),
     * and an I/O error it meets is reported again by the fsync. Without it
     * dirty pages wait for the background threshold (10% of RAM by
     * default): a 2.6 GB convert output spent 1.15 s of its 9 s in the
     * final fsync. */
    if (f->end - f->synced >= HOG_WRITEBACK_BYTES) {
        (void)sync_file_range(f->fd, (off_t)f->synced, (off_t)(f->end - f->synced), SYNC_FILE_RANGE_WRITE);
        f->synced = f->end;
    }
    return 0;
}

static int fsync_parent(const char *path)
{
    char *copy = hog_strdup(path);
    if (!copy)
        return -ENOMEM;
    int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    hog_free(copy);
    if (dfd < 0)
        return -errno;
    int rc = fsync(dfd) < 0 ? -errno : 0;
    close(dfd);
    return rc;
}

int hog_atomic_commit(hog_atomic_file *f)
{
    int rc = 0;
    if (fsync(f->fd) < 0)
        rc = -errno;
    if (close(f->fd) < 0 && rc == 0)
        rc = -errno;
    f->fd = -1;
    if (rc == 0 && rename(f->tmp_path, f->path) < 0)
        rc = -errno;
    if (rc == 0) {
        hog_free(f->tmp_path);
        f->tmp_path = NULL;
        rc = fsync_parent(f->path);
    }
    hog_atomic_abort(f);
    return rc;
}

void hog_atomic_abort(hog_atomic_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->tmp_path)
        unlink(f->tmp_path);
    hog_free(f->tmp_path);
    hog_free(f->path);
    f->fd = -1;
    f->tmp_path = NULL;
    f->path = NULL;
}

int hog_write_file_atomic(const char *path, const void *buf, size_t len)
{
    hog_atomic_file f;
    int rc = hog_atomic_open(&f, path);
    if (rc < 0)
        return rc;
    rc = hog_atomic_write(&f, buf, len);
    if (rc < 0) {
        hog_atomic_abort(&f);
        return rc;
    }
    return hog_atomic_commit(&f);
}

/* The public face of hog_atomic_file, for programs that link the library. */
struct hog_output {
    hog_atomic_file file;
};

int hog_output_open(const char *path, hog_output **out)
{
    *out = NULL;
    int rc = hog_cpu_check(NULL, 0);
    if (rc < 0)
        return rc;
    hog_output *o = hog_malloc(sizeof(*o));
    if (!o)
        return -ENOMEM;
    rc = hog_atomic_open(&o->file, path);
    if (rc < 0) {
        hog_free(o);
        return rc;
    }
    *out = o;
    return 0;
}

int hog_output_write(hog_output *o, const void *buf, size_t len)
{
    return hog_atomic_write(&o->file, buf, len);
}

int hog_output_commit(hog_output *o)
{
    int rc = hog_atomic_commit(&o->file);
    hog_free(o);
    return rc;
}

void hog_output_abort(hog_output *o)
{
    if (!o)
        return;
    hog_atomic_abort(&o->file);
    hog_free(o);
}

int hog_read_file(const char *path, unsigned char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = fstat(fd, &st) < 0 ? -errno : S_ISREG(st.st_mode) ? 0 : -EINVAL;
    if (rc < 0) {
        close(fd);
        return rc;
    }
    size_t size = (size_t)st.st_size;
    unsigned char *buf = hog_malloc(size ? size : 1);
    if (!buf) {
        close(fd);
        return -ENOMEM;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = r < 0 ? -errno : -EIO;
            hog_free(buf);
            close(fd);
            return rc;
        }
        got += (size_t)r;
    }
    close(fd);
    *out = buf;
    *len = got;
    return 0;
}
