"""IronClaw's persistent Python interpreter, one per sandbox container.

Started by the supervisor with: fd 0 = /dev/null, fd 1/2 = pipes the supervisor streams out,
fd 3 = requests (one JSON line each: {"code": ..., "cell": N, "nonce": ...}), fd 4 = replies
(one JSON line per request: {"rc": N, "cell": N, "nonce": ..., "state": [...]}), fd 5 = the
cell each SIGINT is meant for. Everything the user's code defines lives in a real `__main__`
module that survives between requests, so variables, imports and functions persist.

The reply echoes the request's nonce, so a completion written by the code (or a program it
started) without it is recognised as forged; `state` is this interpreter's own account of what
the cell left behind (see the supervisor's integrity module for what it can and cannot prove).
"""

import _signal
import _thread
import ast
import builtins
import json
import linecache
import os
import signal
import sys
import traceback
import types

REQUESTS = 3
REPLIES = 4
# Before each SIGINT the supervisor writes the number of the cell it means on this pipe, so a
# signal can be told apart: for the running cell, for a cell not started yet, or stale. (A pipe,
# not a file: a file in a folder the code can write could be swapped for a FIFO and hang us.)
INTERRUPTS = 5
WATCHED_ENV = ("PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONSTARTUP", "BASH_ENV")

_running = False
_current = None
_pending = None


_last_target = [None]


def _interrupt_target():
    data = b""
    while True:
        try:
            chunk = os.read(INTERRUPTS, 4096)
        except (BlockingIOError, OSError):
            break
        if not chunk:
            break
        data += chunk
    lines = data.split()
    if lines:
        try:
            _last_target[0] = int(lines[-1])
        except ValueError:
            pass
    return _last_target[0]


def _on_sigint(signum, frame):
    global _pending
    target = _interrupt_target()
    if _running and target in (None, _current):
        raise KeyboardInterrupt
    # Not running user code: remember it. It applies if it names the cell about to run
    # (a cancel that arrived while the cell was still being read or parsed); a stale one,
    # naming a cell that already finished, is never matched and so ignored.
    _pending = target


def _reply(obj):
    data = (json.dumps(obj) + "\n").encode()
    while data:
        n = os.write(REPLIES, data)
        data = data[n:]


def _read_requests():
    buf = b""
    while True:
        chunk = os.read(REQUESTS, 1 << 16)
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line.strip():
                yield line


