"""IronClaw's in-container supervisor: the container's main process (under tini).

It owns the persistent interpreters (a Python worker and an interactive bash), runs one
execution at a time, streams its output, enforces the timeout, kills leftovers, and reports.
Interpreters live here, not in the host's connection, so their state survives the app or
CLI restarting and reattaching.

Wire protocol (the container's stdin/stdout, reached by `docker attach`):
  host -> here: one JSON object per line, {"op": "exec"|"cancel"|"ping"|"status", "seq": N, ...}
  here -> host: frames  MAGIC(2) KIND(1) SEQ(u32 BE) LEN(u32 BE) CHECK(1) PAYLOAD(LEN)
      KIND 1 = stdout bytes, 2 = stderr bytes, 3 = event (UTF-8 JSON object with "type").
      CHECK = sum of the 11 header bytes mod 256. Every attached client sees every frame, and
      one may attach mid-frame, so the magic and the check byte let a reader resynchronise.
"""

import collections
import ctypes
import errno
import fcntl
import json
import os
import select
import signal
import stat
import struct
import sys
import termios
import time

# -I keeps the script's folder off sys.path; our own modules live next to it.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import confinement  # noqa: E402
import cells  # noqa: E402
import integrity  # noqa: E402

MAGIC = b"\xc1\xa7"
STDOUT, STDERR, EVENT = 1, 2, 3
HEADER = struct.Struct(">2sBII")
READ_CHUNK = 1 << 20
# Linux's F_SETPIPE_SZ: bigger pipes mean fewer, larger reads and frames on output floods.
F_SETPIPE_SZ = 1031
PIPE_SIZE = 1 << 20
RUN_DIR = "/run/ironclaw"
LOG_DIR = "/workspace/.ironclaw/logs"
PYWORKER = "/opt/ironclaw/pyworker.py"
# Private, unreadable copies (see the Dockerfile): the interpreters start non-dumpable, so nothing
# else in the container can ptrace them or reach their memory and descriptors through /proc.
PRIVATE_PYTHON = "/usr/libexec/ironclaw/python3"
PRIVATE_BASH = "/usr/libexec/ironclaw/bash"
# After an interrupt: how long each escalation step waits before the next, harder one.
GRACE_SECONDS = 1.0
PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4


def now():
    return time.monotonic()


# --- output to the host -------------------------------------------------------------------

def send(kind, seq, payload):
    head = HEADER.pack(MAGIC, kind, seq & 0xFFFFFFFF, len(payload))
    data = [head + bytes([sum(head) & 0xFF]), payload]
    while data:
        try:
            n = os.writev(1, data)
        except InterruptedError:
            continue
        # Drop what was written, keep the rest (writev may write partially).
        while data and n >= len(data[0]):
            n -= len(data[0])
            data.pop(0)
        if data and n:
            data[0] = data[0][n:]


# --- zero-copy output path ------------------------------------------------------------------
# Past the in-memory cap every byte must reach both the host and the log file. Moving them with
# tee(2) and splice(2) keeps them in the kernel instead of copying them through Python twice;
# where those calls are missing (gVisor, other kernels) the copy path is used instead.

_libc = ctypes.CDLL(None, use_errno=True)
_zero_copy = [hasattr(os, "splice") and hasattr(_libc, "tee")]


def pipe_bytes(fd):
    buf = bytearray(4)
    try:
        fcntl.ioctl(fd, termios.FIONREAD, buf)
    except OSError:
        return 0
    return int.from_bytes(buf, sys.byteorder)


def tee(src, dst, count):
    n = _libc.tee(src, dst, ctypes.c_size_t(count), 0)
    if n < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return n


def splice_all(src, dst, count):
    """Moves exactly `count` bytes from the pipe `src` to `dst`, waiting when either side is
    momentarily full or empty. If splice stops working half-way, the rest is copied, because a
    frame whose header is already out must get exactly the bytes it announced."""
    while count > 0:
        try:
            n = os.splice(src, dst, count)
        except BlockingIOError:
            select.select([src], [dst], [], 1.0)
            continue
        except OSError:
            copy_exact(src, dst, count)
            return
        if n <= 0:
            copy_exact(src, dst, count)
            return
        count -= n


def drain_exact(src, count):
    while count > 0:
        data = os.read(src, min(count, READ_CHUNK))
        if not data:
            return
        count -= len(data)


