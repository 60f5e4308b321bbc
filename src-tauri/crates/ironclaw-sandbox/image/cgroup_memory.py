"""What the container's memory cgroup says: current usage and OOM kills (cgroup v1 or v2,
read-only from inside). A run's peak memory and whether it was OOM-killed come from here.
"""

import os


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
