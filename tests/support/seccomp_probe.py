# The seccomp probe of the setuid suite (tests/suite/setuid.rs), run inside the sandbox after
# the attempt prelude (tests/support/escape.rs: PY_PRELUDE defines ctypes, errno, os, libc,
# _name and _results). What it records and why it can tell a sandbox filter's refusal from the
# kernel's is documented on SECCOMP_PROBE in tests/support/escape.rs.
import platform, select, signal, stat, struct, threading
libc.syscall.restype = ctypes.c_long
_MACHINE = platform.machine()
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}[_MACHINE]
NR = {
    "x86_64": {"open": 2, "creat": 85, "chmod": 90, "fchmod": 91, "mknod": 133, "openat": 257,
               "mknodat": 259, "fchmodat": 268, "fchmodat2": 452, "openat2": 437,
               "io_uring_setup": 425, "getppid": 110, "seccomp": 317, "socket": 41},
    "aarch64": {"fchmod": 52, "fchmodat": 53, "openat": 56, "mknodat": 33, "fchmodat2": 452,
                "openat2": 437, "io_uring_setup": 425, "getppid": 173, "seccomp": 277, "socket": 198},
}[_MACHINE]
L = ctypes.c_long
AT_FDCWD = L(-100)
class _Insn(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]
class _Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Insn))]
def _in_child(fn):
    # A KILL action, or a filter installed for the probe, must end with the child, never reach
    # the persistent interpreter.
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        out = "no-report"
        try:
            out = fn()
        finally:
            os.write(w, out.encode())
            os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    data = os.read(r, 256).decode()
    os.close(r)
    if os.WIFSIGNALED(status):
        return signal.Signals(os.WTERMSIG(status)).name
    return data
def _raw(nr, args):
    ret = libc.syscall(L(nr), *args)
    return "ok" if ret >= 0 else _name(ctypes.get_errno())
def _probe(nr, args):
    fds, installed, done, seen, late = [], threading.Event(), threading.Event(), [], []
    def listen():
        if not installed.wait(10) or not fds:
            return
        try:
            p = select.poll()
            p.register(fds[0], select.POLLIN)
            for _ in range(100):
                if p.poll(100):
                    # SECCOMP_IOCTL_NOTIF_RECV (struct seccomp_notif, 80 bytes), then
                    # SECCOMP_IOCTL_NOTIF_SEND (struct seccomp_notif_resp: id, val, error, flags).
                    buf = ctypes.create_string_buffer(80)
                    if libc.ioctl(fds[0], ctypes.c_ulong(0xC0502100), buf) == 0:
                        seen.append(True)
                        nid = struct.unpack_from("Q", buf.raw, 0)[0]
                        resp = struct.pack("QqiI", nid, 0, -errno.EXDEV, 0)
                        libc.ioctl(fds[0], ctypes.c_ulong(0xC0182101), ctypes.create_string_buffer(resp, 24))
                    return
                if done.is_set():
                    return
            late.append(True)
        finally:
            os.close(fds[0])
    # The listener thread exists before the filter, so it is not under it.
    t = threading.Thread(target=listen)
    t.start()
    # if arch == this machine's and nr == `nr`: SECCOMP_RET_USER_NOTIF, else SECCOMP_RET_ALLOW.
    insns = [(0x20, 0, 0, 4), (0x15, 0, 3, _AUDIT_ARCH), (0x20, 0, 0, 0), (0x15, 0, 1, nr & 0xFFFFFFFF),
             (0x06, 0, 0, 0x7FC00000), (0x06, 0, 0, 0x7FFF0000)]
    prog = _Prog(len(insns), (_Insn * len(insns))(*[_Insn(*i) for i in insns]))
    # SECCOMP_SET_MODE_FILTER with SECCOMP_FILTER_FLAG_NEW_LISTENER.
    fd = libc.syscall(L(NR["seccomp"]), L(1), L(8), ctypes.byref(prog))
    if fd < 0:
        err = _name(ctypes.get_errno())
        installed.set()
        t.join(5)
        return "probe-not-installed:" + err
    fds.append(fd)
    installed.set()
    how = _raw(nr, args)
    done.set()
    t.join(15)
    if late or t.is_alive():
        return "probe-timed-out"
    return "reached-the-kernel" if seen else "filtered:" + how
def syscall(name, nr, *args):
    _results[name] = _in_child(lambda: _raw(nr, args))
    who = _in_child(lambda: _probe(nr, args))
    _results["who " + name] = who if who.startswith(("probe", "reached", "filtered")) else "filtered:" + who
W = "/workspace/"
def fresh(name):
    try:
        os.unlink(W + name)
    except FileNotFoundError:
        pass
    return (W + name).encode()
def existing(name):
    p = fresh(name)
    open(p, "w").close()
    os.chmod(p, 0o644)
    return p
# The control: a call no filter refuses reaches the probe, so "filtered" means something.
syscall("getppid", NR["getppid"])
_low = []
def _low_page():
    # Code and data for int80(), below 4 GiB (MAP_32BIT) so 32-bit pointers reach them.
    if not _low:
        mmap = libc.mmap
        mmap.restype = ctypes.c_void_p
        mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        page = mmap(None, 8192, 7, 0x62, -1, 0)
        if not page or page == ctypes.c_void_p(-1).value:
            raise OSError(ctypes.get_errno(), "mmap(MAP_32BIT)")
        _low.append(page)
    return _low[0]
def low(data):
    """Copies `data` below 4 GiB and returns its 32-bit address (one slot: the last copy)."""
    page = _low_page()
    ctypes.memmove(page + 4096, data, len(data))
    return page + 4096
def int80(nr, b=0, c=0, d=0):
    """The 32-bit system call `nr`(b, c, d) through int 0x80 from this 64-bit process (x86-64
    only): another architecture tag and another syscall table for a filter to cover. Returns
    "ok" or the errno name. Run it through _in_child."""
    page = _low_page()
    # push rbx; mov eax, nr; mov ebx, b; mov ecx, c; mov edx, d; int 0x80; pop rbx; ret
    code = (b"\x53\xb8" + struct.pack("<I", nr) + b"\xbb" + struct.pack("<I", b) + b"\xb9"
            + struct.pack("<I", c) + b"\xba" + struct.pack("<I", d) + b"\xcd\x80\x5b\xc3")
    ctypes.memmove(page, code, len(code))
    ret = ctypes.CFUNCTYPE(ctypes.c_int)(page)()
    return "ok" if ret >= 0 else _name(-ret)
