#!/usr/bin/env python3
"""The reference adapter: an exact set of byte keys (no false positive, no false negative).

Copy this file to write an adapter for your own filter: replace the set with your library's
filter, keep the method names, and run `bloomlab conform --command "python3 your_adapter.py"`.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import protocol  # noqa: E402


class ExactSet:
    name = "python/exact-set"
    version = sys.version.split()[0]  # the "library" is Python's own set
    language = "python"
    capabilities = ["serialize", "stats"]

    def create(self, n, p):
        # An exact set keeps any number of keys at rate 0: n and p ask nothing of it.
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
