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
# (scripts/compare-stats.py). Then where its time goes, $SWEEP_RUNS times each (default 3): the
# default sweep, its statistics alone (`--no-timing`, all threads) and its statistics on one
# thread (`--no-timing --threads 1`: the work, in core-seconds, that the threads share), and each
# of its groups of rows (key set and members, as the sweep groups them, read from the default
# run's own CSV) alone on one thread without timing. The statistics cannot take less wall time
# than their one-thread work over the machine's cores, and the timing phases run with the other
# cores idle (the timing columns measure one row alone), so the sum of the two is a floor for the
# default sweep on this machine whatever its scheduling.
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
SWEEP_RUNS=${SWEEP_RUNS:-3}
for v in RUNS SWEEP_RUNS; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "engine-figures: $v must be a whole number of at least 1, got '${!v}'" >&2; exit 2; }
done
# The median and the range of the numbers on stdin, one per line, divided by $1 (1e6 for rates
# per second, 1 for the sweep's own figures in millions and for seconds), with the unit $2
# (default M): "M (lo-hi M)", or with " s", "M s (lo-hi s)".
spread() {
    python3 -c '
import statistics, sys
v = sorted(float(x) / float(sys.argv[1]) for x in sys.stdin.read().split())
u = sys.argv[2]
print("%.1f%s (%.1f-%.1f%s)" % (statistics.median(v), u, v[0], v[-1], u))' "$1" "${2:-M}"
}
# The median of the numbers on stdin, one per line, to 0.1 (the sweep's seconds are to 0.1 s, and
# spread prints its medians so): the report's arithmetic (the floor, its terms, the groups' sum)
# then uses the figures the report shows. Printed as Python's float it was not: the median of an
# even count is a mean, e.g. 62.599999999999994 for 62.5 and 62.7.
median() { python3 -c 'import statistics, sys; print("%.1f" % statistics.median(float(x) for x in sys.stdin.read().split()))'; }
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

# Where the default sweep's time goes. `seconds ARGS...`: the sweep's own "N rows in S s" figure
# (planning to the last row; the reports' writing excluded) for one run of `sweep ARGS`. It runs
# in a command substitution, so a failing sweep exits it with the sweep's status, which the
# assignment that called it passes to `set -e`.
seconds() {
    "$sweep" "$@" --out "$OUT/parts" >"$OUT/parts.log" || exit $?
    local s
    s=$(sed -n 's/^[0-9]* rows in \([0-9.]*\) s .*/\1/p' "$OUT/parts.log")
    [ -n "$s" ] || { echo "engine-figures: no summary line in the output of sweep $*" >&2; exit 1; }
    echo "$s"
}
full=() untimed=() one=()
for run in $(seq "$SWEEP_RUNS"); do
    full+=("$(seconds)")
    untimed+=("$(seconds --no-timing)")
    one+=("$(seconds --no-timing --threads 1)")
done
cores=$(nproc)
full_m=$(printf '%s\n' "${full[@]}" | median)
untimed_m=$(printf '%s\n' "${untimed[@]}" | median)
one_m=$(printf '%s\n' "${one[@]}" | median)
full_s=$(printf '%s\n' "${full[@]}" | spread 1 " s")
untimed_s=$(printf '%s\n' "${untimed[@]}" | spread 1 " s")
one_s=$(printf '%s\n' "${one[@]}" | spread 1 " s")
# The default run's groups (key set, n, overfill: the sweep's (key set, members) groups), each
# with its filters and p values, from its CSV: one line "keys n overfill filters p rows" each.
python3 - "$OUT/default/sweep.csv" >"$OUT/groups" <<'PY'
import csv, sys
groups = {}
for r in csv.DictReader(open(sys.argv[1])):
    g = groups.setdefault((r["key_set"], r["n"], r["overfill"]), ([], [], [0]))
    for seen, value in ((g[0], r["filter"]), (g[1], r["p"])):
        if value not in seen:
            seen.append(value)
    g[2][0] += 1
for (keys, n, overfill), (filters, ps, rows) in groups.items():
    print(keys, n, overfill, ",".join(filters), ",".join(ps), rows[0])
PY
group_lines=() group_medians=()
while read -r keys n overfill filters ps rows; do
    times=()
    for run in $(seq "$SWEEP_RUNS"); do
        times+=("$(seconds --filters "$filters" --keys "$keys" --n "$n" --p "$ps" --overfill "$overfill" --no-timing --threads 1)")
    done
    group_medians+=("$(printf '%s\n' "${times[@]}" | median)")
    group_lines+=("| $keys | $n | $overfill | $rows | $(printf '%s\n' "${times[@]}" | spread 1 " s") |")
done <"$OUT/groups"
group_sum=$(printf '%s\n' "${group_medians[@]}" | python3 -c 'import sys; print("%.1f" % sum(float(x) for x in sys.stdin.read().split()))')
floor=$(python3 -c "print('%.1f' % ($one_m / $cores + max(0.0, $full_m - $untimed_m)))")
echo "default sweep: $full_s; statistics alone $untimed_s, on one thread $one_s; floor $floor s"
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
    echo
    echo "## Where the default sweep's time goes"
    echo
    echo "Each figure is the sweep's own \"rows in\" time (planning to the last row, to 0.1 s), $SWEEP_RUNS runs each"
    echo "(median, with the range), $PROFILE build, $cores cores."
    echo
    echo "| run | what it does | time |"
    echo "| --- | --- | --- |"
    echo "| \`sweep\` | the default sweep: each group's statistics on all threads, then its timing phase, one row at a time with the other cores idle | $full_s |"
    echo "| \`sweep --no-timing\` | the statistics alone, on all threads | $untimed_s |"
    echo "| \`sweep --no-timing --threads 1\` | the statistics on one thread: their work in core-seconds | $one_s |"
    echo
    echo "The statistics cannot take less wall time than their work over $cores cores"
    echo "($one_m / $cores s), and the timing phases, which measure each row with nothing else running,"
    echo "add what the first run takes over the second ($full_m - $untimed_m s): whatever the"
    echo "scheduling, the default sweep cannot finish in less than **$floor s** on this machine with this"
    echo "code. Shortening it further means less work per row (the table below says where the work is)."
    echo
    echo "Each group of the default sweep (key set and members, as the sweep groups its rows) run alone on"
    echo "one thread without timing, each group generating its own keys (median of $SWEEP_RUNS, with the range);"
    echo "the groups sum to $group_sum s:"
    echo
    echo "| key set | n | overfill | rows | one thread, no timing |"
    echo "| --- | --- | --- | --- | --- |"
    printf '%s\n' "${group_lines[@]}"
} >"$part"
mv "$part" "$REPORT"
echo "wrote $REPORT"
