/* cli_main.c: the hogtrain command's entry point: the CPU check, then dispatch to the subcommands. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: hogtrain COMMAND [options]\n"
    "\n"
    "  convert INPUT -o DATA.hgd [--format csv|libsvm|vw|ffm] [--label COL] [--header]\n"
    "                 [--delimiter C] [--on-error stop|skip] [--parse-threads N]\n"
    "  train   INPUT -o MODEL [--loss logistic|hinge|squared|softmax|...] [--threads N]\n"
    "                 [--epochs E] [--step S] [--schedule decay|invscaling|adagrad]\n"
    "                 [--l2 L] [--l1 L] [--test FILE | --holdout F] [--seed N]\n"
    "                 [--cache FILE.hgd] [--mem-limit BYTES] [--report R.json]\n"
    "  train   RATINGS --model mf -o MODEL [--rank K] ...  matrix factorisation\n"
    "  train   INPUT --cv K [...]   K-fold cross-validated metrics (and -o MODEL: the model)\n"
    "  tune    INPUT -o MODEL [--trials N] [--cv K]   search step, schedule and penalties\n"
    "  predict MODEL INPUT [-o PREDICTIONS] [--report R.json]\n"
    "  info    FILE          a dataset (.hgd or text) or a model\n"
    "  info    --topology    NUMA nodes, cores and where workers would run\n"
    "  export  MODEL [-o FILE] [--format text|json]   a linear model's weights\n"
    "  keygen  FILE          a new secret key for multi-node runs (mode 0600)\n"
    "  version\n"
    "\n"
    "INPUT is CSV, libsvm/svmlight or Vowpal Wabbit text (plain, .gz or .zst) or a\n"
    "binary dataset (.hgd), detected from its content; --format and the CSV options\n"
    "override for text. -q silences progress. Run 'hogtrain COMMAND --help' for all\n"
    "of a command's options.\n";

/* HOG_TOPOLOGY describes another machine to place workers on (planning,
 * tests); the library reads no environment, so the command passes it in
 * before anything places a worker. Returns 0, or -1 (reported). */
static int topology_from_env(void)
{
    const char *spec = getenv("HOG_TOPOLOGY");
    if (!spec || !*spec)
        return 0;
    char err[CLI_ERR_LEN] = "";
    int rc = hog_topology_set(spec, err, sizeof(err));
    if (rc < 0) {
        /* Name the variable: the user may have forgotten it is set. */
        cli_error("HOG_TOPOLOGY: %s", err[0] ? err : hog_strerror(rc));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* A CPU below the build's level would stop on an illegal instruction
     * somewhere in the parsers; this says so before anything runs, and
     * prints with no code of ours in between. */
    if (hog_init() == HOG_ECPU) {
        fputs("hogtrain: this hogtrain is built for " CLI_BUILD_CPU
              " CPUs (SSSE3, SSE4.2, POPCNT), which this one is not: rebuild it with `make ARCH=`\n", stderr);
        return 1;
    }
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    /* The library's warnings (how it took a file it had to guess about)
     * reach every command's user; train and mf set their own level once
     * they know of -q. */
    hog_log_set(cli_log, NULL, HOG_LOG_WARN);
    cli_signal_guard_maps();
    const char *const placing[] = {"convert", "train", "tune", "predict", "info"};
    for (size_t i = 0; i < sizeof(placing) / sizeof(placing[0]); i++)
        if (strcmp(cmd, placing[i]) == 0 && topology_from_env() < 0)
            return 1;
    if (strcmp(cmd, "convert") == 0)
        return cli_convert(argc - 1, argv + 1);
    if (strcmp(cmd, "train") == 0)
        return cli_train(argc - 1, argv + 1);
    if (strcmp(cmd, "tune") == 0)
        return cli_tune(argc - 1, argv + 1);
    if (strcmp(cmd, "predict") == 0)
        return cli_predict(argc - 1, argv + 1);
    if (strcmp(cmd, "info") == 0)
        return cli_info(argc - 1, argv + 1);
    if (strcmp(cmd, "keygen") == 0)
        return cli_keygen(argc - 1, argv + 1);
    if (strcmp(cmd, "export") == 0)
        return cli_export(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("hogtrain %s (built for %s)\n", hog_version_string(), CLI_BUILD_CPU);
        return 0;
    }
    if ((strcmp(cmd, "help") == 0 && argc == 2) || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(cmd, "help") == 0) { /* help COMMAND [--model mf]: COMMAND --model mf --help */
        char **args = calloc((size_t)argc + 1, sizeof(char *));
        if (!args) {
            cli_error("out of memory");
            return 1;
        }
        args[0] = argv[0];
        memcpy(args + 1, argv + 2, (size_t)(argc - 2) * sizeof(char *));
        args[argc - 1] = "--help";
        int rc = main(argc, args);
        free(args);
        return rc;
    }
    cli_error("unknown command '%s'", cmd);
    fputs(usage, stderr);
    return 2;
}
