# IronClaw: no setuid or setgid file can be made inside the sandbox.
#
# The workspace is a host folder and code runs as the host user, so a file it marks setuid is a
# setuid-<host user> program on the host, which another local user who can reach the folder
# could run as that user. Mounting the workspace nosuid protects only the container, not the
# host. So the supervisor installs this seccomp filter on itself before it starts any
# interpreter (children inherit it, and no_new_privs, which Docker sets, lets an unprivileged
# process install one): every call that can set S_ISUID or S_ISGID on a file (chmod family,
# open/creat/mknod with such a mode) fails with EPERM when the mode has either bit. Calls whose
# mode the filter cannot see (openat2's mode sits behind a pointer) and io_uring (which opens
# files without system calls) fail with ENOSYS, and C libraries fall back to plain openat.
# It stacks on Docker's own seccomp profile; it never allows anything that one refuses.
import ctypes
import platform

S_ISUID_ISGID = 0o6000
EPERM, ENOSYS = 1, 38

RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_BIT = 0x40000000

# syscall number -> index of its mode argument; None: refused outright with ENOSYS.
X86_64 = {2: 2, 85: 1, 90: 1, 91: 1, 133: 1, 257: 3, 259: 2, 268: 2, 452: 2, 437: None, 425: None}
I386 = {5: 2, 8: 1, 15: 1, 14: 1, 94: 1, 295: 3, 297: 2, 306: 2, 452: 2, 437: None, 425: None}
AARCH64 = {56: 3, 33: 2, 52: 1, 53: 2, 452: 2, 437: None, 425: None}

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def _table(calls, refuse_x32=False):
    """Instructions for one architecture, entered with the syscall number loaded; each ends
    in a return, so no jump ever leaves it."""
    out = [(LD_W_ABS, 0, 0, 0)]
    if refuse_x32:
        out += [(JGE_K, 0, 1, X32_BIT), (RET_K, 0, 0, RET_ERRNO | ENOSYS)]
    for nr, arg in calls.items():
        if arg is None:
            out += [(JEQ_K, 0, 1, nr), (RET_K, 0, 0, RET_ERRNO | ENOSYS)]
        else:
            # Low 32 bits of argument `arg` (seccomp_data.args, little-endian).
            out += [
                (JEQ_K, 0, 4, nr),
                (LD_W_ABS, 0, 0, 16 + 8 * arg),
                (JSET_K, 0, 1, S_ISUID_ISGID),
                (RET_K, 0, 0, RET_ERRNO | EPERM),
                (RET_K, 0, 0, RET_ALLOW),
            ]
    return out + [(RET_K, 0, 0, RET_ALLOW)]


def program(machine):
    """The filter for this machine, or None where we do not know the syscall numbers."""
    if machine in ("x86_64", "amd64"):
        arches = [(AUDIT_ARCH_X86_64, _table(X86_64, refuse_x32=True)), (AUDIT_ARCH_I386, _table(I386))]
    elif machine in ("aarch64", "arm64"):
        arches = [(AUDIT_ARCH_AARCH64, _table(AARCH64))]
    else:
        return None
    out = []
    for arch, body in arches:
        out += [(LD_W_ABS, 0, 0, 4), (JEQ_K, 0, len(body), arch)] + body
    # Architectures this process cannot run anyway: Docker's own profile decides.
    return out + [(RET_K, 0, 0, RET_ALLOW)]


def install():
    """Installs the filter on this process (and so on everything it starts)."""
    insns = program(platform.machine())
    if insns is None:
        raise OSError("no setuid filter for the %s architecture" % platform.machine())
    filters = (SockFilter * len(insns))(*[SockFilter(*i) for i in insns])
    prog = SockFprog(len(insns), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
