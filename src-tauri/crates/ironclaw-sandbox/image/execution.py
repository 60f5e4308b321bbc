"""One execution: its limits (timeout, in-memory capture cap), its output, and its log files.

Every byte of output goes to the host as it arrives. Past the capture cap the host keeps only
head and tail, so from then on the whole output also goes to log files in the workspace, moved
there without copying through Python where the kernel allows (see pipe_transfer.py).
"""

import errno
import fcntl
import os
import stat
from time import monotonic as now

import cells
from cgroup_memory import memory_usage, oom_kills
from frames import STDERR, STDOUT, close_channel, header, host_gone, keyed, out_fd, send
from pipe_transfer import (
    F_SETPIPE_SZ,
    PIPE_SIZE,
    READ_CHUNK,
    drain_exact,
    give_up_zero_copy,
    pipe_bytes,
    splice_all,
    tee,
    zero_copy_available,
)

LOG_DIR = "/workspace/.ironclaw/logs"


class Execution:
    """The run in progress: what the host asked for, what it produced, how it is ending."""

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
        if not self.logging or not zero_copy_available():
            return False
        if out_fd(self.seq) == 1 and keyed():
            return False  # frames on stdout are signed: their bytes pass through here
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
            give_up_zero_copy()  # tee(2) unsupported here: copy from now on
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
        self.bytes[kind] += count
        out = out_fd(self.seq)
        try:
            write_all(out, header(kind, self.seq, count))
        except OSError as exc:
            if not host_gone(exc, out):
                raise
            close_channel(self.seq)
            if keyed():
                # Nobody reads this run any more, and stdout takes only signed frames.
                drain_exact(fd, count)
                return True
            out = 1
            os.write(1, header(kind, self.seq, count))
        try:
            splice_all(fd, out, count)
        except OSError as exc:
            if not host_gone(exc, out):
                raise
            # The host stopped waiting for this run mid-frame: the frame's rest is dropped
            # (its header is out on the socket), and the run goes on without the channel.
            close_channel(self.seq)
            drain_exact(fd, getattr(exc, "remaining", 0))
        return True

    def sample(self):
        t = now()
        if t - self.sampled >= 0.02:
            self.sampled = t
            self.peak = max(self.peak, memory_usage())


def write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]
