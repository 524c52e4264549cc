/* cli_args.c: the commands' option parsing: getopt_long with a one-line message for a mistyped option (and the option meant), and the names Vowpal Wabbit and LIBLINEAR users type for the same settings. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define MIN2(a, b) ((a) < (b) ? (a) : (b))

/* The names another tool gives an option of the same meaning, and ours. */
static const struct alias {
    const char *theirs, *ours;
} aliases[] = {
    {"passes", "epochs"},         /* VW */
    {"loss_function", "loss"},    /* VW */
    {"learning_rate", "step"},    /* VW's -l */
};

const char *cli_canonical(const char *name)
{
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strcmp(name, aliases[i].theirs) == 0)
            return aliases[i].ours;
    return name;
}

/* Edits (insertions, deletions, substitutions, swaps of neighbours; '_'
 * for '-' is free) from a to b, counted up to 9. */
static unsigned distance(const char *a, const char *b)
{
    size_t m = strlen(a), n = strlen(b);
    if (m > 63 || n > 63)
        return 9;
    unsigned d[64][64];
    for (size_t i = 0; i <= m; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= n; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= m; i++)
        for (size_t j = 1; j <= n; j++) {
            int same = a[i - 1] == b[j - 1] || (a[i - 1] == '_' && b[j - 1] == '-');
            unsigned best = MIN2(d[i - 1][j - 1] + (same ? 0u : 1u), MIN2(d[i - 1][j], d[i][j - 1]) + 1);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                best = MIN2(best, d[i - 2][j - 2] + 1);
            d[i][j] = best;
        }
    return MIN2(d[m][n], 9u);
}

/* The option of opts nearest to name (without its dashes), or NULL when
 * none is near enough to be what was meant. */
static const char *nearest(const char *name, const struct option *opts)
{
    const char *best = NULL;
    unsigned best_d = 9;
    for (const struct option *o = opts; o->name; o++) {
        unsigned d = distance(name, o->name);
        if (d < best_d) {
            best_d = d;
            best = o->name;
        }
    }
    size_t len = strlen(name);
    return best && best_d <= (len < 6 ? 1u : len < 12 ? 2u : 3u) ? best : NULL;
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shorts, const struct option *opts, int *li)
{
    char optstring[64];
    snprintf(optstring, sizeof(optstring), ":%s", shorts); /* ':' tells a missing value from an unknown option */
    opterr = 0;
    int c = getopt_long(argc, argv, optstring, opts, li);
    if (c != '?' && c != ':')
        return c;
    const char *arg = argv[optind - 1];
    if (optopt) { /* a short option */
        if (c == ':')
            cli_error("%s: -%c needs a value; see hogtrain %s --help", cmd, optopt, cmd);
        else
            cli_error("%s: unknown option -%c; see hogtrain %s --help", cmd, optopt, cmd);
        return '?';
    }
    char name[128];
    const char *start = arg + strspn(arg, "-");
    snprintf(name, sizeof(name), "%.*s", (int)strcspn(start, "="), start);
    if (c == ':') {
        cli_error("%s: --%s needs a value; see hogtrain %s --help", cmd, name, cmd);
        return '?';
    }
    const char *near = nearest(name, opts);
    if (near)
        cli_error("%s: unknown option %s (did you mean --%s?); see hogtrain %s --help", cmd, arg, near, cmd);
    else
        cli_error("%s: unknown option %s; see hogtrain %s --help", cmd, arg, cmd);
    return '?';
}

const char *cli_optional_value(int argc, char **argv)
{
    if (optarg)
        return optarg;
    if (optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9' &&
        strspn(argv[optind], "0123456789") == strlen(argv[optind]))
        return argv[optind++];
    return NULL;
}
