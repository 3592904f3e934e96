#!/usr/bin/env bash
# The FPR engine's figures for issue 30's three targets, at n = 1e6, p = 1e-4, one thread:
#   sbbf/xxh3 on url keys, sbbf/xxh3 on random-u64 keys, classic/xxh3/km/flat on random-u64 keys.
# For each, two kinds of run of the sweep binary, each run its own process, $RUNS of each (default 5;
# the report gives the median and the range):
#   - with timing: the row's queries_per_s_core (non-member queries per second on one core while
#     sampling, the time spent generating the group's shared keys excluded), printed per row;
#   - with --no-timing: the whole process's non-member queries per wall second (key generation,
#     inserts, member check and sampling included; no timing phase), from the sweep's summary line.
# Each row's non-member queries (what its sampling needed for the requested precision) are shown
# beside its members, since a whole process cannot query faster per wall second than its queries
# over the time its n inserts and n member checks take.
# Then the default sweep (README's main command, all threads) once: its rows, its wall time and
# whether its statistics are those of the committed reports/sweep/sweep.csv
# (scripts/compare-stats.py).
# The sweeps write to a temporary directory; the figures go to $REPORT (default
# reports/engine.md), written whole (temporary file, then rename) with the machine, the build and
# the revision. Build profile: $PROFILE (default measure, the fat-LTO opt-in profile; release
# works too). Run it on a quiet machine: the figures are speeds.
#
# Exit status: that of the first failing sweep or build, else 0.
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-measure}
REPORT=${REPORT:-reports/engine.md}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cargo build --profile "$PROFILE" --bin sweep
dir=$([ "$PROFILE" = dev ] && echo debug || echo "$PROFILE")
sweep="${CARGO_TARGET_DIR:-target}/$dir/sweep"
started=$(date -u '+%Y-%m-%d %H:%M UTC')
# A row's sampling takes a few milliseconds, so one run is at the mercy of the machine's state
# then: each row runs $RUNS times (default 5), each its own process, and the report gives the
# median with the range.
RUNS=${RUNS:-5}
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "engine-figures: RUNS must be a whole number of at least 1, got '$RUNS'" >&2; exit 2; }
# The median and the range of the numbers on stdin, one per line, divided by $1 (1e6 for rates
# per second, 1 for the sweep's own figures in millions): "M (lo-hi M)".
spread() {
    python3 -c '
import statistics, sys
v = sorted(float(x) / float(sys.argv[1]) for x in sys.stdin.read().split())
print("%.1fM (%.1f-%.1fM)" % (statistics.median(v), v[0], v[-1]))' "$1"
}
lines=()
common=(--n 1e6 --p 1e-4 --threads 1)
for target in "sbbf/xxh3 url" "sbbf/xxh3 random-u64" "classic/xxh3/km/flat random-u64"; do
    read -r filter keys <<<"$target"
    slug="$(echo "$filter-$keys" | tr '/' '_')"
    rates=() wholes=()
    for run in $(seq "$RUNS"); do
        "$sweep" --filters "$filter" --keys "$keys" "${common[@]}" --out "$OUT/$slug/timed" >/dev/null
        read -r members queries rate < <(python3 - "$OUT/$slug/timed/sweep.csv" <<'PY'
import csv, sys
(r,) = csv.DictReader(open(sys.argv[1]))
print(r["n_inserted"], r["queries"], r["queries_per_s_core"])
PY
)
        rates+=("$rate")
        whole=$("$sweep" --filters "$filter" --keys "$keys" "${common[@]}" --no-timing \
            --out "$OUT/$slug/untimed" | sed -n 's/.*per wall second, whole run: \([0-9.]*\)M.*/\1/p')
        [ -n "$whole" ] || { echo "engine-figures: no whole-run rate in the output of $filter on $keys" >&2; exit 1; }
        wholes+=("$whole")
    done
    per_core=$(printf '%s\n' "${rates[@]}" | spread 1e6)
    whole=$(printf '%s\n' "${wholes[@]}" | spread 1)
    printf '%-24s %-11s %s members, %s queries: queries/s/core %s; whole process, queries per wall second %s\n' \
        "$filter" "$keys" "$members" "$queries" "$per_core" "$whole"
    lines+=("| \`$filter\` | $keys | $members | $queries | $per_core | $whole |")
done
# The default sweep, as README runs it (all threads), compared with the committed rows.
"$sweep" --out "$OUT/default" >"$OUT/default.log"
default=$(sed -n 's/^\([0-9]* rows in [0-9.]* s\) (seed \([0-9]*\), \([a-z0-9]*\) threads).*per wall second, whole run: \([^ ]*\).*/\1, seed \2, \3 threads; non-member queries per wall second, whole run: \4/p' "$OUT/default.log")
[ -n "$default" ] || { echo "engine-figures: no summary line in the default sweep's output" >&2; exit 1; }
if python3 scripts/compare-stats.py reports/sweep/sweep.csv "$OUT/default/sweep.csv" >"$OUT/compare.log"; then
    same="identical to the committed [reports/sweep/sweep.csv](sweep/sweep.csv) (\`scripts/compare-stats.py\`)"
else
    same="**not** identical to the committed reports/sweep/sweep.csv: $(tail -1 "$OUT/compare.log")"
fi
echo "default sweep: $default; statistics $same"
mkdir -p "$(dirname "$REPORT")"
part=$(mktemp "$(dirname "$REPORT")/.engine.XXXXXX")
{
    echo "# The FPR engine at n = 1e6, p = 1e-4, one thread"
    echo
    echo "Generated by \`scripts/engine-figures.sh\` (PROFILE=$PROFILE). Do not edit by hand."
    echo
    echo "- Machine: $(scripts/cpu-model.sh), $(nproc) cores; $(rustc --version)."
    echo "- Revision: $(git describe --always --dirty); run started $started."
    echo
    echo "Each row ran $RUNS times, each run its own process: the median, with the range in brackets."
    echo "*queries/s/core*: the sweep's \`queries_per_s_core\` column, non-member queries per second on"
    echo "one core while sampling. *Whole process*: all non-member queries over the wall time of a"
    echo "\`--no-timing\` run of the same row (key generation, fill and member check included)."
    echo "*members* and *non-member queries*: the row's \`n_inserted\` and \`queries\` (the queries its"
    echo "sampling needed for the requested precision); a row that queries fewer keys than it inserts"
    echo "and checks cannot query faster per wall second than its queries over its fill and check."
    echo
    echo "| filter | keys | members | non-member queries | queries/s/core | whole process, queries per wall second |"
    echo "| --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${lines[@]}"
    echo
    echo "## The default sweep"
    echo
    echo "README's main command after its build (\`sweep\` with no options, $PROFILE build): $default."
    echo "Statistics $same."
} >"$part"
mv "$part" "$REPORT"
echo "wrote $REPORT"
