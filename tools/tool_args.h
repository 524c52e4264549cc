/* tool_args.h: the data generators' command line (each declares its options in a table, one loop parses them, values checked against their ranges with a message naming the option) and their clock. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TOOL_ARGS_H
#define HOG_TOOL_ARGS_H

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Appends word, the k-th of count, to the list in buf ("a, b or c" with
 * conj " or "); *used: the list's length so far. A list past size is cut. */
static inline void join_word(char *buf, size_t size, size_t *used, size_t k, size_t count, const char *conj,
                             const char *word)
{
    const char *sep = k == 0 ? "" : k + 1 < count ? ", " : conj;
    int w = snprintf(buf + *used, size - *used, "%s%s", sep, word);
    if (w > 0)
        *used = *used + (size_t)w < size ? *used + (size_t)w : size - 1;
}

/* One of the words of choices (NULL-terminated) into *out, as its position;
 * -1 after printing why. */
static inline int parse_choice(const char *prog, const char *opt, const char *s, const char *const *choices,
                               int *out)
{
    size_t count = 0;
    for (; choices[count]; count++)
        if (strcmp(s, choices[count]) == 0) {
            *out = (int)count;
            return 0;
        }
    char list[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < count; i++)
        join_word(list, sizeof(list), &used, i, count, " or ", choices[i]);
    fprintf(stderr, "%s: %s: expected %s, got '%s'\n", prog, opt, list, s);
    return -1;
}

/* ===================================================================== *
 *  A generator's options, declared as a table
 * ===================================================================== */

typedef enum tool_kind {
    TOOL_U64,    /* an unsigned decimal in [umin, umax] */
    TOOL_DOUBLE, /* a number in [dmin, dmax] */
    TOOL_TEXT,   /* the argument as it is (a path) */
    TOOL_FLAG,   /* no argument: the int becomes 1 */
    TOOL_CHOICE, /* one of the words of choices: the int becomes its position */
} tool_kind;

/* One option: "-n" takes a short option, "--sigma" a long one; the name is
 * also how messages speak of it. Long options are given to getopt_long in
 * the table's order, which is the order its "ambiguous" message lists them
 * in; the required ones are named in the table's order when one is missing. */
typedef struct tool_opt {
    const char *name;
    tool_kind kind;
    union {
        uint64_t *u64;
        double *real;
        const char **text;
        int *flag;
        int *choice;
    } to;
    uint64_t umin, umax;
    double dmin, dmax;
    const char *const *choices; /* TOOL_CHOICE: the words, NULL-terminated */
    int required;
} tool_opt;

#define TOOL_MAX_OPTS 16
#define TOOL_GO_ON (-1)
#define TOOL_NOPTS(table) (sizeof(table) / sizeof((table)[0]))

/* Stores arg by o; -1 after printing why. */
static inline int tool_opt_set(const char *prog, const tool_opt *o, const char *arg)
{
    switch (o->kind) {
    case TOOL_U64: return parse_u64(prog, o->name, arg, o->umin, o->umax, o->to.u64);
    case TOOL_DOUBLE: return parse_double(prog, o->name, arg, o->dmin, o->dmax, o->to.real);
    case TOOL_TEXT: *o->to.text = arg; return 0;
    case TOOL_FLAG: *o->to.flag = 1; return 0;
    case TOOL_CHOICE: return parse_choice(prog, o->name, arg, o->choices, o->to.choice);
    }
    return -1;
}

/* Parses argv by the n options of opts, and -h or --help, which prints
 * usage to stdout. An option's value is stored when it is seen, so the
 * table's variables hold their defaults beforehand. Returns TOOL_GO_ON
 * when main goes on, else the status main exits with: 0 after the help, 2
 * after printing what was wrong (an unknown option or one without its
 * argument: getopt's message and usage to stderr; a value out of range, an
 * argument that is no option, a required option missing). */
static inline int tool_args_parse(const char *prog, int argc, char **argv, const tool_opt *opts, size_t n,
                                  void (*usage)(FILE *))
{
    /* getopt_long returns a short option's letter, a long one's position
     * past every letter */
    enum { LONG_BASE = 256 };
    struct option longs[TOOL_MAX_OPTS + 2];
    char shorts[2 * TOOL_MAX_OPTS + 2];
    unsigned char seen[TOOL_MAX_OPTS] = {0};
    size_t nl = 0, ns = 0;
    assert(n <= TOOL_MAX_OPTS);
    for (size_t i = 0; i < n; i++) {
        const int has_arg = opts[i].kind == TOOL_FLAG ? no_argument : required_argument;
        if (opts[i].name[1] == '-') {
            longs[nl++] = (struct option){opts[i].name + 2, has_arg, NULL, LONG_BASE + (int)i};
        } else {
            shorts[ns++] = opts[i].name[1];
            if (has_arg == required_argument)
                shorts[ns++] = ':';
        }
    }
    shorts[ns++] = 'h';
    shorts[ns] = '\0';
    longs[nl++] = (struct option){"help", no_argument, NULL, 'h'};
    longs[nl] = (struct option){NULL, 0, NULL, 0};

    int c;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        size_t i = 0;
        if (c >= LONG_BASE)
            i = (size_t)(c - LONG_BASE);
        else /* a long name's second byte is '-', never a letter */
            while (i < n && opts[i].name[1] != c)
                i++;
        if (i == n) { /* '?': getopt has said what */
            usage(stderr);
            return 2;
        }
        seen[i] = 1;
        if (tool_opt_set(prog, &opts[i], optarg) < 0)
            return 2;
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        return 2;
    }
    /* "-n, -d and -o are required": every required option, not only the
     * missing ones, so the message reads the same whatever was given */
    size_t nreq = 0, missing = 0;
    for (size_t i = 0; i < n; i++)
        if (opts[i].required) {
            nreq++;
            missing += !seen[i];
        }
    if (missing) {
        char list[256] = "";
        size_t used = 0, k = 0;
        for (size_t i = 0; i < n; i++)
            if (opts[i].required)
                join_word(list, sizeof(list), &used, k++, nreq, " and ", opts[i].name);
        fprintf(stderr, "%s: %s are required (--help for usage)\n", prog, list);
        return 2;
    }
    return TOOL_GO_ON;
}

static inline double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif /* HOG_TOOL_ARGS_H */
