#!/usr/bin/env bash
# The FPR engine's figures for issue 30's three targets, at n = 1e6, p = 1e-4, one thread:
#   sbbf/xxh3 on url keys, sbbf/xxh3 on random-u64 keys, classic/xxh3/km/flat on random-u64 keys.
# For each, two runs of the sweep binary, each its own process:
#   - with timing: the row's queries_per_s_core (non-member queries per second on one core while
#     sampling, the time spent generating the group's shared keys excluded), printed per row;
#   - with --no-timing: the whole process's non-member queries per wall second (key generation,
#     inserts, member check and sampling included; no timing phase), from the sweep's summary line.
# Reports go to $OUT/<target>/{timed,untimed} (default OUT=reports/engine; not committed: timings
# are only meaningful on a quiet machine). Build profile: $PROFILE (default measure, the fat-LTO
# opt-in profile; release works too).
#
# Exit status: that of the first failing sweep or build, else 0.
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-measure}
OUT=${OUT:-reports/engine}
cargo build --profile "$PROFILE" --bin sweep
dir=$([ "$PROFILE" = dev ] && echo debug || echo "$PROFILE")
sweep="target/$dir/sweep"
common=(--n 1e6 --p 1e-4 --threads 1)
for target in "sbbf/xxh3 url" "sbbf/xxh3 random-u64" "classic/xxh3/km/flat random-u64"; do
    read -r filter keys <<<"$target"
    slug="$(echo "$filter-$keys" | tr '/' '_')"
    "$sweep" --filters "$filter" --keys "$keys" "${common[@]}" --out "$OUT/$slug/timed" >/dev/null
    per_core=$(python3 - "$OUT/$slug/timed/sweep.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(" ".join("%.1fM" % (float(r["queries_per_s_core"]) / 1e6) for r in rows))
PY
)
    whole=$("$sweep" --filters "$filter" --keys "$keys" "${common[@]}" --no-timing \
        --out "$OUT/$slug/untimed" | sed -n 's/.*per wall second, whole run: \([^ ]*\).*/\1/p')
    printf '%-24s %-11s queries/s/core %-8s whole process, queries per wall second %s\n' \
        "$filter" "$keys" "$per_core" "$whole"
done
