/* test_cli_predict.c: end-to-end tests of hogtrain predict on a stream: each row written to a pipe or FIFO answered while the input stays open, in every output format, and a stream's faults. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_command.h"

static void setup(void)
{
    scratch_make("clipredict");
    signal(SIGPIPE, SIG_IGN); /* a command that stopped: its write fails, and the test says why */
}

TestSuite(cli_predict, .init = setup, .fini = scratch_remove);

/* How long an answer may take: generous, for sanitizer builds on a busy
 * machine. The target is 10 ms (bench/bench-predict-latency.sh measures it). */
#define ANSWER_MS 1000

/* A running `hogtrain predict`: we write its input and read its output. */
typedef struct predictor {
    pid_t pid;
    int in;  /* its standard input (or a FIFO it reads), our end */
    int out; /* its standard output, our end */
    char got[65536];
    size_t len;
} predictor;

/* Starts "hogtrain ARGS" in the scratch folder, its standard input and
 * output pipes of ours (in_fifo: the input is that FIFO, opened by us for
 * writing once the command opens it), its messages in err.txt. */
static void start(predictor *p, const char *args, const char *in_fifo)
{
    const char *build = getenv("HOG_BUILD");
    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "cd %s && exec env -u HOG_TOPOLOGY %s/hogtrain %s 2>err.txt", dir,
             build ? build : "build", args);
    int in[2], res[2];
    cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
    cr_assert_eq(pipe2(res, O_CLOEXEC), 0);
    memset(p, 0, sizeof(*p));
    p->pid = fork();
    cr_assert_geq(p->pid, 0);
    if (p->pid == 0) {
        dup2(in[0], 0);
        dup2(res[1], 1);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(res[1]);
    p->in = in[1];
    p->out = res[0];
    if (in_fifo) {
        close(p->in);
        char path[256];
        snprintf(path, sizeof(path), "%s/%s", dir, in_fifo);
        p->in = open(path, O_WRONLY | O_CLOEXEC); /* waits for the command to open it */
        cr_assert_geq(p->in, 0, "%s: %s", path, strerror(errno));
    }
}

