/* tool_args.h: the data generators' option values, checked against their ranges with a message naming the option, and their clock. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TOOL_ARGS_H
#define HOG_TOOL_ARGS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* An unsigned decimal in [min, max] into *out; -1 after printing why. */
static inline int parse_u64(const char *prog, const char *opt, const char *s, uint64_t min, uint64_t max,
                            uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
        fprintf(stderr, "%s: %s: expected an integer in [%llu, %llu], got '%s'\n", prog, opt,
                (unsigned long long)min, (unsigned long long)max, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* A number in [min, max] into *out; -1 after printing why. */
static inline int parse_double(const char *prog, const char *opt, const char *s, double min, double max,
                               double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= min && v <= max)) {
        fprintf(stderr, "%s: %s: expected a number in [%g, %g], got '%s'\n", prog, opt, min, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

static inline double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif /* HOG_TOOL_ARGS_H */
