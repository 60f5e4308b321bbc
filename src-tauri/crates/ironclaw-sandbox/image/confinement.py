"""Checks, at start, that the container's own confinement is in force.

The rules that keep setuid files and odd sockets out live in the container's seccomp profile,
applied by the Docker engine to every process in the container (see the crate's seccomp/ folder).
The supervisor does not install them: it proves they are there, and reports what is missing in
its hello and every pong, so the host refuses to run code in a container made without them (an
engine that ignored the profile, a container created by hand).
"""

import errno
import os
import socket

AF_VSOCK = 40
AF_NETLINK = 16
# Refused by the filter (EPERM), as opposed to a kernel without the family (EAFNOSUPPORT).
FILTERED = (errno.EPERM, errno.EACCES)


def seccomp_mode():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Seccomp:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _setuid_refused(folder):
    path = os.path.join(folder, ".ironclaw-confinement-probe")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        return "cannot make a probe file in %s: %s" % (folder, exc)
    try:
        try:
            os.fchmod(fd, 0o4755)
        except OSError as exc:
            if exc.errno in FILTERED:
                return None
            return "chmod u+s failed with an unexpected error: %s" % exc
        return "a file could be made setuid (chmod u+s succeeded)"
    finally:
        os.close(fd)
        try:
            os.unlink(path)
        except OSError:
            pass


def _family_refused(family, name):
    try:
        s = socket.socket(family, socket.SOCK_DGRAM if family == AF_NETLINK else socket.SOCK_STREAM)
    except OSError as exc:
        if exc.errno in FILTERED or exc.errno == errno.EAFNOSUPPORT:
            return None
        return "%s socket failed with an unexpected error: %s" % (name, exc)
    s.close()
    return "%s sockets can be created" % name


def problems(folder):
    """What is missing from the container's confinement (an empty list: all in force)."""
    found = []
    if seccomp_mode() != 2:
        found.append("no seccomp filter is in force")
    for check in (
        _setuid_refused(folder),
        _family_refused(AF_VSOCK, "AF_VSOCK"),
        _family_refused(AF_NETLINK, "AF_NETLINK"),
    ):
        if check:
            found.append(check)
    return found
