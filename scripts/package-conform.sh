#!/usr/bin/env bash
# Builds what filter authors install (issue 65) into DIR (default target/package):
#   bloomlab-<version>-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
#       the `bloomlab` command (crates/tool, without the `scenario` feature's databases) and the
#       `bloomlab_conform` Python package (crates/conform/python), built by maturin
#   bloomlab-conform-<version>.tgz     the npm package (crates/conform/node), by `npm pack`
#   wheelhouse/                        the pinned wheels the author tests need (pytest and its
#                                      dependencies), so that scripts/check-packages.sh installs
#                                      with no index at all
# The wheel's binary is built for any x86_64 CPU (-C target-cpu=x86-64, not the workspace's
# target-cpu=native) into target/wheel, a target directory of its own (other flags, other
# artifacts). With --native it is built for this CPU into the workspace's target directory
# instead, with the test build's features, reusing the release build of `cargo test --workspace
# --release` (what CI does: about 20 s instead of some 3 minutes); such a wheel runs on this
# machine's CPU only: never hand it out.
# maturin comes from PyPI into a project-local venv (target/package-tools), pinned in
# crates/conform/python/requirements-build.txt.
#
# Exit status: 0 built, 2 a tool is missing, the registry cannot be reached or a build failed
# (the message names which and the log).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: scripts/package-conform.sh [--native] [--out DIR]"
native=
out="$root/target/package"
while [ $# -gt 0 ]; do
    case "$1" in
        --native) native=1; shift ;;
        --out) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; out=$2; shift 2 ;;
        -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "package-conform: unknown argument '$1'; $usage" >&2; exit 2 ;;
    esac
done
fail() { echo "package-conform: $*" >&2; exit 2; }
need() { command -v "$1" >/dev/null 2>&1 || fail "$1 is missing: $2"; }
need python3 "install python3 and python3-venv"
need npm "install nodejs and npm"
need cargo "install Rust (rustup)"
py="$root/crates/conform/python"
tools="$root/target/package-tools"
mkdir -p "$out" "$tools" || fail "cannot create $out"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
log="$out/package.log"
: > "$log"

# --- maturin, pinned, in a venv of its own -------------------------------------------------------
stamp=$(sha256sum "$py/requirements-build.txt" | cut -d' ' -f1)
if [ "$(cat "$tools/.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$tools" && python3 -m venv "$tools" >>"$log" 2>&1 ||
        fail "python3 -m venv failed (apt-get install python3-venv); see $log"
    "$tools/bin/python" -m pip install --disable-pip-version-check --no-input -q \
        -r "$py/requirements-build.txt" >>"$log" 2>&1 ||
        fail "pip could not install $(grep -v '^#' "$py/requirements-build.txt") (is PyPI reachable?); see $log"
    echo "$stamp" > "$tools/.stamp"
fi

# --- the wheel -------------------------------------------------------------------------------------
rm -f "$out"/bloomlab-*.whl
started=$(date +%s)
if [ -n "$native" ]; then
    # The test build's features too (the `scenario` feature, off in pyproject.toml): with them the
    # dependencies resolve exactly as `cargo test --workspace --release` built them, and only
    # bloomlab-tool is compiled again (without them, some 100 crates were, 117 s in CI).
    build=(env "$tools/bin/maturin" build --release --features scenario --out "$out")
else
    build=(env RUSTFLAGS="-C target-cpu=x86-64" CARGO_TARGET_DIR="$root/target/wheel" "$tools/bin/maturin" build --release --out "$out")
fi
(cd "$py" && "${build[@]}") >>"$log" 2>&1 || fail "maturin build failed; see $log"
wheel=$(ls "$out"/bloomlab-*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || fail "maturin wrote no wheel into $out; see $log"
echo "wheel: $wheel ($(du -k "$wheel" | cut -f1) KiB, built in $(( $(date +%s) - started )) s)"

# --- the npm package ---------------------------------------------------------------------------------
rm -f "$out"/bloomlab-conform-*.tgz
(cd "$root/crates/conform/node" && npm pack --silent --pack-destination "$out") >>"$log" 2>&1 ||
    fail "npm pack failed; see $log"
tarball=$(ls "$out"/bloomlab-conform-*.tgz 2>/dev/null | head -1)
[ -n "$tarball" ] || fail "npm pack wrote no tarball into $out; see $log"
echo "npm package: $tarball ($(du -k "$tarball" | cut -f1) KiB)"

# --- the author tests' wheels, for an install with no index ------------------------------------------
mkdir -p "$out/wheelhouse"
while read -r pin; do
    case "$pin" in '' | '#'*) continue ;; esac
    file=${pin%%==*}; file=${file//-/_}-${pin##*==}-
    ls "$out/wheelhouse/$file"* >/dev/null 2>&1 && continue
    "$tools/bin/python" -m pip download --disable-pip-version-check --no-input -q --no-deps \
        --only-binary :all: -d "$out/wheelhouse" "$pin" >>"$log" 2>&1 ||
        fail "pip could not download $pin (is PyPI reachable?); see $log"
done < "$py/requirements-test.txt"
echo "wheelhouse: $(ls "$out/wheelhouse" | wc -l) wheels for the author tests ($out/wheelhouse)"
