/* cli_convert.c: `hogtrain convert`: text (CSV, libsvm, VW) to a binary dataset, or rating triples to a binary ratings file, written atomically. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <getopt.h>
#include <signal.h>
#include <string.h>

#include "cli.h"

static const char convert_usage[] =
    "usage: hogtrain convert INPUT -o DATA.hgd [options]\n"
    "       hogtrain convert RATINGS --ratings -o R.hgr\n"
    "  INPUT -               standard input (a pipe is read once, as it comes)\n"
    "  -o, --output FILE     the binary dataset to write (atomically)\n"
    "  --ratings             INPUT holds \"user item rating\" triples (matrix\n"
    "                        factorisation): write a binary ratings file\n"
    "  -q, --quiet           print nothing on success\n"
    CLI_READ_MEM_USAGE CLI_READ_USAGE;

/* A SIGINT or SIGTERM ends a conversion at once, with no output: the file
 * being written has no name (or its temporary name goes here), and the
 * process dies by the signal, so that its parent sees 130 or 143. */
static void on_signal(int sig)
{
    hog_output_unlink_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* Rating triples, as text or .hgr, to a binary ratings file. */
static int convert_ratings(const char *in, const char *out)
{
    hog_ratings *r;
    char err[CLI_ERR_LEN] = "";
    if (hog_ratings_open(in, 0, &r, err, sizeof(err)) < 0) {
        cli_error("%s", err);
        return 1;
    }
    int rc = hog_ratings_save(r, out);
    hog_ratings_info info;
    hog_ratings_get_info(r, &info);
    hog_ratings_close(r);
    if (rc < 0) {
        cli_error("%s: %s", out, hog_strerror(rc));
        return 1;
    }
    if (!cli_quiet)
        fprintf(stderr, "%s: %llu ratings of %u users and %u items\n", out, (unsigned long long)info.ratings,
                info.users, info.items);
    return 0;
}

int cli_convert(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'}, {"ratings", no_argument, 0, 'r'}, CLI_READ_OPTIONS,
        CLI_READ_MEM_OPTION, {0, 0, 0, 0},
    };
    hog_read_params rp = hog_read_params_default();
    const char *out = NULL;
    int c, li, ratings = 0;
    while ((c = cli_getopt("convert", argc, argv, "o:qhb:", opts, &li)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'q': cli_quiet = 1; break;
        case 'r': ratings = 1; break;
        case 'h': fputs(convert_usage, stdout); return 0;
        case 'b':
        case CLI_READ_OPT:
            if (cli_read_option(c == 'b' ? "hash-bits" : opts[li].name, optarg, &rp) < 0)
                return 2;
            break;
        default: return 2;
        }
    }
    if (optind != argc - 1 || !out) {
        cli_error("convert needs one INPUT and -o OUTPUT");
        fputs(convert_usage, stderr);
        return 2;
    }
    const char *in = cli_input(argv[optind]);
    if (cli_outputs_apart(&in, 1, &out, 1) < 0)
        return 1;
    catch_signals();
    char err[CLI_ERR_LEN] = "";
    if (ratings)
        return convert_ratings(in, out);
    hog_dataset_info info;
    int rc;
    if (rp.format == HOG_FORMAT_BINARY) {
        /* Re-writing a binary dataset: validate it on the way. */
        hog_dataset *ds;
        if (cli_open(in, &rp, &ds) < 0)
            return 1;
        hog_dataset_get_info(ds, &info);
        rc = hog_dataset_save(ds, out);
        hog_dataset_close(ds);
        if (rc < 0)
            snprintf(err, sizeof(err), "%s: %s", out, hog_strerror(rc));
    } else {
        rc = hog_dataset_convert(in, &rp, out, &info, err, sizeof(err));
    }
    if (rc < 0) {
        cli_error("%s", err[0] ? err : hog_strerror(rc));
        return 1;
    }
    cli_report_skipped(in, info.skipped, err);
    if (!cli_quiet)
        fprintf(stderr, "%s: %llu rows, %llu features, %llu non-zeros in %u blocks\n", out,
                (unsigned long long)info.rows, (unsigned long long)info.features,
                (unsigned long long)info.nnz, info.blocks);
    return 0;
}
