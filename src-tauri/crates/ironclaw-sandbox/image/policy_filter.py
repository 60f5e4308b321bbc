"""IronClaw's seccomp rules as a filter the supervisor installs on itself, under gVisor only (and
only when no filter is in force already).

Under runc the engine applies the container's seccomp profile (Docker's default plus our rules,
`src/container/seccomp`) to every process. gVisor applies it inside its own kernel only when it
is registered with `--oci-seccomp`, and then ignores each rule's errno: Docker's "clone3 gives
ENOSYS" becomes EPERM and no program can start a thread (older releases also refuse select()).
So IronClaw's set-up registers gVisor without it, and the rules come from here, where gVisor's
seccomp honours the errno. The list of allowed calls is moot there (the
calls reach gVisor, not the host), but our rules are policy, not surface, and must hold under
either runtime: no setuid/setgid file, the calls whose arguments a filter
cannot see refused with ENOSYS, only UNIX, IPv4 and IPv6 sockets, only the native architecture.
Installed before any interpreter starts, inherited by everything the code starts, and proved by
`confinement.problems()` like the engine's profile.

MODE_ARGUMENT, REFUSED_ENOSYS and SOCKET_FAMILIES mirror `src/container/seccomp/rules.rs` (a unit
test there compares them); REFUSED_EPERM and the clone rule mirror Docker's default profile.
"""

import ctypes
import errno
import platform
import struct

# (name, index of the mode argument): the mode may carry neither S_ISUID nor S_ISGID.
MODE_ARGUMENT = [
    ("chmod", 1),
    ("fchmod", 1),
    ("fchmodat", 2),
    ("open", 2),
    ("openat", 3),
    ("creat", 1),
    ("mknod", 1),
    ("mknodat", 2),
]
REFUSED_ENOSYS = ["openat2", "io_uring_setup", "io_uring_enter", "io_uring_register", "socketcall"]
SOCKET_FAMILIES = [1, 2, 10]
S_ISUID_ISGID = 0o6000

