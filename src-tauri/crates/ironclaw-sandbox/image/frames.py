"""The supervisor's side of the host protocol: frames out, on the container's stdout.

Wire protocol (the container's stdin/stdout, reached by `docker attach`, and the output channel
below; src/protocol.rs is the host's side):
  host -> here: one JSON object per line, {"op": "exec"|"cancel"|"ping"|"status", "seq": N, ...}
  here -> host: frames  MAGIC(2) KIND(1) SEQ(u32 BE) LEN(u32 BE) CHECK(1) PAYLOAD(LEN)
      KIND 1 = stdout bytes, 2 = stderr bytes, 3 = event (UTF-8 JSON object with "type").
      CHECK = sum of the 11 header bytes mod 256. Every attached client sees every frame, and
      one may attach mid-frame, so the magic and the check byte let a reader resynchronise.

Code cannot write frames the host believes: the interpreters' stdout and stderr are pipes the
supervisor reads and wraps into frames. Under runc the supervisor is non-dumpable, so its fd 1
cannot be opened through /proc; gVisor ignores dumpability there, so every frame on stdout is
signed with the container's key (kind 4, SIGNED: MAC(32) KIND(1) COUNTER(u64 BE) PAYLOAD, the
MAC over SEQ KIND COUNTER PAYLOAD; src/exec/seal.rs), and the host drops the rest. The key
comes on stdin from the process that started the container, before any request, and lives
only in our memory (another process's /proc/PID/mem is refused under both runtimes).

The output channel. A run's frames (all of them, its output and its events up to `ended`) may
instead go over a Unix socket the host listens on, in a read-only folder of its own mounted at
CHANNEL_DIR: the same frames without the engine's two copies (shim and dockerd) in between,
which is what an output flood costs most. The exec request names the socket and carries a
one-time token; the host accepts a connection only with a token it issued for a run in progress
and the key's proof over it, and only that run's frames on it. The token travels on our stdin,
which code may read under gVisor, but the proof needs the key; the socket is not inherited by
the interpreters, and a socket cannot be reopened through /proc.
Where the folder or the socket is missing (an older container, an engine on another machine),
the frames go on stdout as before.
"""

import errno
import hashlib
import hmac
import json
import os
import re
import socket
import struct

MAGIC = b"\xc1\xa7"
STDOUT, STDERR, EVENT = 1, 2, 3
HEADER = struct.Struct(">2sBII")


SIGNED = 4
COUNTER = struct.Struct(">Q")
_key = [None]  # the container's key, once the host gave it
_counter = [0]  # of signed frames; only grows, so a replayed frame is known


def set_key(hexkey):
    """Takes the container's key, once: False for a second key or a malformed one."""
    if _key[0] is not None or not (isinstance(hexkey, str) and re.match(r"[0-9a-f]{64}\Z", hexkey)):
        return False
    _key[0] = bytes.fromhex(hexkey)
    return True


def keyed():
    return _key[0] is not None


def mac(*parts):
    h = hmac.new(_key[0], digestmod=hashlib.sha256)
    for part in parts:
        h.update(part)
    return h.digest()


def signed(kind, seq, payload):
    """A frame for stdout: signed once we have the key (a frame before that, the start's hello,
    is not one the host believes)."""
    if _key[0] is None:
        return [header(kind, seq, len(payload)), payload]
    _counter[0] += 1
    body = bytes([kind]) + COUNTER.pack(_counter[0])
    tag = mac(struct.pack(">I", seq & 0xFFFFFFFF), body, payload)
    return [header(SIGNED, seq, len(tag) + len(body) + len(payload)), tag, body, payload]


def header(kind, seq, length):
    """A frame's 12 header bytes: the packed header and its check byte."""
    head = HEADER.pack(MAGIC, kind, seq & 0xFFFFFFFF, length)
    return head + bytes([sum(head) & 0xFF])


CHANNEL_DIR = "/run/ironclaw-channel"
_CHANNEL_NAME = re.compile(r"[0-9a-f]{16}\Z")
_CHANNEL_TOKEN = re.compile(r"[0-9a-f]{32}\Z")
CHANNEL_CONNECT_TIMEOUT = 1.0
CHANNEL_ACK = b"+"
_channels = {}  # seq -> the connected socket, while that run lasts
# What a host that closed its end looks like to a writer.
_HOST_GONE = (errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN)


def open_channel(seq, spec):
    """Connects run `seq`'s frames to the host's socket named in the request; False (frames go
    on stdout) when the request names none or the socket cannot be reached."""
    if not isinstance(spec, dict):
        return False
    name, token = spec.get("name"), spec.get("token")
    if not (isinstance(name, str) and _CHANNEL_NAME.match(name)):
        return False
    if not (isinstance(token, str) and _CHANNEL_TOKEN.match(token)):
        return False
    # Python's sockets are not inheritable: the interpreters we spawn never hold this one.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(CHANNEL_CONNECT_TIMEOUT)
        s.connect(os.path.join(CHANNEL_DIR, name + ".sock"))
        proof = ""
        if _key[0] is not None:
            proof = " " + hmac.new(_key[0], b"channel " + token.encode(), hashlib.sha256).hexdigest()
        s.sendall((token + proof + "\n").encode())
        # The host's "+" says it took the token: a connection it dropped unread (too many
        # at once) must not swallow this run's first frames.
        if s.recv(1) != CHANNEL_ACK:
            raise OSError(errno.ECONNREFUSED, "the host did not take the token")
        s.setblocking(True)
    except OSError:
        s.close()
        return False
    _channels[seq] = s
    return True


def close_channel(seq):
    """After the run's last frame (the host reads to the end, then sees the socket close), or
    when the host closed its end mid-run because it stopped waiting for this run: then the
    rest goes on stdout, where nobody routes it, instead of ending the supervisor as a closed
    stdout does."""
    s = _channels.pop(seq, None)
    if s is not None:
        s.close()


def out_fd(seq):
    s = _channels.get(seq)
    return 1 if s is None else s.fileno()


def host_gone(exc, fd):
    return fd != 1 and isinstance(exc, OSError) and exc.errno in _HOST_GONE


def send(kind, seq, payload):
    fd = out_fd(seq)
    data = [header(kind, seq, len(payload)), payload] if fd != 1 else signed(kind, seq, payload)
    while data:
        try:
            n = os.writev(fd, data)
        except InterruptedError:
            continue
        except OSError as exc:
            if not host_gone(exc, fd):
                raise
            close_channel(seq)
            # Whatever part of this frame reached the socket is cut off there; the whole
            # frame goes on stdout.
            data, fd = signed(kind, seq, payload), 1
            continue
        # Drop what was written, keep the rest (writev may write partially).
        while data and n >= len(data[0]):
            n -= len(data[0])
            data.pop(0)
        if data and n:
            data[0] = data[0][n:]


def event(seq, kind, **fields):
    fields["type"] = kind
    send(EVENT, seq, json.dumps(fields, separators=(",", ":")).encode())
