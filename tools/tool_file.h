/* tool_file.h: output files for the tools, written whole or not at all (temporary file beside the target, fsync, rename, fsync of the folder). */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TOOL_FILE_H
#define HOG_TOOL_FILE_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes all of buf. Returns 0 or -1 (errno set). */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Makes a temporary file beside path, with the permissions a plain creat()
 * would give. Returns the descriptor, or -1 after printing why. */
static int open_tmp(const char *prog, const char *path, char *tmp, size_t tmp_len)
{
    if ((size_t)snprintf(tmp, tmp_len, "%s.tmp.XXXXXX", path) >= tmp_len) {
        fprintf(stderr, "%s: %s: path too long\n", prog, path);
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, path,
                strerror(errno));
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        fprintf(stderr, "%s: %s: chmod: %s\n", prog, tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    return fd;
}

/* fsyncs and closes fd, renames tmp to path and fsyncs the folder. On failure
 * removes tmp and returns -1 after printing why. */
static int commit_tmp(const char *prog, int fd, const char *tmp, const char *path)
{
    if (fsync(fd) != 0) {
        fprintf(stderr, "%s: %s: fsync: %s\n", prog, tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    if (close(fd) != 0) {
        fprintf(stderr, "%s: %s: close: %s\n", prog, tmp, strerror(errno));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "%s: %s: cannot rename to %s: %s\n", prog, tmp, path,
                strerror(errno));
        unlink(tmp);
        return -1;
    }
    /* Make the rename itself durable; a failure here leaves a complete file. */
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        strcpy(dir, ".");
    else if (slash == path)
        strcpy(dir, "/");
    else if ((size_t)(slash - path) < sizeof(dir))
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    else
        return 0;
    FILE *d = fopen(dir, "r");
    if (d) {
        fsync(fileno(d));
        fclose(d);
    }
    return 0;
}

#endif /* HOG_TOOL_FILE_H */