# What Docker's default profile refuses a process without CAP_SYS_ADMIN, kept under gVisor too:
# no namespaces (gVisor would grant a user namespace, and root in it may mount), no mounts, no
# chroot. clone3 gives ENOSYS, as Docker's does, so the C library falls back to clone, whose
# flags a filter can see.
REFUSED_EPERM = ["unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree",
                 "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "open_by_handle_at"]
_DOCKER_ENOSYS = ["clone3"]
CLONE_NEW_FLAGS = 0x7E020000  # CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET

# System call numbers by machine; a name a machine lacks is simply absent.
_NUMBERS = {
    "x86_64": (0xC000003E, {
        "chmod": 90, "fchmod": 91, "fchmodat": 268, "open": 2, "openat": 257, "creat": 85,
        "mknod": 133, "mknodat": 259, "openat2": 437, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "socket": 41, "fchmodat2": 452,
        "clone": 56, "clone3": 435, "unshare": 272, "setns": 308, "mount": 165, "umount2": 166,
        "pivot_root": 155, "chroot": 161, "open_tree": 428, "move_mount": 429, "fsopen": 430,
        "fsconfig": 431, "fsmount": 432, "fspick": 433, "open_by_handle_at": 304,
    }),
    "aarch64": (0xC00000B7, {
        "fchmod": 52, "fchmodat": 53, "openat": 56, "mknodat": 33, "openat2": 437,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "socket": 198,
        "fchmodat2": 452, "clone": 220, "clone3": 435, "unshare": 97, "setns": 268, "mount": 40,
        "umount2": 39, "pivot_root": 41, "chroot": 51, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "open_by_handle_at": 265,
    }),
}
# fchmodat2 (Linux 6.6) takes the mode where fchmodat does.
_EXTRA_MODE = [("fchmodat2", 2)]

_LD_W_ABS = 0x20
_ALU_AND_K = 0x54
_S_IFMT = 0o170000
_S_IFCHR = 0o020000
_S_IFBLK = 0o060000
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_X32_BIT = 0x40000000
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def _ins(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)


def _arg_low(index):
    return 16 + 8 * index  # seccomp_data: nr, arch, instruction pointer, then args[6]


def program(machine=None):
    """The filter as bytes of sock_filter, or None on a machine we have no numbers for."""
    found = _NUMBERS.get(machine or platform.machine())
    if found is None:
        return None
    arch, numbers = found
    deny = _ERRNO | errno.EPERM
    enosys = _ERRNO | errno.ENOSYS
    # Each block starts with the number in the accumulator and ends in a return.
    blocks = []
    for name, index in MODE_ARGUMENT + _EXTRA_MODE:
        if name in ("mknod", "mknodat"):
            continue
        if name in numbers:
            blocks.append((numbers[name], [
                _ins(_LD_W_ABS, 0, 0, _arg_low(index)),
                _ins(_JSET_K, 0, 1, S_ISUID_ISGID),
                _ins(_RET_K, 0, 0, deny),
                _ins(_RET_K, 0, 0, _ALLOW),
            ]))
    # mknod: no device node either (runc refuses them for want of CAP_MKNOD; gVisor would make
    # one, on the workspace too), and no setuid bits.
    for name, index in MODE_ARGUMENT:
        if name in ("mknod", "mknodat") and name in numbers:
            blocks.append((numbers[name], [
                _ins(_LD_W_ABS, 0, 0, _arg_low(index)),
                _ins(_ALU_AND_K, 0, 0, _S_IFMT),
                _ins(_JEQ_K, 3, 0, _S_IFCHR),
                _ins(_JEQ_K, 2, 0, _S_IFBLK),
                _ins(_LD_W_ABS, 0, 0, _arg_low(index)),
                _ins(_JSET_K, 0, 1, S_ISUID_ISGID),
                _ins(_RET_K, 0, 0, deny),
                _ins(_RET_K, 0, 0, _ALLOW),
            ]))
    for name in REFUSED_ENOSYS + _DOCKER_ENOSYS:
        if name in numbers:
            blocks.append((numbers[name], [_ins(_RET_K, 0, 0, enosys)]))
    for name in REFUSED_EPERM:
        if name in numbers:
            blocks.append((numbers[name], [_ins(_RET_K, 0, 0, deny)]))
    blocks.append((numbers["clone"], [
        _ins(_LD_W_ABS, 0, 0, _arg_low(0)),
        _ins(_JSET_K, 0, 1, CLONE_NEW_FLAGS),
        _ins(_RET_K, 0, 0, deny),
        _ins(_RET_K, 0, 0, _ALLOW),
    ]))
    families = [_ins(_LD_W_ABS, 0, 0, _arg_low(0))]
    for i, family in enumerate(SOCKET_FAMILIES):
        left = len(SOCKET_FAMILIES) - i - 1
        # Match: jump over the remaining compares and the deny, to the allow.
        families.append(_ins(_JEQ_K, left + 1, 0, family))
    families += [_ins(_RET_K, 0, 0, deny), _ins(_RET_K, 0, 0, _ALLOW)]
    blocks.append((numbers["socket"], families))

    out = [
        _ins(_LD_W_ABS, 0, 0, 4),  # arch
        _ins(_JEQ_K, 1, 0, arch),
        _ins(_RET_K, 0, 0, enosys),
        _ins(_LD_W_ABS, 0, 0, 0),  # nr
        _ins(_JGE_K, 0, 1, _X32_BIT),
        _ins(_RET_K, 0, 0, enosys),
    ]
    # A chain of compares: a miss jumps over its block to the next compare.
    for nr, body in blocks:
        out.append(_ins(_JEQ_K, 0, len(body), nr))
        out.extend(body)
    out.append(_ins(_RET_K, 0, 0, _ALLOW))
    return b"".join(out)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install():
    """Installs the filter on this process (and so on all it starts). Returns None, or why not:
    the caller reports it, and `confinement.problems()` then finds the rules missing."""
    prog = program()
    if prog is None:
        return "no system call numbers for %s" % platform.machine()
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(prog, len(prog))
    fprog = _SockFprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return "no_new_privs: %s" % errno.errorcode.get(ctypes.get_errno(), "?")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return "seccomp: %s" % errno.errorcode.get(ctypes.get_errno(), "?")
    return None
