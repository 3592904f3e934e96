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
import os
import struct
import sys

from rbloom import Bloom

# The protocol is the bloomlab_conform package's (crates/conform/python), as the wheel ships it;
# no __pycache__ is written into the source tree (CI checks that tests leave it as it was).
sys.dont_write_bytecode = True
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "..", "crates", "conform", "python"))
from bloomlab_conform import protocol  # noqa: E402


def _unused_hash(_key):
    return 0


class Rbloom:
    name = "python/rbloom"
    version = importlib.metadata.version("rbloom")
    language = "python"
    capabilities = ["stats"]

    def __init__(self):
        self.filter = None
        self.params = None

    def _built(self):
        # protocol.py only knows that some CREATE succeeded; a later one that failed left none.
        if self.filter is None:
            raise RuntimeError("no filter: the last CREATE or DESERIALIZE failed")
        return self.filter

    def create(self, n, p):
        self.filter = None
        self.filter = Bloom(expected_items=n, false_positive_rate=p)
        self.params = (n, p)

    def insert(self, keys):
        add = self._built().add
        for key in keys:
            add(key)

    def query(self, keys):
        f = self._built()
        return [key in f for key in keys]

    def stats(self):
        bits = self._built().size_in_bits
        twin = Bloom(*self.params, _unused_hash)
        if twin.size_in_bits != bits:
            raise RuntimeError(f"twin has {twin.size_in_bits} bits, the filter {bits}")
        (hashes,) = struct.unpack_from("<Q", twin.save_bytes(), 0)
        # The bit array is rounded up to whole bytes (the save's size).
        return {"memory_bytes": (bits + 7) // 8,
                "layout": {"layout": "classic", "bits": bits, "hashes": hashes}}


if __name__ == "__main__":
    try:
        protocol.serve(Rbloom())
    except Exception as e:  # noqa: BLE001 - what escapes serve is bloomlab breaking the protocol
        print(f"{Rbloom.name} adapter: protocol violation by bloomlab: {type(e).__name__}: {e}",
              file=sys.stderr)
        sys.exit(3)