def copy_exact(src, dst, count):
    while count > 0:
        try:
            data = os.read(src, min(count, READ_CHUNK))
        except BlockingIOError:
            select.select([src], [], [], 1.0)
            continue
        if not data:
            raise OSError(errno.EIO, "pipe closed with %d bytes announced but not sent" % count)
        count -= len(data)
        while data:
            data = data[os.write(dst, data):]


def event(seq, kind, **fields):
    fields["type"] = kind
    send(EVENT, seq, json.dumps(fields, separators=(",", ":")).encode())


# --- processes ------------------------------------------------------------------------------

def read_proc_table():
    """pid -> (ppid, comm) for every process we can see."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # comm may contain spaces and parentheses: split on the last ')'.
        close = stat.rfind(b")")
        fields = stat[close + 2:].split()
        if fields[0] == b"Z":
            continue  # already dead; reap() collects it
        comm = stat[stat.find(b"(") + 1:close].decode("utf-8", "replace")
        table[int(name)] = (int(fields[1]), comm)
    return table


def descendants(root, table):
    children = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, []))
    return out


def kill_strays(keep):
    """SIGKILL every process below this supervisor except the interpreters in `keep`.

    Processes started by `docker exec` (health checks, debugging) are not our descendants and
    are left alone. As a child subreaper we inherit anything that double-forks or setsid()s,
    so a detached daemon cannot escape. Stopping before killing keeps fork bombs from
    outrunning the sweep. Returns the names of what was killed.
    """
    me = os.getpid()
    killed = {}
    for _ in range(50):
        table = read_proc_table()
        victims = [p for p in descendants(me, table) if p not in keep]
        if not victims:
            break
        if all(pid in killed for pid in victims):
            # Only processes already sent SIGKILL, still on their way out (a fork bomb's copies
            # can take a while under load): wait for them, so "killed" means gone when we report.
            time.sleep(0.005)
        for pid in victims:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
        for pid in victims:
            killed.setdefault(pid, table[pid][1])
            KILLED_PIDS.add(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        reap()
    return sorted(killed.values())


EXIT_STATUS = {}
# Processes kill_strays() killed: the ones whose parent is an interpreter stay zombies until that
# interpreter waits for them (see Supervisor.reap_zombies).
KILLED_PIDS = set()
# Zombies we collect even if we did not kill them, once an interpreter holds this many: each
# holds a slot of the pids limit, and enough of them stop every later fork.
ZOMBIE_PRESSURE = 32


def zombies_of(parent):
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and fields[0] == b"Z" and fields[1] == str(parent).encode():
            out.append(int(name))
    return out


def reap():
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            return
        EXIT_STATUS[pid] = status


def wait_exit(pid, timeout):
    deadline = now() + timeout
    while True:
        reap()
        if pid in EXIT_STATUS:
            return EXIT_STATUS.pop(pid)
        if now() >= deadline:
            return None
        time.sleep(0.005)


def listed(altered):
    """A worker's findings, (kind, detail) -> seq, as the host reads them: oldest run first."""
    return [{"kind": k, "detail": d, "seq": s} for (k, d), s in sorted(altered.items(), key=lambda i: i[1])]


def status_to_rc(status):
    if status is None:
        return -1
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return -1


# --- resource accounting (cgroup v1 or v2, read-only from inside) ---------------------------

def _first_existing(paths):
    for p in paths:
        if os.path.exists(p):
            return p
    return None


MEM_USAGE = _first_existing(["/sys/fs/cgroup/memory.current", "/sys/fs/cgroup/memory/memory.usage_in_bytes"])
OOM_FILE = _first_existing(["/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"])


def memory_usage():
    try:
        with open(MEM_USAGE, "rb") as f:
            return int(f.read())
    except (OSError, TypeError, ValueError):
        return 0


def oom_kills():
    try:
        with open(OOM_FILE, "rb") as f:
            for line in f:
                key, _, value = line.partition(b" ")
                if key == b"oom_kill":
                    return int(value)
    except (OSError, TypeError, ValueError):
        pass
    return 0


# --- interpreters -----------------------------------------------------------------------------

def set_nonblocking(fd):
    os.set_blocking(fd, False)


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
        ctl_r, ctl_w = os.pipe()
        done_r, done_w = os.pipe()
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
            intr_r, intr_w = os.pipe()
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
                keep = set(fds)
                for fd in range(3, 512):
                    if fd not in keep:
                        try:
                            os.close(fd)
                        except OSError:
                            pass
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


