"""``check``: runs ``bloomlab conform`` on a Python class and returns its typed verdicts."""

import inspect
import json
import math
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field

PLANS = ("quick", "full")
CLAUSES = (
    "no-false-negatives",
    "promised-rate",
    "theory",
    "key-families",
    "scale",
    "over-fill",
    "accepts-valid-input",
    "bad-input",
    "speed",
)
REQUIRED = ("create", "insert", "query")
# bloomlab's exit statuses (`bloomlab conform --help`).
_CONFORMS, _BROKEN, _BAD_INPUT, _INTERRUPTED = 0, 1, 2, 130
# Lines of bloomlab's stderr quoted when it fails.
_TAIL = 30


class BloomlabError(Exception):
    """bloomlab could not check the filter: it is missing, refused the arguments, the adapter
    could not start, or the run was interrupted. No verdict exists (a broken clause is not an
    error: it is a ``Result`` whose ``assert_conforms`` fails)."""


@dataclass(frozen=True)
class Verdict:
    """One clause's verdict: ``outcome`` is "holds", "broken", "n/a" or "undecided"."""

    clause: str
    outcome: str
    figure: str
    evidence: tuple
    reproduce: str

    @property
    def broken(self):
        return self.outcome == "broken"


@dataclass(frozen=True)
class Conformance:
    """The verdicts on one subject at its promised (n, p); ``raw`` is bloomlab's JSON object
    (rate points with their counts, speed)."""

    subject: str
    version: str
    n: int
    p: float
    seed: int
    verdicts: tuple
    raw: dict = field(repr=False, compare=False)

    def verdict(self, clause):
        """The verdict on ``clause`` (a name of ``CLAUSES``); KeyError if it did not run."""
        for v in self.verdicts:
            if v.clause == clause:
                return v
        ran = ", ".join(v.clause for v in self.verdicts)
        raise KeyError(f"clause {clause!r} did not run (ran: {ran})")

    @property
    def broken(self):
        return [v for v in self.verdicts if v.broken]


@dataclass(frozen=True)
class Result:
    """What ``bloomlab conform`` found: the conformances, its verdict table as it printed it
    (``table``), its exit status and the command it ran."""

    conformances: tuple
    table: str
    exit_status: int
    command: tuple

    @property
    def broken(self):
        """Every broken verdict, of every subject."""
        return [v for c in self.conformances for v in c.broken]

    @property
    def conforms(self):
        """No clause broken (undecided and n/a verdicts are not failures)."""
        return not self.broken

    def assert_conforms(self):
        """Raises AssertionError with bloomlab's verdict table (each broken clause with its
        evidence and the command that reproduces it) unless no clause is broken."""
        __tracebackhide__ = True  # pytest shows the failure at the caller's line, not here
        if not self.conforms:
            clauses = ", ".join(v.clause for v in self.broken)
            raise AssertionError(f"bloomlab conform: broken: {clauses}\n{self.table}")

    def __str__(self):
        return self.table


def find_bloomlab():
    """The ``bloomlab`` command: $BLOOMLAB if set, else the one installed beside this Python
    (the wheel's, even in a venv that is not activated), else the first on PATH."""
    named = os.environ.get("BLOOMLAB")
    if named:
        if not (os.path.isfile(named) and os.access(named, os.X_OK)):
            raise BloomlabError(f"BLOOMLAB={named!r} is not an executable file")
        return named
    exe = "bloomlab.exe" if os.name == "nt" else "bloomlab"
    schemes = [sysconfig.get_path("scripts")]
    try:
        schemes.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    except KeyError:
        pass
    for scripts in schemes:
        if scripts:
            path = os.path.join(scripts, exe)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    found = shutil.which("bloomlab")
    if found:
        return found
    raise BloomlabError(
        "no bloomlab command: `pip install bloomlab` installs it beside this Python "
        f"({schemes[0]}), or set BLOOMLAB to its path"
    )


