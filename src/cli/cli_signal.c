/* cli_signal.c: how the commands stop and go on: SIGINT and SIGTERM (the first stops a run at its next consistent point, a second ends the process at once), SIGBUS from a mapped file cut short, the checkpoint options and the line that resumes. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* What the first signal stops. The handler reads these, so they are set
 * before the signals are routed and only ever replaced whole. */
static hog_trainer *volatile route_trainer;
static hog_link *volatile route_link;
static hog_mf_control *volatile route_mf;
/* The first signal's number. Any thread may take a signal, two at once:
 * the one whose compare-and-swap sets it is the first (a lock-free atomic
 * is async-signal-safe). */
static atomic_int caught;

/* Ends the process by sig, its default action: the outputs being written
 * have no name yet, and the names they may have for a moment (or all
 * along, where the file system takes no O_TMPFILE) are removed first. */
static void die_by(int sig)
{
    hog_output_unlink_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Everything it calls is async-signal-safe: the first signal only sets
 * flags, and a second (of either kind) ends the process at once. So does
 * the first when no training is under way (the input still being read,
 * say): nothing would be saved by waiting. A run on several machines
 * always waits for its link to tell the other ranks. */
static void on_signal(int sig)
{
    int none = 0;
    if (!atomic_compare_exchange_strong(&caught, &none, sig)) {
        die_by(sig);
        return;
    }
    hog_trainer *t = route_trainer;
    hog_link *l = route_link;
    hog_mf_control *mf = route_mf;
    int training = 0;
    if (t)
        training |= hog_trainer_interrupt(t);
    if (mf)
        training |= hog_mf_interrupt(mf);
    if (l)
        hog_link_interrupt(l);
    else if (!training)
        die_by(sig);
}

/* SIGUSR1: a snapshot at the run's next window (hog_trainer_snapshot only
 * sets a flag: async-signal-safe). */
static hog_trainer *volatile snap_trainer;
static hog_mf_control *volatile snap_mf;

static void on_usr1(int sig)
{
    (void)sig;
    hog_trainer *t = snap_trainer;
    hog_mf_control *mf = snap_mf;
    if (t)
        hog_trainer_snapshot(t);
    if (mf)
        hog_mf_snapshot(mf);
}

void cli_signal_snapshots(hog_trainer *t, hog_mf_control *mf)
{
    snap_trainer = t;
    snap_mf = mf;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
}

void cli_signal_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* SIGBUS: a page of a memory-mapped data set that is no longer in its
 * file (truncated under the run); SIGSEGV: an index read from a file
 * rewritten in place. When a mapped file did change, it is named, the
 * outputs' names in flight removed, and the process exits 1; a signal of
 * another cause is left to its default action. */
static void on_bus(int sig)
{
    const char *path = hog_dataset_changed_path();
    if (!path) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    static const char head[] = "hogtrain: ", tail[] = " changed while it was read (truncated or written in place): "
                                                      "the run stopped and wrote nothing\n";
    hog_output_unlink_temps();
    (void)!write(2, head, sizeof(head) - 1);
    (void)!write(2, path, strlen(path));
    (void)!write(2, tail, sizeof(tail) - 1);
    _exit(1);
}

void cli_signal_guard_maps(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_bus;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGSEGV, &sa, NULL);
}

void cli_signal_route(hog_trainer *t, hog_link *l, hog_mf_control *mf)
{
    route_trainer = t;
    route_link = l;
    route_mf = mf;
    /* A signal caught before the route was set is passed on now: before
     * any training, one machine's run ends at once, as on_signal would. */
    int sig = atomic_load(&caught);
    if (sig) {
        if (t)
            hog_trainer_interrupt(t);
        if (mf)
            hog_mf_interrupt(mf);
        if (l)
            hog_link_interrupt(l);
        else
            die_by(sig);
    }
}

int cli_signal_caught(void)
{
    return atomic_load(&caught);
}

const char *cli_signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

void cli_signal_release(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (snap_trainer || snap_mf) { /* a late SIGUSR1 must not end a run that is done */
        signal(SIGUSR1, SIG_IGN);
        snap_trainer = NULL;
        snap_mf = NULL;
    }
    route_trainer = NULL;
    route_link = NULL;
    route_mf = NULL;
}

/* Writes arg to f as a shell reads it back: as it is when it holds only
 * characters no shell treats specially, else in single quotes. */
static void put_shell_word(FILE *f, const char *arg)
{
    size_t plain = strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,@+%-");
    if (*arg && !arg[plain]) {
        fputs(arg, f);
        return;
    }
    fputc('\'', f);
    for (const char *c = arg; *c; c++)
        if (*c == '\'')
            fputs("'\\''", f);
        else
            fputc(*c, f);
    fputc('\'', f);
}

/* The command that goes on from the checkpoint: "hogtrain COMMAND" and
 * argv[1..argc) as given, with --resume added when it is not there. */
static void print_resume(const char *command, int argc, char *const *argv)
{
    fprintf(stderr, "hogtrain: to go on from it: hogtrain %s", command);
    int has_resume = 0;
    for (int i = 1; i < argc; i++) {
        fputc(' ', stderr);
        put_shell_word(stderr, argv[i]);
        has_resume |= strcmp(argv[i], "--resume") == 0;
    }
    fputs(has_resume ? "\n" : " --resume\n", stderr);
}

int cli_signal_report(int sig, int rc, const char *err, const char *out, const char *ckpt, const hog_link *link,
                      int argc, char *const *argv)
{
    if (rc == 0) /* the signal came after the last epoch: the checkpoint holds the finished run */
        cli_error("%s after training%s%s%s", cli_signal_name(sig), ckpt ? ": the checkpoint " : "", ckpt ? ckpt : "",
                  ckpt ? " holds the finished run" : "");
    else
        cli_error("%s: %s", cli_signal_name(sig), err[0] ? err : hog_strerror(rc));
    if (out)
        cli_error("no model was written to %s", out);
    if (ckpt && (rc == 0 || rc == HOG_EINTERRUPTED))
        print_resume("train", argc, argv);
    else if (!ckpt && !link)
        cli_error("--checkpoint FILE keeps a run's progress for --resume");
    return 128 + sig;
}

int cli_ckpt_option(const char *name, const char *val, cli_ckpt *c)
{
    if (strcmp(name, "checkpoint") == 0) {
        c->path = val;
        return 0;
    }
    if (strcmp(name, "resume") == 0) {
        c->resume = 1;
        return 0;
    }
    c->every_set = 1;
    if (cli_double("--checkpoint-every", val, &c->every) < 0)
        return -1;
    if (c->every < 0) {
        cli_error("--checkpoint-every: expected 0 or more seconds, found '%s'", val);
        return -1;
    }
    return 0;
}

int cli_ckpt_check(const cli_ckpt *c, const hog_link_params *lp)
{
    if ((c->every_set || c->resume) && !c->path) {
        cli_error("%s needs --checkpoint FILE", c->resume ? "--resume" : "--checkpoint-every");
        return -1;
    }
    if (c->path && (lp->nodes > 1 || lp->rank > 0)) {
        cli_error("--checkpoint: a run of several ranks (--nodes) takes no checkpoint");
        return -1;
    }
    return 0;
}
