"""The persistent interpreters (a Python worker and an interactive bash) and the pipes to them.

Interpreters live in the supervisor, not in the host's connection, so their state survives the
app or CLI restarting and reattaching. Each gets its own channels: requests in (only the
supervisor writes them), stdout and stderr out, and a control channel its completions come back
on (see cells.py for how those are authenticated).

Requests, completions and the interrupt target travel over socket pairs, not pipes. Whoever may
open a process's /proc/PID/fd/N can reopen a pipe there, for writing or reading: commands slipped
into bash's input, a completion forged, a request read away. A socket cannot be reopened that way
(ENXIO), under runc and gVisor alike, and gVisor lets any process of the UID open another's
/proc/PID/fd whatever its dumpability. Output stays on pipes (the zero-copy path tees them); a
byte someone adds there is output, which the host never takes for a result.
"""

import fcntl
import json
import os
import select
import signal
import socket
from time import monotonic as now

import cells
import integrity
import write_holds
from frames import STDERR, STDOUT
from pipe_transfer import F_SETPIPE_SZ, PIPE_SIZE, READ_CHUNK
from processes import KILLED_PIDS, ZOMBIE_PRESSURE, wait_exit, zombies_of

PYWORKER = "/opt/ironclaw/pyworker.py"
# Private, unreadable copies (see the Dockerfile): the interpreters start non-dumpable, so nothing
# else in the container can ptrace them or reach their memory and descriptors through /proc.
# gVisor's loader reads a binary to run it, so under gVisor the image's own ones run; there no
# process can ptrace one that is not its descendant, and another's /proc/PID/mem is refused
# whatever its dumpability (SECURITY.md, runtimes).
GVISOR = os.environ.get("IRONCLAW_RUNTIME") == "runsc"
PRIVATE_PYTHON = "/usr/bin/python3" if GVISOR else "/usr/libexec/ironclaw/python3"
PRIVATE_BASH = "/bin/bash" if GVISOR else "/usr/libexec/ironclaw/bash"


def set_nonblocking(fd):
    os.set_blocking(fd, False)


def control_pair():
    """(read end, write end) of a one-way channel that cannot be reopened through /proc (see the
    module's docstring), as plain descriptors like os.pipe()'s, and not inheritable like them."""
    r, w = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    # One way, as a pipe: the reader cannot write back into the writer's end.
    r.shutdown(socket.SHUT_WR)
    w.shutdown(socket.SHUT_RD)
    for end in (r, w):
        write_holds.know_socket(end.fileno())
    return r.detach(), w.detach()


def _close_all_but(keep):
    """In a forked child before exec: closes every descriptor outside `keep`, whatever its
    number. Close-on-exec already keeps the supervisor's own (its attach pipes, a run's output
    socket) out of the interpreter; this is the second lock, and it must not stop at a number
    the supervisor's descriptors could pass."""
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        fds = range(3, os.sysconf("SC_OPEN_MAX"))
    for fd in fds:
        if fd >= 3 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass  # the listing's own descriptor, already closed


