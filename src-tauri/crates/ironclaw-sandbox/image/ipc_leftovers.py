"""Kernel objects a run leaves behind in the sandbox's IPC namespace, removed when the run ends.

POSIX message queues and System V shared memory, semaphores and message queues outlive every
process: no stray-process sweep ends them. A queue's bytes count against its owner's
RLIMIT_MSGQUEUE, and under runc that owner is the person's own UID on the host, so a run that
filled it would leave every host process of that person unable to make a queue (`mq_open`:
EMFILE) until the sandbox was removed. Like background processes, what a run leaves here is
removed when it ends, and named in its report. A process still holding a queue open keeps it
(and its bytes) until it closes it; the interpreter's own descriptors are reported apart.
"""

import ctypes
import os

MQUEUE = "/dev/mqueue"
IPC_RMID = 0
# (listing, removal call, what people read)
_SYSV = (
    ("/proc/sysvipc/shm", "shmctl", "System V shared memory"),
    ("/proc/sysvipc/sem", "semctl", "System V semaphore set"),
    ("/proc/sysvipc/msg", "msgctl", "System V message queue"),
)
_libc = []


def _c():
    if not _libc:
        _libc.append(ctypes.CDLL(None, use_errno=True))
    return _libc[0]


def _sysv_ids(path):
    try:
        with open(path) as f:
            lines = f.read().splitlines()[1:]
    except OSError:
        return []
    ids = []
    for line in lines:
        fields = line.split()
        if len(fields) > 1 and fields[1].isdigit():
            ids.append(int(fields[1]))
    return ids


def sweep():
    """Removes every message queue and System V object in the namespace; returns their names."""
    removed = []
    try:
        names = sorted(os.listdir(MQUEUE))
    except OSError:
        names = []
    for name in names:
        try:
            os.unlink(os.path.join(MQUEUE, name))
            removed.append("message queue /%s" % name)
        except OSError:
            pass
    for path, call, what in _SYSV:
        for ident in _sysv_ids(path):
            fn = getattr(_c(), call)
            # shmctl/msgctl(id, IPC_RMID, NULL); semctl(id, 0, IPC_RMID).
            ok = (fn(ident, 0, IPC_RMID) if call == "semctl" else fn(ident, IPC_RMID, None)) == 0
            if ok:
                removed.append("%s %d" % (what, ident))
    return removed
