/* cli.h: the shared pieces of the hogtrain command: option values, messages, output files and reports. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_CLI_H
#define HOG_CLI_H

#include <stdio.h>

#include <hogtrain.h>

#define CLI_ERR_LEN 1024

/* The CPU level the code was built for (the Makefile's ARCH), which
 * `hogtrain version` names. */
#if defined(__x86_64__) && defined(__SSSE3__) && defined(__SSE4_2__) && defined(__POPCNT__)
#define CLI_BUILD_CPU "x86-64-v2"
#elif defined(__x86_64__)
#define CLI_BUILD_CPU "x86-64"
#else
#define CLI_BUILD_CPU "portable C"
#endif

/* ---- cli_args.c ---- */
struct option;
/* getopt_long for command cmd, whose messages are one line: an unknown
 * option names the option it is nearest to (did you mean --step?), a
 * missing value says which option wants one, and both point at
 * `hogtrain CMD --help`; '?' is returned for either, after the message. */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shorts, const struct option *opts, int *li);
/* Our name for an option that Vowpal Wabbit or LIBLINEAR users type
 * under theirs (passes: epochs), or name itself. */
const char *cli_canonical(const char *name);
/* The value of an option with an optional one, given as --opt=V or as
 * --opt V when the next argument is a whole number (then taken); NULL when
 * there is none. Call right after cli_getopt returned the option. */
const char *cli_optional_value(int argc, char **argv);

/* ---- cli_tune.c ---- */
/* Prints p's K-fold cross-validated metrics on ds (each fold, the mean
 * and the standard deviation; into report as JSON when not NULL). Returns
 * 0 or -1 (reported). */
int cli_cv_run(const hog_train_params *p, const hog_dataset *ds, unsigned cv, const char *input, const char *report);
/* Searches `trials` settings of step, schedule, normalisation, L2 and L1
 * around base by successive halving up to base->epochs, scored on K folds
 * (cv > 1) or base->holdout; prints the leaderboard; *best gets the
 * winner's parameters (base's epochs). Returns 0 or -1 (reported). */
int cli_tune_run(const hog_train_params *base, const hog_dataset *ds, unsigned trials, unsigned cv,
                 const char *input, hog_train_params *best);

/* ---- cli_common.c ---- */
extern int cli_quiet;

/* Prints "hogtrain: msg" to stderr, the library's names for settings
 * written as options (cli_flags_rewrite). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The library's log callback: "hogtrain: [error: |warning: ]msg" to stderr,
 * rewritten as cli_error does. */
void cli_log(void *ctx, hog_log_level level, const char *msg);

/* Strict option values: the whole string must be the number. On failure
 * they print which option wanted what and return -1. */
int cli_double(const char *opt, const char *s, double *out);
int cli_unsigned(const char *opt, const char *s, unsigned long long max, unsigned long long *out);
/* One of two words: *out = va for a, vb for b. */
int cli_either(const char *opt, const char *s, const char *a, int va, const char *b, int vb, int *out);
/* --bind: 0, 1 or auto (HOG_BIND_AUTO). */
int cli_bind(const char *s, int *out);
/* A size in bytes with an optional K, M, G or T suffix (powers of 1024). */
int cli_bytes(const char *opt, const char *s, unsigned long long *out);

/* The options that say how to read data, the same for every command:
 * getopt_long returns CLI_READ_OPT for them (and 'b' for -b, the hash bits),
 * and cli_read_option applies them. */
#define CLI_READ_OPT 'F'
#define CLI_READ_OPTIONS                                                                        \
    {"format", required_argument, 0, CLI_READ_OPT}, {"label", required_argument, 0, CLI_READ_OPT}, \
    {"header", no_argument, 0, CLI_READ_OPT}, {"delimiter", required_argument, 0, CLI_READ_OPT},   \
    {"ignore", required_argument, 0, CLI_READ_OPT},                                             \
    {"categorical", required_argument, 0, CLI_READ_OPT},                                        \
    {"hash-bits", required_argument, 0, 'b'}, {"index-base", required_argument, 0, CLI_READ_OPT}, \
    {"on-error", required_argument, 0, CLI_READ_OPT},                                           \
    {"parse-threads", required_argument, 0, CLI_READ_OPT},                                      \
    {"max-line", required_argument, 0, CLI_READ_OPT},                                           \
    {"max-features", required_argument, 0, CLI_READ_OPT},                                       \
    {"temp-dir", required_argument, 0, CLI_READ_OPT},                                           \
    {"feature-names", no_argument, 0, CLI_READ_OPT}, {"fields", no_argument, 0, CLI_READ_OPT}
