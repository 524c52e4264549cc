/* util_error.c: version, error names, error details and the log callback. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>
#include <string.h>

#include "util.h"

unsigned hog_version_number(void)
{
    return HOG_VERSION_NUMBER;
}

#define HOG_STR2(x) #x
#define HOG_STR(x) HOG_STR2(x)
const char *hog_version_string(void)
{
    return HOG_STR(HOG_VERSION_MAJOR) "." HOG_STR(HOG_VERSION_MINOR) "." HOG_STR(HOG_VERSION_PATCH);
}

const char *hog_strerror(int rc)
{
    switch (rc) {
    case HOG_OK: return "success";
    case HOG_EFORMAT: return "malformed input";
    case HOG_EMAGIC: return "not a hogtrain file";
    case HOG_EVERSION: return "unsupported file version";
    case HOG_ETRUNCATED: return "file is truncated";
    case HOG_ECHECKSUM: return "checksum mismatch";
    case HOG_ECORRUPT: return "corrupt file: a size, offset or index is out of range";
    case HOG_EPARAM: return "invalid parameter";
    case HOG_ELABEL: return "labels do not fit the loss";
    case HOG_EEMPTY: return "data set has no rows";
    case HOG_ETOPOLOGY: return "cannot read or bind the machine topology";
    case HOG_ECPU: return "this CPU lacks instructions the library was built to use";
    case HOG_ENOTFILE: return "not a regular file: a device, FIFO or socket is never replaced";
    case HOG_ENONFINITE: return "the model holds NaN or infinite weights: the training diverged";
    case HOG_ENET: return "a multi-node run failed";
    case HOG_EINTERRUPTED: return "interrupted";
    case HOG_EDIVERGED: return "the training diverged";
    default: break;
    }
    if (rc < 0 && rc > -4096)
        return strerror(-rc); /* glibc's table is static; fine across threads */
    return "unknown error";
}

int hog_fail(int rc, char *buf, size_t len, const char *fmt, ...)
{
    if (buf && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, len, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static hog_log_fn log_fn;
static void *log_ctx;
static hog_log_level log_max = HOG_LOG_INFO;

void hog_log_set(hog_log_fn fn, void *ctx, hog_log_level max_level)
{
    log_fn = fn;
    log_ctx = ctx;
    log_max = max_level;
}

void hog_log(hog_log_level level, const char *fmt, ...)
{
    if (!log_fn || level > log_max)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    log_fn(log_ctx, level, msg);
}
