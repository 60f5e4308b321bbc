"""IronClaw's persistent Python interpreter, one per sandbox container.

Started by the supervisor with: fd 0 = /dev/null, fd 1/2 = pipes the supervisor streams out,
fd 3 = requests (one JSON line each: {"code": ..., "cell": N}), fd 4 = replies (one JSON line
per request: {"rc": N}). Everything the user's code defines lives in a real `__main__` module
that survives between requests, so variables, imports and functions persist.
"""

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
# Before each SIGINT the supervisor writes the number of the cell it means here, so a signal
# can be told apart: for the running cell, for a cell not started yet, or stale.
INTERRUPT_TARGET = "/run/ironclaw/interrupt-cell"

_running = False
_current = None
_pending = None


def _interrupt_target():
    try:
        with open(INTERRUPT_TARGET) as f:
            return int(f.read().strip() or -1)
    except (OSError, ValueError):
        return None


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


def main():
    signal.signal(signal.SIGINT, _on_sigint)
    module = types.ModuleType("__main__")
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    sys.argv = [""]
    sys.path[0] = ""  # import from the working directory, as `python3 -i` does
    namespace = module.__dict__
    worker_pid = os.getpid()
    _reply({"ready": True, "pid": worker_pid})
    for line in _read_requests():
        cell = 0
        try:
            request = json.loads(line)
            cell = int(request.get("cell", 0))
            rc = _run_cell(request["code"], cell, int(request.get("n", cell)), namespace)
        except KeyboardInterrupt:
            rc = 130
        except Exception as exc:  # noqa: BLE001 - a malformed request must not kill the worker
            sys.stderr.write("ironclaw worker: bad request: %s\n" % exc)
            rc = 2
        if os.getpid() != worker_pid:
            # A child the cell forked has finished the cell: it ends like a process would,
            # instead of answering for the interpreter.
            os._exit(rc)
        _reply({"rc": rc, "cell": cell})


if __name__ == "__main__":
    main()