/* --mem-limit as a reading option, for the commands that have no other use for it. */
#define CLI_READ_MEM_OPTION {"mem-limit", required_argument, 0, CLI_READ_OPT}
#define CLI_READ_MEM_USAGE                                                                      \
    "  --mem-limit BYTES       memory the reading may hold (K/M/G; default half of what this\n" \
    "                          process may use): its chunks and parsed rows take a quarter;\n" \
    "                          a data set built from text (info) goes to a scratch file past half\n"
#define CLI_READ_USAGE                                                                          \
    "  --format csv|libsvm|vw|ffm|hgd  input format (default: detected from the content)\n"    \
    "  --label COL             CSV label column, 0-based index or header name (default 0);\n"  \
    "                          strings in it are class names, kept in the model, sorted\n"  \
    "  --header                CSV: the first line is a header (default: detected)\n"         \
    "  --delimiter C           CSV field separator (default: detected; 'tab' for a tab)\n"    \
    "  --ignore COLS           CSV columns to drop, comma-separated names or indices\n"       \
    "  --categorical COLS      CSV columns whose values are hashed into features\n"           \
    "  --feature-names         keep the names of features made of values, VW's \"namespace^feature\"\n" \
    "                          and CSV categorical \"column=value\", for export and info; it slows\n" \
    "                          parsing (a CSV header's numeric columns are named anyway)\n" \
    "  --fields                keep each value's field: VW's namespaces, CSV's columns (LIBFFM\n" \
    "                          text always has them); what --model ffm pairs features by\n"      \
    "  -b, --hash-bits B       hash every feature into 2^B (string features: 18 if not given)\n" \
    "  --index-base auto|0|1   libsvm indices: detected (auto, default: 0-based if an index\n"  \
    "                          0 is in the first MiB, else 1-based), as written (0), or\n"     \
    "                          1-based (1); --test and predict follow the training data\n"     \
    "  --on-error stop|skip    malformed lines stop the run (default) or are skipped and counted\n" \
    "  --parse-threads N       threads parsing text (default: one per core)\n"               \
    "  --max-line BYTES        a longer line of text is an error (K/M/G; default 64M)\n"        \
    "  --max-features N        a larger feature index is an error (default: none; train:\n"    \
    "                          what --mem-limit holds of the model, and the lower of the two)\n" \
    "  --temp-dir DIR          where text too large for --mem-limit goes, in a file without a\n" \
    "                          name that vanishes with the run (default: the output's folder,\n" \
    "                          else the input's)\n"

/* The weights m holds, biases apart: a feature's weights (a linear model's
 * outputs, a factorisation machine's weight and factors, a field-aware
 * one's factors for every field) times its features. */
uint64_t cli_model_weights(const hog_model *m);

/* The folder path is in: "." for a bare name, else what comes before its
 * last '/' ("/" for "/x"), copied into buf. */
const char *cli_folder_of(const char *path, char *buf, size_t len);

/* Applies one of the data-reading options to p. Returns 1 if opt was one
 * of them, 0 if not, -1 on a bad value (reported). */
int cli_read_option(const char *opt, const char *val, hog_read_params *p);

/* Prints how many malformed lines of path were skipped, and the first of them. */
void cli_report_skipped(const char *path, uint64_t skipped, const char *locations);

/* Opens a data set, reporting the error (and any skipped lines). Returns 0 or -1. */
int cli_open(const char *path, const hog_read_params *p, hog_dataset **out);
/* An input argument as a path: "-" is standard input. */
const char *cli_input(const char *arg);
/* Checks, before any work, that no output (NULL entries skipped) is the
 * same file as an input (device and inode compared, so another name or a
 * hard link of it is caught too) or as another output: writing it would
 * destroy what is read, or one output would replace another. Standard
 * output ("-", /dev/stdout) is a stream and never clashes. Returns 0, or
 * -1 with the clash reported. */
