"""IronClaw's in-container supervisor: the container's main process (under tini).

It owns the persistent interpreters (a Python worker and an interactive bash), runs one
execution at a time, streams its output, enforces the timeout, kills leftovers, and reports.
Interpreters live here, not in the host's connection, so their state survives the app or
CLI restarting and reattaching.

This file starts the process; the work is done by its sibling modules:
  frames.py         the wire protocol to the host (frames out on stdout)
  run_control.py    requests from the host and the main loop: one run at a time, and its end
  interpreters.py   the persistent interpreters and their pipes
  execution.py      one run's limits, output and log files
  completions.py    authenticating a run's end on its interpreter's control channel
  pipe_transfer.py  read and pipe sizes, and the zero-copy (tee/splice) output path
  processes.py      the process tree below us: leftovers, zombies, exit statuses
  cgroup_memory.py  memory usage and OOM kills
  cells.py, integrity.py, confinement.py, pyworker.py (see their own docstrings)
"""

import ctypes
import errno
import fcntl
import os
import sys

# -I keeps the script's folder off sys.path; our own modules live next to it.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import confinement  # noqa: E402
import policy_filter  # noqa: E402
from frames import event  # noqa: E402
from pipe_transfer import F_SETPIPE_SZ, PIPE_SIZE  # noqa: E402
from run_control import RUN_DIR, Supervisor  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4


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
    if os.environ.get("IRONCLAW_RUNTIME") == "runsc" and confinement.seccomp_mode() != 2:
        # gVisor: the engine's profile does not reach the code (policy_filter.py says why), so
        # our rules come from here, before anything else starts, and confinement.problems()
        # proves them like the profile's.
        problem = policy_filter.install()
        if problem:
            sys.stderr.write("ironclaw supervisor: cannot install the seccomp rules: %s\n" % problem)
    # Under gVisor we are PID 1 (see the container's definition) and install no SIGTERM handler:
    # the kernel then ignores every signal the code sends us, and `docker stop` ends us with
    # SIGKILL after its timeout.
    # Our stdout is the engine's pipe to the host. At its default 64 KiB an output flood moves
    # in 64 KiB steps, each one a wake-up of the engine's copier and of us; at 1 MiB (what an
    # unprivileged process may set) one splice moves a whole chunk.
    try:
        fcntl.fcntl(1, F_SETPIPE_SZ, PIPE_SIZE)
    except OSError:
        pass  # not a pipe (a TTY, a file) or a lower limit: the default works too
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
