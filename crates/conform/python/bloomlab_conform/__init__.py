"""Hold a Python filter to bloomlab's conformance suite from its own tests.

    from bloomlab_conform import check
    from mylib import MyFilter

    def test_my_filter_conforms():
        check(MyFilter, plan="quick").assert_conforms()

``MyFilter`` is a class with ``create(n, p)``, ``insert(keys)`` and ``query(keys)`` (keys are
``bytes``), and optionally ``stats()``, ``serialize()`` and ``deserialize(data)``: see
``bloomlab_conform.protocol``. ``check`` runs the ``bloomlab`` command this wheel installs
(``bloomlab conform --adapter ... --json``), which builds the class in a child process of its own,
so a filter that crashes or hangs fails the check instead of the test run.

``bloomlab_conform.protocol.serve(adapter)`` is the protocol itself, for an adapter script run by
``bloomlab conform --adapter -- python3 my_adapter.py``.
"""

__all__ = [
    "BloomlabError",
    "Conformance",
    "Result",
    "Verdict",
    "check",
    "find_bloomlab",
]

# `check` and its types load on first use: an adapter process imports this package for
# `protocol` alone, once per filter the suite builds, and should not pay for subprocess & co.
_CHECK_NAMES = frozenset(__all__)


def __getattr__(name):
    if name in _CHECK_NAMES:
        from . import checking

        return getattr(checking, name)
    raise AttributeError(f"module 'bloomlab_conform' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_CHECK_NAMES))
