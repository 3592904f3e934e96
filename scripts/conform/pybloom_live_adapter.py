"""Conformance adapter for pybloom-live's BloomFilter (PyPI `pybloom-live`, pinned in
requirements.txt). Start it with `scripts/conform/adapter pybloom-live`.

What the library does, reported as is:
- `BloomFilter(capacity=n, error_rate=p)` is partitioned: `num_slices` = ceil(log2(1/p)) slices of
  `bits_per_slice` bits, one probe in each (declared as `partitioned`).
- It refuses adds once its count of new-looking keys passes the capacity: `IndexError:
  BloomFilter is at capacity`, answered ERROR (keys of the batch before that one stay inserted).
- For a key that is not `str` it hashes `str(key).encode()`, so `bytes` keys are hashed through
  their repr (`b'...'`), which is injective: distinct keys stay distinct, only longer.
- `tofile`/`fromfile` persist it (header, then the bit array).
"""

import importlib.metadata
import io
import os
import sys

from pybloom_live import BloomFilter

# The protocol is the bloomlab_conform package's (crates/conform/python), as the wheel ships it;
# no __pycache__ is written into the source tree (CI checks that tests leave it as it was).
sys.dont_write_bytecode = True
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "..", "crates", "conform", "python"))
from bloomlab_conform import protocol  # noqa: E402


class PybloomLive:
    name = "python/pybloom-live"
    version = importlib.metadata.version("pybloom-live")
    language = "python"
    capabilities = ["serialize", "stats"]

    def __init__(self):
        self.filter = None

    def _built(self):
        # protocol.py only knows that some CREATE succeeded; a later one that failed left none.
        if self.filter is None:
            raise RuntimeError("no filter: the last CREATE or DESERIALIZE failed")
        return self.filter

    def create(self, n, p):
        self.filter = None
        self.filter = BloomFilter(capacity=n, error_rate=p)

    def insert(self, keys):
        add = self._built().add
        for key in keys:
            add(key)

    def query(self, keys):
        f = self._built()
        return [key in f for key in keys]

    def stats(self):
        f = self._built()
        return {
            "memory_bytes": f.bitarray.nbytes,
            "layout": {"layout": "partitioned", "bits": f.num_slices * f.bits_per_slice,
                       "hashes": f.num_slices},
        }

    def serialize(self):
        out = io.BytesIO()
        self._built().tofile(out)
        return out.getvalue()

    def deserialize(self, data):
        self.filter = None
        self.filter = BloomFilter.fromfile(io.BytesIO(data))


if __name__ == "__main__":
    try:
        protocol.serve(PybloomLive())
    except Exception as e:  # noqa: BLE001 - what escapes serve is bloomlab breaking the protocol
        print(f"{PybloomLive.name} adapter: protocol violation by bloomlab: {type(e).__name__}: {e}",
              file=sys.stderr)
        sys.exit(3)
