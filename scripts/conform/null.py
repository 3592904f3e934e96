#!/usr/bin/env python3
"""The null adapter: keeps nothing, answers "absent" to every query.

It measures what the protocol and Python cost per key, so a library's own speed can be read
beside it. It is not a filter: it fails the no-false-negatives clause by design.
"""

import os
import sys

# The protocol is the bloomlab_conform package's (crates/conform/python), as the wheel ships it;
# no __pycache__ is written into the source tree (CI checks that tests leave it as it was).
sys.dont_write_bytecode = True
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, "..", "..", "crates", "conform", "python"))
from bloomlab_conform import protocol  # noqa: E402


class Null:
    name = "python/null"
    version = "1"
    language = "python"
    capabilities = []

    def create(self, n, p):
        pass

    def insert(self, keys):
        pass

    def query(self, keys):
        return [False] * len(keys)


if __name__ == "__main__":
    protocol.serve(Null())
