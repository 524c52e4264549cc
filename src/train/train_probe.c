/* train_probe.c: hog_file_probe: what a file holds (a dataset, a model, an MF model, ratings, a checkpoint or text), told by its magic. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train.h"

static const struct {
    const char *magic; /* eight bytes, a NUL included where the name is seven */
    hog_file_kind kind;
} magics[] = {
    {HOG_HGD_MAGIC, HOG_FILE_DATASET},
    {MODEL_MAGIC, HOG_FILE_MODEL},
    {MF_MAGIC, HOG_FILE_MF_MODEL},
    {HOG_HGR_MAGIC, HOG_FILE_RATINGS},
    {CKPT_MAGIC, HOG_FILE_CHECKPOINT},
    {MF_CKPT_MAGIC, HOG_FILE_MF_CHECKPOINT},
};

/* Reads up to len bytes from the start of fd: fewer only at the end of the file. */
static ssize_t read_head(int fd, unsigned char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, buf + got, len - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int hog_file_probe(const char *path, hog_file_kind *kind, char *err, size_t err_len)
{
    *kind = HOG_FILE_TEXT;
    int rc = hog_cpu_check(err, err_len);
    if (rc < 0)
        return rc;
    /* O_NONBLOCK: opening a FIFO with no writer yet would wait for one. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        rc = -errno;
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    struct stat st;
    unsigned char head[8];
    ssize_t got = 0;
    if (fstat(fd, &st) < 0)
        rc = -errno;
    else if (S_ISDIR(st.st_mode))
        rc = -EISDIR;
    else if (!hog_is_stream(st.st_mode) && (got = read_head(fd, head, sizeof(head))) < 0)
        rc = (int)got;
    close(fd);
    if (rc < 0)
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    if (got == (ssize_t)sizeof(head))
        for (size_t i = 0; i < HOG_ARRAY_LEN(magics); i++)
            if (memcmp(head, magics[i].magic, sizeof(head)) == 0)
                *kind = magics[i].kind;
    return 0;
}

const char *hog_file_kind_name(hog_file_kind kind)
{
    switch (kind) {
    case HOG_FILE_TEXT: return "text";
    case HOG_FILE_DATASET: return "dataset";
    case HOG_FILE_MODEL: return "model";
    case HOG_FILE_MF_MODEL: return "mf_model";
    case HOG_FILE_RATINGS: return "ratings";
    case HOG_FILE_CHECKPOINT: return "checkpoint";
    case HOG_FILE_MF_CHECKPOINT: return "mf_checkpoint";
    }
    return "unknown";
}
