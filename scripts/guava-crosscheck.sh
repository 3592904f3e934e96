#!/usr/bin/env bash
# Cross-checks bloomlab's Guava filters against Guava itself (the system jar, Guava 31.1 on Java 17).
#
# For each combination (funnel, strategy, n, p, keys) it builds the filter in Java and in Rust
# (`bloomlab guava build`) from the same key file and checks that:
#   1. the two files are byte-identical;
#   2. each side reads the other's file: Java readFrom + writeTo of Rust's file gives the same bytes,
#      and Rust reads Java's file and writes it back (`bloomlab guava union J J`) unchanged;
#   3. mightContain answers agree on a probe sample (members and non-members) in all four
#      pairings (Java/Rust code x Java/Rust file), and every member probed is found.
# Then it checks Guava's putAll against `bloomlab guava union`, and runs `inspect` and `audit` on
# a file Java wrote (and on a damaged copy, which audit must flag with exit code 1).
# Prints PASS/FAIL per combination; exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

JAR=/usr/share/java/guava.jar
if ! command -v javac >/dev/null 2>&1 || [ ! -f "$JAR" ]; then
    echo "javac or $JAR missing: installing default-jdk-headless libguava-java"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq &&
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jdk-headless libguava-java ||
        { echo "FAIL: could not install Java and Guava"; exit 2; }
fi

cargo build --release -q -p bloomlab-tool --bin bloomlab || { echo "FAIL: cargo build"; exit 2; }
BLOOMLAB="${CARGO_TARGET_DIR:-target}/release/bloomlab"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/classes"
# The jar's annotations refer to error-prone classes that are not installed: javac warns, harmlessly.
javac -nowarn -cp "$JAR" -d "$WORK/classes" scripts/java/GuavaCrosscheck.java 2>&1 |
    grep -v -e 'DoNotMock' -e '^1 warning$' || true
[ -f "$WORK/classes/GuavaCrosscheck.class" ] || { echo "FAIL: javac"; exit 2; }
java_cc() { java -Xss4m -cp "$JAR:$WORK/classes" GuavaCrosscheck "$@"; }

# Deterministic key files. Members and non-members are disjoint by construction.
gen_long() { seq -- "$1" "$(($1 + $2 - 1))"; }                      # FROM COUNT
gen_int() {                                                           # FROM COUNT: i*odd mod 2^32
    awk -v from="$1" -v c="$2" 'BEGIN { for (i = from; i < from + c; i++)
        printf "%d\n", (i * 2654435761) % 4294967296 - 2147483648 }'
}
gen_utf8() {                                                          # PREFIX COUNT (line 1 empty)
    awk -v pre="$1" -v c="$2" 'BEGIN { if (pre == "m") print "";
        for (i = 1; i < c; i++) printf "%s-%d-clé-日本-🚀\n", pre, i }'
}
gen_bytes() {                                                         # FIRSTBYTE COUNT SEED
    awk -v first="$1" -v c="$2" -v seed="$3" 'BEGIN { srand(seed);
        if (first == "00") print "";
        for (i = 1; i < c; i++) { s = first; len = int(rand() * 40);
            for (j = 0; j < len; j++) s = s sprintf("%02x", int(rand() * 256)); print s } }'
}
gen_keys() {                                                          # FUNNEL ROLE COUNT
    case "$1/$2" in
        long/members) gen_long -1000 "$3" ;;
        long/non) gen_long 5000000000 "$3" ;;
        int/members) gen_int 0 "$3" ;;
        int/non) gen_int 1000000 "$3" ;;
        utf8/members) gen_utf8 m "$3" ;;
        utf8/non) gen_utf8 x "$3" ;;
        bytes/members) gen_bytes 00 "$3" 7 ;;
        bytes/non) gen_bytes ff "$3" 11 ;;
    esac
}

failures=0
fail() { echo "FAIL $name: $*"; failures=$((failures + 1)); }

