#!/usr/bin/env bash
# The quick plan's false alarms over many seeds (issue 63's target): runs the clauses a correct
# filter must never fail (no-false-negatives with its round trips, promised-rate, over-fill,
# accepts-valid-input, each with the hunt) on the given subjects at seeds 1..SEEDS, and prints for
# each subject how many seeds broke which clause, with the commands of any break.
#
#   scripts/conform-seeds.sh [SEEDS] SUBJECT...      (default 20 seeds; SUBJECT as in --list)
#
# Uses target/release/bloomlab (cargo build --release --bin bloomlab first). Writes one JSON per
# seed under a temporary directory it removes.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=20
if [[ ${1:-} =~ ^[0-9]+$ ]]; then seeds=$1; shift; fi
(( $# > 0 )) || { echo "usage: $0 [SEEDS] SUBJECT..." >&2; exit 2; }
bin=target/release/bloomlab
[ -x "$bin" ] || { echo "$bin not found: run cargo build --release --bin bloomlab" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
subjects=(); for s in "$@"; do subjects+=(--subject "$s"); done
start=$(date +%s)
for seed in $(seq 1 "$seeds"); do
    rc=0
    "$bin" conform --quick --seed "$seed" --jobs 2 "${subjects[@]}" \
        --clause no-false-negatives --clause promised-rate --clause over-fill \
        --clause accepts-valid-input --json "$tmp/$seed.json" >/dev/null 2>"$tmp/$seed.err" || rc=$?
    # 0: nothing broken; 1: some clause broken (counted below); anything else is a failed run.
    (( rc <= 1 )) || { echo "seed $seed: exit $rc" >&2; tail -5 "$tmp/$seed.err" >&2; exit 1; }
    echo "seed $seed done ($(( $(date +%s) - start )) s)" >&2
done
python3 - "$tmp" "$seeds" <<'PY'
import json, os, sys, collections
tmp, seeds = sys.argv[1], int(sys.argv[2])
broken = collections.defaultdict(collections.Counter)
commands = []
names = []
for seed in range(1, seeds + 1):
    for c in json.load(open(os.path.join(tmp, f"{seed}.json"))):
        name = c["subject"]["name"]
        if name not in names:
            names.append(name)
        for v in c["verdicts"]:
            if v["outcome"] == "broken":
                broken[name][v["clause"]] += 1
                commands.append(f"{name} seed {seed}: {v['clause']}: {v['figure']}\n    {v['reproduce']}")
print(f"| subject | seeds | broken (clause: seeds) |")
print(f"|---|---|---|")
for name in names:
    b = ", ".join(f"{k}: {n}" for k, n in sorted(broken[name].items())) or "none"
    print(f"| {name} | {seeds} | {b} |")
for line in commands:
    print(line)
PY
echo "$(( $(date +%s) - start )) s on $(scripts/cpu-model.sh)" >&2
