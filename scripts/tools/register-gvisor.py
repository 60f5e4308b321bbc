#!/usr/bin/env python3
"""Adds gVisor's runtime entry to the Docker engine's daemon.json, keeping everything else.

Usage: register-gvisor.py DAEMON_JSON RUNSC_PATH
Exit status: 0 when the file already had this entry (nothing written), 10 when it was written
(the engine must reload), 1 on a file that is not a JSON object (nothing written).

`--network=host` is gVisor's passthrough to the network namespace Docker made for the container
(its own, never the host's): only loopback for a sandbox without network, the egress network's
interface for an allowlist one. gVisor's own stack refuses to start in a `none` namespace here.
`--host-uds=open` lets the sandbox connect to the host sockets IronClaw puts in its read-only
output folder (the output channel); it can create none.
No `--oci-seccomp`: gVisor's loading of OCI profiles ignores a rule's errno, so Docker's
"clone3 gives ENOSYS" becomes EPERM and no program can start a thread. The supervisor installs
IronClaw's rules itself under gVisor (image/policy_filter.py).
"""
import json
import os
import sys

ARGS = ["--network=host", "--host-uds=open"]


def main():
    path, runsc = sys.argv[1], sys.argv[2]
    try:
        with open(path) as f:
            text = f.read()
        config = json.loads(text) if text.strip() else {}
    except FileNotFoundError:
        config = {}
    except (OSError, ValueError) as e:
        print("register-gvisor: %s is not valid JSON (%s); fix it, then run set-up again" % (path, e), file=sys.stderr)
        return 1
    if not isinstance(config, dict):
        print("register-gvisor: %s is not a JSON object" % path, file=sys.stderr)
        return 1
    want = {"path": runsc, "runtimeArgs": ARGS}
    runtimes = config.setdefault("runtimes", {})
    if runtimes.get("runsc") == want:
        return 0
    runtimes["runsc"] = want
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".ironclaw.tmp"
    with open(tmp, "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return 10


if __name__ == "__main__":
    sys.exit(main())