# combo FUNNEL STRATEGY N P MEMBER_COUNT
combo() {
    local funnel=$1 strategy=$2 n=$3 p=$4 count=$5
    name="$funnel/$strategy n=$n p=$p keys=$count"
    local d="$WORK/$funnel-$strategy-$n-$p-$count"
    mkdir -p "$d"
    gen_keys "$funnel" members "$count" >"$d/members"
    gen_keys "$funnel" non 20000 >"$d/non"
    { head -n 1000 "$d/members"; cat "$d/non"; } >"$d/probe"
    local probed_members
    probed_members=$(head -n 1000 "$d/members" | wc -l)

    java_cc build "$funnel" "$strategy" "$n" "$p" "$d/members" "$d/java.bin" ||
        { fail "Java build failed"; return; }
    "$BLOOMLAB" guava build --funnel "$funnel" --strategy "$strategy" --n "$n" --p "$p" \
        --keys "$d/members" --out "$d/rust.bin" >/dev/null || { fail "bloomlab build failed"; return; }
    cmp -s "$d/java.bin" "$d/rust.bin" ||
        { fail "files differ: $(cmp "$d/java.bin" "$d/rust.bin" 2>&1 | head -1)"; return; }

    java_cc query "$funnel" "$d/rust.bin" "$d/probe" "$d/java_on_rust" "$d/rust_by_java.bin" ||
        { fail "Java could not read Rust's file"; return; }
    java_cc query "$funnel" "$d/java.bin" "$d/probe" "$d/java_on_java" "$d/java_by_java.bin" ||
        { fail "Java could not read its own file"; return; }
    "$BLOOMLAB" guava query "$d/java.bin" --funnel "$funnel" --keys "$d/probe" >"$d/rust_on_java" ||
        { fail "Rust could not read Java's file"; return; }
    "$BLOOMLAB" guava query "$d/rust.bin" --funnel "$funnel" --keys "$d/probe" >"$d/rust_on_rust" ||
        { fail "Rust could not read its own file"; return; }
    "$BLOOMLAB" guava union "$d/java.bin" "$d/java.bin" --out "$d/java_by_rust.bin" >/dev/null ||
        { fail "Rust could not rewrite Java's file"; return; }
    cmp -s "$d/rust_by_java.bin" "$d/rust.bin" || { fail "Java readFrom+writeTo changed Rust's file"; return; }
    cmp -s "$d/java_by_rust.bin" "$d/java.bin" || { fail "Rust read+write changed Java's file"; return; }
    local a
    for a in java_on_rust rust_on_java rust_on_rust; do
        cmp -s "$d/java_on_java" "$d/$a" ||
            { fail "mightContain answers differ ($a vs java_on_java): $(cmp "$d/java_on_java" "$d/$a" 2>&1)"; return; }
    done
    local missed positives probes non_count
    missed=$(head -n "$probed_members" "$d/java_on_java" | grep -c '^0$')
    [ "$missed" -eq 0 ] || { fail "$missed of $probed_members probed members not found"; return; }
    probes=$(wc -l <"$d/probe")
    positives=$(tail -n +"$((probed_members + 1))" "$d/java_on_java" | grep -c '^1$')
    non_count=$(wc -l <"$d/non")
    echo "PASS $name: identical $(wc -c <"$d/java.bin")-byte files (k = $(od -An -tu1 -j1 -N1 "$d/java.bin" | tr -d ' ')), each side reads the other's, mightContain agrees on $probes probes ($probed_members members all found, $positives/$non_count non-members positive)"
    LAST_DIR=$d
}

# n = 1 and p = 0.5 (1 bit -> 1 word), then every funnel and both strategies; n > 2^24 with all
# 2^24 + 1 keys; p = 1e-6; n = 1 with 3 keys (Guava's n = 0 filter, below); an overfilled filter.
combo long mitz64 1 0.5 1
combo utf8 mitz32 1 0.000001 1
combo int mitz32 1 0.1 3
N1_DIR=$LAST_DIR

# n = 0: Guava's create treats it as 1; bloomlab refuses it (exit 2, naming --n, as every count
# flag refuses 0), and its n = 1 filter is Guava's n = 0 filter byte for byte.
name="int/mitz32 n=0 p=0.1 keys=3"
d="$WORK/n0"
mkdir -p "$d"
if java_cc build int mitz32 0 0.1 "$N1_DIR/members" "$d/java.bin"; then
    rc=0
    "$BLOOMLAB" guava build --funnel int --strategy mitz32 --n 0 --p 0.1 \
        --keys "$N1_DIR/members" --out "$d/rust.bin" >/dev/null 2>"$d/err" || rc=$?
    if [ "$rc" -ne 2 ] || ! grep -q -- '--n = "0"' "$d/err" || [ -e "$d/rust.bin" ]; then
        fail "bloomlab guava build --n 0: exit $rc, wanted 2 naming --n and no file: $(head -c 300 "$d/err")"
    elif ! cmp -s "$d/java.bin" "$N1_DIR/java.bin"; then
        fail "Guava's n = 0 filter differs from its n = 1 filter"
    else
        echo "PASS $name: bloomlab refuses --n 0 (exit 2); Guava's n = 0 file equals the n = 1 file both sides wrote"
    fi
