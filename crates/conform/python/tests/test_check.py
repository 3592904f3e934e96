"""bloomlab_conform's own behaviour (not an author's test): what check() refuses before running
bloomlab, what it declares for a class, and what a broken result looks like. Every test passes."""

import json
import os
import subprocess
import sys

import pytest

from bloomlab_conform import BloomlabError, check, find_bloomlab, protocol
from bloomlab_conform.checking import _about

from test_author import ExactSet, LossySet


class Growable(ExactSet):
    growable = True
    supports = {"n": [1, 10**9], "p": [1e-9, 0.5]}

    def serialize(self):
        return b"".join(sorted(self.keys))

    def deserialize(self, data):
        raise NotImplementedError


def test_capabilities_follow_the_class_and_the_arguments():
    about = _about(Growable, None, None, None, None, None)
    assert about["capabilities"] == ["serialize", "growable"]
    assert about["supports"] == {"n": [1, 10**9], "p": [1e-9, 0.5]}
    assert about["name"] == "python/Growable"
    off = _about(Growable, "mine", "2", False, True, {"p": [0.001, 0.1]})
    assert off["capabilities"] == ["serialize", "static"]
    assert (off["name"], off["version"], off["supports"]) == ("mine", "2", {"p": [0.001, 0.1]})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"plan": "fast"}, "plan = 'fast' is invalid: it must be one of quick, full"),
        ({"n": 0}, "n = 0 is invalid: it must be in 1..=2^40"),
        ({"p": float("nan")}, "p = nan is invalid: it must be in (0, 1)"),
        ({"clauses": ["speed", "sped"]}, "clause 'sped' is unknown"),
        ({"supports": {"n": [0, 5]}}, "supports['n'] = [0, 5] is invalid"),
        ({"supports": {"k": [1, 2]}}, "supports = {'k': [1, 2]} is invalid"),
        ({"deadline": -1}, "deadline = -1 is invalid"),
    ],
)
def test_bad_arguments_are_refused_naming_the_value(kwargs, message):
    with pytest.raises(ValueError) as e:
        check(ExactSet, **kwargs)
    assert message in str(e.value)


def test_a_class_without_the_protocol_or_an_instance_is_refused():
    class NoQuery:
        def create(self, n, p):
            pass

        def insert(self, keys):
            pass

    with pytest.raises(TypeError, match="NoQuery lacks query"):
        check(NoQuery)
    with pytest.raises(TypeError, match="takes the filter's class"):
        check(ExactSet())


def test_a_class_defined_in_a_function_is_refused_before_bloomlab_runs():
    class Local(ExactSet):
        pass

    with pytest.raises(TypeError, match="define the filter class at module level"):
        check(Local)


def test_a_missing_bloomlab_is_named(monkeypatch):
    monkeypatch.setenv("BLOOMLAB", "/nonexistent/bloomlab")
    with pytest.raises(BloomlabError, match="/nonexistent/bloomlab"):
        find_bloomlab()


def test_the_installed_bloomlab_explains_itself():
    out = subprocess.run([find_bloomlab(), "conform", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "no-false-negatives" in out.stdout


def test_a_broken_clause_is_a_result_with_its_evidence():
    # One clause on the promised point: seconds, and the verdict is certain (3% of members lost).
    result = check(LossySet, clauses=["no-false-negatives"], hunt=False)
    assert not result.conforms and result.exit_status == 1
    (conformance,) = result.conformances
    verdict = conformance.verdict("no-false-negatives")
    assert verdict.broken and "missed" in verdict.figure
    assert "--adapter" in verdict.reproduce
    with pytest.raises(AssertionError) as e:
        result.assert_conforms()
    assert "broken: no-false-negatives" in str(e.value) and verdict.figure in str(e.value)


def test_an_adapter_that_cannot_load_its_class_is_an_error_with_its_message(tmp_path):
    module = tmp_path / "vanishing.py"
    module.write_text(
        "import os\n"
        "if os.environ.get('BLOOMLAB_TEST_CHILD'):\n"
        "    raise ImportError('only the parent may import me')\n"
        "class Gone:\n"
        "    def create(self, n, p): pass\n"
        "    def insert(self, keys): pass\n"
        "    def query(self, keys): return [False] * len(keys)\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        import vanishing
    finally:
        sys.path.remove(str(tmp_path))
    os.environ["BLOOMLAB_TEST_CHILD"] = "1"
    try:
        with pytest.raises(BloomlabError, match="only the parent may import me"):
            check(vanishing.Gone, clauses=["no-false-negatives"], hunt=False)
    finally:
        del os.environ["BLOOMLAB_TEST_CHILD"]


def test_the_adapter_speaks_hello_for_the_class():
    spec = {
        "module": "test_author",
        "qualname": "ExactSet",
        "file": None,
        "path": [os.path.dirname(os.path.abspath(__file__))],
        "about": _about(ExactSet, None, None, None, None, None),
    }
    hello = b"\x01bloomlab-conform\x01\x00"
    close = b"\x08"
    frames = b"".join(len(f).to_bytes(4, "little") + f for f in (hello, close))
    out = subprocess.run(
        [sys.executable, "-m", "bloomlab_conform.adapter", json.dumps(spec)],
        input=frames,
        capture_output=True,
    ).stdout
    length = int.from_bytes(out[:4], "little")
    assert out[4] == 0, out
    answer = json.loads(out[5 : 4 + length])
    assert answer["name"] == "python/ExactSet" and answer["capabilities"] == []


class GrowingSet(ExactSet):
    """An exact set declared growable, with a range: the suite is told both."""

    growable = True
    supports = {"n": [1, 10**8], "p": [1e-6, 0.5]}


def test_growable_and_the_supported_range_reach_bloomlab():
    result = check(GrowingSet, clauses=["over-fill"], hunt=False)
    (conformance,) = result.conformances
    subject = conformance.raw["subject"]
    assert subject["capabilities"]["growable"] is True
    assert subject["supports"] == {"n": [1, 10**8], "p": [1e-6, 0.5]}
    # A growable filter is filled to 64 times its n and held to its p.
    over_fill = conformance.verdict("over-fill")
    assert over_fill.outcome == "holds" and "64x" in over_fill.figure, over_fill
    result.assert_conforms()


class SerializableSet(ExactSet):
    """The exact set with the optional methods: its keys survive a round trip."""

    def serialize(self):
        return protocol.key_list(sorted(self.keys))

    def deserialize(self, data):
        self.keys = set(protocol.keys(data))

    def stats(self):
        return {"memory_bytes": sum(len(k) for k in self.keys), "layout": None}


class ForgetfulSerializer(SerializableSet):
    """Loses its longest keys when serialized: members missed only after a round trip."""

    def serialize(self):
        return protocol.key_list(sorted(k for k in self.keys if len(k) < 1000))


def test_the_optional_methods_are_used_and_a_lossy_round_trip_is_caught():
    kept = check(SerializableSet, clauses=["no-false-negatives"], hunt=False)
    (conformance,) = kept.conformances
    assert conformance.raw["subject"]["capabilities"]["serialize"] is True
    assert conformance.raw["subject"]["capabilities"]["stats"] is True
    evidence = conformance.verdict("no-false-negatives").evidence
    assert any("after round trip" in e for e in evidence), evidence
    kept.assert_conforms()
    lost = check(ForgetfulSerializer, clauses=["no-false-negatives"], hunt=False)
    verdict = lost.conformances[0].verdict("no-false-negatives")
    assert verdict.broken, verdict
    assert any("long (after round trip)" in e and " 0 of " not in e for e in verdict.evidence), verdict
