#!/usr/bin/env bash
# Installs what scripts/package-conform.sh built (DIR, default target/package) where a filter
# author would, with no index and nothing of this repository but the built files, and runs the
# author tests (issue 65):
#   Python  a fresh venv in a temp dir; `pip install --no-index` of the wheel and the pinned
#           pytest wheels beside it; crates/conform/python/tests/*.py copied into the temp dir:
#           test_check.py must pass whole, test_author.py must end "1 failed, 1 passed" with the
#           lossy set's broken no-false-negatives verdict in the failure
#   Node    a fresh folder; `npm install --offline` of the packed tarball; `bloomlab` from the
#           venv's bin/ on PATH; crates/conform/node/test/*.js copied in: check.test.js must
#           pass, author.test.js must end with 1 pass and 1 fail, the failure showing the verdict
# The Python author tests run beside the Node steps (each quick check keeps about one core busy).
# Prints each step with its time; the temp dirs are removed on exit.
# Exit status: 0 every check as expected, 1 one was not (its output is shown), 2 missing input.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/target/package}
fail() { echo "check-packages: $*" >&2; exit 1; }
wheel=$(ls "$dir"/bloomlab-*.whl 2>/dev/null | head -1)
tarball=$(ls "$dir"/bloomlab-conform-*.tgz 2>/dev/null | head -1)
if [ -z "$wheel" ] || [ -z "$tarball" ] || [ ! -d "$dir/wheelhouse" ]; then
    echo "check-packages: no wheel, npm tarball or wheelhouse in $dir: run scripts/package-conform.sh first" >&2
    exit 2
fi
tmp=$(mktemp -d)
# (On an early failure the Python author tests still running are waited for before their dir goes.)
trap 'wait; rm -rf "$tmp"' EXIT
t0=$(date +%s.%N)
lap() { awk -v a="$t0" -v b="$(date +%s.%N)" -v what="$1" 'BEGIN { printf "  %-58s %6.1f s\n", what, b - a }'; t0=$(date +%s.%N); }
# expect_lossy_failure WHAT OUT RC PATTERN...: an author test run (WHAT, its output in OUT, its exit
# status RC) ended as it must: exit 1, every PATTERN (an extended regex) in OUT, and the lossy set's
# broken no-false-negatives verdict, which is then shown as the author reads it.
expect_lossy_failure() {
    local what=$1 out=$2 rc=$3 pattern
    shift 3
    for pattern in "$@" 'no-false-negatives  broken'; do
        if [ "$rc" -ne 1 ] || ! grep -Eq "$pattern" "$out"; then
            cat "$out"
            fail "$what: expected exit 1 and a line matching '$pattern' (the exact set passing, the lossy set's no-false-negatives broken); got exit $rc"
        fi
    done
    grep -m1 -A1 'no-false-negatives  broken' "$out"
}

# Nothing from the caller's environment or this repository may help the installs.
unset PYTHONPATH NODE_PATH BLOOMLAB VIRTUAL_ENV
export PYTHONNOUSERSITE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

echo "python: $wheel"
python3 -m venv "$tmp/venv" || fail "python3 -m venv failed"
lap "fresh venv"
"$tmp/venv/bin/pip" install -q --no-index --find-links "$dir/wheelhouse" "$wheel" \
    $(grep -v -e '^#' -e '^$' "$root/crates/conform/python/requirements-test.txt") ||
    fail "pip install --no-index of the wheel and the pytest wheels failed"
lap "pip install --no-index (the wheel, pytest)"
mkdir "$tmp/py" && cp "$root"/crates/conform/python/tests/*.py "$tmp/py/"
cd "$tmp/py" || fail "no temp dir"
where=$("$tmp/venv/bin/python" -c 'import bloomlab_conform; print(bloomlab_conform.__file__); print(bloomlab_conform.find_bloomlab())')
case "$where" in "$tmp/venv/"*"$tmp/venv/bin/bloomlab") ;; *) fail "bloomlab_conform or bloomlab not from the venv: $where" ;; esac
"$tmp/venv/bin/pytest" -q -p no:cacheprovider test_check.py > "$tmp/check.out" 2>&1 ||
    { cat "$tmp/check.out"; fail "pytest test_check.py failed"; }
tail -1 "$tmp/check.out"
lap "pytest test_check.py (passes)"
# The Python author tests run while the Node package is installed and tested: each quick check
# keeps about one core busy (bloomlab and the adapter answer in turn), and CI has two.
("$tmp/venv/bin/pytest" -q -p no:cacheprovider test_author.py > "$tmp/author.out" 2>&1; echo $? > "$tmp/author.rc") &
python_authors=$!
echo "  pytest test_author.py (exact set passes, lossy set fails): started beside the Node checks"

echo "node: $tarball"
mkdir "$tmp/node" && cd "$tmp/node" || fail "no temp dir"
echo '{"name": "author-tests", "private": true}' > package.json
npm install --offline --no-audit --no-fund --silent --cache "$tmp/npm-cache" "$tarball" ||
    fail "npm install --offline of $tarball failed"
lap "npm install --offline (the tarball)"
mkdir test && cp "$root"/crates/conform/node/test/*.js test/
export PATH="$tmp/venv/bin:$PATH"
node -e 'if (!require.resolve("bloomlab-conform").startsWith(process.cwd() + "/node_modules/")) process.exit(1)' ||
    fail "bloomlab-conform does not resolve to the installed tarball"
node --test test/check.test.js > "$tmp/check-node.out" 2>&1 ||
    { cat "$tmp/check-node.out"; fail "node --test check.test.js failed"; }
grep -E '^# (pass|fail)' "$tmp/check-node.out" | tr '\n' ' '; echo
lap "node --test check.test.js (passes)"
node --test test/author.test.js > "$tmp/author-node.out" 2>&1
rc=$?
lap "node --test author.test.js (exact set passes, lossy set fails)"
grep -E '^# (pass|fail)' "$tmp/author-node.out" | tr '\n' ' '; echo
expect_lossy_failure "node --test author.test.js" "$tmp/author-node.out" "$rc" \
    '^# pass 1$' '^# fail 1$' '^not ok 2 - the lossy set conforms'

wait "$python_authors"
rc=$(cat "$tmp/author.rc")
echo "python: pytest test_author.py: $(tail -1 "$tmp/author.out" | tr -d '=')"
grep -E '^FAILED' "$tmp/author.out"
expect_lossy_failure "pytest test_author.py" "$tmp/author.out" "$rc" \
    '^=* *1 failed, 1 passed' '^FAILED test_author.py::test_lossy_set_conforms'
echo "check-packages: as expected (Python and Node: the exact set conforms, the lossy set fails with its verdict)"
