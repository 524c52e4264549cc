/* cli_keygen.c: `hogtrain keygen`: writes a new secret key file, the one every rank of a multi-node run reads. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <getopt.h>

#include "cli.h"

static const char keygen_usage[] =
    "usage: hogtrain keygen FILE\n"
    "  Writes a new secret key to FILE, readable by its owner only (mode 0600),\n"
    "  atomically: an existing FILE is replaced. Every rank of a multi-node run\n"
    "  reads the same key (--secret FILE), from a shared path or a copy of its own;\n"
    "  a peer without it is refused.\n"
    "  -q, --quiet           print nothing on success\n";

int cli_keygen(int argc, char **argv)
{
    static const struct option opts[] = {
        {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    int c;
    while ((c = cli_getopt("keygen", argc, argv, "qh", opts, NULL)) != -1) {
        switch (c) {
        case 'q': cli_quiet = 1; break;
        case 'h': fputs(keygen_usage, stdout); return 0;
        default: return 2;
        }
    }
    if (optind != argc - 1) {
        cli_error("keygen needs one FILE");
        fputs(keygen_usage, stderr);
        return 2;
    }
    const char *path = argv[optind];
    char err[CLI_ERR_LEN] = "";
    int rc = hog_secret_keygen(path, err, sizeof(err));
    if (rc < 0) {
        cli_error("%s", err[0] ? err : hog_strerror(rc));
        return 1;
    }
    if (!cli_quiet)
        fprintf(stderr, "%s: a new secret key (mode 0600)\n", path);
    return 0;
}