def _user_traceback(exc):
    """The traceback without this file's frames: the model should see only its own code."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _run_cell(code, cell, display, namespace):
    global _running, _current
    _current = cell
    filename = "<cell %d>" % display
    # Registering the source lets tracebacks quote the offending line, as a REPL would.
    lines = code.splitlines(True)
    linecache.cache[filename] = (len(code), None, lines, filename)
    try:
        tree = ast.parse(code, filename, "exec")
    except (SyntaxError, ValueError) as exc:
        sys.stderr.write("".join(traceback.format_exception_only(type(exc), exc)))
        return 1
    # Like a notebook: a trailing expression is echoed, so `df.head()` shows something.
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    try:
        _running = True
        if _pending is not None and _pending == cell:
            raise KeyboardInterrupt  # cancelled before it began
        exec(compile(tree, filename, "exec"), namespace)
        if last is not None:
            value = eval(compile(last, filename, "eval"), namespace)
            if value is not None:
                builtins._ = value
                print(repr(value))
        return 0
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code & 0xFF
        sys.stderr.write(str(code) + "\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("KeyboardInterrupt\n")
        return 130
    except BaseException as exc:  # noqa: BLE001 - every user error is reported, never fatal
        sys.stderr.write(_user_traceback(exc))
        return 1
    finally:
        _running = False
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a user may have replaced or closed the stream
                pass


class _Baseline:
    """What this interpreter looked like before any user code ran."""

    def __init__(self):
        self.builtins = dict(vars(builtins))
        self.env = {k: os.environ.get(k) for k in WATCHED_ENV}
        self.fds = _open_fds()
        self.signals = _handlers()
        self.streams = (sys.stdin, sys.stdout, sys.stderr)
        self.meta_path = list(sys.meta_path)
        self.path_hooks = list(sys.path_hooks)
        self.hooks = (sys.excepthook, sys.displayhook)

    def changes(self):
        found = []
        threads = _thread._count()
        if threads:
            found.append(["thread", "%d Python thread(s) still running" % threads])
        now = vars(builtins)
        changed = sorted(k for k in set(now) | set(self.builtins)
                         if k != "_" and now.get(k, self) is not self.builtins.get(k, self))
        if changed:
            found.append(["builtins", "builtins replaced or added: %s" % ", ".join(changed[:20])])
        if sys.gettrace() is not None or sys.getprofile() is not None:
            found.append(["tracer", "a trace or profile function is installed"])
        handlers = _handlers()
        moved = sorted(n for n in handlers if handlers[n] is not self.signals.get(n))
        if moved:
            names = ", ".join(_signal_name(n) for n in moved)
            found.append(["signals", "signal handlers changed: %s" % names])
        for key in WATCHED_ENV:
            if os.environ.get(key) != self.env[key]:
                found.append(["environment", "%s changed" % key])
        extra = sorted(_open_fds() - self.fds)
        inotify = [fd for fd in extra if _fd_target(fd) == "anon_inode:inotify"]
        if inotify:
            found.append(["inotify", "%d inotify instance(s) held by the interpreter: under runc each counts "
                          "against your user's limit on this machine (fs.inotify.max_user_instances, often "
                          "128) for as long as it lives; a fresh interpreter lets go of them" % len(inotify)])
        extra = [fd for fd in extra if fd not in inotify]
        if extra:
            found.append(["descriptors", "descriptors left open: %s" % ", ".join(map(str, extra[:20]))])
        if (sys.stdin, sys.stdout, sys.stderr) != self.streams:
            found.append(["streams", "sys.stdin/stdout/stderr replaced"])
        if sys.meta_path != self.meta_path or sys.path_hooks != self.path_hooks:
            found.append(["import", "import hooks changed"])
        if (sys.excepthook, sys.displayhook) != self.hooks:
            found.append(["hooks", "sys.excepthook or sys.displayhook replaced"])
        return found


def _fd_target(fd):
    try:
        return os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        return ""


def _open_fds():
    try:
        return {int(n) for n in os.listdir("/proc/self/fd")}
    except OSError:
        return set()


# Bound before any user code runs, so a patched `signal` module cannot hide a handler; and the C
# functions return plain numbers and handlers, without the enum conversions that made the
# `signal` module's versions the worker's largest cost per cell.
_getsignal = _signal.getsignal
_valid_signals = _signal.valid_signals


def _handlers():
    """Signal number -> its handler, as the interpreter holds it."""
    out = {}
    for sig in _valid_signals():
        try:
            out[sig] = _getsignal(sig)
        except (ValueError, OSError):
            pass
    return out


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return "signal %d" % number


def _reap(pids):
    """Collects children the supervisor killed (zombies hold the pids limit until their parent
    waits for them); also every zombie child when `pids` is None."""
    reaped = 0
    for pid in pids or []:
        try:
            if os.waitpid(int(pid), os.WNOHANG)[0]:
                reaped += 1
        except (ChildProcessError, OSError, ValueError):
            pass
    return reaped


def main():
    signal.signal(signal.SIGINT, _on_sigint)
    os.set_blocking(INTERRUPTS, False)
    module = types.ModuleType("__main__")
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    sys.argv = [""]
    sys.path[0] = ""  # import from the working directory, as `python3 -i` does
    # The supervisor starts us with -s, so nothing in ~/.local runs at start-up; packages
    # installed there with `pip install --user` are still importable (only .pth files, such as
    # editable installs, are not processed).
    try:
        import site

        user_site = site.getusersitepackages()
        if user_site not in sys.path:
            sys.path.append(user_site)
    except Exception:  # noqa: BLE001 - no user site is not an error
        pass
    namespace = module.__dict__
    worker_pid = os.getpid()
    baseline = _Baseline()
    _reply({"ready": True, "pid": worker_pid})
    for line in _read_requests():
        cell, nonce, state = 0, None, []
        try:
            request = json.loads(line)
            nonce = request.pop("nonce", None)
            if request.get("op") == "reap":
                _reply({"reaped": _reap(request.get("pids")), "nonce": nonce})
                continue
            cell = int(request.get("cell", 0))
            rc = _run_cell(request.pop("code"), cell, int(request.get("n", cell)), namespace)
        except KeyboardInterrupt:
            rc = 130
        except Exception as exc:  # noqa: BLE001 - a malformed request must not kill the worker
            sys.stderr.write("ironclaw worker: bad request: %s\n" % exc)
            rc = 2
        if os.getpid() != worker_pid:
            # A child the cell forked has finished the cell: it ends like a process would,
            # instead of answering for the interpreter.
            os._exit(rc)
        try:
            state = baseline.changes()
        except Exception:  # noqa: BLE001 - the report must never cost the reply
            state = [["check", "the interpreter could not check its own state"]]
        _reply({"rc": rc, "cell": cell, "nonce": nonce, "state": state})


if __name__ == "__main__":
    main()