/* Whether an output path means standard output: "-" or /dev/stdout. */
int cli_is_stdout(const char *path);
int cli_outputs_apart(const char *const *inputs, size_t n_in, const char *const *outputs, size_t n_out);

/* Seconds on the monotonic clock, for the reports' timings. */
double cli_now(void);

/* ---- cli_flags.c ---- */
/* Copies msg into out (len bytes, NUL-terminated) with every setting the
 * library names there written as the option that sets it:
 * "hog_train_params.step" as "--step", "hog_train_params.loss =
 * HOG_LOSS_SOFTMAX" as "--loss softmax", "hog_read_params.index_base = 0"
 * as "--index-base 0". Fields no option sets stay as they are. */
void cli_flags_rewrite(const char *msg, char *out, size_t len);

/* ---- cli_output.c ---- */
/* JSON output: a number or null for NaN/infinity, and a metrics object. */
void cli_json_number(FILE *f, double v);
void cli_json_metrics(FILE *f, const hog_metrics *m);
void cli_json_string(FILE *f, const char *s);
/* Writes a class name as a field of a line of blank-separated fields
 * (export's text, predict's probabilities header, info): as it is, or,
 * when it holds a blank, a control byte or a quote (or starts a field
 * that would read as quoted), in double quotes with its quotes doubled,
 * as CSV quotes a field, so that every line keeps its fields. */
void cli_text_name(FILE *f, const char *s);

/* Output files written whole or not at all, through the library's
 * hog_output (a temporary file beside path, synced and renamed when
 * committed); f takes stdio's writes. path "-" or NULL is stdout. The
 * struct must stay where it is between open and close. */
typedef struct cli_out {
    FILE *f;
    hog_output *out; /* NULL for stdout */
    const char *path;
    int rc;          /* the first failed write's error */
} cli_out;
int cli_out_open(cli_out *o, const char *path);
/* Whether a file could be written at path now (made and removed, with no
 * name, as an output would be); says why not. Returns 0 or -1. */
int cli_output_check(const char *path);
/* Commits (ok != 0) or discards the file. Returns 0 or -1 (reported). */
int cli_out_close(cli_out *o, int ok);

/* The checkpoint options of train and train --model mf: getopt_long
 * returns CLI_CKPT_OPT for them, and cli_ckpt_option applies them. */
#define CLI_CKPT_OPT 'K'
#define CLI_CKPT_OPTIONS                                                                        \
    {"checkpoint", required_argument, 0, CLI_CKPT_OPT},                                         \
    {"checkpoint-every", required_argument, 0, CLI_CKPT_OPT}, {"resume", no_argument, 0, CLI_CKPT_OPT}
#define CLI_CKPT_USAGE                                                                          \
    "  --checkpoint FILE       write the run's whole state to FILE (atomically) every\n"        \
    "                          --checkpoint-every seconds, when interrupted and at the end\n"  \
    "  --checkpoint-every S    seconds between checkpoints (default 300; 0: only when\n"       \
    "                          interrupted and at the end)\n"                                   \
    "  --resume                go on from the --checkpoint FILE of an earlier run with the\n"  \
    "                          same input and options (one thread: the same model, bit for bit)\n" \
    "  SIGINT or SIGTERM       the workers finish their current segments, the checkpoint\n"   \
    "                          is written (with --checkpoint), no model is written, and\n"     \
    "                          the command exits 130 (143); a second signal ends it at once\n"
typedef struct cli_ckpt {
    const char *path;   /* --checkpoint, or NULL */
    double every;       /* --checkpoint-every: 300 unless given */
    int every_set;
    int resume;
} cli_ckpt;
/* Applies one checkpoint option to c. Returns 0, or -1 (reported). */
int cli_ckpt_option(const char *name, const char *val, cli_ckpt *c);
/* After the options: --checkpoint-every and --resume need --checkpoint,
 * and a run of several ranks takes none. Returns 0, or -1 (reported). */
int cli_ckpt_check(const cli_ckpt *c, const hog_link_params *lp);