# --- one execution ----------------------------------------------------------------------------

class Execution:
    def __init__(self, req, worker, restarted):
        self.seq = int(req["seq"])
        self.worker = worker
        self.started = now()
        timeout_ms = req.get("timeout_ms")
        self.deadline = self.started + timeout_ms / 1000.0 if timeout_ms else None
        self.capture = int(req.get("capture_bytes") or (1 << 20))
        self.log_name = req.get("log_name") or ("exec-%d" % self.seq)
        self.restarted = restarted
        self.interrupted = None  # "timeout" | "cancel"
        self.escalation = 0
        self.escalate_at = None
        self.bytes = {STDOUT: 0, STDERR: 0}
        self.pending = []  # (kind, bytes) kept until we know whether log files are needed
        self.pending_bytes = 0
        self.logging = False
        self.logs = {}  # kind -> open file, one per stream so neither is cut into the other
        self.log_paths = {}
        self.log_error = None
        self.oom_before = oom_kills()
        self.peak = memory_usage()
        self.sampled = now()
        self.scratch = None  # a pipe for tee(2), made on first use
        self.killed = []  # leftover processes killed while stopping this run
        self.killed_pids = []
        # Completion nonces (see cells.py): the run's own, and the end line's once asked for.
        self.nonce = cells.nonce()
        self.end_nonce = None
        self.rc = None  # the authenticated status, once known
        self.state_lines = []  # bash's report of what the run left in the shell
        self.py_state = []  # the Python worker's
        self.forged = 0  # completion lines without the right nonce
        # What was already altered in this interpreter when the run began.
        self.altered_before = dict(worker.altered)

    def output(self, kind, data):
        self.bytes[kind] += len(data)
        send(kind, self.seq, data)
        if self.logging:
            self.write_log(kind, data)
            return
        self.pending.append((kind, data))
        self.pending_bytes += len(data)
        if self.pending_bytes > self.capture:
            # Past the in-memory cap the host keeps only head and tail: from here on the
            # whole output also goes to log files in the workspace, so nothing is lost.
            self.logging = True
            pending, self.pending = self.pending, []
            for k, chunk in pending:
                self.write_log(k, chunk)

    def log_file(self, kind):
        if self.log_error is not None:
            return None  # a log that failed once stays closed: no repeated failing writes
        f = self.logs.get(kind)
        if f is None:
            name = "%s.%s.log" % (self.log_name, "stdout" if kind == STDOUT else "stderr")
            path = os.path.join(LOG_DIR, name)
            try:
                os.makedirs(LOG_DIR, exist_ok=True)
                # Never through a symlink the code planted in place of the log, never blocking
                # on a FIFO planted there, and only into a regular file.
                fd = os.open(
                    path,
                    os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                    0o644,
                )
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    os.close(fd)
                    raise OSError(errno.EINVAL, "%s is not a regular file" % path)
                os.ftruncate(fd, 0)
                os.set_blocking(fd, True)
                f = os.fdopen(fd, "wb")
            except OSError as exc:
                self.log_error = str(exc)
                return None
            self.logs[kind] = f
            self.log_paths[kind] = path
        return f

    def write_log(self, kind, data):
        f = self.log_file(kind)
        if f is None:
            return
        try:
            f.write(data)
        except OSError as exc:
            self.log_error = str(exc)  # e.g. the workspace is full: the stream goes on

    def close_logs(self):
        for f in self.logs.values():
            try:
                f.close()
            except OSError as exc:
                self.log_error = str(exc)

    def forward_spliced(self, fd, kind):
        """Moves what is in the pipe to the log and to the host without copying it through
        Python. Returns False when it cannot be used (the caller then reads and copies)."""
        if not self.logging or not _zero_copy[0]:
            return False
        log = self.log_file(kind)
        if log is None:
            return False
        count = min(pipe_bytes(fd), READ_CHUNK)
        if count == 0:
            return False  # nothing buffered: let a read report EOF
        try:
            if self.scratch is None:
                self.scratch = os.pipe()
                fcntl.fcntl(self.scratch[1], F_SETPIPE_SZ, PIPE_SIZE)
            count = tee(fd, self.scratch[1], count)
        except OSError:
            _zero_copy[0] = False  # tee(2) unsupported here: copy from now on
            return False
        # The log first (from the scratch copy), then the frame: header, then exactly `count`
        # bytes moved out of the worker's pipe.
        log.flush()
        try:
            splice_all(self.scratch[0], log.fileno(), count)
        except OSError as exc:
            # E.g. EFBIG past the fsize limit, or a full workspace: the log stops, the stream
            # goes on. Only what is still in the scratch pipe is dropped (reading `count`
            # would block on bytes the failed splice already took).
            self.log_error = str(exc)
            drain_exact(self.scratch[0], pipe_bytes(self.scratch[0]))
        head = HEADER.pack(MAGIC, kind, self.seq & 0xFFFFFFFF, count)
        os.write(1, head + bytes([sum(head) & 0xFF]))
        splice_all(fd, 1, count)
        self.bytes[kind] += count
        return True

    def sample(self):
        t = now()
        if t - self.sampled >= 0.02:
            self.sampled = t
            self.peak = max(self.peak, memory_usage())


