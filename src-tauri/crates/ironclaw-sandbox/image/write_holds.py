"""Which workspace files a process in the sandbox holds open for writing, asked from inside.

The host asks this itself with a read lease (src-tauri/crates/ironclaw-workspace/src/
checkpoint/live.rs), which sees every open file description of the inode. Under gVisor that
answer is "held" for most files an earlier run wrote: gVisor keeps its own host descriptors of
them open for writing, whoever inside still holds one. So under gVisor the host asks here as
well, and a file counts as held only if a process in the sandbox can still write it without the
host's watch seeing it: a descriptor open for writing (it can be mapped later) or a shared
writable mapping.

What this cannot see is a descriptor in flight: sent over a Unix socket and not yet received,
it is in no process's table but can be received and mapped by a later run. So any socket held
by a process, other than the control channels we made ourselves, makes the answer unknowable,
and the host then keeps its own (conservative) answer.
"""

import os

WORKSPACE = "/workspace"
_known_sockets = set()  # inodes of the control channels we made (interpreters.control_pair)


def know_socket(fd):
    try:
        _known_sockets.add(os.fstat(fd).st_ino)
    except OSError:
        pass


def _in_workspace(path):
    return path == WORKSPACE or path.startswith(WORKSPACE + "/")


def _writable(pid, fd):
    try:
        with open("/proc/%s/fdinfo/%s" % (pid, fd)) as f:
            for line in f:
                if line.startswith("flags:"):
                    return int(line.split()[1], 8) & 3 in (1, 2)
    except (OSError, ValueError, IndexError):
        return None
    return None


def held():
    """(workspace paths held for writing, reason the answer is unknowable or None)."""
    paths, unknowable = set(), None
    me = str(os.getpid())
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError as exc:
        return [], "the process list cannot be read: %s" % exc
    for pid in pids:
        try:
            fds = os.listdir("/proc/%s/fd" % pid)
        except FileNotFoundError:
            continue  # ended while we looked
        except OSError as exc:
            unknowable = "process %s cannot be looked at: %s" % (pid, exc)
            continue
        for fd in fds:
            try:
                target = os.readlink("/proc/%s/fd/%s" % (pid, fd))
            except FileNotFoundError:
                continue
            except OSError as exc:
                unknowable = "a descriptor of process %s cannot be looked at: %s" % (pid, exc)
                continue
            if target.startswith("socket:"):
                if pid == me:
                    continue  # ours: the host channel, our ends of the control channels
                try:
                    inode = int(target[len("socket:["):-1])
                except ValueError:
                    inode = None
                if inode not in _known_sockets:
                    unknowable = "process %s holds a socket, which could carry a file in flight" % pid
                continue
            # A deleted name may still be a workspace file under another (hard) link: held.
            if not _in_workspace(target.removesuffix(" (deleted)")):
                continue
            writable = _writable(pid, fd)
            if writable is None:
                unknowable = "how process %s opened %s cannot be read" % (pid, target)
            elif writable:
                paths.add(target)
        try:
            with open("/proc/%s/maps" % pid) as f:
                for line in f:
                    parts = line.split(None, 5)
                    if len(parts) == 6 and parts[1][1] == "w" and parts[1][3] == "s":
                        path = parts[5].rstrip("\n")
                        if _in_workspace(path):
                            paths.add(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            unknowable = "the mappings of process %s cannot be read: %s" % (pid, exc)
    return sorted(os.path.relpath(p, WORKSPACE) for p in paths), unknowable