static void feed(predictor *p, const char *text)
{
    size_t n = strlen(text);
    cr_assert_eq(write(p->in, text, n), (ssize_t)n, "the command stopped reading: %s", slurp("err.txt"));
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Reads the command's output until it holds `bytes` bytes in all, within
 * ANSWER_MS; fails the test otherwise. */
static void await_bytes(predictor *p, size_t bytes, const char *what)
{
    const double deadline = now_ms() + ANSWER_MS;
    while (p->len < bytes) {
        double left = deadline - now_ms();
        struct pollfd pfd = {.fd = p->out, .events = POLLIN};
        int n = left > 0 ? poll(&pfd, 1, (int)left + 1) : 0;
        cr_assert_gt(n, 0, "%s: no answer within %d ms while the input stays open (%zu of %zu bytes): %s", what,
                     ANSWER_MS, p->len, bytes, slurp("err.txt"));
        ssize_t k = read(p->out, p->got + p->len, sizeof(p->got) - p->len);
        cr_assert_gt(k, 0, "%s: the output ended after %zu bytes: %s", what, p->len, slurp("err.txt"));
        p->len += (size_t)k;
    }
}

/* The same, until the output holds `lines` lines in all. */
static void await_lines(predictor *p, int lines, const char *what)
{
    for (;;) {
        int n = 0;
        for (size_t i = 0; i < p->len; i++)
            n += p->got[i] == '\n';
        if (n >= lines)
            return;
        await_bytes(p, p->len + 1, what);
    }
}

/* Closes the input, reads the output to its end and returns the exit status. */
static int finish(predictor *p)
{
    close(p->in);
    ssize_t k;
    while ((k = read(p->out, p->got + p->len, sizeof(p->got) - p->len)) > 0)
        p->len += (size_t)k;
    close(p->out);
    int st;
    cr_assert_eq(waitpid(p->pid, &st, 0), p->pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A scratch file's bytes, NULs and all, into a buffer the next call reuses. */
static const char *read_bytes(const char *name, size_t *len)
{
    static char buf[65536];
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s missing", name);
    *len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    return buf;
}

/* A logistic model on 4 features and a softmax one on 3 classes. */
static void train_models(void)
{
    char text[65536] = "", soft[65536] = "";
    srand(7);
    for (int i = 0; i < 400; i++) {
        double x[4];
        for (int k = 0; k < 4; k++)
            x[k] = rand() / (double)RAND_MAX * 2 - 1;
        char line[128];
        snprintf(line, sizeof(line), "%d 1:%.4f 2:%.4f 3:%.4f 4:%.4f\n", x[0] - x[1] > 0 ? 1 : -1, x[0], x[1], x[2],
                 x[3]);
        strcat(text, line);
        int c = i % 3;
        snprintf(line, sizeof(line), "%d %d:1 4:%.3f\n", 10 * (c + 1), c + 1, x[3]);
        strcat(soft, line);
    }
    write_file("t.svm", text);
    write_file("c.svm", soft);
    cr_assert_eq(hog("train t.svm -o m.hog -q"), 0, "%s", out);
    cr_assert_eq(hog("train c.svm --loss softmax -o s.hog -q"), 0, "%s", out);
}

static const char *const rows_bin[] = {"1 1:0.9 2:-0.8\n", "-1 1:-0.5 2:0.7 4:0.1\n", "1 3:0.25\n"};
static const char *const rows_soft[] = {"10 1:1 4:0.5\n", "20 2:1\n", "30 3:1 4:-0.2\n"};

/* Feeds the three rows one at a time and awaits each one's answer
 * (`header` lines first, then `per_row` bytes or, with per_row 0, a line
 * per row) before the next is written; then checks that the whole output
 * is byte for byte what the same rows from a file give. */
static void answers_row_by_row(const char *model, const char *const *rows, const char *opts, int header,
                               size_t per_row)
{
    predictor *p = malloc(sizeof(*p));
    cr_assert_not_null(p);
    char args[512];
    snprintf(args, sizeof(args), "predict %s - %s", model, opts);
    start(p, args, NULL);
    for (int r = 0; r < 3; r++) {
        char what[600];
        snprintf(what, sizeof(what), "hogtrain %s, row %d", args, r + 1);
        feed(p, rows[r]);
        if (per_row) {
            await_bytes(p, (size_t)(r + 1) * per_row, what);
        } else {
            await_lines(p, header + r + 1, what);
        }
    }
    cr_assert_eq(finish(p), 0, "hogtrain %s: %s", args, slurp("err.txt"));
    if (per_row)
        cr_assert_eq(p->len, 3 * per_row, "hogtrain %s: %zu bytes", args, p->len);

    char text[256] = "";
    for (int r = 0; r < 3; r++)
        strcat(text, rows[r]);
    write_file("rows.svm", text);
    cr_assert_eq(hog("predict %s rows.svm %s -q > want.out", model, opts), 0, "%s", slurp("want.out"));
    size_t n;
    const char *want = read_bytes("want.out", &n);
    cr_assert_eq(p->len, n, "hogtrain %s: %zu bytes from the pipe, %zu from the file", args, p->len, n);
    cr_assert(memcmp(p->got, want, n) == 0, "hogtrain %s: the pipe's answers differ from the file's", args);
    free(p);
}

Test(cli_predict, each_row_on_a_pipe_is_answered_while_the_input_stays_open, .timeout = 120)
{
    train_models();
    /* logistic: a probability, two with their header, the margin */
    answers_row_by_row("m.hog", rows_bin, "-q", 0, 0);
    answers_row_by_row("m.hog", rows_bin, "-o - -q", 0, 0);
    answers_row_by_row("m.hog", rows_bin, "-o /dev/stdout --report r.json -q", 0, 0);
    answers_row_by_row("m.hog", rows_bin, "--probabilities -q", 1, 0);
    answers_row_by_row("m.hog", rows_bin, "--raw -q", 0, 0);
    answers_row_by_row("m.hog", rows_bin, "--threads 1", 0, 0); /* the summary on stderr, not in the way */
    /* float32: 4 bytes a number */
    answers_row_by_row("m.hog", rows_bin, "--output-format f32 -q", 0, 4);
    answers_row_by_row("m.hog", rows_bin, "--output-format f32 --probabilities -q", 0, 8);
    answers_row_by_row("m.hog", rows_bin, "--output-format f32 --raw -q", 0, 4);
    /* softmax: the class's label, the classes' probabilities, their scores */
    answers_row_by_row("s.hog", rows_soft, "-q", 0, 0);
    answers_row_by_row("s.hog", rows_soft, "--probabilities -q", 1, 0);
    answers_row_by_row("s.hog", rows_soft, "--raw -q", 0, 0);
    answers_row_by_row("s.hog", rows_soft, "--output-format f32 --probabilities -q", 0, 12);
    cr_assert(strstr(slurp("r.json"), "\"rows\": 3"), "%s", slurp("r.json"));
}

Test(cli_predict, each_row_on_a_fifo_is_answered_while_it_stays_open, .timeout = 60)
{
    train_models();
    char path[256];
    snprintf(path, sizeof(path), "%s/in.fifo", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    predictor *p = malloc(sizeof(*p));
    cr_assert_not_null(p);
    start(p, "predict m.hog in.fifo -q", "in.fifo");
    feed(p, rows_bin[0]);
    await_lines(p, 1, "a FIFO's first row");
    feed(p, "1 1:0.9 2:-0.8\n-1 1:-0.5 2:0.7 4:0.1\n"); /* two at once */
    await_lines(p, 3, "a FIFO's next two rows");
    /* the end of a row, then the row it ends: answered when it is whole */
    feed(p, "1 3:");
    feed(p, "0.25\n");
    await_lines(p, 4, "a row written in two pieces");
    cr_assert_eq(finish(p), 0, "%s", slurp("err.txt"));
    free(p);
}

/* Starts cmd on standard input, waits for its answer to a whole row, then
 * writes more: a row that is malformed, or cut short, say. */
static void after_a_row(predictor *p, const char *cmd, const char *more)
{
    start(p, cmd, NULL);
    feed(p, rows_bin[0]);
    await_lines(p, 1, "the row before");
    feed(p, more);
}

Test(cli_predict, a_malformed_row_in_a_stream_stops_there_or_is_skipped, .timeout = 60)
{
    train_models();
    predictor *p = malloc(sizeof(*p));
    cr_assert_not_null(p);
    after_a_row(p, "predict m.hog - -q", "1 2:x\n");
    cr_assert_eq(finish(p), 1, "%s", slurp("err.txt"));
    cr_assert(strstr(slurp("err.txt"), "/dev/stdin:2:5: expected a number, found 'x'"), "%s", slurp("err.txt"));

    after_a_row(p, "predict m.hog - --on-error skip", "1 2:x\n");
    feed(p, rows_bin[1]);
    await_lines(p, 2, "the row after the malformed one");
    cr_assert_eq(finish(p), 0, "%s", slurp("err.txt"));
    const char *err = slurp("err.txt");
    cr_assert(strstr(err, "skipped 1 malformed line") && strstr(err, "/dev/stdin:2:5: expected a number"), "%s", err);
    cr_assert(strstr(err, "/dev/stdin: 2 rows"), "%s", err);
    free(p);
}

Test(cli_predict, a_stream_that_ends_inside_a_row_is_an_error_naming_the_line, .timeout = 60)
{
    train_models();
    predictor *p = malloc(sizeof(*p));
    cr_assert_not_null(p);
    /* A writer that dies in the middle of "3:0.25" leaves "3:0.2", which
     * parses: a stream's last line must end. */
    after_a_row(p, "predict m.hog - -q", "1 3:0.2");
    cr_assert_eq(finish(p), 1, "%s", slurp("err.txt"));
    cr_assert(strstr(slurp("err.txt"), "/dev/stdin:2:8: expected a newline, found the end of the stream"), "%s",
              slurp("err.txt"));
    cr_assert_eq(p->len, 9, "the first row's answer alone: %.*s", (int)p->len, p->got);

    after_a_row(p, "predict m.hog - --on-error skip", "1 3:0.2");
    cr_assert_eq(finish(p), 0, "%s", slurp("err.txt"));
    const char *err = slurp("err.txt");
    cr_assert(strstr(err, "skipped 1 malformed line") && strstr(err, "/dev/stdin:2:8: expected a newline"), "%s",
              err);
    cr_assert_eq(p->len, 9, "the first row's answer alone: %.*s", (int)p->len, p->got);

    /* Blanks after the last newline are no row; a file's last line may lack its newline. */
    start(p, "predict m.hog - -q", NULL);
    feed(p, rows_bin[0]);
    feed(p, "  ");
    cr_assert_eq(finish(p), 0, "%s", slurp("err.txt"));
    cr_assert_eq(p->len, 9);
    write_file("cut.svm", "1 1:0.9 2:-0.8\n1 3:0.2");
    cr_assert_eq(hog("predict m.hog cut.svm -q"), 0, "%s", out);
    cr_assert_eq(strlen(out), 18, "%s", out);
    free(p);
}
