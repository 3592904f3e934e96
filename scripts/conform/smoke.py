"""A quick driver for one adapter, independent of bloomlab's Rust client: starts
`scripts/conform/adapter NAME`, builds a filter for (n, p), inserts n seeded random 8-byte keys,
checks every member is found, measures the false-positive rate on `queries` non-members, and
round-trips SERIALIZE/DESERIALIZE where declared. For developing an adapter; the suite itself is
`bloomlab conform` (crates/conform).

usage: python3 scripts/conform/smoke.py NAME [n] [p] [queries]
Exit status: 0 every check passed, 1 a check failed, 2 bad arguments or the adapter did not start.
"""

import json
import os
import random
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


class Adapter:
    def __init__(self, name):
        self.proc = subprocess.Popen([os.path.join(HERE, "adapter"), name],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def call(self, op, payload=b""):
        self.proc.stdin.write(struct.pack("<IB", len(payload) + 1, op) + payload)
        self.proc.stdin.flush()
        head = self.proc.stdout.read(4)
        if len(head) != 4:
            raise SystemExit(f"adapter exited (status {self.proc.wait()})")
        (size,) = struct.unpack("<I", head)
        frame = self.proc.stdout.read(size)
        return frame[0], frame[1:]

    def ok(self, op, payload=b""):
        status, body = self.call(op, payload)
        if status != 0:
            raise RuntimeError(f"op {op}: status {status}: {body.decode(errors='replace')}")
        return body


def key_list(keys):
    return struct.pack("<I", len(keys)) + b"".join(struct.pack("<I", len(k)) + k for k in keys)


def query(adapter, keys):
    bits = adapter.ok(4, key_list(keys))
    return [bool(bits[i >> 3] >> (i & 7) & 1) for i in range(len(keys))]


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    name = argv[1]
    n = int(argv[2]) if len(argv) > 2 else 10_000
    p = float(argv[3]) if len(argv) > 3 else 0.01
    queries = int(argv[4]) if len(argv) > 4 else 100_000
    rng = random.Random(0x0B10)
    keys = [rng.getrandbits(64).to_bytes(8, "little") for _ in range(n + queries)]
    if len(set(keys)) != len(keys):
        raise SystemExit("seeded keys repeat; pick another seed")
    members, others = keys[:n], keys[n:]
    a = Adapter(name)
    hello = json.loads(a.ok(1, b"bloomlab-conform" + struct.pack("<H", 1)))
    print(f"hello: {hello}")
    a.ok(2, struct.pack("<Qd", n, p))
    for i in range(0, n, 4096):
        a.ok(3, key_list(members[i:i + 4096]))
    failed = 0
    missed = sum(not x for i in range(0, n, 4096) for x in query(a, members[i:i + 4096]))
    fp = sum(x for i in range(0, queries, 4096) for x in query(a, others[i:i + 4096]))
    stats = json.loads(a.ok(5)) if "stats" in hello["capabilities"] else None
    print(f"n={n} p={p}: false negatives {missed}; false positives {fp}/{queries} = "
          f"{fp / queries:.5f} ({fp / queries / p:.2f} x p); stats {stats}")
    failed += missed > 0
    if "serialize" in hello["capabilities"]:
        data = a.ok(6)
        b = Adapter(name)
        b.ok(1, b"bloomlab-conform" + struct.pack("<H", 1))
        b.ok(7, data)
        same = query(b, others[:4096]) == query(a, others[:4096])
        lost = sum(not x for x in query(b, members[:4096]))
        print(f"serialize: {len(data)} bytes; answers identical after the round trip: {same}; "
              f"members lost: {lost}")
        failed += (not same) + (lost > 0)
        b.ok(8)
    a.ok(8)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
