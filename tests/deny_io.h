/* deny_io.h: a seccomp filter that refuses io_uring_setup (ENOSYS, as a container's default profile does) or open with O_DIRECT (EINVAL, as a file system without direct I/O does), so the reader's fallbacks can be tested and timed on any machine. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_DENY_IO_H
#define HOG_DENY_IO_H

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

/* Installs the filter in this process. Returns 0 or -errno. */
static int deny_io(int no_ring, int no_direct)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const unsigned flags_lo = (unsigned)offsetof(struct seccomp_data, args[2]);
#else
    const unsigned flags_lo = (unsigned)offsetof(struct seccomp_data, args[2]) + 4;
#endif
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, no_ring ? SECCOMP_RET_ERRNO | ENOSYS : SECCOMP_RET_ALLOW),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, flags_lo),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_DIRECT, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, no_direct ? SECCOMP_RET_ERRNO | EINVAL : SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
        return -errno;
    return 0;
}

#endif /* HOG_DENY_IO_H */
