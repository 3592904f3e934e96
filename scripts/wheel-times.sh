#!/usr/bin/env bash
# Issue 65's target, measured: from a fresh venv, install the built wheel (with no index) and run
# the quick check of a Python exact set (crates/conform/python/tests/test_author.py's
# test_exact_set_conforms, under pytest) in at most 60 s. RUNS times (default 3), one at a time;
# each run times its three steps: the venv, `pip install --no-index` of the wheel and the pinned
# pytest wheels, and the pytest run. Also the same quick check of the Node exact set
# (crates/conform/node/test/exact-set.js) through the packed npm package, for the CI recipe's
# stated time. Writes Markdown to stdout (machine, revision, the wheel's name and size); progress
# on stderr. Run it on a quiet machine, from a clean tree, after
#     scripts/package-conform.sh             (the portable wheel, into target/package)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs=${1:-3}
[[ "$runs" =~ ^[1-9][0-9]?$ ]] || { echo "wheel-times: RUNS='$runs' must be a whole number in 1..=99" >&2; exit 2; }
dir=target/package
wheel=$(ls "$dir"/bloomlab-*.whl 2>/dev/null | head -1)
tarball=$(ls "$dir"/bloomlab-conform-*.tgz 2>/dev/null | head -1)
[ -n "$wheel" ] && [ -n "$tarball" ] || { echo "wheel-times: no wheel or npm tarball in $dir: run scripts/package-conform.sh" >&2; exit 2; }
pins=$(grep -v -e '^#' -e '^$' crates/conform/python/requirements-test.txt)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset PYTHONPATH NODE_PATH BLOOMLAB VIRTUAL_ENV
export PYTHONNOUSERSITE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

echo "# The wheel, installed fresh, and the quick check of an exact set"
echo
echo "Machine: $(scripts/cpu-model.sh), $(nproc) cores; revision $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!reports' || echo ' (dirty)'); $(date -u +%Y-%m-%d)."
echo "Wheel: \`$(basename "$wheel")\`, $(du -k "$wheel" | cut -f1) KiB ($(stat -c %s "$wheel") bytes; the \`bloomlab\` binary in it: $(unzip -l "$wheel" | awk '/scripts\/bloomlab$/ { print $1 }') bytes, stripped)."
echo "npm package: \`$(basename "$tarball")\`, $(stat -c %s "$tarball") bytes."
echo
echo "Each run, one at a time: \`python3 -m venv\`, \`pip install --no-index --find-links wheelhouse\`"
echo "of the wheel and pytest, then \`pytest test_author.py::test_exact_set_conforms\` (the quick plan,"
echo "hunt included, of \`check(ExactSet)\`); then, for Node, \`npm install --offline\` of the tarball"
echo "into a fresh folder and \`node --test\` of the same check of the Node exact set. Target: venv +"
echo "install + quick check at most 60 s."
echo
echo "| run | venv (s) | pip install (s) | quick check, pytest (s) | total (s) | npm install (s) | quick check, node --test (s) |"
echo "|---|---|---|---|---|---|---|"
totals=()
for i in $(seq "$runs"); do
    echo "run $i of $runs ..." >&2
    rm -rf "$tmp/run" && mkdir -p "$tmp/run/py" "$tmp/run/node/test"
    cp crates/conform/python/tests/test_author.py "$tmp/run/py/"
    t0=$(now)
    python3 -m venv "$tmp/run/venv"
    t1=$(now)
    # shellcheck disable=SC2086
    "$tmp/run/venv/bin/pip" install -q --no-index --find-links "$dir/wheelhouse" "$wheel" $pins
    t2=$(now)
    (cd "$tmp/run/py" && "$tmp/run/venv/bin/pytest" -q -p no:cacheprovider test_author.py::test_exact_set_conforms >"$tmp/run/pytest.out" 2>&1) ||
        { cat "$tmp/run/pytest.out" >&2; echo "wheel-times: the exact set's quick check failed" >&2; exit 1; }
    t3=$(now)
    cp crates/conform/node/test/exact-set.js "$tmp/run/node/test/"
    cat > "$tmp/run/node/test/exact.test.js" <<'JS'
const test = require('node:test');
const { check } = require('bloomlab-conform');
test('exact set', async () => (await check(require.resolve('./exact-set'), { plan: 'quick' })).assertConforms());
JS
    echo '{"name": "t", "private": true}' > "$tmp/run/node/package.json"
    t4=$(now)
    (cd "$tmp/run/node" && npm install --offline --no-audit --no-fund --silent --cache "$tmp/npm-cache" "$root/$tarball")
    t5=$(now)
    (cd "$tmp/run/node" && PATH="$tmp/run/venv/bin:$PATH" node --test test/exact.test.js >"$tmp/run/node.out" 2>&1) ||
        { cat "$tmp/run/node.out" >&2; echo "wheel-times: the Node exact set's quick check failed" >&2; exit 1; }
    t6=$(now)
    total=$(secs "$t0" "$t3")
    totals+=("$total")
    printf '| %d | %s | %s | %s | %s | %s | %s |\n' "$i" "$(secs "$t0" "$t1")" "$(secs "$t1" "$t2")" \
        "$(secs "$t2" "$t3")" "$total" "$(secs "$t4" "$t5")" "$(secs "$t5" "$t6")"
done
sorted=$(printf '%s\n' "${totals[@]}" | sort -n)
median=$(printf '%s\n' "$sorted" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
echo
echo "Total (venv + install + quick check): median $median s, from $(printf '%s\n' "$sorted" | head -1) to $(printf '%s\n' "$sorted" | tail -1) s over $runs runs; target at most 60 s: $(printf '%s\n' "$sorted" | tail -1 | awk '{ print ($1 <= 60) ? "met by every run" : "missed by at least one run" }')."
