/* net_launch.c: a multi-node run's parameters: their defaults and checks, and rank, size, coordinator and run id from the environment of mpirun (Open MPI, MPICH/Hydra) and srun (Slurm). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "net.h"
#include "../util/util.h"

/* Rank 0's port when the coordinator comes from a Slurm node list and
 * HOGTRAIN_PORT does not name one. */
#define LAUNCH_DEFAULT_PORT 29517u

/* ===================================================================== *
 *  The parameters
 * ===================================================================== */
hog_link_params hog_link_params_default(void)
{
    hog_link_params p;
    memset(&p, 0, sizeof(p));
    p.rank = -1;
    p.nodes = 0;
    p.rate = 64 * 1048576.0;
    p.timeout = 10;
    p.join_timeout = 120;
    p.chunk = 1024;
    p.sync = HOG_SYNC_ASYNC;
    return p;
}

/* All of s as a number 0..max: decimal digits only (no sign, no blank, no
 * trailing junk). Returns 0, or -1 with *out untouched. */
static int parse_number(const char *s, unsigned long max, unsigned long *out)
{
    unsigned long v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        unsigned long d = (unsigned long)(*s - '0');
        if (*s < '0' || *s > '9' || d > max || v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* A host name or address of n bytes: printable, no blank, no bracket or
 * colon (an IPv6 address comes in brackets, which the caller takes off). */
static int host_ok(const char *h, size_t n, int ipv6)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)h[i];
        if (!isgraph(c) || c == '[' || c == ']' || (c == ':' && !ipv6) || c == '/')
            return 0;
    }
    return 1;
}

/* "HOST:PORT", "[IPV6]:PORT" or "*:PORT", the port 1..65535. */
static int host_port_ok(const char *s)
{
    const char *colon;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || !host_ok(s + 1, (size_t)(close - s - 1), 1) || close[1] != ':')
            return 0;
        colon = close + 1;
    } else {
        colon = strchr(s, ':');
        if (!colon || !host_ok(s, (size_t)(colon - s), 0))
            return 0;
    }
    unsigned long port;
    return parse_number(colon + 1, 65535, &port) == 0 && port >= 1;
}

/* A host or an address, an IPv6 one with or without brackets. */
static int bind_host_ok(const char *h)
{
    size_t n = strlen(h);
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']')
        return host_ok(h + 1, n - 2, 1);
    return host_ok(h, n, 1);
}

int hog_link_params_check(const hog_link_params *p, const char **field)
{
    const char *bad = NULL;
    if (p->rank < 0)
        bad = "rank";
    else if (p->nodes < 1 || p->nodes > (int)HOG_FRAME_MAX_NODES)
        bad = "nodes";
    else if (p->rank >= p->nodes)
        bad = "rank";
    else if ((p->nodes > 1 && !p->coordinator) || (p->coordinator && !host_port_ok(p->coordinator)))
        bad = "coordinator";
    else if ((p->nodes > 1 && !p->secret) || (p->secret && !*p->secret))
        bad = "secret";
    else if (p->bind_host && !bind_host_ok(p->bind_host))
        bad = "bind_host";
    else if (!(p->rate > 0) || !isfinite(p->rate))
        bad = "rate";
    else if (!(p->timeout > 0) || !isfinite(p->timeout))
        bad = "timeout";
    else if (!(p->join_timeout > 0) || !isfinite(p->join_timeout))
        bad = "join_timeout";
    else if (p->chunk < 16 || p->chunk > 65536)
        bad = "chunk";
    else if (p->sync != HOG_SYNC_ASYNC && p->sync != HOG_SYNC_AVERAGE)
        bad = "sync";
    else if (!(p->sync_seconds >= 0) || !isfinite(p->sync_seconds))
        bad = "sync_seconds";
    else if (p->shards != 0 && p->shards != 1)
        bad = "shards";
    else if (!(p->drop >= 0 && p->drop <= 1))
        bad = "drop";
    for (size_t i = 0; !bad && i < sizeof(p->reserved); i++)
        if (p->reserved[i])
            bad = "reserved";
    if (field)
        *field = bad;
    return bad ? HOG_EPARAM : 0;
}

/* ===================================================================== *
 *  Slurm's node lists
 *
 *  A list is items separated by commas; an item is a host name in which
 *  bracketed ranges stand for numbers: "node[07-09,12]" is node07, node08,
 *  node09 and node12, the numbers written as wide as in the brackets. The
 *  first host takes each bracket's first number.
 * ===================================================================== */