def _about(filter_class, name, version, growable, static, supports):
    """What the adapter says in HELLO: the caller's words, else the class's, else defaults."""
    missing = [m for m in REQUIRED if not callable(getattr(filter_class, m, None))]
    if missing:
        raise TypeError(
            f"{filter_class.__qualname__} lacks {', '.join(missing)}: a filter class needs "
            "create(n, p), insert(keys) and query(keys)"
        )
    declared = getattr(filter_class, "capabilities", None)
    if declared is None:
        caps = []
        if callable(getattr(filter_class, "serialize", None)) and callable(
            getattr(filter_class, "deserialize", None)
        ):
            caps.append("serialize")
        if callable(getattr(filter_class, "stats", None)):
            caps.append("stats")
    else:
        caps = list(declared)
    for cap, wanted in (("growable", growable), ("static", static)):
        if wanted is None:
            wanted = bool(getattr(filter_class, cap, False)) or cap in caps
        if wanted and cap not in caps:
            caps.append(cap)
        if not wanted and cap in caps:
            caps.remove(cap)
    if supports is None:
        supports = getattr(filter_class, "supports", None)
    if supports is not None:
        supports = _check_supports(supports)
    if version is None:
        version = getattr(filter_class, "version", None)
    if version is None:
        module = sys.modules.get(filter_class.__module__)
        version = getattr(module, "__version__", "unversioned")
    return {
        "name": name or getattr(filter_class, "name", None) or f"python/{filter_class.__qualname__}",
        "version": str(version),
        "language": getattr(filter_class, "language", "python"),
        "capabilities": caps,
        "supports": supports,
    }


def _check_supports(supports):
    """``{"n": [lo, hi], "p": [lo, hi]}`` (either key optional), checked before bloomlab runs."""
    if not isinstance(supports, dict) or not set(supports) <= {"n", "p"} or not supports:
        raise ValueError(
            f"supports = {supports!r} is invalid: it must be a dict with the keys 'n' and/or "
            "'p', each an inclusive [low, high] range"
        )
    out = {}
    for key, rng in supports.items():
        try:
            lo, hi = rng
        except (TypeError, ValueError):
            raise ValueError(f"supports[{key!r}] = {rng!r} is invalid: it must be [low, high]")
        if key == "n":
            ok = all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi))
            ok = ok and 1 <= lo <= hi
            allowed = "whole numbers with 1 <= low <= high"
        else:
            ok = all(isinstance(v, (int, float)) and math.isfinite(v) for v in (lo, hi))
            ok = ok and 0 < lo <= hi < 1
            allowed = "rates with 0 < low <= high < 1"
        if not ok:
            raise ValueError(f"supports[{key!r}] = {rng!r} is invalid: it must be {allowed}")
        out[key] = [lo, hi]
    return out


def _locate(filter_class):
    """How the adapter process finds the class: its module's name (imported with this process's
    sys.path) and its file (loaded directly when the name cannot be imported, e.g. __main__)."""
    qualname = filter_class.__qualname__
    if "<locals>" in qualname:
        raise TypeError(
            f"{qualname} is defined inside a function: define the filter class at module level, "
            "where the adapter process can import it"
        )
    try:
        source = inspect.getsourcefile(filter_class) or inspect.getfile(filter_class)
    except TypeError:
        source = None
    # The caller's sys.path less what the same interpreter has anyway (the standard library and
    # site-packages), so that the reproduce command bloomlab prints stays short.
    own = {os.path.abspath(p) for p in sysconfig.get_paths().values()}
    path = [os.path.abspath(p or os.curdir) for p in sys.path]
    return {
        "module": filter_class.__module__,
        "qualname": qualname,
        "file": os.path.abspath(source) if source else None,
        "path": [p for p in path if p not in own and not p.endswith((".zip", "lib-dynload"))],
    }


def _number(flag, value, ok, allowed):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not ok(value):
        raise ValueError(f"{flag} = {value!r} is invalid: it must be {allowed}")
    return [f"--{flag}", repr(value)]


