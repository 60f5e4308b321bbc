"""What a run left behind that can change what later approved code does.

Interpreters persist, so a run can leave a thread, a signal handler, a shadowing alias or
function, a changed PATH... Some of this is persistence working as meant; all of it means the
next approval is for code that will not run in the state the person may assume. After every run
the supervisor looks, and reports the interpreter's alterations with the run that made them;
the host shows them before the next approval and offers a fresh interpreter.

Two kinds of evidence:
* seen from outside the interpreter (cannot be hidden by it): its thread count, its signal
  dispositions, whether it made itself dumpable again, the supervisor's run folder, programs in
  a writable PATH folder that shadow system ones, code that runs when Python starts;
* reported by the interpreter itself right after the run (bash's aliases, traps, functions,
  disabled builtins, PATH and preload variables; Python's patched builtins, tracers, handlers,
  environment, descriptors). Code that deliberately subverts its own interpreter can falsify this
  part; the first part it cannot.
"""

import glob
import os

GVISOR = os.environ.get("IRONCLAW_RUNTIME") == "runsc"

RUN_DIR = "/run/ironclaw"
HOME = "/home/sandbox"
BASH_WORDS = set(
    "alias bg bind break builtin caller cd command compgen complete compopt continue declare "
    "dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs "
    "kill let local logout mapfile popd printf pushd pwd read readarray readonly return set "
    "shift shopt source suspend test times trap true type typeset ulimit umask unalias unset "
    "wait if then else elif fi case esac for select while until do done in function time coproc".split()
)


def status_fields(pid):
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("Threads", "SigCgt", "SigIgn", "SigBlk"):
                    out[key] = value.strip()
    except OSError:
        pass
    return out


def dumpable(pid):
    """Whether a process of our UID may read its environment: only if it is dumpable (ptrace
    access rules), which the interpreters are not unless code made them so."""
    try:
        os.close(os.open("/proc/%d/environ" % pid, os.O_RDONLY | os.O_CLOEXEC))
        return True
    except OSError:
        return False


