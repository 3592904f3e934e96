"""A filter author's conformance tests, as they would write them (README: "Check your own filter").

Two filters: an exact set, which conforms, and a lossy set, which forgets one key in 32 and so
breaks no-false-negatives. CI (scripts/check-packages.sh) runs this file with pytest in a fresh
venv where only the built wheel and pytest are installed, and expects exactly that: 1 passed,
1 failed, the failure showing the broken clause with its evidence.
"""

import zlib

from bloomlab_conform import check


class ExactSet:
    """Every key kept: no false positive, no false negative."""

    version = "1.0"

    def create(self, n, p):
        if n < 1:
            raise ValueError(f"n = {n} is invalid: it must be at least 1")
        if not 0.0 < p < 1.0:  # false for NaN too
            raise ValueError(f"p = {p} is invalid: it must be in (0, 1)")
        self.keys = set()

    def insert(self, keys):
        self.keys.update(keys)

    def query(self, keys):
        return [k in self.keys for k in keys]


class LossySet(ExactSet):
    """Forgets the keys whose CRC-32 is a multiple of 32: about 3% false negatives."""

    def insert(self, keys):
        self.keys.update(k for k in keys if zlib.crc32(k) % 32)


def test_exact_set_conforms():
    check(ExactSet, plan="quick").assert_conforms()


def test_lossy_set_conforms():
    check(LossySet, plan="quick").assert_conforms()
