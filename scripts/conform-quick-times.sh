#!/usr/bin/env bash
# How long the quick plan (with its hunt) takes per subject, one subject at a time on a quiet
# machine: issue 63's targets (at most 10 s for an in-process filter of bloomlab's, at most 60 s
# for a Python adapter at about 1 us per key). Writes a Markdown table to stdout, naming the
# machine and the revision; progress on stderr.
#
#   scripts/conform-quick-times.sh [SUBJECT...]   (default: bloomlab's three flagships, fastbloom,
#                                                  python/exact-set, python/rbloom)
#
# Uses target/measure/bloomlab (cargo build --profile measure --bin bloomlab first).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/measure/bloomlab
[ -x "$bin" ] || { echo "$bin not found: run cargo build --profile measure --bin bloomlab" >&2; exit 2; }
(( $# > 0 )) || set -- bloomlab/sbbf/xxh3 bloomlab/blocked512/xxh3 bloomlab/classic/xxh3/km/flat \
    rust/fastbloom python/exact-set python/rbloom
echo "Quick plan (\`bloomlab conform --quick --subject S\`, hunt included), one subject at a time."
echo
echo "Machine: $(scripts/cpu-model.sh), $(nproc) cores; revision $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (dirty)')."
echo
echo "| subject | wall (s) | exit | broken clauses |"
echo "|---|---|---|---|"
for s in "$@"; do
    echo "timing $s ..." >&2
    json=$(mktemp)
    start=$(date +%s.%N)
    rc=0
    "$bin" conform --quick --subject "$s" --json "$json" >/dev/null 2>&1 || rc=$?
    end=$(date +%s.%N)
    broken=$(python3 -c 'import json,sys; print(", ".join(v["clause"] for c in json.load(open(sys.argv[1])) for v in c["verdicts"] if v["outcome"] == "broken") or "none")' "$json" 2>/dev/null || echo "(no JSON)")
    rm -f "$json"
    wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    printf '| %s | %s | %s | %s |\n' "$s" "$wall" "$rc" "$broken"
done
