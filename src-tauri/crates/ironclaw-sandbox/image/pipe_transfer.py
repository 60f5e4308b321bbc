"""Moving bytes out of the interpreters' pipes: read and pipe sizes, and the zero-copy path.

Past the in-memory cap every byte must reach both the host and the log file. Moving them with
tee(2) and splice(2) keeps them in the kernel instead of copying them through Python twice;
where those calls are missing (gVisor, other kernels) the copy path is used instead.
"""

import ctypes
import errno
import fcntl
import os
import select
import sys
import termios

READ_CHUNK = 1 << 20
# Linux's F_SETPIPE_SZ: bigger pipes mean fewer, larger reads and frames on output floods.
F_SETPIPE_SZ = 1031
PIPE_SIZE = 1 << 20

_libc = ctypes.CDLL(None, use_errno=True)
_zero_copy = [hasattr(os, "splice") and hasattr(_libc, "tee")]


def zero_copy_available():
    return _zero_copy[0]


def give_up_zero_copy():
    """tee(2) turned out to be unsupported here: copy from now on."""
    _zero_copy[0] = False


def pipe_bytes(fd):
    buf = bytearray(4)
    try:
        fcntl.ioctl(fd, termios.FIONREAD, buf)
    except OSError:
        return 0
    return int.from_bytes(buf, sys.byteorder)


def tee(src, dst, count):
    n = _libc.tee(src, dst, ctypes.c_size_t(count), 0)
    if n < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return n


def splice_all(src, dst, count):
    """Moves exactly `count` bytes from the pipe `src` to `dst`, waiting when either side is
    momentarily full or empty. If splice stops working half-way, the rest is copied, because a
    frame whose header is already out must get exactly the bytes it announced. An error that
    ends it carries `remaining`: the announced bytes still in `src`."""
    while count > 0:
        try:
            n = os.splice(src, dst, count)
        except BlockingIOError:
            wait_for_room(src, dst)
            continue
        except OSError:
            copy_exact(src, dst, count)
            return
        if n <= 0:
            copy_exact(src, dst, count)
            return
        count -= n


def wait_for_room(src, dst):
    """Waits after a splice(2) that would block. The worker's pipe is non-blocking, which makes
    splice non-blocking on both ends, so EAGAIN means either `src` is empty or `dst` is full.
    Waiting for both at once would return at once while `src` still holds bytes: a busy loop
    for as long as the host reads slower than the code writes (it cost more CPU than the rest
    of the stream together). So wait only for the end that is not ready."""
    if pipe_bytes(src) > 0:
        select.select([], [dst], [], 1.0)
    else:
        select.select([src], [], [], 1.0)


def drain_exact(src, count):
    while count > 0:
        data = os.read(src, min(count, READ_CHUNK))
        if not data:
            return
        count -= len(data)


def copy_exact(src, dst, count):
    while count > 0:
        try:
            data = os.read(src, min(count, READ_CHUNK))
        except BlockingIOError:
            select.select([src], [], [], 1.0)
            continue
        if not data:
            raise OSError(errno.EIO, "pipe closed with %d bytes announced but not sent" % count)
        count -= len(data)
        try:
            while data:
                data = data[os.write(dst, data):]
        except OSError as exc:
            exc.remaining = count  # what was read here is gone; the rest is still in `src`
            raise
