"""The bloomlab conformance protocol, version 1, for Python adapters (standard library only).

An adapter is an object with the attributes ``name``, ``version``, ``language`` and
``capabilities`` (a list of "serialize", "stats", "static", "growable"), optionally ``supports``
(the range of n and p the library accepts: ``{"n": [lo, hi], "p": [lo, hi]}``, inclusive; without
it the suite holds the adapter to every n >= 1 and p in (0, 1)), and the methods

    create(n, p)          an empty filter for n keys at rate p (n and p as sent, however bad)
    insert(keys)          keys: a list of bytes
    query(keys) -> list   one truthy answer per key ("maybe present")
    stats() -> dict       optional: {"memory_bytes": int or None, "layout": {...} or None}
    serialize() -> bytes  optional
    deserialize(data)     optional: replaces the current filter

``serve(adapter)`` answers bloomlab's requests on stdin/stdout until CLOSE. A method the adapter
lacks is answered UNSUPPORTED; an exception is answered ERROR with its message (the library
refused). The specification is the doc of ``crates/conform/src/process/mod.rs`` in bloomlab's
repository (the `bloomlab_conform::process` module of the Rust crate).

Most authors never call this module: ``bloomlab_conform.check`` serves their class with it in a
child process. bloomlab's own adapters (``scripts/conform/*.py``) serve with it directly.
"""

import json
import struct
import sys

MAGIC = b"bloomlab-conform"
VERSION = 1
MAX_FRAME = 1 << 30

HELLO, CREATE, INSERT, QUERY, STATS, SERIALIZE, DESERIALIZE, CLOSE = range(1, 9)
OK, ERROR, UNSUPPORTED = 0, 1, 2

_U32 = struct.Struct("<I")


def read_frame(inp):
    """The next frame's bytes, or None at end of input."""
    head = inp.read(4)
    if len(head) < 4:
        return None
    (length,) = _U32.unpack(head)
    if not 1 <= length <= MAX_FRAME:
        raise ValueError(f"frame of {length} bytes (allowed 1..=2^30)")
    body = inp.read(length)
    if len(body) < length:
        return None
    return body


def write_frame(out, status, payload=b""):
    """One answer frame, flushed: bloomlab waits for it."""
    out.write(_U32.pack(1 + len(payload)) + bytes([status]) + payload)
    out.flush()


def keys(payload):
    """The keys of a key list (u32 count, then u32 length + bytes per key)."""
    view = memoryview(payload)
    (count,) = _U32.unpack_from(view, 0)
    out, pos = [], 4
    for _ in range(count):
        (length,) = _U32.unpack_from(view, pos)
        pos += 4
        out.append(bytes(view[pos : pos + length]))
        pos += length
    if pos != len(view):
        raise ValueError(f"key list of {count} keys ends at byte {pos} of {len(view)}")
    return out


def key_list(items):
    """Encodes keys as a key list (what SERIALIZE of a set of keys can reuse)."""
    parts = [_U32.pack(len(items))]
    for k in items:
        parts.append(_U32.pack(len(k)))
        parts.append(k)
    return b"".join(parts)


def bitmap(answers):
    """QUERY's answer: bit i % 8 of byte i // 8 is answer i."""
    out = bytearray((len(answers) + 7) // 8)
    for i, hit in enumerate(answers):
        if hit:
            out[i >> 3] |= 1 << (i & 7)
    return bytes(out)


def hello(adapter):
    """HELLO's JSON answer."""
    answer = {
        "protocol": VERSION,
        "name": adapter.name,
        "version": adapter.version,
        "language": getattr(adapter, "language", "python"),
        "capabilities": list(adapter.capabilities),
    }
    supports = getattr(adapter, "supports", None)
    if supports is not None:
        answer["supports"] = supports
    return json.dumps(answer).encode()


def _handle(adapter, op, payload, state):
    """(status, payload) for one request."""
    if op == HELLO:
        if payload != MAGIC + struct.pack("<H", VERSION):
            return ERROR, f"this adapter speaks {MAGIC.decode()} protocol {VERSION}".encode()
        return OK, hello(adapter)
    if op == CREATE:
        n, p = struct.unpack("<Qd", payload)
        adapter.create(n, p)
        state["filter"] = True
        return OK, b""
    if op == DESERIALIZE:
        if not hasattr(adapter, "deserialize"):
            return UNSUPPORTED, b"deserialize"
        adapter.deserialize(payload)
        state["filter"] = True
        return OK, b""
    methods = {INSERT: "insert", QUERY: "query", STATS: "stats", SERIALIZE: "serialize"}
    if op not in methods:
        return UNSUPPORTED, f"opcode {op}".encode()
    method = getattr(adapter, methods[op], None)
    if method is None:
        return UNSUPPORTED, methods[op].encode()
    if not state["filter"]:
        return ERROR, b"no filter yet: CREATE or DESERIALIZE first"
    if op == INSERT:
        method(keys(payload))
        return OK, b""
    if op == QUERY:
        return OK, bitmap(list(method(keys(payload))))
    if op == STATS:
        return OK, json.dumps(method()).encode()
    return OK, bytes(method())


def serve(adapter):
    """Answers requests on stdin/stdout until CLOSE or end of input."""
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    # A library that prints would corrupt the frames: its prints go to stderr instead.
    sys.stdout = sys.stderr
    state = {"filter": False}
    while True:
        frame = read_frame(inp)
        if frame is None:
            return
        op, payload = frame[0], frame[1:]
        if op == CLOSE:
            write_frame(out, OK)
            return
        try:
            status, answer = _handle(adapter, op, payload, state)
        except Exception as e:  # the library refused: its message goes back as ERROR
            status, answer = ERROR, f"{type(e).__name__}: {e}".encode()
        write_frame(out, status, answer)
