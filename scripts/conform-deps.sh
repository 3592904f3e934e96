#!/usr/bin/env bash
# Installs the libraries the conformance suite measures through its process protocol, each pinned
# to an exact version, into project-local places only (never system-wide, never $HOME):
#   $BLOOMLAB_CONFORM_DEPS/venv   a Python venv with scripts/conform/requirements.txt (every
#                                 dependency pinned; pip install --no-deps, then pip check)
#   $BLOOMLAB_CONFORM_DEPS/node   npm ci of scripts/conform/node/package-lock.json (bloom-filters)
#   $BLOOMLAB_CONFORM_DEPS/java   scripts/conform/GuavaAdapter.java compiled against the system
#                                 Guava jar, which must be 31.1 (read from its manifest)
# $BLOOMLAB_CONFORM_DEPS defaults to target/conform-deps (relative to the repository's root).
# $BLOOMLAB_GUAVA_JAR overrides the jar (default /usr/share/java/guava.jar); it must still be 31.1.
#
# Idempotent: each part carries a stamp of its pins (scripts/conform/pins.sh); a part whose stamp
# matches is left alone, so a second run takes well under a second. A part whose pins changed is
# removed and installed again. Prints what it installed.
#
# Exit status: 0 installed (or already installed), 2 a tool is missing, the registry cannot be
# reached, or the Guava jar is not 31.1 (the message names which, and the package and version).
set -uo pipefail
# shellcheck source=conform/pins.sh
source "$(dirname "$0")/conform/pins.sh"

fail() { echo "conform-deps: $*" >&2; exit 2; }
need() { command -v "$1" >/dev/null 2>&1 || fail "$1 is missing: $2"; }
stamp() { conform_stamp "$1" > "$CONFORM_DEPS/$1/.bloomlab-stamp"; }
log="$CONFORM_DEPS/install.log"

mkdir -p "$CONFORM_DEPS" || fail "cannot create $CONFORM_DEPS"
: > "$log"

# --- Python: pybloom-live, rbloom and their dependencies -----------------------------------------
need python3 "install python3 and python3-venv (apt-get install python3 python3-venv)"
if conform_installed venv; then
    echo "python: up to date ($(grep -v -e '^#' -e '^$' "$CONFORM_SRC/requirements.txt" | tr '\n' ' '))"
else
    rm -rf "$CONFORM_DEPS/venv"
    python3 -m venv "$CONFORM_DEPS/venv" >>"$log" 2>&1 ||
        fail "python3 -m venv failed (apt-get install python3-venv); see $log"
    while read -r pin; do
        case "$pin" in '' | '#'*) continue ;; esac
        # One package at a time, so a failure names the package and version it could not get.
        "$CONFORM_DEPS/venv/bin/python" -m pip install --disable-pip-version-check --no-input \
            --no-deps -q "$pin" >>"$log" 2>&1 ||
            fail "pip could not install $pin (is PyPI reachable?); see $log"
        echo "python: installed $pin"
    done < "$CONFORM_SRC/requirements.txt"
    "$CONFORM_DEPS/venv/bin/python" -m pip check >>"$log" 2>&1 ||
        fail "pip check: the pinned Python packages do not fit together; see $log"
    stamp venv
fi

# --- Node: bloom-filters, exactly as package-lock.json pins it -----------------------------------
need node "install nodejs (apt-get install nodejs npm)"
need npm "install npm (apt-get install npm)"
if conform_installed node; then
    echo "node: up to date (bloom-filters==$(node_pin))"
else
    rm -rf "$CONFORM_DEPS/node"
    mkdir -p "$CONFORM_DEPS/node"
    cp "$CONFORM_SRC/node/package.json" "$CONFORM_SRC/node/package-lock.json" "$CONFORM_DEPS/node/"
    # npm ci installs exactly the lock file (integrity hashes checked) or fails; its cache stays
    # inside the install directory.
    (cd "$CONFORM_DEPS/node" && npm ci --no-audit --no-fund --cache "$CONFORM_DEPS/node/.npm-cache") \
        >>"$log" 2>&1 ||
        fail "npm ci could not install bloom-filters@$(node_pin) and its locked dependencies (is the npm registry reachable?); see $log"
    rm -rf "$CONFORM_DEPS/node/.npm-cache"
    echo "node: installed bloom-filters@$(node_pin) ($(grep -c '"node_modules/' "$CONFORM_SRC/node/package-lock.json") locked packages)"
    stamp node
fi

# --- Java: the Guava adapter against the system's Guava 31.1 -------------------------------------
need javac "install a JDK (apt-get install default-jdk-headless)"
need java "install a JDK (apt-get install default-jdk-headless)"
[ -f "$GUAVA_JAR" ] || fail "$GUAVA_JAR is missing (apt-get install libguava-java)"
jar_version=$(python3 -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for line in z.read("META-INF/MANIFEST.MF").decode().splitlines():
        if line.startswith("Bundle-Version:"):
            print(line.split(":", 1)[1].strip())
' "$GUAVA_JAR" 2>>"$log") || fail "cannot read the manifest of $GUAVA_JAR"
case "$jar_version" in
    "$GUAVA_VERSION".*) ;;
    *) fail "$GUAVA_JAR is Guava '${jar_version:-unknown}', the adapter is pinned to $GUAVA_VERSION" ;;
esac
if conform_installed java; then
    echo "java: up to date (guava $jar_version)"
else
    rm -rf "$CONFORM_DEPS/java"
    mkdir -p "$CONFORM_DEPS/java"
    # The jar's annotations name error-prone classes that are not installed: javac warns about
    # them, harmlessly; the log keeps the warning.
    javac -nowarn -cp "$GUAVA_JAR" -d "$CONFORM_DEPS/java" "$CONFORM_SRC/GuavaAdapter.java" \
        >>"$log" 2>&1 || fail "javac failed on scripts/conform/GuavaAdapter.java; see $log"
    echo "java: compiled GuavaAdapter against guava $jar_version ($GUAVA_JAR)"
    stamp java
fi