/* ---- cli_signal.c: SIGINT and SIGTERM; SIGBUS and SIGSEGV of mapped files ---- */
/* Routes SIGBUS and SIGSEGV that come of a mapped data set's file truncated
 * or rewritten under the command (hog_dataset_changed_path) to an error that
 * names the file and exits 1; others keep their default action. */
void cli_signal_guard_maps(void);
/* From now on the first SIGINT or SIGTERM stops the training that
 * cli_signal_route names at its next consistent point (the command then
 * writes no model and exits 128 + the signal's number; a run in one pass
 * ends its read instead and writes the model of the rows read); when no training
 * is under way (its input still read) it ends the process at once, as a
 * second signal always does (re-raised with its default action, the
 * outputs' temporary names removed first). */
void cli_signal_catch(void);
/* What the first signal stops: a trainer (hog_trainer_interrupt), a link
 * (hog_link_interrupt: a run of several ranks always waits for it) and a
 * factorisation (hog_mf_interrupt), each NULL for none. A signal caught
 * already is passed on to them at once. */
void cli_signal_route(hog_trainer *t, hog_link *l, hog_mf_control *mf);
/* Snapshots (--save-every, SIGUSR1): the model file they replace. */
typedef struct cli_snap {
    const char *path;
    uint64_t rows;   /* --save-every N: rows (ratings) between snapshots (0: none) */
    double seconds;  /* --save-every Ns: seconds between them (0: none) */
    int set;
} cli_snap;
/* --save-every N (rows) or Ns (seconds) into s; -1 after the message. */
int cli_save_every_option(const char *val, cli_snap *s);
/* Whether out names a regular file or nothing yet: a model file that
 * snapshots may replace (a device, a FIFO or a pipe may not). */
int cli_is_model_file(const char *out);
/* From now on SIGUSR1 asks t (hog_trainer_snapshot) or mf
 * (hog_mf_snapshot), either NULL, for a snapshot; after
 * cli_signal_release it is ignored. */
void cli_signal_snapshots(hog_trainer *t, hog_mf_control *mf);
/* The first signal caught, or 0. */
int cli_signal_caught(void);
/* "SIGINT", "SIGTERM". */
const char *cli_signal_name(int sig);
/* Back to the default actions, no routes. */
void cli_signal_release(void);
/* After a `train` run that signal sig stopped (rc, err: the run's) or
 * outlived (rc 0): says so, that no model was written at out (NULL: a rank
 * that writes none), and, with checkpoint ckpt, the command that goes on
 * from it: "hogtrain train" and argv[1..argc) as given (quoted for a shell
 * where needed), with --resume added when it is not there; without one,
 * on one machine (link NULL), that --checkpoint would have kept the run.
 * Returns the exit status, 128 + sig. */
int cli_signal_report(int sig, int rc, const char *err, const char *out, const char *ckpt, const hog_link *link,
                      int argc, char *const *argv);

/* ---- the subcommands, one file each ---- */
int cli_convert(int argc, char **argv);
int cli_train(int argc, char **argv);
int cli_tune(int argc, char **argv);
int cli_export(int argc, char **argv);

/* The default of a run of several epochs without a test set: it holds out
 * a seeded tenth (*holdout 0.1) and stops early_stop 3 epochs after that
 * loss last fell (unless stop_set: --early-stop given), keeping the best
 * epoch's model, Vowpal Wabbit's default for several passes. Not when
 * given (a test set, a holdout or a search that holds out its own), for
 * one epoch, or for a rank of several (--nodes, or a launcher's
 * environment: each rank would keep its own best). Returns 1 when it holds
 * out, having said so on the log (rows: what the rows are called; loss:
 * the loss's name), else 0. */
int cli_holdout_default(const hog_link_params *lp, int given, unsigned epochs, int stop_set, const char *rows,
                        const char *loss, double *holdout, unsigned *early_stop);

