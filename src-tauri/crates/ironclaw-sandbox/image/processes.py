"""The processes below the supervisor: finding them, killing leftovers, collecting exit statuses.

The supervisor is a child subreaper (see supervisor.main), so everything the code starts stays
below it, however it forks or detaches; only what `docker exec` starts (Docker's health check,
someone debugging) is outside its tree.
"""

import os
import signal
import time
from time import monotonic as now

EXIT_STATUS = {}
# Processes kill_strays() killed: the ones whose parent is an interpreter stay zombies until that
# interpreter waits for them (see interpreters.collect_zombies).
KILLED_PIDS = set()
# Zombies we collect even if we did not kill them, once an interpreter holds this many: each
# holds a slot of the pids limit, and enough of them stop every later fork.
ZOMBIE_PRESSURE = 32


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


# The container's own cgroup lists every process in the container, in our PID namespace, and
# code cannot leave it (the cgroup filesystem is read-only, and no capability allows a move).
# Reading it is one small file instead of a stat file per process: when it names no process
# but tini, this supervisor and the interpreters, there is nothing to sweep and the process
# table is not read. Only a file that names this supervisor by its own PID is trusted.
_CGROUP_PROCS_CANDIDATES = (
    "/sys/fs/cgroup/cgroup.procs",  # v2, private cgroup namespace
    "/sys/fs/cgroup/pids/cgroup.procs",  # v1
    "/sys/fs/cgroup/memory/cgroup.procs",
)
_cgroup_procs = []  # [path or None], decided on first use


def _read_pids(path):
    with open(path, "rb") as f:
        return [int(p) for p in f.read().split()]


def cgroup_procs_file():
    if not _cgroup_procs:
        found = None
        for path in _CGROUP_PROCS_CANDIDATES:
            try:
                if os.getpid() in _read_pids(path):
                    found = path
                    break
            except (OSError, ValueError):
                continue
        _cgroup_procs.append(found)
    return _cgroup_procs[0]


def nothing_to_sweep(keep):
    """True when the container holds no process that could be a leftover: only PID 1 (tini),
    this supervisor and the interpreters in `keep`. False whenever it cannot tell, so the
    caller reads the process table."""
    path = cgroup_procs_file()
    if path is None:
        return False
    try:
        pids = _read_pids(path)
    except (OSError, ValueError):
        return False
    allowed = {1, os.getpid()} | set(keep)
    return all(p in allowed for p in pids)


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
    if nothing_to_sweep(keep):
        return []
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


def children_of(parent):
    """The children of `parent` from /proc/PID/task/TID/children (zombies included: they stay
    their parent's children until it waits for them); None when the kernel does not offer the
    file (CONFIG_PROC_CHILDREN) or the process is gone."""
    try:
        tids = os.listdir("/proc/%d/task" % parent)
    except OSError:
        return None
    out = []
    seen = False
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/children" % (parent, tid), "rb") as f:
                out.extend(int(p) for p in f.read().split())
            seen = True
        except (OSError, ValueError):
            continue  # a thread that just ended, or no such file
    return out if seen else None


def zombies_of(parent):
    kids = children_of(parent)
    if kids is not None:
        out = []
        for pid in kids:
            try:
                with open("/proc/%d/stat" % pid, "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            if stat[stat.rfind(b")") + 2:].startswith(b"Z"):
                out.append(pid)
        return out
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


def status_to_rc(status):
    if status is None:
        return -1
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return -1
