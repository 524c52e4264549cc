/* cli_signal.c: SIGINT and SIGTERM for the training commands: the first stops the run at its next consistent point, a second ends the process at once. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* What the first signal stops. The handler reads these, so they are set
 * before the signals are routed and only ever replaced whole. */
static hog_trainer *volatile route_trainer;
static hog_link *volatile route_link;
/* The first signal's number. Any thread may take a signal, two at once:
 * the one whose compare-and-swap sets it is the first (a lock-free atomic
 * is async-signal-safe). */
static atomic_int caught;

/* Everything it calls only sets a flag: async-signal-safe. A second signal
 * (of either kind) takes its default action, which ends the process: what
 * it was writing goes through temporary files, never the outputs' names. */
static void on_signal(int sig)
{
    int none = 0;
    if (!atomic_compare_exchange_strong(&caught, &none, sig)) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    hog_trainer *t = route_trainer;
    hog_link *l = route_link;
    if (t)
        hog_trainer_interrupt(t);
    if (l)
        hog_link_interrupt(l);
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

void cli_signal_route(hog_trainer *t, hog_link *l)
{
    route_trainer = t;
    route_link = l;
    /* A signal caught before the route was set is passed on now. */
    if (atomic_load(&caught)) {
        if (t)
            hog_trainer_interrupt(t);
        if (l)
            hog_link_interrupt(l);
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
    route_trainer = NULL;
    route_link = NULL;
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

void cli_print_resume(const char *command, int argc, char *const *argv)
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