def check(
    filter_class,
    plan="quick",
    *,
    name=None,
    version=None,
    growable=None,
    static=None,
    supports=None,
    n=None,
    p=None,
    seed=None,
    clauses=None,
    hunt=True,
    deadline=None,
    timeout=None,
    out=None,
    bloomlab=None,
    python=None,
):
    """Checks ``filter_class`` against the conformance suite and returns a ``Result``.

    ``plan``: "quick" (n = 10,000, seconds for a fast filter, under a minute for a pure-Python
    one) or "full" (n = 1,000,000; minutes). What the filter promises: ``growable=True`` if it
    grows past n keeping p (then held to p up to 64 n), ``static=True`` if it is built at the
    first query, ``supports={"n": [lo, hi], "p": [lo, hi]}`` the inclusive range it accepts
    (outside it a refusal is fine; inside it any error breaks accepts-valid-input). Each defaults
    to the class attribute of that name; ``name`` and ``version`` to the class's ``name`` and
    ``version`` (else ``python/<class>`` and its module's ``__version__``).

    ``n``, ``p``, ``seed``, ``clauses`` (names of ``CLAUSES``), ``hunt=False``, ``deadline`` and
    ``timeout`` (seconds) are bloomlab's flags of those names; ``out`` a directory for the full
    report (Markdown, PNG, JSON). ``bloomlab`` is the command (default ``find_bloomlab()``),
    ``python`` the interpreter the filter runs in (default this one).

    Raises ``BloomlabError`` when there is no verdict (bloomlab missing or refusing, the adapter
    not starting, an interrupt); a broken clause is a ``Result`` whose ``assert_conforms`` fails.
    """
    if os.environ.get("BLOOMLAB_CONFORM_ADAPTER"):
        raise BloomlabError(
            "check() was called while bloomlab's adapter process loaded the filter's module: "
            "call it from a test, or under `if __name__ == \"__main__\":` in a script"
        )
    if plan not in PLANS:
        raise ValueError(f"plan = {plan!r} is invalid: it must be one of {', '.join(PLANS)}")
    if not inspect.isclass(filter_class):
        raise TypeError(
            f"check() takes the filter's class, not {type(filter_class).__name__} "
            f"{filter_class!r}: the suite builds a fresh instance for every filter it measures"
        )
    about = _about(filter_class, name, version, growable, static, supports)
    spec = _locate(filter_class)
    spec["about"] = about
    flags = [] if plan == "full" else ["--quick"]
    if n is not None:
        flags += _number("n", n, lambda v: isinstance(v, int) and 1 <= v <= 2**40, "in 1..=2^40")
    if p is not None:
        flags += _number("p", p, lambda v: 0 < v < 1, "in (0, 1)")
    if seed is not None:
        flags += _number("seed", seed, lambda v: isinstance(v, int) and 0 <= v < 2**64, "in 0..2^64")
    for flag, value in (("deadline", deadline), ("timeout", timeout)):
        if value is not None:
            flags += _number(flag, value, lambda v: 0 < v <= 86400, "seconds in (0, 86400]")
    for clause in clauses or ():
        if clause not in CLAUSES:
            raise ValueError(f"clause {clause!r} is unknown: the clauses are {', '.join(CLAUSES)}")
        flags += ["--clause", clause]
    if not hunt:
        flags.append("--no-hunt")
    if out is not None:
        flags += ["--out", os.fspath(out)]
    program = bloomlab or find_bloomlab()
    interpreter = python or sys.executable
    with tempfile.TemporaryDirectory(prefix="bloomlab-check-") as tmp:
        verdicts = os.path.join(tmp, "conformance.json")
        command = [program, "conform", *flags, "--json", verdicts, "--adapter", "--"]
        command += [interpreter, "-u", "-m", "bloomlab_conform.adapter", json.dumps(spec, separators=(",", ":"))]
        env = dict(os.environ)
        # The adapter process imports this very package, wherever it was imported from here.
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
        try:
            done = subprocess.run(
                command, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env
            )
        except OSError as e:
            raise BloomlabError(f"cannot run {program}: {e}") from e
        tail = "\n".join(done.stderr.splitlines()[-_TAIL:])
        if done.returncode not in (_CONFORMS, _BROKEN):
            what = {
                _BAD_INPUT: "refused the check (bad input, or the adapter could not start)",
                _INTERRUPTED: "was interrupted",
            }.get(done.returncode, f"failed with exit status {done.returncode}")
            raise BloomlabError(f"bloomlab conform {what}:\n{tail}")
        try:
            with open(verdicts, encoding="utf-8") as f:
                raw = json.load(f)
        except (OSError, ValueError) as e:
            raise BloomlabError(f"bloomlab conform wrote no readable verdicts ({e}):\n{tail}")
    result = Result(
        conformances=tuple(_conformance(c) for c in raw),
        table=done.stdout,
        exit_status=done.returncode,
        command=tuple(command),
    )
    if result.conforms != (done.returncode == _CONFORMS):
        raise BloomlabError(
            f"bloomlab conform exited {done.returncode} but its verdicts say "
            f"{'no clause' if result.conforms else 'a clause'} broken:\n{tail}"
        )
    return result


def _conformance(c):
    return Conformance(
        subject=c["subject"]["name"],
        version=c["subject"]["version"],
        n=c["n"],
        p=c["p"],
        seed=c["seed"],
        verdicts=tuple(
            Verdict(
                clause=v["clause"],
                outcome=v["outcome"],
                figure=v["figure"],
                evidence=tuple(v["evidence"]),
                reproduce=v["reproduce"],
            )
            for v in c["verdicts"]
        ),
        raw=c,
    )
