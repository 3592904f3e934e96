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
import sys

from pybloom_live import BloomFilter

from adapter_loop import serve


class PybloomLive:
    name = "python/pybloom-live"
    version = importlib.metadata.version("pybloom-live")
    capabilities = ["serialize", "stats"]

    def __init__(self):
        self.filter = None

    def create(self, n, p):
        self.filter = None
        self.filter = BloomFilter(capacity=n, error_rate=p)

    def insert(self, keys):
        add = self.filter.add
        for key in keys:
            add(key)

    def query(self, keys):
        f = self.filter
        return [key in f for key in keys]

    def stats(self):
        f = self.filter
        return {
            "memory_bytes": f.bitarray.nbytes,
            "layout": {"layout": "partitioned", "bits": f.num_slices * f.bits_per_slice,
                       "hashes": f.num_slices},
        }

    def serialize(self):
        out = io.BytesIO()
        self.filter.tofile(out)
        return out.getvalue()

    def deserialize(self, data):
        self.filter = None
        self.filter = BloomFilter.fromfile(io.BytesIO(data))


if __name__ == "__main__":
    sys.exit(serve(PybloomLive()))
