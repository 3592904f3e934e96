#!/usr/bin/env python3
"""The reference adapter: an exact set of byte keys (no false positive, no false negative).

From a test, `bloomlab_conform.check(YourFilter)` needs no adapter script (README: "Check your
own filter"). For a script, copy this file: replace the set with your library's filter, keep the
method names, import `protocol` from the installed `bloomlab_conform` (`pip install bloomlab`),
and run `bloomlab conform --adapter -- python3 your_adapter.py` (bloomlab's own flags, such as
--quick, go before `--`).

It refuses bad input as the bad-input clause expects of a filter: `create` raises, naming the
value and the allowed range, for n = 0 and for p outside (0, 1) (NaN included), and
protocol.serve answers the exception with ERROR. An exact set could keep p = 0, but a filter
cannot; keep the checks your library does not make itself.
"""

import os
import sys

# The protocol is the bloomlab_conform package's (crates/conform/python), as the wheel ships it;
# no __pycache__ is written into the source tree (CI checks that tests leave it as it was).
sys.dont_write_bytecode = True
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "..", "crates", "conform", "python"))
from bloomlab_conform import protocol  # noqa: E402


class ExactSet:
    name = "python/exact-set"
    version = sys.version.split()[0]  # the "library" is Python's own set
    language = "python"
    capabilities = ["serialize", "stats"]

    def create(self, n, p):
        if n < 1:
            raise ValueError(f"n = {n} is invalid: it must be at least 1")
        if not 0.0 < p < 1.0:  # false for NaN too
            raise ValueError(f"p = {p} is invalid: it must be in the open interval (0, 1)")
        # Past those checks, an exact set keeps any number of keys at rate 0.
        self.keys = set()

    def insert(self, keys):
        self.keys.update(keys)

    def query(self, keys):
        return [k in self.keys for k in keys]

    def stats(self):
        return {"memory_bytes": sum(len(k) for k in self.keys), "layout": None}

    def serialize(self):
        return protocol.key_list(sorted(self.keys))

    def deserialize(self, data):
        self.keys = set(protocol.keys(data))


if __name__ == "__main__":
    protocol.serve(ExactSet())