/* Appends n bytes of s to buf (len bytes with the NUL) at *at. */
static int host_append(char *buf, size_t len, size_t *at, const char *s, size_t n)
{
    if (*at + n >= len)
        return -1;
    memcpy(buf + *at, s, n);
    *at += n;
    buf[*at] = '\0';
    return 0;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* "07-09,12]": reads a bracket's ranges up to and past the ']'. Returns the
 * end, or NULL when they are malformed; *first and *first_len are the
 * first number's text. */
static const char *slurm_ranges(const char *s, const char **first, size_t *first_len)
{
    *first = s;
    *first_len = 0;
    for (;;) {
        const char *d = s;
        while (is_digit(*s))
            s++;
        if (s == d)
            return NULL;
        if (*first_len == 0)
            *first_len = (size_t)(s - d);
        if (*s == '-') {
            d = ++s;
            while (is_digit(*s))
                s++;
            if (s == d)
                return NULL;
        }
        if (*s == ']')
            return s + 1;
        if (*s++ != ',')
            return NULL;
    }
}

static int slurm_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

int hog_slurm_first_host(const char *list, char *buf, size_t len)
{
    size_t at = 0;
    if (len == 0)
        return HOG_EFORMAT;
    buf[0] = '\0';
    /* Every item is read, so that a damaged list is refused whole; only
     * the first is written. */
    for (int item = 0;; item++) {
        if (!slurm_name_char(*list)) /* an empty item, or one that starts with a bracket */
            return HOG_EFORMAT;
        while (*list && *list != ',') {
            const char *text = list;
            size_t n = 1;
            if (*list == '[') {
                list = slurm_ranges(list + 1, &text, &n);
                if (!list)
                    return HOG_EFORMAT;
            } else if (slurm_name_char(*list)) {
                list++;
            } else {
                return HOG_EFORMAT;
            }
            if (item == 0 && host_append(buf, len, &at, text, n) < 0)
                return HOG_EFORMAT;
        }
        if (!*list++)
            return 0;
    }
}

/* ===================================================================== *
 *  The launchers' environment
 * ===================================================================== */

