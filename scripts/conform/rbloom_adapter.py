"""Conformance adapter for rbloom's Bloom (PyPI `rbloom`, pinned in requirements.txt). Start it
with `scripts/conform/adapter rbloom`.

What the library does, reported as is:
- `Bloom(expected_items=n, false_positive_rate=p)` with its default hash, what users get: Python's
  built-in `hash()`, which for `bytes` is SipHash salted per process (the launcher fixes
  PYTHONHASHSEED=0 unless the caller sets it, so a run is reproducible). rbloom spreads that one
  64-bit hash over its k probes with a linear congruential generator.
- It cannot persist a filter that uses the built-in hash (`save_bytes` raises ValueError; the
  salt changes between processes, as its README says), so this adapter declares no `serialize`:
  persisting would need a custom hash, a different filter from the one users get.
- It exposes its size (`size_in_bits`) but not its hash count. k depends only on (n, p), and
  rbloom's documented byte format starts with k as a u64 (`save_bytes` is size_in_bits / 8 + 8
  bytes), so STATS reads k from the save of an empty twin built with the same (n, p) and a
  throwaway hash function.
"""

import importlib.metadata
import struct
import sys

from rbloom import Bloom

from adapter_loop import serve


def _unused_hash(_key):
    return 0


class Rbloom:
    name = "python/rbloom"
    version = importlib.metadata.version("rbloom")
    capabilities = ["stats"]

    def __init__(self):
        self.filter = None
        self.params = None

    def create(self, n, p):
        self.filter = None
        self.filter = Bloom(expected_items=n, false_positive_rate=p)
        self.params = (n, p)

    def insert(self, keys):
        add = self.filter.add
        for key in keys:
            add(key)

    def query(self, keys):
        f = self.filter
        return [key in f for key in keys]

    def stats(self):
        bits = self.filter.size_in_bits
        twin = Bloom(*self.params, _unused_hash)
        if twin.size_in_bits != bits:
            raise RuntimeError(f"twin has {twin.size_in_bits} bits, the filter {bits}")
        (hashes,) = struct.unpack_from("<Q", twin.save_bytes(), 0)
        # The bit array is rounded up to whole bytes (the save's size).
        return {"memory_bytes": (bits + 7) // 8,
                "layout": {"layout": "classic", "bits": bits, "hashes": hashes}}


if __name__ == "__main__":
    sys.exit(serve(Rbloom()))
