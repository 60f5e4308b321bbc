"""Docker's health check for an IronClaw sandbox: healthy while the supervisor runs.

Docker starts it with `docker exec`, outside the supervisor's process tree, so it must not trust
anything the sandboxed code can write: it runs as an unreadable (so non-dumpable) private python3
in isolated mode, looks nothing up through PATH, and reads only /proc. The supervisor is the one
live child of tini (PID 1); nothing else can become one, because orphans re-parent to the
supervisor (a child subreaper), not to tini. Under gVisor the supervisor is PID 1 itself (tini's
unreadable binary cannot be loaded there), and the container lives exactly as long as it does.
"""

import os
import sys


def supervisor_alive():
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and fields[1] == b"1" and fields[0] != b"Z":
            return True
    return False


def supervisor_is_init():
    try:
        with open("/proc/1/cmdline", "rb") as f:
            return b"/opt/ironclaw/supervisor.py" in f.read().split(b"\0")
    except OSError:
        return False


if __name__ == "__main__":
    if os.environ.get("IRONCLAW_RUNTIME") == "runsc":
        sys.exit(0 if supervisor_is_init() else 1)
    sys.exit(0 if supervisor_alive() else 1)