/* The value of NAME in env, as getenv finds it; NULL when unset or empty. */
static const char *env_get(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (; env && *env; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
            return (*env)[n + 1] ? *env + n + 1 : NULL;
    return NULL;
}

enum { LAUNCH_OMPI, LAUNCH_PMI, LAUNCH_SLURM, LAUNCHERS };

/* The variables of each launcher, the first found winning: mpirun started
 * inside a Slurm allocation leaves Slurm's variables in its ranks' way. */
static const struct launcher {
    const char *rank, *size;
} launchers[LAUNCHERS] = {
    [LAUNCH_OMPI] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    [LAUNCH_PMI] = {"PMI_RANK", "PMI_SIZE"},
    [LAUNCH_SLURM] = {"SLURM_PROCID", "SLURM_NTASKS"},
};

/* The strings hog_launch_detect composes. They live until exit; a later
 * call writes them again (with the same text for the same environment),
 * so calls must not overlap: not thread-safe. */
static char launch_coordinator[320];
static char launch_run_id[320];

/* The coordinator: HOGTRAIN_COORDINATOR, else Slurm's first host at
 * HOGTRAIN_PORT or LAUNCH_DEFAULT_PORT. NULL in *out when neither is there. */
static int launch_coordinator_from(char *const *env, const char **out, char *err, size_t err_len)
{
    *out = NULL;
    const char *c = env_get(env, "HOGTRAIN_COORDINATOR");
    if (c) {
        if (!host_port_ok(c))
            return hog_fail(HOG_EPARAM, err, err_len, "HOGTRAIN_COORDINATOR=%s: expected HOST:PORT (an IPv6 address "
                            "in brackets: [::1]:%u)", c, LAUNCH_DEFAULT_PORT);
        *out = c;
        return 0;
    }
    const char *var = "SLURM_STEP_NODELIST", *list = env_get(env, var);
    if (!list)
        list = env_get(env, var = "SLURM_JOB_NODELIST");
    if (!list)
        return 0;
    unsigned long port = LAUNCH_DEFAULT_PORT;
    const char *port_text = env_get(env, "HOGTRAIN_PORT");
    if (port_text && (parse_number(port_text, 65535, &port) < 0 || port < 1))
        return hog_fail(HOG_EPARAM, err, err_len, "HOGTRAIN_PORT=%s: expected a port 1..65535", port_text);
    char host[256];
    if (hog_slurm_first_host(list, host, sizeof(host)) < 0)
        return hog_fail(HOG_EPARAM, err, err_len, "%s=%s: expected a Slurm node list (node01, node[07-09,12],gpu1)",
                        var, list);
    snprintf(launch_coordinator, sizeof(launch_coordinator), "%s:%lu", host, port);
    *out = launch_coordinator;
    return 0;
}

/* The run id: HOGTRAIN_RUN_ID, else the job id of the launcher that gave
 * the rank (under mpirun inside a Slurm allocation, Slurm's step ids
 * differ between the ranks on mpirun's node and the others). MPICH gives
 * none. */
static int launch_run_id_from(char *const *env, int launcher, const char **out, char *err, size_t err_len)
{
    *out = env_get(env, "HOGTRAIN_RUN_ID");
    if (*out)
        return 0;
    const char *job = NULL, *step = NULL;
    int n = 0;
    if (launcher == LAUNCH_SLURM && (job = env_get(env, "SLURM_JOB_ID"))) {
        step = env_get(env, "SLURM_STEP_ID");
        n = step ? snprintf(launch_run_id, sizeof(launch_run_id), "slurm-%s.%s", job, step)
                 : snprintf(launch_run_id, sizeof(launch_run_id), "slurm-%s", job);
    } else if (launcher == LAUNCH_OMPI && (job = env_get(env, "OMPI_MCA_ess_base_jobid"))) {
        n = snprintf(launch_run_id, sizeof(launch_run_id), "ompi-%s", job);
    } else {
        return 0;
    }
    if (n < 0 || (size_t)n >= sizeof(launch_run_id))
        return hog_fail(HOG_EPARAM, err, err_len, "%s=%s: too long for a run id; set HOGTRAIN_RUN_ID",
                        launcher == LAUNCH_SLURM ? "SLURM_JOB_ID" : "OMPI_MCA_ess_base_jobid", job);
    *out = launch_run_id;
    return 0;
}

int hog_launch_detect(hog_link_params *p, char *const *env, char *err, size_t err_len)
{
    int launcher = LAUNCHERS;
    for (int i = 0; i < LAUNCHERS && launcher == LAUNCHERS; i++)
        if (env_get(env, launchers[i].rank))
            launcher = i;
    unsigned long rank = 0, size = 0;
    if (launcher < LAUNCHERS) {
        const struct launcher *l = &launchers[launcher];
        const char *r = env_get(env, l->rank), *s = env_get(env, l->size);
        if (!s)
            return hog_fail(HOG_EPARAM, err, err_len, "%s=%s but %s is not set: expected both from the launcher",
                            l->rank, r, l->size);
        if (parse_number(s, HOG_FRAME_MAX_NODES, &size) < 0 || size < 1)
            return hog_fail(HOG_EPARAM, err, err_len, "%s=%s: expected a number of ranks 1..%u", l->size, s,
                            HOG_FRAME_MAX_NODES);
        if (parse_number(r, size - 1, &rank) < 0)
            return hog_fail(HOG_EPARAM, err, err_len, "%s=%s: expected a rank 0..%lu", l->rank, r, size - 1);
    }
    const char *coordinator = p->coordinator, *run_id = p->run_id;
    int rc = coordinator ? 0 : launch_coordinator_from(env, &coordinator, err, err_len);
    if (rc == 0 && !run_id)
        rc = launch_run_id_from(env, launcher, &run_id, err, err_len);
    if (rc < 0)
        return rc;
    /* Nothing of p changes before every variable has been read. */
    if (launcher < LAUNCHERS && p->rank < 0)
        p->rank = (int)rank;
    if (launcher < LAUNCHERS && p->nodes <= 0)
        p->nodes = (int)size;
    p->coordinator = coordinator;
    p->run_id = run_id;
    return launcher < LAUNCHERS;
}

int hog_link_params_from_env(hog_link_params *p, char *err_detail, size_t err_len)
{
    return hog_launch_detect(p, environ, err_detail, err_len);
}