else
    fail "Java build failed"
fi
combo long mitz64 16777217 0.01 16777217
combo int mitz64 10000 0.000001 10000
combo utf8 mitz64 5000 0.01 5000
UTF8_DIR=$LAST_DIR
combo bytes mitz64 2000 0.03 2000
combo long mitz32 100000 0.001 100000
combo bytes mitz32 300000 0.5 300000
combo utf8 mitz64 1000 0.01 3000
combo long mitz32 33554433 0.01 200000

# Guava's putAll against `bloomlab guava union`.
name="union utf8/mitz64 n=10000 p=0.01"
d="$WORK/union"
mkdir -p "$d"
gen_keys utf8 members 4000 | head -n 2000 >"$d/a"
gen_keys utf8 members 4000 | tail -n 2000 >"$d/b"
if java_cc union utf8 10000 0.01 "$d/a" "$d/b" "$d/java.bin" &&
    "$BLOOMLAB" guava build --funnel utf8 --n 10000 --p 0.01 --keys "$d/a" --out "$d/ra.bin" >/dev/null &&
    "$BLOOMLAB" guava build --funnel utf8 --n 10000 --p 0.01 --keys "$d/b" --out "$d/rb.bin" >/dev/null &&
    "$BLOOMLAB" guava union "$d/ra.bin" "$d/rb.bin" --out "$d/rust.bin" >/dev/null; then
    if cmp -s "$d/java.bin" "$d/rust.bin"; then
        echo "PASS $name: Guava a.putAll(b) and bloomlab guava union write identical files"
    else
        fail "union files differ"
    fi
else
    fail "could not build the union"
fi

# inspect and audit on a file Java wrote.
name="inspect+audit on Java's utf8/mitz64 file"
echo "--- bloomlab guava inspect (file written by Guava) ---"
if "$BLOOMLAB" guava inspect "$UTF8_DIR/java.bin"; then
    echo "--- bloomlab guava audit (file written by Guava) ---"
    if "$BLOOMLAB" guava audit "$UTF8_DIR/java.bin" --funnel utf8 --members "$UTF8_DIR/members" \
        --non-members "$UTF8_DIR/non" --confidence 0.999; then
        # Zero 64 bytes in the middle of the bit array: some members must go missing.
        cp "$UTF8_DIR/java.bin" "$WORK/damaged.bin"
        dd if=/dev/zero of="$WORK/damaged.bin" bs=1 seek=1000 count=64 conv=notrunc status=none
        echo "--- bloomlab guava audit (damaged copy: must exit 1) ---"
        "$BLOOMLAB" guava audit "$WORK/damaged.bin" --funnel utf8 --members "$UTF8_DIR/members" \
            --non-members "$UTF8_DIR/non"
        rc=$?
        head -c 100 "$UTF8_DIR/java.bin" >"$WORK/truncated.bin"
        echo "--- bloomlab guava inspect (truncated copy: must exit 2) ---"
        "$BLOOMLAB" guava inspect "$WORK/truncated.bin"
        rc2=$?
        if [ "$rc" -eq 1 ] && [ "$rc2" -eq 2 ]; then
            echo "PASS $name: inspect and audit read Guava's file; a damaged copy fails the audit (exit 1), a truncated one is rejected (exit 2)"
        else
            fail "damaged copy: audit exit $rc (want 1), truncated copy: inspect exit $rc2 (want 2)"
        fi
    else
        fail "audit of Java's file failed"
    fi
else
    fail "inspect of Java's file failed"
fi

echo "--- what Guava 31.1's readFrom does with corrupt input (for the record) ---"
java_cc corrupt "$UTF8_DIR/java.bin"

if [ "$failures" -ne 0 ]; then
    echo "guava-crosscheck: FAIL ($failures failures)"
    exit 1
fi
echo "guava-crosscheck: PASS"
