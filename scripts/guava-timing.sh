#!/usr/bin/env bash
# Times bloomlab's Guava layout (`classic/murmur3/mitz64/flat`) against Guava 31.1 itself on
# Java 17 (the system jar), on the same string keys, in one run: the Java half
# (scripts/java/GuavaTiming.java) starts the Rust half (examples/guava_peer.rs) and the two time
# their inserts and lookups part by part, alternating, after warming the JVM up. Writes
# reports/jvm/guava_vs_bloomlab.json, which `cargo run --release --bin bench-table` renders as the
# "Against the JVM" section of reports/bloom_vs_hashset.md.
#
# Usage: scripts/guava-timing.sh [N [P [WARMUP [ROUNDS [OUT]]]]]
#   defaults: N = 1000000 string keys, P = 0.01, WARMUP = 10 rounds, ROUNDS = 15, OUT as above.
# Takes about a minute on 2 cores (the peer's build aside: the `measure` profile, fat LTO, as the
# benches are built, so that the Rust half is timed as criterion times it).
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-1000000}
P=${2:-0.01}
WARMUP=${3:-10}
ROUNDS=${4:-15}
OUT=${5:-reports/jvm/guava_vs_bloomlab.json}

JAR=/usr/share/java/guava.jar
if ! command -v javac >/dev/null 2>&1 || [ ! -f "$JAR" ]; then
    echo "guava-timing: javac or $JAR missing (scripts/guava-crosscheck.sh installs them)" >&2
    exit 2
fi

cargo build --profile measure -q --example guava_peer
PEER="${CARGO_TARGET_DIR:-target}/measure/examples/guava_peer"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# The jar's annotations refer to error-prone classes that are not installed: javac warns, harmlessly.
javac -nowarn -cp "$JAR" -d "$WORK" scripts/java/GuavaTiming.java 2>&1 |
    grep -v -e 'DoNotMock' -e '^1 warning$' || true
[ -f "$WORK/GuavaTiming.class" ] || { echo "guava-timing: javac failed" >&2; exit 2; }

GUAVA_VERSION=$(dpkg-query -W -f='${Version}' libguava-java 2>/dev/null || echo unknown)
# A fixed heap, so that the collector does not resize it between rounds.
JVM_FLAGS="-Xms2g -Xmx2g"
# shellcheck disable=SC2086
java $JVM_FLAGS -Drevision="$(git describe --always --dirty)" -Dguava.version="$GUAVA_VERSION" \
    -Djvm.flags="$JVM_FLAGS" -cp "$JAR:$WORK" GuavaTiming "$PEER" "$N" "$P" "$WARMUP" "$ROUNDS" "$OUT"