class Worker:
    """A persistent interpreter process and the pipes to it."""

    def __init__(self, lang):
        self.lang = lang
        self.pid = None
        self.ctl = None  # we write requests here
        self.done = None  # it writes completions here
        self.out = None
        self.err = None
        self.done_buf = b""
        self.generation = 0
        self.intr = None  # python: where the target of the next SIGINT goes
        self.baseline = None
        # What runs left behind in this interpreter: (kind, detail) -> seq of the run that did.
        self.altered = {}

    @property
    def alive(self):
        return self.pid is not None

    def spawn(self, env):
        ctl_r, ctl_w = control_pair()
        done_r, done_w = control_pair()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        for fd in (out_r, err_r):
            try:
                fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE)
            except OSError:
                pass  # above /proc/sys/fs/pipe-max-size: the default size still works
        intr_r = intr_w = None
        # argv[0] is the public name, so sys.executable and $BASH read as usual.
        if self.lang == "python":
            intr_r, intr_w = control_pair()
            # -s: no user site at start-up, so no .pth or usercustomize file an earlier run left
            # in ~/.local runs inside the interpreter (the worker adds the folder itself).
            path, argv = PRIVATE_PYTHON, ["/usr/bin/python3", "-s", "-u", PYWORKER]
            fds = {0: None, 1: out_w, 2: err_w, 3: ctl_r, 4: done_w, 5: intr_r}
        else:
            path, argv = PRIVATE_BASH, ["bash", "--noprofile", "--norc", "--noediting", "-i"]
            fds = {0: ctl_r, 1: out_w, 2: err_w, 9: done_w}
        pid = os.fork()
        if pid == 0:  # child
            try:
                os.setsid()
                # Move every source above the targets first, so no dup2 clobbers a source.
                staged = {}
                for target, source in fds.items():
                    if source is None:
                        source = os.open("/dev/null", os.O_RDONLY)
                    staged[target] = fcntl.fcntl(source, fcntl.F_DUPFD, 200)
                for target, source in staged.items():
                    os.dup2(source, target)
                _close_all_but(set(fds))
                # The OOM killer should pick user code over the supervisor.
                try:
                    with open("/proc/self/oom_score_adj", "w") as f:
                        f.write("1000")
                except OSError:
                    pass
                os.chdir("/workspace")
                os.execve(path, argv, env)
            finally:
                os._exit(127)
        for fd in (ctl_r, done_w, out_w, err_w, intr_r):
            if fd is not None:
                os.close(fd)
        self.pid, self.ctl, self.done, self.out, self.err = pid, ctl_w, done_r, out_r, err_r
        self.intr = intr_w
        self.altered = {}
        self.done_buf = b""
        self.generation += 1
        for fd in (done_r, out_r, err_r):
            set_nonblocking(fd)
        if self.lang == "shell":
            self.write(cells.BASH_INIT)
        ok = self.read_done(timeout=10.0) is not None
        # Start-up noise (bash's "no job control" notice) is not anyone's output.
        self.drain(None)
        if not ok:
            self.kill()
            raise RuntimeError("the %s interpreter did not start" % self.lang)
        self.baseline = integrity.Baseline(pid, env)

    def write(self, text):
        data = text.encode()
        while data:
            n = os.write(self.ctl, data)
            data = data[n:]

    def read_done(self, timeout):
        """Blocks up to `timeout` for one completion line; None on timeout, b"" on EOF."""
        deadline = now() + timeout
        while b"\n" not in self.done_buf:
            left = deadline - now()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.done], [], [], left)
            if ready:
                chunk = self.take_done()
                if chunk == b"":
                    return b""
        return self.pop_done()

    def take_done(self):
        try:
            chunk = os.read(self.done, 4096)
        except BlockingIOError:
            return None
        self.done_buf += chunk
        return chunk

    def pop_done(self):
        if b"\n" not in self.done_buf:
            return None
        line, self.done_buf = self.done_buf.split(b"\n", 1)
        return line

    def drain(self, sink):
        """Reads whatever is in the output pipes right now."""
        for fd, kind in ((self.out, STDOUT), (self.err, STDERR)):
            while True:
                try:
                    data = os.read(fd, READ_CHUNK)
                except (BlockingIOError, OSError):
                    break
                if not data:
                    break
                if sink is not None:
                    sink(kind, data)

    def kill(self):
        if self.pid is None:
            return None
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        status = wait_exit(self.pid, 5.0)
        self.close()
        return status

    def close(self):
        for fd in (self.ctl, self.done, self.out, self.err, self.intr):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.pid = self.ctl = self.done = self.out = self.err = self.intr = None
        self.altered = {}


def write_interrupt_target(worker, seq):
    """Tells the Python worker which cell the next SIGINT is for (see pyworker._on_sigint)."""
    if worker.intr is not None:
        os.write(worker.intr, b"%d\n" % seq)


def collect_zombies(worker, issued):
    """Bash waits for its children itself; the Python worker only when user code does. So
    the supervisor asks it to collect the zombies of processes it killed (and any zombies at
    all once there are many), and waits briefly for the answer, so the next run, in either
    language, can fork. The request's nonce goes into `issued`, so its late reply is known as
    stale rather than forged."""
    if not worker.alive:
        return
    zombies = zombies_of(worker.pid)
    if not zombies:
        return
    ours = [p for p in zombies if p in KILLED_PIDS]
    pids = zombies if len(zombies) >= ZOMBIE_PRESSURE else ours
    KILLED_PIDS.difference_update(zombies)
    if not pids:
        return
    nonce = cells.nonce()
    issued.append(nonce)
    try:
        worker.write(json.dumps({"op": "reap", "pids": pids, "nonce": nonce}) + "\n")
    except OSError:
        return
    deadline = now() + 1.0
    while now() < deadline:
        line = worker.read_done(timeout=max(0.0, deadline - now()))
        if not line:
            return
        try:
            if json.loads(line).get("nonce") == nonce:
                return
        except (ValueError, AttributeError):
            pass