class Supervisor:
    def __init__(self):
        self.env = self.worker_env()
        self.workers = {"python": Worker("python"), "shell": Worker("shell")}
        self.current = None
        self.inbuf = b""
        self.idle_timeout = float(os.environ.get("IRONCLAW_IDLE_TIMEOUT", "0") or 0)
        self.last_activity = now()
        self.stdin_open = True
        self.cells = 0
        # Nonces handed out recently: a line carrying one is stale (an interrupted run's), not
        # forged.
        self.issued = collections.deque(maxlen=64)
        self.confinement = []

    @staticmethod
    def worker_env():
        env = {k: v for k, v in os.environ.items() if not k.startswith("IRONCLAW_")}
        env.setdefault("HOME", "/home/sandbox")
        env["PYTHONUNBUFFERED"] = "1"
        env["TERM"] = "dumb"
        return env

    # -- requests --

    def handle_line(self, line):
        try:
            req = json.loads(line)
            op = req["op"]
            seq = int(req.get("seq", 0))
        except (ValueError, KeyError, TypeError) as exc:
            event(0, "error", message="malformed request: %s" % exc)
            return
        if op == "exec":
            self.start(req, seq)
        elif op == "cancel":
            if self.current is not None and self.current.seq == seq:
                self.interrupt("cancel")
        elif op == "ping":
            # What each interpreter carries from earlier runs: a host that attaches afresh (the
            # app restarted) must be able to warn before its first approval, not after the run.
            altered = {lang: listed(w.altered) if w.alive else [] for lang, w in self.workers.items()}
            event(seq, "pong", running=self.current.seq if self.current else None,
                  confinement=self.confinement, altered=altered)
        elif op == "status":
            event(
                seq,
                "status",
                running=self.current.seq if self.current else None,
                workers={k: w.pid for k, w in self.workers.items()},
                memory_bytes=memory_usage(),
            )
        else:
            event(seq, "error", message="unknown op %r" % op)

    def start(self, req, seq):
        if self.current is not None:
            event(seq, "rejected", reason="busy", running=self.current.seq)
            return
        lang = req.get("lang")
        code = req.get("code")
        if lang not in self.workers or not isinstance(code, str):
            event(seq, "rejected", reason="bad_request", message="lang must be python or shell, code a string")
            return
        self.last_activity = now()
        worker = self.workers[lang]
        restarted = False
        if worker.alive and req.get("fresh"):
            # The person asked for a fresh interpreter (the last one was altered).
            worker.kill()
        if worker.alive and worker.pid in EXIT_STATUS:
            # It died between executions (killed from outside, or a thread called os._exit).
            EXIT_STATUS.pop(worker.pid)
            worker.close()
        if not worker.alive:
            restarted = worker.generation > 0
            try:
                worker.spawn(self.env)
            except (OSError, RuntimeError) as exc:
                event(seq, "rejected", reason="interpreter_failed", message=str(exc))
                return
        # Anything a cell's leftover thread started while we were idle is not this run's.
        self.sweep_idle()
        # Completions left over from an interrupted cell must not end this one.
        worker.take_done()
        worker.done_buf = b""
        ex = Execution(req, worker, restarted)
        self.issued.append(ex.nonce)
        self.current = ex
        event(seq, "started", lang=lang, pid=worker.pid, interpreter_restarted=restarted)
        try:
            if lang == "python":
                self.cells += 1
                request = {"code": code, "cell": seq, "n": self.cells, "nonce": ex.nonce}
                worker.write(json.dumps(request) + "\n")
            else:
                worker.write(cells.bash_run_line(code, ex.nonce))
        except OSError as exc:
            self.finish(rc=-1, worker_died=True, note="could not reach the interpreter: %s" % exc)

    def interrupt(self, reason):
        ex = self.current
        if ex is None or ex.interrupted:
            return
        ex.interrupted = reason
        self.escalate(ex)

    def escalate(self, ex):
        """SIGINT first (state survives); then kill the code's children; then the interpreter."""
        w = ex.worker
        ex.escalation += 1
        ex.escalate_at = now() + GRACE_SECONDS
        try:
            if ex.escalation == 1:
                # bash aborts the whole command line when its foreground job dies of SIGINT,
                # so it gets the signal with its process group; Python gets KeyboardInterrupt.
                if w.lang == "shell":
                    os.killpg(w.pid, signal.SIGINT)
                else:
                    write_interrupt_target(w, ex.seq)
                    os.kill(w.pid, signal.SIGINT)
            elif ex.escalation == 2:
                if w.lang == "shell":
                    # Killing a child that ignored SIGINT would let bash run the next
                    # command of the cancelled code: freeze bash first, then give up on it.
                    os.kill(w.pid, signal.SIGSTOP)
                    ex.killed += kill_strays(self.worker_pids())
                    self.finish(rc=self.rc_for(ex), worker_died=True, kill_worker=True)
                else:
                    ex.killed += kill_strays(self.worker_pids())
            else:
                self.finish(rc=self.rc_for(ex), worker_died=True, kill_worker=True)
        except OSError:
            pass

    def worker_pids(self):
        return {w.pid for w in self.workers.values() if w.pid}

    @staticmethod
    def rc_for(ex):
        return 124 if ex.interrupted == "timeout" else 130

    def finish(self, rc, worker_died=False, kill_worker=False, note=None):
        ex = self.current
        if ex is None:
            return
        w = ex.worker
        w.drain(ex.output)
        signalled = None
        if kill_worker:
            w.kill()
        elif worker_died and w.pid is not None:
            status = wait_exit(w.pid, 2.0)
            if status is None:
                w.kill()
            else:
                if os.WIFSIGNALED(status):
                    signalled = os.WTERMSIG(status)
                rc = status_to_rc(status)
                w.close()
        strays = sorted(ex.killed + kill_strays(self.worker_pids()))
        self.reap_zombies()
        try:
            before, after = self.integrity(ex, lost=worker_died or kill_worker)
        except Exception as exc:  # noqa: BLE001 - a failed check must never end the session
            before, after = [], [{"kind": "check", "detail": "the integrity check failed: %s" % exc, "seq": ex.seq}]
        oom = oom_kills() > ex.oom_before
        ex.peak = max(ex.peak, memory_usage())
        ex.close_logs()
        if ex.scratch is not None:
            for fd in ex.scratch:
                os.close(fd)
        if ex.interrupted:
            rc = self.rc_for(ex)
        event(
            ex.seq,
            "ended",
            exit_code=rc,
            duration_ms=round((now() - ex.started) * 1000, 3),
            timed_out=ex.interrupted == "timeout",
            cancelled=ex.interrupted == "cancel",
            oom_killed=oom,
            peak_memory_bytes=ex.peak,
            stdout_bytes=ex.bytes[STDOUT],
            stderr_bytes=ex.bytes[STDERR],
            log_path=ex.log_paths.get(STDOUT),
            stderr_log_path=ex.log_paths.get(STDERR),
            log_error=ex.log_error,
            interpreter_restarted=ex.restarted,
            interpreter_lost=worker_died or kill_worker,
            killed_signal=signalled,
            stray_processes_killed=strays,
            forged_completions=ex.forged,
            altered_before=before,
            altered_after=after,
            note=note,
        )
        self.current = None
        self.last_activity = now()

    def reap_zombies(self):
        """Bash waits for its children itself; the Python worker only when user code does. So
        the supervisor asks it to collect the zombies of processes it killed (and any zombies at
        all once there are many), and waits briefly for the answer, so the next run, in either
        language, can fork."""
        w = self.workers["python"]
        if not w.alive:
            return
        zombies = zombies_of(w.pid)
        if not zombies:
            return
        ours = [p for p in zombies if p in KILLED_PIDS]
        pids = zombies if len(zombies) >= ZOMBIE_PRESSURE else ours
        KILLED_PIDS.difference_update(zombies)
        if not pids:
            return
        nonce = cells.nonce()
        self.issued.append(nonce)
        try:
            w.write(json.dumps({"op": "reap", "pids": pids, "nonce": nonce}) + "\n")
        except OSError:
            return
        deadline = now() + 1.0
        while now() < deadline:
            line = w.read_done(timeout=max(0.0, deadline - now()))
            if not line:
                return
            try:
                if json.loads(line).get("nonce") == nonce:
                    return
            except (ValueError, AttributeError):
                pass

    def integrity(self, ex, lost):
        """What this run found altered in its interpreter before it began, and after."""
        w = ex.worker
        before = listed(ex.altered_before)
        if lost or not w.alive or w.baseline is None:
            return before, []
        found = w.baseline.outside()
        if w.lang == "shell":
            found += w.baseline.bash_inside(ex.state_lines)
        else:
            found += [(str(k), str(d)) for k, d in ex.py_state]
        if ex.forged:
            found.append((
                "forged_completion",
                "%d line(s) the run wrote to IronClaw's control channel were ignored as forged" % ex.forged,
            ))
        # Findings that cannot be undone by the code itself stay until the interpreter restarts.
        altered = {k: v for k, v in w.altered.items() if k[0] in ("forged_completion", "dumpable")}
        for item in found:
            altered[item] = w.altered.get(item, ex.seq)
        w.altered = altered
        return before, listed(w.altered)

    # -- main loop --

    def completions(self, ex):
        """Handles every complete line on the running interpreter's control channel; True once
        the run has finished."""
        while True:
            line = ex.worker.pop_done()
            if line is None:
                return False
            if ex.worker.lang == "python":
                done = self.python_line(ex, line)
            else:
                done = self.bash_line(ex, line)
            if done:
                return True

    def python_line(self, ex, line):
        try:
            reply = json.loads(line)
            nonce = reply.get("nonce")
        except (ValueError, AttributeError):
            ex.forged += 1
            return False
        if not isinstance(reply, dict) or nonce != ex.nonce:
            if not (isinstance(reply, dict) and nonce in self.issued):
                ex.forged += 1  # stale replies carry an earlier run's nonce; forged ones none
            return False
        try:
            rc = int(reply["rc"])
        except (KeyError, TypeError, ValueError):
            ex.forged += 1
            return False
        state = reply.get("state")
        ex.py_state = [tuple(x[:2]) for x in state if isinstance(x, list)] if isinstance(state, list) else []
        self.finish(rc=rc)
        return True

    def bash_line(self, ex, line):
        kind = cells.parse_bash_line(line)
        if kind[0] == "done":
            if kind[2] == ex.nonce:
                ex.rc = kind[1]
                self.ask_end(ex)
            elif kind[2] not in self.issued:
                ex.forged += 1
        elif kind[0] == "prompt":
            # Unauthenticated: bash is back at its prompt, or the code says so. Either way the
            # end line only runs once bash really reads its next command.
            self.ask_end(ex)
        elif kind[0] == "end":
            if kind[1] == ex.end_nonce:
                if ex.rc is None and not ex.interrupted:
                    # The line was aborted without a status (an expansion error such as
                    # ${x?}, which an interactive shell answers by discarding the line).
                    ex.rc = 1
                self.finish(rc=ex.rc if ex.rc is not None else -1)
                return True
            if kind[1] not in self.issued:
                ex.forged += 1
        elif ex.end_nonce is not None:
            ex.state_lines.append(kind[1])
        else:
            ex.forged += 1
        return False

    def ask_end(self, ex):
        if ex.end_nonce is None:
            ex.end_nonce = cells.nonce()
            self.issued.append(ex.end_nonce)
            ex.worker.write(cells.bash_end_line(ex.end_nonce))

    def run(self):
        os.makedirs(RUN_DIR, exist_ok=True)
        os.set_blocking(0, False)
        while True:
            ex = self.current
            fds = [0] if self.stdin_open else []
            if ex is not None:
                fds += [ex.worker.out, ex.worker.err, ex.worker.done]
            timeout = self.poll_timeout(ex)
            try:
                ready, _, _ = select.select(fds, [], [], timeout)
            except InterruptedError:
                continue
            reap()
            if 0 in ready:
                self.read_stdin()
            if ex is not None and self.current is ex:
                self.pump(ex, ready)
            if self.current is None:
                self.drain_background()
                if not self.stdin_open and self.idle_timeout <= 0:
                    return 0
                if self.idle_timeout > 0 and now() - self.last_activity > self.idle_timeout:
                    return 0

    def poll_timeout(self, ex):
        if ex is None:
            return 5.0 if self.idle_timeout > 0 else None
        t = 0.05
        for at in (ex.deadline, ex.escalate_at):
            if at is not None:
                t = min(t, max(0.0, at - now()))
        return t

    def pump(self, ex, ready):
        w = ex.worker
        for fd, kind in ((w.out, STDOUT), (w.err, STDERR)):
            if fd in ready:
                if ex.forward_spliced(fd, kind):
                    continue
                try:
                    data = os.read(fd, READ_CHUNK)
                except (BlockingIOError, OSError):
                    data = None
                if data:
                    ex.output(kind, data)
        if w.done in ready:
            chunk = w.take_done()
            if chunk == b"":
                self.finish(rc=-1, worker_died=True)
                return
            if self.completions(ex):
                return
        ex.sample()
        t = now()
        if ex.deadline is not None and t >= ex.deadline and not ex.interrupted:
            self.interrupt("timeout")
        elif ex.escalate_at is not None and t >= ex.escalate_at and self.current is ex:
            self.escalate(ex)

    def drain_background(self):
        """Output from threads a cell left running is still the user's: pass it on as seq 0."""
        for w in self.workers.values():
            if w.alive:
                w.drain(lambda kind, data: send(kind, 0, data))
        self.sweep_idle()

    def sweep_idle(self):
        """Threads are not processes: one a cell left in the interpreter may start processes
        after its execution ended. They are killed as soon as we see them while idle (and
        before the next execution starts, so it is not blamed for them), and reported as seq 0."""
        killed = kill_strays(self.worker_pids())
        if killed:
            note = "[IronClaw] stopped processes started after their execution ended: %s\n"
            send(STDERR, 0, (note % ", ".join(killed)).encode())

    def read_stdin(self):
        try:
            chunk = os.read(0, READ_CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            # No client holds stdin open any more. Keep running (a client may reattach);
            # only stop selecting on it.
            self.stdin_open = False
            return
        self.inbuf += chunk
        while b"\n" in self.inbuf:
            line, self.inbuf = self.inbuf.split(b"\n", 1)
            if line.strip():
                self.handle_line(line)


def write_identity():
    """Gives the container's UID a name, so `whoami`, `id`, git and pip are happy."""
    uid, gid = os.getuid(), os.getgid()
    home = os.environ.get("HOME", "/home/sandbox")
    with open("/etc/passwd.base") as f:
        passwd = f.read()
    with open("/etc/group.base") as f:
        group = f.read()
    if not any(line.split(":")[2:3] == [str(uid)] for line in passwd.splitlines()):
        passwd += "sandbox:x:%d:%d:IronClaw sandbox:%s:/bin/bash\n" % (uid, gid, home)
    if not any(line.split(":")[2:3] == [str(gid)] for line in group.splitlines()):
        group += "sandbox:x:%d:\n" % gid
    for name, text in (("passwd", passwd), ("group", group)):
        tmp = os.path.join(RUN_DIR, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(RUN_DIR, name))


def main():
    # Orphans of user code re-parent to us instead of tini, so kill_strays() can find them.
    # Not dumpable: code runs under the same UID, and must not ptrace us or open our
    # /proc/PID/mem or fd/1 to forge results on the host channel. (The interpreters exec an
    # unreadable private binary, which keeps them non-dumpable too.)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    os.makedirs(RUN_DIR, exist_ok=True)
    try:
        write_identity()
    except OSError as exc:
        sys.stderr.write("ironclaw supervisor: cannot write identity: %s\n" % exc)
    try:
        with open(os.path.join(RUN_DIR, "supervisor.pid"), "w") as f:
            f.write(str(os.getpid()))  # for people debugging; nothing reads it back
    except OSError:
        pass
    sup = Supervisor()
    sup.confinement = confinement.problems(RUN_DIR)
    # Python is what most executions use: start it now, while the host is still attaching.
    try:
        sup.workers["python"].spawn(sup.env)
    except (OSError, RuntimeError) as exc:
        sys.stderr.write("ironclaw supervisor: %s\n" % exc)
    event(0, "hello", version=2, pid=os.getpid(), uid=os.getuid(), gid=os.getgid(), confinement=sup.confinement)
    return sup.run()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            sys.exit(0)
        raise
