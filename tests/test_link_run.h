/* test_link_run.h: a run's secret key and a loopback coordinator port for the tests that start several ranks in one process (the link's and the trainer's over it). */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TEST_LINK_RUN_H
#define HOG_TEST_LINK_RUN_H

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

#include <hogtrain.h>
#include "test_scratch.h"

static char key_path[160], coordinator[64];

/* A TCP port on loopback for the coordinator, held for the rest of the
 * test (each runs in a process of its own): the socket is bound with
 * SO_REUSEADDR and never listens, so rank 0 can bind the port (ZeroMQ sets
 * SO_REUSEADDR too) while the kernel gives it to no ephemeral bind, such
 * as another rank's inbox, meanwhile. */
static inline int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof(a);
    cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &n), 0);
    return ntohs(a.sin_port);
}

/* A new key (dir/key, in key_path) and coordinator port (in coordinator):
 * a run's. */
static inline void new_run(void)
{
    snprintf(key_path, sizeof(key_path), "%s/key", dir);
    char err[256] = "";
    cr_assert_eq(hog_secret_keygen(key_path, err, sizeof(err)), 0, "%s", err);
    snprintf(coordinator, sizeof(coordinator), "127.0.0.1:%d", free_port());
}

#endif /* HOG_TEST_LINK_RUN_H */
