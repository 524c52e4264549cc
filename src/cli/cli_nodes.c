/* cli_nodes.c: `hogtrain train` on several machines: the link's options, the launchers' environment, interruption, and what each rank reports. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_link_option(const char *name, const char *val, hog_link_params *p)
{
    char opt[64];
    snprintf(opt, sizeof(opt), "--%s", name);
    unsigned long long u;
    if (strcmp(name, "node-rank") == 0 || strcmp(name, "nodes") == 0 || strcmp(name, "chunk") == 0) {
        if (cli_unsigned(opt, val, name[0] == 'c' ? 65536 : 4096, &u) < 0)
            return -1;
        if (name[0] == 'c')
            p->chunk = (uint32_t)u;
        else if (strcmp(name, "nodes") == 0)
            p->nodes = (int)u;
        else
            p->rank = (int)u;
        return 0;
    }
    if (strcmp(name, "coordinator") == 0) {
        p->coordinator = val;
        return 0;
    }
    if (strcmp(name, "secret") == 0) {
        p->secret = val;
        return 0;
    }
    if (strcmp(name, "listen") == 0) {
        p->bind_host = val;
        return 0;
    }
    if (strcmp(name, "run-id") == 0) {
        p->run_id = val;
        return 0;
    }
    if (strcmp(name, "shard-per-node") == 0) {
        p->shards = 1;
        return 0;
    }
    if (strcmp(name, "link-rate") == 0) {
        unsigned long long b;
        if (cli_bytes(opt, val, &b) < 0)
            return -1;
        p->rate = (double)b;
        return 0;
    }
    if (strcmp(name, "sync") == 0) {
        const char *colon = strchr(val, ':');
        size_t n = colon ? (size_t)(colon - val) : strlen(val);
        if (n == 5 && strncmp(val, "async", 5) == 0 && !colon) {
            p->sync = HOG_SYNC_ASYNC;
            return 0;
        }
        if (n == 7 && strncmp(val, "average", 7) == 0) {
            p->sync = HOG_SYNC_AVERAGE;
            return colon ? cli_double(opt, colon + 1, &p->sync_seconds) : 0;
        }
        cli_error("--sync: expected async or average[:SECONDS], found '%s'", val);
        return -1;
    }
    double *d = strcmp(name, "link-timeout") == 0 ? &p->timeout
              : strcmp(name, "join-timeout") == 0 ? &p->join_timeout
              : strcmp(name, "link-drop") == 0    ? &p->drop
                                                  : NULL;
    if (!d) {
        cli_error("unknown option %s", opt);
        return -1;
    }
    return cli_double(opt, val, d);
}

int cli_holdout_default(const hog_link_params *lp, int given, unsigned epochs, int stop_set, const char *rows,
                        const char *loss, double *holdout, unsigned *early_stop)
{
    hog_link_params env = *lp; /* the ranks a launcher makes (srun, mpirun), as cli_link_open reads them */
    char err[CLI_ERR_LEN];
    const int ranks = hog_link_params_from_env(&env, err, sizeof(err)) > 0 ? env.nodes : lp->nodes;
    if (given || epochs <= 1 || ranks > 1)
        return 0;
    *holdout = 0.1;
    if (!stop_set)
        *early_stop = 3;
    if (!cli_quiet) {
        char msg[256];
        snprintf(msg, sizeof(msg), "no --test: a seeded tenth of the %s is held out, and training stops %u epochs "
                 "after their %s last fell, keeping the best epoch's model (--holdout 0: every %.*s, every epoch)",
                 rows, *early_stop, loss, (int)strlen(rows) - 1, rows);
        cli_log(NULL, HOG_LOG_INFO, msg);
    }
    return 1;
}

int cli_link_open(hog_link_params *p, hog_trainer *t, hog_mf_control *mf, hog_link **out)
{
    *out = NULL;
    char err[CLI_ERR_LEN] = "";
    int found = hog_link_params_from_env(p, err, sizeof(err));
    if (found < 0) {
        cli_error("%s", err);
        return -1;
    }
    if (p->nodes <= 1 && p->rank <= 0) /* one node: no link */
        return 0;
    const char *field;
    if (hog_link_params_check(p, &field) < 0) {
        if (strcmp(field, "coordinator") == 0)
            cli_error("a run of %d ranks needs --coordinator HOST:PORT (or HOGTRAIN_COORDINATOR): rank 0's "
                      "address", p->nodes);
        else if (strcmp(field, "secret") == 0)
            cli_error("a run of %d ranks needs --secret FILE, made by `hogtrain keygen FILE` and shared by "
                      "every rank", p->nodes);
        else
            cli_error("invalid value for hog_link_params.%s", field);
        return -1;
    }
    int rc = hog_link_create(p, out, err, sizeof(err));
    if (rc < 0) {
        cli_error("%s", err[0] ? err : hog_strerror(rc));
        return -1;
    }
    cli_signal_catch();
    cli_signal_route(t, *out, mf);
    return 0;
}

