"""The supervisor's control loop: requests from the host, one run at a time, and how each ends.

It runs one execution at a time, streams its output, enforces the timeout (SIGINT first, then
harder), kills leftovers, checks what the run left altered in its interpreter, and reports
everything in the run's `ended` event.

Requests are obeyed only when signed with the container's key (src/exec/seal.rs): a line
`HEX(HMAC(key, body)) SP body`, whose body names its connection ("client") and counts its
requests ("n"). Under gVisor code of the same UID can write into our stdin; a line it wrote
has no valid MAC, and one it read and sends again has a count already seen. The only unsigned
line taken is the key itself, once, before anything else.
"""

import collections
import hmac
import json
import os
import select
import signal
import sys
from time import monotonic as now

import cells
import completions
import integrity
import ipc_leftovers
import write_holds
from cgroup_memory import memory_usage, oom_kills
from execution import Execution
import frames
from frames import STDERR, STDOUT, close_channel, event, open_channel, send
from interpreters import Worker, collect_zombies, write_interrupt_target
from pipe_transfer import READ_CHUNK
from processes import EXIT_STATUS, kill_strays, reap, status_to_rc, wait_exit

RUN_DIR = "/run/ironclaw"
# The key comes within milliseconds of the start from the process that started us. One that
# never came (that process died, or the engine restarted us on its own) would leave a sandbox
# that obeys nothing for as long as it runs: ending lets the next run start it afresh, keyed.
KEY_WAIT = 20.0
# After an interrupt: how long each escalation step waits before the next, harder one.
GRACE_SECONDS = 1.0


class Supervisor:
    """The interpreters, the run in progress, and the connection's state."""

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
        # Each host connection's newest request count (bounded: the oldest are forgotten).
        self.clients = collections.OrderedDict()
        self.refused = 0  # request lines without a valid signature or sent again
        self.started = now()

    @staticmethod
    def worker_env():
        env = {k: v for k, v in os.environ.items() if not k.startswith("IRONCLAW_")}
        env.setdefault("HOME", "/home/sandbox")
        env["PYTHONUNBUFFERED"] = "1"
        env["TERM"] = "dumb"
        return env

    # -- requests --

    MAX_CLIENTS = 256

    def verified(self, line):
        """The request in `line` if it is the host's (see the module's docstring), else None."""
        if not frames.keyed():
            # Only the key, from the process that started us; nothing runs before it.
            try:
                req = json.loads(line)
            except ValueError:
                return None
            if isinstance(req, dict) and req.get("op") == "key" and frames.set_key(req.get("key")):
                return None
            self.refused += 1
            seq = req.get("seq", 0) if isinstance(req, dict) else 0
            event(seq if isinstance(seq, int) else 0, "error", message="this sandbox has no key yet")
            return None
        tag, _, body = line.partition(b" ")
        try:
            good = hmac.compare_digest(bytes.fromhex(tag.decode("ascii")), frames.mac(body))
        except (ValueError, UnicodeDecodeError):
            good = False
        if not good:
            self.refused += 1
            return None
        try:
            req = json.loads(body)
            client, n = str(req["client"]), int(req["n"])
        except (ValueError, KeyError, TypeError):
            self.refused += 1
            return None
        if n <= self.clients.get(client, 0):
            self.refused += 1  # sent again
            return None
        self.clients[client] = n
        self.clients.move_to_end(client)
        while len(self.clients) > self.MAX_CLIENTS:
            self.clients.popitem(last=False)
        return req

    def handle_line(self, line):
        req = self.verified(line)
        if req is None:
            return
        try:
            op = req["op"]
            seq = int(req.get("seq", 0))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
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
            altered = {lang: integrity.listed(w.altered) if w.alive else [] for lang, w in self.workers.items()}
            event(seq, "pong", running=self.current.seq if self.current else None,
                  confinement=self.confinement, altered=altered)
        elif op == "held":
            # Between runs (the host asks before approving one): nothing of a run is going on.
            paths, unknowable = write_holds.held()
            event(seq, "held", paths=paths, unknowable=unknowable)
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
        # From here to `ended`, this run's frames go to the host's socket if it offered one.
        channel = open_channel(seq, req.get("channel"))
        event(seq, "started", lang=lang, pid=worker.pid, interpreter_restarted=restarted, channel=channel)
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
        # After the strays: a queue one of them held open is gone with it.
        ipc_removed = ipc_leftovers.sweep()
        collect_zombies(self.workers["python"], self.issued)
        try:
            before, after = integrity.check_after_run(ex, lost=worker_died or kill_worker)
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
            ipc_removed=ipc_removed,
            forged_completions=ex.forged,
            altered_before=before,
            altered_after=after,
            note=note,
        )
        close_channel(ex.seq)
        self.current = None
        self.last_activity = now()

    def handle_completions(self, ex):
        """True once the run has finished (and has been reported)."""
        rc = completions.finished_status(ex, self.issued)
        if rc is None:
            return False
        self.finish(rc=rc)
        return True

    # -- main loop --

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
                if not frames.keyed() and now() - self.started > KEY_WAIT:
                    sys.stderr.write("ironclaw supervisor: no key came from the host; ending, so "
                                     "that the next run starts this sandbox afresh\n")
                    return 0

    def poll_timeout(self, ex):
        if ex is None:
            if not frames.keyed():
                return 1.0  # to end at KEY_WAIT
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
            if self.handle_completions(ex):
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