def run_folder():
    out = {}
    try:
        for entry in os.scandir(RUN_DIR):
            st = entry.stat(follow_symlinks=False)
            out[entry.name] = (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        pass
    return out


def _signals(mask):
    try:
        bits = int(mask, 16)
    except ValueError:
        return []
    return [n for n in range(1, 65) if bits & (1 << (n - 1))]


def _path_dirs(env):
    return [d for d in env.get("PATH", "").split(":") if d]


def shadowing_programs(env):
    """Programs in PATH folders the code can write that hide a system program of the same name."""
    dirs = _path_dirs(env)
    found = []
    for i, d in enumerate(dirs):
        if not os.access(d, os.W_OK):
            continue
        try:
            names = os.listdir(d)
        except OSError:
            continue
        # Bounded: a folder of 100,000 entries must not make every run slow.
        for name in sorted(names)[:2000]:
            for later in dirs[i + 1:]:
                if not os.access(later, os.W_OK) and os.path.exists(os.path.join(later, name)):
                    found.append("%s/%s shadows %s/%s" % (d, name, later, name))
                    break
    return found


def startup_code():
    """Files in the writable home that make every new Python run code before the user's."""
    hits = []
    for pattern in (
        HOME + "/.local/lib/python3*/site-packages/*.pth",
        HOME + "/.local/lib/python3*/site-packages/usercustomize.py",
        HOME + "/.local/lib/python3*/site-packages/sitecustomize.py",
    ):
        hits += sorted(glob.glob(pattern))
    return hits


class Baseline:
    """One interpreter's state right after it started."""

    def __init__(self, pid, env):
        self.pid = pid
        self.env = env
        self.status = status_fields(pid)
        self.run_folder = run_folder()

    def outside(self):
        """(kind, detail) pairs visible from outside the interpreter."""
        found = []
        now = status_fields(self.pid)
        threads = int(now.get("Threads", "1") or 1)
        if threads > int(self.status.get("Threads", "1") or 1):
            found.append(("thread", "%d thread(s) besides the main one still running in the interpreter" % (threads - 1)))
        for key, what in (("SigCgt", "handles"), ("SigIgn", "ignores"), ("SigBlk", "blocks")):
            before, after = set(_signals(self.status.get(key, "0"))), set(_signals(now.get(key, "0")))
            # 32 and 33 are the C library's own (thread cancellation, set*id across threads):
            # they appear with the first thread, which is reported on its own.
            added = sorted(after - before - {32, 33})
            if added:
                found.append(("signals", "the interpreter now %s signal(s) %s" % (what, ", ".join(map(str, added)))))
        # Under gVisor dumpability gates neither ptrace (only descendants) nor /proc/PID/environ
        # (always readable for the same UID), so the probe would say "dumpable" every time.
        if not GVISOR and dumpable(self.pid):
            found.append(("dumpable", "the interpreter made itself dumpable (others may now read or write its memory)"))
        now_folder = run_folder()
        for name in sorted(set(now_folder) | set(self.run_folder)):
            if name.endswith(".tmp") or name.startswith(".ironclaw-confinement-probe"):
                continue
            if now_folder.get(name) != self.run_folder.get(name):
                found.append(("run_folder", "%s/%s was added, removed or replaced" % (RUN_DIR, name)))
        for line in shadowing_programs(self.env):
            found.append(("shadowing", line))
        for path in startup_code():
            found.append(("startup_code", "%s runs code whenever a Python program the code starts begins" % path))
        return found

    def bash_inside(self, lines):
        """(kind, detail) pairs from bash's own report (see cells.bash_end_line)."""
        found = []
        base_path = self.env.get("PATH", "")
        for raw in lines:
            line = raw.decode("utf-8", "replace")
            if line.startswith("alias "):
                name = line[6:].split("=", 1)[0]
                found.append(("alias", "alias %s is defined" % name))
            elif line.startswith("trap -- "):
                found.append(("trap", "a trap is set: %s" % line[8:][:200]))
            elif line.startswith("declare -f"):
                name = line.split()[-1]
                if name in BASH_WORDS or any(
                    os.path.exists(os.path.join(d, name)) for d in _path_dirs(self.env)
                ):
                    found.append(("function", "function %s shadows the command of that name" % name))
            elif line.startswith("enable -n "):
                found.append(("builtin", "builtin %s is disabled" % line[10:].strip()))
            elif line.startswith("path "):
                if line[5:] != base_path:
                    found.append(("path", "PATH changed to %s" % line[5:][:300]))
            elif line.startswith("env "):
                names = ("BASH_ENV", "ENV", "LD_PRELOAD")
                for name, value in zip(names, line[4:].split("|")):
                    if value:
                        found.append(("preload", "%s is set to %s" % (name, value[:200])))
        return found


def listed(altered):
    """A worker's findings, (kind, detail) -> seq, as the host reads them: oldest run first."""
    return [{"kind": k, "detail": d, "seq": s} for (k, d), s in sorted(altered.items(), key=lambda i: i[1])]


def check_after_run(ex, lost):
    """What the run `ex` found altered in its interpreter before it began, and after; the
    interpreter keeps the findings in `altered` until it restarts or they go away."""
    w = ex.worker
    before = listed(ex.altered_before)
    if lost or not w.alive or w.baseline is None:
        return before, []
    found = w.baseline.outside()
    if w.lang == "shell":
        found += w.baseline.bash_inside(ex.state_lines)
    else:
        found += [(str(k), str(d)) for k, d in ex.py_state]
    if GVISOR:
        # gVisor's own instances: they take nothing from the person's budget on the host.
        found = [f for f in found if f[0] != "inotify"]
    if ex.forged:
        found.append((
            "forged_completion",
            "%d line(s) the run wrote to IronClaw's control channel were ignored as forged" % ex.forged,
        ))
    # Findings that cannot be undone by the code itself stay until the interpreter restarts.
    altered = {k: v for k, v in w.altered.items() if k[0] in ("forged_completion", "dumpable")}
    for item in found:
        altered[item] = w.altered.get(item, ex.seq)
    w.altered = altered
    return before, listed(w.altered)