const char *cli_rank_path(const hog_link *l, const char *path, int rank_outputs, char *buf, size_t len)
{
    if (!path || !rank_outputs || snprintf(buf, len, "%s.rank%u", path, hog_link_rank(l)) >= (int)len)
        return NULL;
    return buf;
}

void cli_link_close(hog_link *l)
{
    if (!l)
        return;
    cli_signal_release();
    hog_link_free(l);
}

/* One rank's figures as a JSON object. */
static void json_rank(FILE *f, const hog_link_stats *s, const char *indent)
{
    double per_update = s->chunks_sent + s->deltas_sent
                            ? (double)s->bytes_sent / (double)(s->chunks_sent + s->deltas_sent)
                            : 0.0;
    fprintf(f, "{\"rank\": %u, \"examples\": %llu, \"examples_per_s\": ", s->rank, (unsigned long long)s->examples);
    cli_json_number(f, s->seconds > 0 ? (double)s->examples / s->seconds : 0.0);
    fprintf(f, ",\n%s \"chunks_sent\": %llu, \"chunks_received\": %llu, \"deltas_sent\": %llu, "
            "\"deltas_received\": %llu,\n%s \"dropped\": %llu, \"bad_frames\": %llu, \"stale\": %llu, "
            "\"bytes_sent\": %llu, \"bytes_received\": %llu,\n%s \"bytes_per_update\": ", indent,
            (unsigned long long)s->chunks_sent, (unsigned long long)s->chunks_received,
            (unsigned long long)s->deltas_sent, (unsigned long long)s->deltas_received, indent,
            (unsigned long long)s->dropped, (unsigned long long)s->bad, (unsigned long long)s->stale,
            (unsigned long long)s->bytes_sent, (unsigned long long)s->bytes_received, indent);
    cli_json_number(f, per_update);
    fprintf(f, ", \"link_cpu_seconds\": ");
    cli_json_number(f, s->link_cpu);
    fprintf(f, ", \"link_cpu_share\": ");
    cli_json_number(f, s->seconds > 0 ? s->link_cpu / s->seconds : 0.0);
    fprintf(f, ", \"staleness_mean\": ");
    cli_json_number(f, s->staleness_mean);
    fprintf(f, ", \"staleness_max\": ");
    cli_json_number(f, s->staleness_max);
    fputc('}', f);
}

void cli_link_report(FILE *f, const hog_link *l)
{
    hog_link_stats me, s;
    hog_link_stats_get(l, hog_link_rank(l), &me);
    fprintf(f, ",\n  \"nodes\": {\"rank\": %u, \"nodes\": %u, \"live\": %u", me.rank, me.nodes, me.live);
    if (me.live < me.nodes)
        fprintf(f, ", \"dead_rank\": %u", me.dead_rank);
    fprintf(f, ",\n    \"ranks\": [");
    hog_link_stats total = {.rank = me.rank, .nodes = me.nodes};
    unsigned n = 0;
    for (uint32_t r = 0; r < me.nodes; r++) {
        if (hog_link_stats_get(l, r, &s) < 0)
            continue;
        fputs(n++ ? ",\n      " : "\n      ", f);
        json_rank(f, &s, "      ");
        total.examples += s.examples;
        total.seconds = s.seconds > total.seconds ? s.seconds : total.seconds;
        total.chunks_sent += s.chunks_sent;
        total.chunks_received += s.chunks_received;
        total.deltas_sent += s.deltas_sent;
        total.deltas_received += s.deltas_received;
        total.dropped += s.dropped;
        total.bad += s.bad;
        total.stale += s.stale;
        total.bytes_sent += s.bytes_sent;
        total.bytes_received += s.bytes_received;
        total.link_cpu += s.link_cpu;
        total.staleness_mean += s.staleness_mean / me.nodes;
        total.staleness_max = s.staleness_max > total.staleness_max ? s.staleness_max : total.staleness_max;
    }
    fprintf(f, "],\n    \"total\": ");
    json_rank(f, &total, "    ");
    fprintf(f, "}");
}

/* The rank's one line of what its link did. */
static void link_summary(const hog_link *l)
{
    hog_link_stats s;
    if (cli_quiet || hog_link_stats_get(l, hog_link_rank(l), &s) < 0)
        return;
    fprintf(stderr, "rank %u of %u: %llu chunks sent, %llu received, %llu changes sent, %llu received, %llu dropped, "
            "%llu bad frames; %.3g MB sent; link thread %.2f s CPU; %u of %u ranks alive\n", s.rank, s.nodes,
            (unsigned long long)s.chunks_sent, (unsigned long long)s.chunks_received,
            (unsigned long long)s.deltas_sent, (unsigned long long)s.deltas_received, (unsigned long long)s.dropped,
            (unsigned long long)s.bad, (double)s.bytes_sent / 1e6, s.link_cpu, s.live, s.nodes);
}

int cli_link_after(const hog_link *l, const char *out)
{
    if (!l)
        return 0;
    link_summary(l);
    if (out)
        return 0;
    if (!cli_quiet)
        fprintf(stderr, "hogtrain: rank %u: done; rank 0 writes the model\n", hog_link_rank(l));
    return 1;
}
