/* cli_flags.c: the library's names for settings (hog_train_params.step) as the options a command-line user types (--step), in messages. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <ctype.h>
#include <string.h>

#include "cli.h"

/* How an option takes its value. */
enum { TAKES_VALUE, ALONE, EQUALS };

static const struct flag {
    const char *params;      /* the struct, as hogtrain.h names it */
    const char *field;
    const char *option;
    int takes;               /* TAKES_VALUE: --opt V; ALONE: --opt (for 1); EQUALS: --opt=V */
    const char *enum_prefix; /* a value named by its constant, "HOG_LOSS_SOFTMAX", is the
                                option's word: the rest, lower case ("softmax") */
} flags[] = {
    {"hog_read_params", "format", "--format", TAKES_VALUE, "HOG_FORMAT_"},
    {"hog_read_params", "delimiter", "--delimiter", TAKES_VALUE, NULL},
    {"hog_read_params", "header", "--header", ALONE, NULL},
    {"hog_read_params", "label_index", "--label", TAKES_VALUE, NULL},
    {"hog_read_params", "label_name", "--label", TAKES_VALUE, NULL},
    {"hog_read_params", "ignore", "--ignore", TAKES_VALUE, NULL},
    {"hog_read_params", "categorical", "--categorical", TAKES_VALUE, NULL},
    {"hog_read_params", "hash_bits", "--hash-bits", TAKES_VALUE, NULL},
    {"hog_read_params", "index_base", "--index-base", TAKES_VALUE, NULL},
    {"hog_read_params", "on_error", "--on-error", TAKES_VALUE, "HOG_ON_ERROR_"},
    {"hog_read_params", "threads", "--parse-threads", TAKES_VALUE, NULL},
    {"hog_read_params", "max_line", "--max-line", TAKES_VALUE, NULL},
    {"hog_read_params", "max_features", "--max-features", TAKES_VALUE, NULL},
    {"hog_read_params", "mem_limit", "--mem-limit", TAKES_VALUE, NULL},
    {"hog_read_params", "temp_dir", "--temp-dir", TAKES_VALUE, NULL},
    {"hog_read_params", "feature_names", "--feature-names", ALONE, NULL},
    {"hog_read_params", "fields", "--fields", ALONE, NULL},

    {"hog_train_params", "loss", "--loss", TAKES_VALUE, "HOG_LOSS_"},
    {"hog_train_params", "threads", "--threads", TAKES_VALUE, NULL},
    {"hog_train_params", "epochs", "--epochs", TAKES_VALUE, NULL},
    {"hog_train_params", "step", "--step", TAKES_VALUE, NULL},
    {"hog_train_params", "decay", "--decay", TAKES_VALUE, NULL},
    {"hog_train_params", "power", "--power", TAKES_VALUE, NULL},
    {"hog_train_params", "schedule", "--schedule", TAKES_VALUE, "HOG_SCHEDULE_"},
    {"hog_train_params", "l2", "--l2", TAKES_VALUE, NULL},
    {"hog_train_params", "holdout", "--holdout", TAKES_VALUE, NULL},
    {"hog_train_params", "seed", "--seed", TAKES_VALUE, NULL},
    {"hog_train_params", "bias", "--bias", TAKES_VALUE, NULL},
    {"hog_train_params", "bind", "--bind", TAKES_VALUE, NULL},
    {"hog_train_params", "mem_limit", "--mem-limit", TAKES_VALUE, NULL},
    {"hog_train_params", "kernel", "--kernel", TAKES_VALUE, "HOG_KERNEL_"},
    {"hog_train_params", "batch", "--batch", TAKES_VALUE, NULL},
    {"hog_train_params", "normalized", "--normalized", ALONE, NULL},
    {"hog_train_params", "l1", "--l1", TAKES_VALUE, NULL},
    {"hog_train_params", "early_stop", "--early-stop", TAKES_VALUE, NULL},
    {"hog_train_params", "average", "--average", EQUALS, NULL},
    {"hog_train_params", "quantile", "--quantile", TAKES_VALUE, NULL},
    {"hog_train_params", "replicas", "--replicas", TAKES_VALUE, "HOG_REPLICAS_"},
    {"hog_train_params", "stream", "--stream", TAKES_VALUE, NULL},
    {"hog_train_params", "class_weight", "--class-weight", TAKES_VALUE, "HOG_CLASS_WEIGHT_"},
    {"hog_train_params", "train_metrics", "--train-metrics", TAKES_VALUE, "HOG_TRAIN_METRICS_"},
    {"hog_train_params", "factors", "--factors", TAKES_VALUE, NULL},
    {"hog_train_params", "factor_init", "--factor-init", TAKES_VALUE, NULL},
    {"hog_train_params", "field_aware", "--model ffm", ALONE, NULL},
    {"hog_train_params", "l2_rows", "--l2 L/rows", ALONE, NULL},
    {"hog_train_params", "interactions", "--interactions", TAKES_VALUE, NULL},
    {"hog_train_params", "cross_bits", "--cross-bits", TAKES_VALUE, NULL},

    {"hog_mf_params", "rank", "--rank", TAKES_VALUE, NULL},
    {"hog_mf_params", "threads", "--threads", TAKES_VALUE, NULL},
    {"hog_mf_params", "epochs", "--epochs", TAKES_VALUE, NULL},
    {"hog_mf_params", "step", "--step", TAKES_VALUE, NULL},
    {"hog_mf_params", "decay", "--decay", TAKES_VALUE, NULL},
    {"hog_mf_params", "l2", "--l2", TAKES_VALUE, NULL},
    {"hog_mf_params", "l2_bias", "--l2-bias", TAKES_VALUE, NULL},
    {"hog_mf_params", "init", "--init", TAKES_VALUE, NULL},
    {"hog_mf_params", "holdout", "--holdout", TAKES_VALUE, NULL},
    {"hog_mf_params", "seed", "--seed", TAKES_VALUE, NULL},
    {"hog_mf_params", "clamp", "--clamp", TAKES_VALUE, NULL},
    {"hog_mf_params", "bind", "--bind", TAKES_VALUE, NULL},
    {"hog_mf_params", "schedule", "--mf-schedule", TAKES_VALUE, "HOG_MF_"},
    {"hog_mf_params", "grid", "--grid", TAKES_VALUE, NULL},
    {"hog_mf_params", "step_schedule", "--schedule", TAKES_VALUE, "HOG_SCHEDULE_"},

    {"hog_link_params", "rank", "--node-rank", TAKES_VALUE, NULL},
    {"hog_link_params", "nodes", "--nodes", TAKES_VALUE, NULL},
    {"hog_link_params", "coordinator", "--coordinator", TAKES_VALUE, NULL},
    {"hog_link_params", "secret", "--secret", TAKES_VALUE, NULL},
    {"hog_link_params", "bind_host", "--listen", TAKES_VALUE, NULL},
    {"hog_link_params", "run_id", "--run-id", TAKES_VALUE, NULL},
    {"hog_link_params", "rate", "--link-rate", TAKES_VALUE, NULL},
    {"hog_link_params", "timeout", "--link-timeout", TAKES_VALUE, NULL},
    {"hog_link_params", "join_timeout", "--join-timeout", TAKES_VALUE, NULL},
    {"hog_link_params", "chunk", "--chunk", TAKES_VALUE, NULL},
    {"hog_link_params", "sync", "--sync", TAKES_VALUE, "HOG_SYNC_"},
    {"hog_link_params", "sync_seconds", "--sync", TAKES_VALUE, NULL},
    {"hog_link_params", "shards", "--shard-per-node", ALONE, NULL},
    {"hog_link_params", "drop", "--link-drop", TAKES_VALUE, NULL},
};

