/* bench_read.c: times one sequential scan of a file with hog_reader (io_uring, O_DIRECT where allowed) and prints its throughput in one line. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "etl/etl.h"
#include "deny_io.h"

/* The reader picks its path by itself; to time the others on the same file
 * this program takes the choice away as a system would (deny_io.h). */

static void usage(void)
{
    fprintf(stderr, "usage: bench_read [-c CHUNK_BYTES] [-d DEPTH] [--buffered] [--pread] FILE\n"
                    "  --buffered  refuse O_DIRECT (page-cache reads through the ring)\n"
                    "  --pread     refuse io_uring (the pread fallback)\n");
    exit(2);
}

int main(int argc, char **argv)
{
    size_t chunk = 0;
    unsigned depth = 0;
    int no_direct = 0, no_ring = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
            chunk = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc)
            depth = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--buffered") == 0)
            no_direct = 1;
        else if (strcmp(argv[i], "--pread") == 0)
            no_ring = 1;
        else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else
            usage();
    }
    if (!path)
        usage();
    if ((no_direct || no_ring) && deny_io(no_ring, no_direct) < 0) {
        fprintf(stderr, "bench_read: seccomp: %s\n", strerror(errno));
        return 1;
    }

    char err[512] = "";
    double t0 = hog_now();
    hog_reader *r;
    int rc = hog_reader_open(path, chunk, depth, &r, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "bench_read: %s\n", err[0] ? err : hog_strerror(rc));
        return 1;
    }
    const char *data;
    size_t len;
    uint64_t bytes = 0, sum = 0;
    while ((rc = hog_reader_next(r, &data, &len)) == 1) {
        /* Touch one word per page, as a parser would, so no path gets
         * credit for bytes nobody looked at. */
        for (size_t k = 0; k + 8 <= len; k += 4096) {
            uint64_t w;
            memcpy(&w, data + k, 8);
            sum += w;
        }
        bytes += len;
        hog_reader_release(r, data);
    }
    double secs = hog_now() - t0;
    if (rc < 0) {
        fprintf(stderr, "bench_read: %s\n", err[0] ? err : hog_strerror(rc));
        hog_reader_close(r);
        return 1;
    }
    int direct = hog_reader_direct(r);
    uint64_t file_bytes = hog_reader_file_bytes(r);
    hog_reader_close(r);
    printf("bytes=%llu file_bytes=%llu seconds=%.4f gbps=%.3f direct=%d ring=%s sum=%llx\n",
           (unsigned long long)bytes, (unsigned long long)file_bytes, secs,
           secs > 0 ? (double)bytes / secs / 1e9 : 0.0, direct, no_ring ? "denied" : "allowed",
           (unsigned long long)sum);
    return 0;
}
