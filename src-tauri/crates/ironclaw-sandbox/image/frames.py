"""The supervisor's side of the host protocol: frames out, on the container's stdout.

Wire protocol (the container's stdin/stdout, reached by `docker attach`; src/protocol.rs is the
host's side):
  host -> here: one JSON object per line, {"op": "exec"|"cancel"|"ping"|"status", "seq": N, ...}
  here -> host: frames  MAGIC(2) KIND(1) SEQ(u32 BE) LEN(u32 BE) CHECK(1) PAYLOAD(LEN)
      KIND 1 = stdout bytes, 2 = stderr bytes, 3 = event (UTF-8 JSON object with "type").
      CHECK = sum of the 11 header bytes mod 256. Every attached client sees every frame, and
      one may attach mid-frame, so the magic and the check byte let a reader resynchronise.

Code cannot write frames: the interpreters' stdout and stderr are pipes the supervisor reads
and wraps into frames, and the supervisor (like tini) is non-dumpable, so its fd 1 cannot be
opened through /proc.
"""

import json
import os
import struct

MAGIC = b"\xc1\xa7"
STDOUT, STDERR, EVENT = 1, 2, 3
HEADER = struct.Struct(">2sBII")


def header(kind, seq, length):
    """A frame's 12 header bytes: the packed header and its check byte."""
    head = HEADER.pack(MAGIC, kind, seq & 0xFFFFFFFF, length)
    return head + bytes([sum(head) & 0xFF])


def send(kind, seq, payload):
    data = [header(kind, seq, len(payload)), payload]
    while data:
        try:
            n = os.writev(1, data)
        except InterruptedError:
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
