# Sourced by scripts/conform-deps.sh and scripts/conform/adapter: where the conformance adapters'
# libraries are installed and the stamp each installed part must carry. A stamp is the pinned
# versions plus a digest of the files that pin them, so editing a pin (or the Java adapter, which
# is compiled) makes the launcher refuse a stale install and the installer redo only that part.

# The repository's root, whatever the caller's working directory.
CONFORM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CONFORM_DEPS=${BLOOMLAB_CONFORM_DEPS:-target/conform-deps}
case "$CONFORM_DEPS" in /*) ;; *) CONFORM_DEPS="$CONFORM_ROOT/$CONFORM_DEPS" ;; esac
CONFORM_SRC="$CONFORM_ROOT/scripts/conform"
GUAVA_JAR=${BLOOMLAB_GUAVA_JAR:-/usr/share/java/guava.jar}
GUAVA_VERSION=31.1

# conform_stamp PART: the stamp PART (venv, node or java) must carry.
conform_stamp() {
    local files
    case "$1" in
        venv) files=("$CONFORM_SRC/requirements.txt") ;;
        node) files=("$CONFORM_SRC/node/package.json" "$CONFORM_SRC/node/package-lock.json") ;;
        java) files=("$CONFORM_SRC/GuavaAdapter.java") ;;
        *) return 1 ;;
    esac
    printf '%s %s\n' "$1" "$(cat "${files[@]}" | sha256sum | cut -d' ' -f1)"
    case "$1" in
        venv) grep -v -e '^#' -e '^$' "$CONFORM_SRC/requirements.txt" ;;
        node) echo "bloom-filters==$(node_pin)" ;;
        java) echo "guava==$GUAVA_VERSION" ;;
    esac
}

# node_pin: the exact bloom-filters version package.json pins.
node_pin() {
    sed -n 's/.*"bloom-filters": *"\([^"]*\)".*/\1/p' "$CONFORM_SRC/node/package.json"
}

# conform_installed PART: whether PART is installed with the current pins.
conform_installed() {
    [ -f "$CONFORM_DEPS/$1/.bloomlab-stamp" ] &&
        [ "$(cat "$CONFORM_DEPS/$1/.bloomlab-stamp")" = "$(conform_stamp "$1")" ]
}
