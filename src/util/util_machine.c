/* util_machine.c: what the machine offers a run: the memory available (to the host and to this process's cgroup), the CPUs this process may use, and a monotonic clock. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

int hog_cpu_prefetchw;

/* Asked once, as the library loads: a flag the loops read, not a CPUID in
 * them. */
__attribute__((constructor)) static void cpu_probe(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    hog_cpu_prefetchw = __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & bit_PRFCHW);
#endif
}

uint64_t hog_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    if (f) {
        char line[256];
        unsigned long long kb;
        while (fgets(line, sizeof(line), f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                fclose(f);
                return (uint64_t)kb * 1024;
            }
        fclose(f);
    }
    long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

/* ===================================================================== *
 *  The cgroup's memory
 *
 *  A container or a batch job is given a memory limit through its cgroup,
 *  and MemAvailable knows nothing of it: a run that sized itself by the
 *  host would be killed by the cgroup's OOM killer. The limit that binds is
 *  the lowest along the path from the process's cgroup to the root, each
 *  less what that level already uses. Usage counts the page cache charged
 *  to the cgroup, of which the inactive file pages are reclaimed before an
 *  OOM kill: they are taken off (the working set, as the kubelet and
 *  `docker stats` count it).
 * ===================================================================== */

/* The first number in the file at dir/name; *none for "max" (cgroup v2's
 * "no limit"). Returns 1, or 0 when there is no such file or number. */
static int read_number(const char *dir, const char *name, uint64_t *v, int *none)
{
    char path[4096], buf[64];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    unsigned long long x = 0;
    int ok = fgets(buf, sizeof(buf), f) != NULL;
    fclose(f);
    *none = ok && strncmp(buf, "max", 3) == 0;
    if (*none)
        return 1;
    ok = ok && sscanf(buf, "%llu", &x) == 1;
    *v = x;
    return ok;
}

/* The value of `key` in dir/memory.stat ("key value" lines), or 0. */
static uint64_t read_stat(const char *dir, const char *key)
{
    char path[4096], line[256];
    snprintf(path, sizeof(path), "%s/memory.stat", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = strlen(key);
    unsigned long long v = 0;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, key, n) == 0 && line[n] == ' ' && sscanf(line + n + 1, "%llu", &v) == 1)
            break;
    fclose(f);
    return v;
}

/* Cgroup v1 writes "no limit" as the largest page count in bytes, 2^63
 * less a page; anything this large is no limit. */
#define HUGE_LIMIT (1ull << 62)

/* The room left at one cgroup folder (UINT64_MAX: no limit there). */
static uint64_t level_room(const char *dir, int v2)
{
    uint64_t limit = 0, usage = 0;
    int none = 0, unused;
    if (!read_number(dir, v2 ? "memory.max" : "memory.limit_in_bytes", &limit, &none) || none ||
        limit >= HUGE_LIMIT)
        return UINT64_MAX;
    if (!read_number(dir, v2 ? "memory.current" : "memory.usage_in_bytes", &usage, &unused))
        usage = 0;
    uint64_t inactive = read_stat(dir, v2 ? "inactive_file" : "total_inactive_file");
    uint64_t used = usage > inactive ? usage - inactive : 0;
    return limit > used ? limit - used : 0;
}

uint64_t hog_mem_cgroup_room(const char *proc_cgroup, const char *v1_root, const char *v2_root)
{
    FILE *f = fopen(proc_cgroup, "re");
    if (!f)
        return UINT64_MAX;
    char line[4096], path[4096] = "";
    int v2 = -1; /* which hierarchy the memory controller is found in: 0 v1, 1 v2 */
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "ID:CONTROLLERS:PATH": v1 names its controllers, v2 has ID 0 and none. */
        char *c = strchr(line, ':'), *p = c ? strchr(c + 1, ':') : NULL;
        if (!p)
            continue;
        *p = '\0';
        int memory = 0;
        for (char *tok = c + 1, *save = NULL; (tok = strtok_r(tok, ",", &save)) != NULL; tok = NULL)
            memory |= strcmp(tok, "memory") == 0;
        if (memory) { /* v1's memory controller decides when it is mounted (a hybrid system) */
            snprintf(path, sizeof(path), "%s", p + 1);
            v2 = 0;
            break;
        }
        if (c == line + 1 && line[0] == '0' && c[1] == '\0' && v2 < 0) {
            snprintf(path, sizeof(path), "%s", p + 1);
            v2 = 1;
        }
    }
    fclose(f);
    if (v2 < 0)
        return UINT64_MAX;
    /* From the process's cgroup up to the root of the mount. In a container
     * the path may be the host's, from a root that is not mounted here:
     * folders that do not exist are passed over, and the mount's root (the
     * container's cgroup) is read last. */
    uint64_t room = UINT64_MAX;
    char dir[8192];
    size_t n = strlen(path);
    for (;;) {
        while (n > 1 && path[n - 1] == '/')
            n--;
        snprintf(dir, sizeof(dir), "%s%.*s", v2 ? v2_root : v1_root, (int)(n == 1 && path[0] == '/' ? 0 : n), path);
        if (access(dir, F_OK) == 0)
            room = HOG_MIN(room, level_room(dir, v2));
        if (n <= 1)
            break;
        while (n > 0 && path[n - 1] != '/')
            n--;
        if (n == 0)
            break;
    }
    return room;
}

uint64_t hog_mem_usable(void)
{
    return HOG_MIN(hog_mem_available(), hog_mem_cgroup_room("/proc/self/cgroup", "/sys/fs/cgroup/memory",
                                                             "/sys/fs/cgroup"));
}

unsigned hog_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

double hog_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
