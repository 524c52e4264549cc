# notmpfile.py: runs a command in a process whose kernel refuses open(O_TMPFILE) with EOPNOTSUPP, as NFS, vfat or an old kernel does (a seccomp filter, kept across exec).
# SPDX-License-Identifier: BSD-2-Clause
# usage: python3 tests/notmpfile.py COMMAND [ARG...]   (x86-64 system call numbers)
import ctypes
import os
import struct
import sys

LD, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, ...|BPF_JSET|..., BPF_RET|BPF_K
ALLOW, ERRNO = 0x7FFF0000, 0x00050000
EOPNOTSUPP = 95
TMPFILE = 0o20000000  # O_TMPFILE's own bit (glibc's O_TMPFILE adds O_DIRECTORY)
PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS, SECCOMP_MODE_FILTER = 22, 38, 2


def ins(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)


prog = b""
for nr, flags_at in ((257, 32), (2, 24)):  # openat: its flags are args[2]; open: args[1]
    prog += ins(LD, 0, 0, 0) + ins(JEQ, 0, 3, nr) + ins(LD, 0, 0, flags_at)
    prog += ins(JSET, 0, 1, TMPFILE) + ins(RET, 0, 0, ERRNO | EOPNOTSUPP)
prog += ins(RET, 0, 0, ALLOW)


class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


libc = ctypes.CDLL(None, use_errno=True)
fprog = Fprog(len(prog) // 8, prog)
if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
        libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
    sys.exit("notmpfile: seccomp: " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])
