"""The request loop shared by this directory's Python adapters (protocol version 1 of
crates/conform/src/process/mod.rs): frames in from stdin, answers out on stdout.

An adapter is an object with `name`, `version`, `capabilities` (a list of `serialize`, `stats`,
`static`) and the methods `create(n, p)`, `insert(keys)`, `query(keys) -> iterable of bool`,
`stats() -> dict`, `serialize() -> bytes` and `deserialize(data)`; keys are `bytes`. Any
exception from those methods is answered ERROR with `Type: message` (the library refused); a
request the adapter does not declare (SERIALIZE without `serialize`) is answered UNSUPPORTED.
A protocol violation by bloomlab (bad frame, bad magic or version, unknown opcode, truncated
key list) ends the process with a message on stderr and exit status 3. End of input between
frames ends it with status 0, as CLOSE does.
"""

import json
import struct
import sys

VERSION = 1
MAGIC = b"bloomlab-conform"
MAX_FRAME = 1 << 30
HELLO, CREATE, INSERT, QUERY, STATS, SERIALIZE, DESERIALIZE, CLOSE = range(1, 9)
OK, ERROR, UNSUPPORTED = 0, 1, 2
NAMES = {HELLO: "HELLO", CREATE: "CREATE", INSERT: "INSERT", QUERY: "QUERY", STATS: "STATS",
         SERIALIZE: "SERIALIZE", DESERIALIZE: "DESERIALIZE", CLOSE: "CLOSE"}


class Violation(Exception):
    """bloomlab broke the protocol: the adapter stops (exit 3)."""


def read_exact(stream, size, what):
    data = stream.read(size)
    if len(data) != size:
        raise Violation(f"input ended inside {what} ({len(data)} of {size} bytes)")
    return data


def read_frame(stream):
    """The next frame's bytes, or None at end of input between frames."""
    head = stream.read(4)
    if not head:
        return None
    if len(head) != 4:
        raise Violation("input ended inside a frame's length")
    (size,) = struct.unpack("<I", head)
    if not 1 <= size <= MAX_FRAME:
        raise Violation(f"frame length {size} outside 1..=2^30")
    return read_exact(stream, size, "a frame")


def key_list(payload):
    """The keys of a key list, each as `bytes` (what the libraries hash faithfully)."""
    view = memoryview(payload)
    if len(view) < 4:
        raise Violation("key list shorter than its count")
    (count,) = struct.unpack_from("<I", view, 0)
    keys, at = [], 4
    for _ in range(count):
        if at + 4 > len(view):
            raise Violation(f"key list ends before its key {len(keys)} of {count}")
        (size,) = struct.unpack_from("<I", view, at)
        at += 4
        if at + size > len(view):
            raise Violation(f"key {len(keys)} of {count} runs past the frame")
        keys.append(bytes(view[at:at + size]))
        at += size
    if at != len(view):
        raise Violation(f"{len(view) - at} bytes after the key list's {count} keys")
    return keys


def bitmap(answers, count):
    """Key i is bit i % 8 of byte i / 8, least significant first."""
    out = bytearray((count + 7) // 8)
    i = -1
    for i, yes in enumerate(answers):
        if yes:
            out[i >> 3] |= 1 << (i & 7)
    if i + 1 != count:
        raise RuntimeError(f"the adapter answered {i + 1} of {count} keys")
    return bytes(out)


def hello(adapter, payload):
    if payload[:16] != MAGIC or len(payload) != 18:
        raise Violation("HELLO without the magic bytes and a u16 version")
    (version,) = struct.unpack_from("<H", payload, 16)
    if version != VERSION:
        raise Violation(f"HELLO asks for protocol {version}; this adapter speaks {VERSION}")
    return json.dumps({"protocol": VERSION, "name": adapter.name, "version": adapter.version,
                       "language": "python", "capabilities": adapter.capabilities}).encode()


def answer(adapter, op, payload, state):
    """The (status, payload) answering one request; raises Violation or the library's exception."""
    if op == CREATE:
        if len(payload) != 16:
            raise Violation(f"CREATE payload of {len(payload)} bytes, not 16")
        n, p = struct.unpack("<Qd", payload)
        state["built"] = False
        adapter.create(n, p)
        state["built"] = True
        return OK, b""
    if op in (SERIALIZE, DESERIALIZE) and "serialize" not in adapter.capabilities:
        return UNSUPPORTED, NAMES[op].encode()
    if op == DESERIALIZE:
        state["built"] = False
        adapter.deserialize(bytes(payload))
        state["built"] = True
        return OK, b""
    if not state["built"]:
        return ERROR, f"{NAMES[op]} before any CREATE or DESERIALIZE".encode()
    if op == INSERT:
        adapter.insert(key_list(payload))
        return OK, b""
    if op == QUERY:
        keys = key_list(payload)
        return OK, bitmap(adapter.query(keys), len(keys))
    if op == STATS:
        return OK, json.dumps(adapter.stats()).encode()
    if op == SERIALIZE:
        return OK, adapter.serialize()
    raise Violation(f"unknown opcode 0x{op:02x}")


def serve(adapter):
    """Answers requests until CLOSE or end of input; exits 3 on a protocol violation."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    state = {"built": False}
    try:
        while True:
            frame = read_frame(stdin)
            if frame is None:
                return
            op, payload = frame[0], memoryview(frame)[1:]
            if op == HELLO:
                status, body = OK, hello(adapter, bytes(payload))
            elif op == CLOSE:
                status, body = OK, b""
            else:
                # Key lists are parsed inside, so a malformed one is a Violation, never an ERROR.
                try:
                    status, body = answer(adapter, op, payload, state)
                except Violation:
                    raise
                except Exception as e:  # the library refused: its type and message
                    status, body = ERROR, f"{type(e).__name__}: {e}".encode()
            stdout.write(struct.pack("<IB", len(body) + 1, status) + body)
            stdout.flush()
            if op == CLOSE:
                return
    except Violation as e:
        print(f"{adapter.name} adapter: protocol violation by bloomlab: {e}", file=sys.stderr)
        sys.exit(3)
    except BrokenPipeError:
        return
