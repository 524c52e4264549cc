/* test_util_machine.c: the memory a run may use: the cgroup's room read from fake v1 and v2 trees, and from a real cgroup v1 where the test may make one; the CPU's PREFETCHW flag. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

#include "test_scratch.h"

static void setup(void)
{
    scratch_make("machine");
}

TestSuite(util_machine, .init = setup, .fini = scratch_remove);

#define MIB (1ull << 20)

/* Writes text to dir/rel, making its folders. */
static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    for (char *s = strchr(path + strlen(dir) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        cr_assert(mkdir(path, 0755) == 0 || errno == EEXIST, "%s", path);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

/* hog_mem_cgroup_room on the scratch tree: dir/cgroup, dir/v1, dir/v2. */
static uint64_t room(void)
{
    char cg[256], v1[256], v2[256];
    snprintf(cg, sizeof(cg), "%s/cgroup", dir);
    snprintf(v1, sizeof(v1), "%s/v1", dir);
    snprintf(v2, sizeof(v2), "%s/v2", dir);
    return hog_mem_cgroup_room(cg, v1, v2);
}

static void put_number(const char *rel, uint64_t v)
{
    char text[32];
    snprintf(text, sizeof(text), "%llu\n", (unsigned long long)v);
    put(rel, text);
}

Test(util_machine, v2_limit_less_the_working_set)
{
    put("cgroup", "0::/job/step\n");
    put_number("v2/job/step/memory.max", 300 * MIB);
    put_number("v2/job/step/memory.current", 100 * MIB);
    cr_assert_eq(room(), 200 * MIB);
    /* the inactive page cache is reclaimed before an OOM kill: it is room */
    put("v2/job/step/memory.stat", "anon 1048576\nfile 62914560\ninactive_file 41943040\nactive_file 0\n");
    cr_assert_eq(room(), 240 * MIB);
    /* a parent's lower limit binds */
    put_number("v2/job/memory.max", 150 * MIB);
    put_number("v2/job/memory.current", 120 * MIB);
    cr_assert_eq(room(), 30 * MIB);
    /* "max" is no limit; a cgroup over its limit has none left */
    put("v2/job/memory.max", "max\n");
    put_number("v2/job/step/memory.current", 400 * MIB);
    cr_assert_eq(room(), 0);
    put("v2/job/step/memory.max", "max\n");
    cr_assert_eq(room(), UINT64_MAX);
}

Test(util_machine, v1_memory_controller_line)
{
    put("cgroup", "9:name=systemd:/\n5:devices:/\n4:cpu,memory:/batch/42\n1:cpuset:/\n0::/\n");
    put_number("v1/batch/42/memory.limit_in_bytes", 300 * MIB);
    put_number("v1/batch/42/memory.usage_in_bytes", 50 * MIB);
    put("v1/batch/42/memory.stat", "cache 0\ninactive_file 1\ntotal_inactive_file 10485760\n");
    cr_assert_eq(room(), 260 * MIB, "total_inactive_file, not inactive_file, and v1 before v2's 0::/");
    /* the root's "no limit" is the largest page count, near 2^63 */
    put_number("v1/memory.limit_in_bytes", 9223372036854771712ull);
    put_number("v1/memory.usage_in_bytes", 900 * MIB);
    cr_assert_eq(room(), 260 * MIB);
    put_number("v1/batch/42/memory.limit_in_bytes", 9223372036854771712ull);
    cr_assert_eq(room(), UINT64_MAX);
}

Test(util_machine, a_containers_own_cgroup_is_the_mounts_root)
{
    /* /proc/self/cgroup shows the host's path; the container sees its cgroup at the root */
    put("cgroup", "0::/kubepods/pod7/c1\n");
    put_number("v2/memory.max", 512 * MIB);
    put_number("v2/memory.current", 12 * MIB);
    cr_assert_eq(room(), 500 * MIB);
}

Test(util_machine, no_cgroup_no_controller_no_limit)
{
    cr_assert_eq(room(), UINT64_MAX, "no /proc/self/cgroup");
    put("cgroup", "3:cpuset:/\n2:cpu:/\n");
    cr_assert_eq(room(), UINT64_MAX, "v1 without a memory controller, no v2 line");
    put("cgroup", "0::/a\n");
    cr_assert_eq(room(), UINT64_MAX, "v2 without the memory controller's files");
    put("v2/a/memory.max", "garbage\n");
    cr_assert_eq(room(), UINT64_MAX, "a file that holds no number");
    /* No cgroup limit here: usable is what is available when it reads it.
     * Other processes move MemAvailable between two reads, so the read
     * usable makes is bracketed by one before and one after. */
    const uint64_t before = hog_mem_available(), usable = hog_mem_usable(), after = hog_mem_available();
    cr_assert_leq(usable, HOG_MAX(before, after), "usable %llu, available %llu then %llu", (unsigned long long)usable,
                  (unsigned long long)before, (unsigned long long)after);
}

/* A real cgroup v1 of 300 MiB, this test's process moved into it: the
 * room it reports is within the limit. Needs root and a v1 memory
 * controller at /sys/fs/cgroup/memory (a v2 child needs the controller
 * delegated, which a test cannot count on). */
Test(util_machine, a_real_v1_cgroup_limits_what_a_run_may_use)
{
    const char *root = "/sys/fs/cgroup/memory";
    char own[512] = "", line[512], path[768];
    FILE *f = fopen("/proc/self/cgroup", "r");
    cr_assert_not_null(f);
    while (fgets(line, sizeof(line), f))
        if (strstr(line, ":memory:"))
            snprintf(own, sizeof(own), "%s", strstr(line, ":memory:") + 8);
    fclose(f);
    own[strcspn(own, "\n")] = '\0';
    snprintf(path, sizeof(path), "%s%s/cgroup.procs", root, own);
    if (geteuid() != 0 || !own[0] || access(path, W_OK) != 0)
        cr_skip_test("needs root and a cgroup v1 memory controller at %s", root);
    char group[768];
    snprintf(group, sizeof(group), "%s%s/hog-test-%d", root, own, (int)getpid());
    cr_assert_eq(mkdir(group, 0755), 0, "%s: %s", group, strerror(errno));
    char file[900];
    snprintf(file, sizeof(file), "%s/memory.limit_in_bytes", group);
    f = fopen(file, "w");
    cr_assert_not_null(f);
    fprintf(f, "%llu\n", 300 * MIB);
    cr_assert_eq(fclose(f), 0);
    snprintf(file, sizeof(file), "%s/cgroup.procs", group);
    f = fopen(file, "w");
    cr_assert_not_null(f);
    fprintf(f, "%d\n", (int)getpid());
    cr_assert_eq(fclose(f), 0);

    uint64_t usable = hog_mem_usable();
    uint64_t in_group = hog_mem_cgroup_room("/proc/self/cgroup", root, "/sys/fs/cgroup");

    f = fopen(path, "w"); /* back where it was, so the group can go */
    cr_assert_not_null(f);
    fprintf(f, "%d\n", (int)getpid());
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(rmdir(group), 0, "%s: %s", group, strerror(errno));
    cr_assert_leq(in_group, 300 * MIB);
    cr_assert_gt(in_group, 200 * MIB, "this process uses far less than 100 MiB");
    cr_assert_leq(usable, 300 * MIB);
}

/* The write prefetches' flag is the CPU's own: Linux names PREFETCHW
 * "3dnowprefetch" in /proc/cpuinfo's flags. */
Test(util_machine, the_prefetchw_flag_is_the_cpus)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        cr_skip_test("no /proc/cpuinfo");
    char line[8192];
    int flags = 0, has = 0;
    while (!flags && fgets(line, sizeof(line), f))
        if (strncmp(line, "flags", 5) == 0) {
            flags = 1;
            has = strstr(line, " 3dnowprefetch") != NULL;
        }
    fclose(f);
    if (!flags)
        cr_skip_test("no flags line in /proc/cpuinfo (not x86)");
    cr_assert_eq(hog_cpu_prefetchw, has, "hog_cpu_prefetchw %d, cpuinfo %d", hog_cpu_prefetchw, has);
}