/* ---- cli_nodes.c: train on several machines ---- */
#define CLI_LINK_OPTIONS                                                                              \
    {"node-rank", required_argument, 0, 'N'}, {"nodes", required_argument, 0, 'N'},                   \
    {"coordinator", required_argument, 0, 'N'}, {"secret", required_argument, 0, 'N'},              \
    {"listen", required_argument, 0, 'N'}, {"run-id", required_argument, 0, 'N'},                   \
    {"link-rate", required_argument, 0, 'N'}, {"link-timeout", required_argument, 0, 'N'},          \
    {"join-timeout", required_argument, 0, 'N'}, {"chunk", required_argument, 0, 'N'},              \
    {"sync", required_argument, 0, 'N'}, {"shard-per-node", no_argument, 0, 'N'},                   \
    {"link-drop", required_argument, 0, 'N'}, {"rank-outputs", no_argument, 0, 'N'}
#define CLI_LINK_USAGE                                                                                \
    "  several machines (Dogwild!; rank and size also come from mpirun's or srun's environment):\n" \
    "  --nodes N               ranks in the run (default 1: this machine alone)\n"                  \
    "  --node-rank R           this process's rank, 0..N-1; rank 0 coordinates, evaluates\n"      \
    "                          --test and writes the model\n"                                      \
    "  --coordinator HOST:PORT rank 0's address (or HOGTRAIN_COORDINATOR)\n"                      \
    "  --secret FILE           the key every rank shares (hogtrain keygen FILE; mode 0600)\n"      \
    "  --listen HOST           the address this rank listens on (default: the one that\n"         \
    "                          routes to the coordinator)\n"                                        \
    "  --run-id ID             ranks of another run id are refused (default: the\n"               \
    "                          launcher's job id, if any)\n"                                        \
    "  --sync async|average[:SECONDS]\n"                                                           \
    "                          exchange chunks all the time (async, default), or average\n"      \
    "                          the models at each epoch's end and every SECONDS\n"               \
    "  --shard-per-node        each rank trains on all of its own INPUT (default: rank R\n"      \
    "                          trains blocks R, R+N, ... of one shared INPUT)\n"                  \
    "  --link-rate BYTES       chunk bytes per second each rank sends (K/M/G; default 64M)\n"    \
    "  --link-timeout S        seconds of silence before a rank is declared dead (default 10)\n"  \
    "  --join-timeout S        seconds to wait for every rank to join (default 120)\n"           \
    "  --chunk N               floats per chunk, 16..65536 (default 1024)\n"                     \
    "  --rank-outputs          ranks other than 0 also write their view: MODEL.rankR\n"         \
    "  --link-drop F           (for tests) drop a fraction F of chunk and change messages\n"
/* Applies one link option to p (not --rank-outputs). Returns 0, or -1 (reported). */
int cli_link_option(const char *name, const char *val, hog_link_params *p);
/* Completes p from the launcher's environment and, for a run of several
 * ranks, makes the link (for the caller to hand the trainer) and routes
 * SIGINT and SIGTERM to it (cli_signal_catch; with trainer t or
 * factorisation control mf, when not NULL, as well). *out stays NULL for a
 * run of one. Returns 0 or -1 (reported). */
int cli_link_open(hog_link_params *p, hog_trainer *t, hog_mf_control *mf, hog_link **out);
/* Rank R > 0 of a multi-node run: where it writes path (PATH.rankR with
 * --rank-outputs, into buf), or NULL: nothing. */
const char *cli_rank_path(const hog_link *l, const char *path, int rank_outputs, char *buf, size_t len);
/* Frees the link (NULL accepted) after the signals are released
 * (cli_signal_release). */
void cli_link_close(hog_link *l);
/* The report's "nodes" member (after a comma). */
void cli_link_report(FILE *f, const hog_link *l);
/* After a rank's training: its link's summary line (l NULL: none); returns 1 when
 * this rank writes nothing (out NULL: rank 0 writes the model), saying so. */
int cli_link_after(const hog_link *l, const char *out);
int cli_predict(int argc, char **argv);
int cli_info(int argc, char **argv);
int cli_keygen(int argc, char **argv);

/* Matrix factorisation (cli_mf.c): train is dispatched there when argv has
 * --model mf; predict and info when hog_file_probe finds an MF model or,
 * for info, a binary ratings file. */
int cli_mf_wanted(int argc, char **argv);
int cli_mf_train(int argc, char **argv);
int cli_mf_predict(const char *model, const char *input, const char *out, const char *report);
int cli_mf_info(const char *path);
int cli_mf_ratings_info(const char *path);

#endif /* HOG_CLI_H */