static const struct flag *find(const char *params, size_t params_len, const char *field, size_t field_len)
{
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (strlen(flags[i].params) == params_len && memcmp(flags[i].params, params, params_len) == 0 &&
            strlen(flags[i].field) == field_len && memcmp(flags[i].field, field, field_len) == 0)
            return &flags[i];
    return NULL;
}

static int ident(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* The end of the identifier at s. */
static const char *ident_end(const char *s)
{
    while (ident(*s))
        s++;
    return s;
}

/* The end of a value at s: a number or a word, without a sentence's full stop. */
static const char *value_end(const char *s)
{
    while (ident(*s) || *s == '+' || *s == '-' || (*s == '.' && isdigit((unsigned char)s[1])))
        s++;
    return s;
}

/* Appends n bytes of s to out[*used], keeping room for the NUL. */
static void put(char *out, size_t len, size_t *used, const char *s, size_t n)
{
    if (*used + 1 >= len)
        return;
    if (n > len - 1 - *used)
        n = len - 1 - *used;
    memcpy(out + *used, s, n);
    *used += n;
}

/* Writes the value s[0..n) of f's setting after its option: the option's
 * word for an enum constant; nothing for 1 when the option stands alone. */
static void put_value(char *out, size_t len, size_t *used, const struct flag *f, const char *s, size_t n)
{
    if (f->takes == ALONE && n == 1 && s[0] == '1')
        return;
    put(out, len, used, f->takes == EQUALS ? "=" : " ", 1);
    size_t plen = f->enum_prefix ? strlen(f->enum_prefix) : 0;
    if (!plen || n <= plen || memcmp(s, f->enum_prefix, plen) != 0) {
        put(out, len, used, s, n);
        return;
    }
    for (size_t i = plen; i < n; i++) {
        char c = (char)tolower((unsigned char)s[i]);
        put(out, len, used, &c, 1);
    }
}

void cli_flags_rewrite(const char *msg, char *out, size_t len)
{
    if (!len)
        return;
    size_t used = 0;
    const char *p = msg;
    while (*p) {
        const struct flag *f = NULL;
        const char *name_end = NULL, *field = NULL, *field_end = NULL;
        if ((p == msg || !ident(p[-1])) && strncmp(p, "hog_", 4) == 0) {
            name_end = ident_end(p);
            if (name_end[0] == '.' && ident(name_end[1])) {
                field = name_end + 1;
                field_end = ident_end(field);
                f = find(p, (size_t)(name_end - p), field, (size_t)(field_end - field));
            }
        }
        if (!f) {
            const char *next = name_end ? (field_end ? field_end : name_end) : p + 1;
            put(out, len, &used, p, (size_t)(next - p));
            p = next;
            continue;
        }
        put(out, len, &used, f->option, strlen(f->option));
        p = field_end;
        /* "= VALUE" (or "=VALUE"), or the enum's constant after one space. */
        const char *v = p;
        while (*v == ' ')
            v++;
        if (*v == '=') {
            v++;
            while (*v == ' ')
                v++;
        } else if (!(p[0] == ' ' && f->enum_prefix && strncmp(p + 1, f->enum_prefix, strlen(f->enum_prefix)) == 0)) {
            continue;
        }
        const char *v_end = value_end(v);
        if (v_end == v)
            continue;
        put_value(out, len, &used, f, v, (size_t)(v_end - v));
        p = v_end;
    }
    out[used] = '\0';
}
