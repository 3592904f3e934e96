#!/usr/bin/env python3
"""A deliberately defective Python filter for the conformance suite's corpus (and its correct twin).

    python3 toy_bloom.py MODE      MODE: ok | throws-below-8 | loses-tail-bits

A classic Bloom filter over a bytearray (m bits, k probes by double hashing of one BLAKE2b
digest), with one defect switched on by MODE:
- ``throws-below-8``: ``create`` raises for n < 8 (a valid request the library refuses: the
  suite's accepts-valid-input clause);
- ``loses-tail-bits``: ``serialize`` writes ``m // 8`` whole bytes, dropping the last ``m % 8``
  bits, so members whose probes land there are lost after a round trip (no-false-negatives);
- ``ok``: neither (the twin that must break no clause).
It is never shipped as a subject: crates/conform/tests/corpus_python.rs drives it.
"""

import hashlib
import math
import os
import struct
import sys

# The protocol is the bloomlab_conform package's (crates/conform/python), as the wheel ships it;
# no __pycache__ is written into the source tree (CI checks that tests leave it as it was).
sys.dont_write_bytecode = True
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "..", "..", "crates", "conform", "python"))
from bloomlab_conform import protocol  # noqa: E402

MODES = ("ok", "throws-below-8", "loses-tail-bits")


class Toy:
    version = "test"
    language = "python"
    capabilities = ["serialize", "stats"]

    def __init__(self, mode):
        self.mode = mode
        self.name = f"corpus/python-{mode}"

    def create(self, n, p):
        if n < 1 or n > 1 << 32:
            raise ValueError(f"n = {n} is invalid: it must be from 1 to 2^32")
        if not 1e-12 <= p < 1.0:  # false for NaN too
            raise ValueError(f"p = {p} is invalid: it must be in [1e-12, 1)")
        if self.mode == "throws-below-8" and n < 8:
            raise RecursionError("maximum recursion depth exceeded while sizing the filter")
        self.m = max(1, math.ceil(n * -math.log(p) / math.log(2) ** 2))
        self.k = max(1, round(self.m / n * math.log(2)))
        self.bits = bytearray((self.m + 7) // 8)

    def _probes(self, key):
        d = hashlib.blake2b(key, digest_size=16).digest()
        h1, h2 = struct.unpack("<QQ", d)
        h2 |= 1
        m = self.m
        return [(h1 + i * h2) % m for i in range(self.k)]

    def insert(self, keys):
        bits = self.bits
        for key in keys:
            for i in self._probes(key):
                bits[i >> 3] |= 1 << (i & 7)

    def query(self, keys):
        bits = self.bits
        return [all(bits[i >> 3] >> (i & 7) & 1 for i in self._probes(key)) for key in keys]

    def stats(self):
        return {
            "memory_bytes": len(self.bits),
            "layout": {"layout": "classic", "bits": self.m, "hashes": self.k},
        }

    def serialize(self):
        kept = self.m // 8 if self.mode == "loses-tail-bits" else len(self.bits)
        return struct.pack("<QI", self.m, self.k) + bytes(self.bits[:kept])

    def deserialize(self, data):
        if len(data) < 12:
            raise ValueError(f"{len(data)} bytes: at least 12 expected")
        self.m, self.k = struct.unpack("<QI", data[:12])
        body = data[12:]
        self.bits = bytearray((self.m + 7) // 8)
        self.bits[: len(body)] = body


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in MODES:
        sys.exit(f"usage: toy_bloom.py MODE (one of {', '.join(MODES)})")
    protocol.serve(Toy(sys.argv[1]))
