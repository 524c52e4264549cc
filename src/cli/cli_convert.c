/* cli_convert.c: `hogtrain convert`: text (CSV, libsvm) to a binary dataset, written atomically. */
#include <getopt.h>
#include <string.h>

#include "cli.h"

static const char convert_usage[] =
    "usage: hogtrain convert INPUT -o DATA.hgd [options]\n"
    "  -o, --output FILE     the binary dataset to write (atomically)\n"
    "  -q, --quiet           print nothing on success\n"
    CLI_READ_USAGE;

int cli_convert(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'}, CLI_READ_OPTIONS, {0, 0, 0, 0},
    };
    hog_read_params rp = hog_read_params_default();
    const char *out = NULL;
    int c, li;
    while ((c = getopt_long(argc, argv, "o:qhb:", opts, &li)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'q': cli_quiet = 1; break;
        case 'h': fputs(convert_usage, stdout); return 0;
        case 'b':
        case CLI_READ_OPT:
            if (cli_read_option(c == 'b' ? "hash-bits" : opts[li].name, optarg, &rp) < 0)
                return 2;
            break;
        default: fputs(convert_usage, stderr); return 2;
        }
    }
    if (optind != argc - 1 || !out) {
        cli_error("convert needs one INPUT and -o OUTPUT");
        fputs(convert_usage, stderr);
        return 2;
    }
    const char *in = argv[optind];
    char err[CLI_ERR_LEN] = "";
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
