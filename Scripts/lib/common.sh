# Shared by the scripts in Scripts/. Source it; do not run it.
set -euo pipefail

repo_root() { cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd; }

# Progress notes (installing, building) go to stderr; a script's own steps, which are part of what
# it shows, go to stdout with `step`, so `Scripts/run.sh | less` keeps them.
say() { printf '==> %s\n' "$*" >&2; }
step() { printf '\n==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Puts the Swift toolchain on PATH when it is installed at /opt/swift but not on PATH.
ensure_swift() {
    if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
        export PATH="/opt/swift/usr/bin:$PATH"
    fi
    command -v swift >/dev/null 2>&1 \
        || die "the Swift toolchain (6.2 or later) is not installed; install it from swift.org and re-run"
}

# Installs the Debian packages named in $@ that are not installed yet. Needs root (or sudo).
ensure_debian_packages() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    command -v apt-get >/dev/null 2>&1 \
        || die "missing system packages: ${missing[*]}; install them with your package manager"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    say "installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# What every Grove build needs besides Swift: libzmq for the multi-process runtime, and SQLite for
# the machine store (GRDB links the system's libsqlite3). No pkg-config: Package.swift links zmq
# through the CZeroMQ module map, and GRDB's module map links sqlite3 the same way.
SYSTEM_PACKAGES=(libzmq3-dev libsqlite3-dev)

ensure_dependencies() {
    ensure_swift
    if [ ${#SYSTEM_PACKAGES[@]} -gt 0 ]; then ensure_debian_packages "${SYSTEM_PACKAGES[@]}"; fi
}

ensure_python3() {
    command -v python3 >/dev/null 2>&1 || ensure_debian_packages python3
}

# The test suite runs docs/PROTOCOL.md's Python client, which needs python3 and pyzmq.
ensure_pyzmq() {
    ensure_python3
    python3 -c 'import zmq' 2>/dev/null && return 0
    say "installing pyzmq (for the protocol example test)"
    python3 -m pip install --quiet pyzmq 2>/dev/null \
        || python3 -m pip install --quiet --break-system-packages pyzmq 2>/dev/null \
        || ensure_debian_packages python3-zmq
    python3 -c 'import zmq' 2>/dev/null || die "pyzmq could not be installed; install it with 'pip install pyzmq' and re-run"
}

# For the live view's browser tests (GroveEndToEndTests' LiveViewTests): headless Chromium with its
# driver (Debian's chromium and chromium-driver) and Selenium (PyPI). Not fatal: where they cannot
# be installed, those tests skip and say why.
ensure_browser() {
    ensure_python3
    if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
        say "installing chromium and chromium-driver (for the live view's browser tests)"
        ( ensure_debian_packages chromium chromium-driver ) \
            || say "warning: chromium could not be installed; the live view's browser tests will skip"
    fi
    python3 -c 'import selenium' 2>/dev/null && return 0
    say "installing selenium (for the live view's browser tests)"
    python3 -m pip install --quiet selenium 2>/dev/null \
        || python3 -m pip install --quiet --break-system-packages selenium 2>/dev/null \
        || say "warning: selenium could not be installed; the live view's browser tests will skip"
}

# Deletes Grove's own modules and executables from a release build directory ($1), so that the
# next build compiles them from scratch: an incremental release build has been seen to keep an
# executable's stale copy of a library's inlinable code after the library changed (a worker
# that processes nothing, or a side-by-side run that measures the old code). The dependencies
# stay built (swift-syntax, for the macro, takes about 7 minutes in release on 2 cores).
clean_grove_release_products() {
    local bin="$1" dir
    [[ "$bin" == */.build/*/release ]] || die "unexpected release directory '$bin'; not cleaning it"
    [[ -d "$bin" ]] || return 0
    local patterns=(-name 'Grove*' -o -name 'FSM*' -o -name 'ZeroMQ*' -o -name 'CZeroMQ*' -o -name 'fsm-*' -o -name 'grove-*')
    for dir in "$bin" "$bin/Modules"; do
        [[ -d "$dir" ]] || continue
        find "$dir" -mindepth 1 -maxdepth 1 \( "${patterns[@]}" \) -exec rm -rf {} +
        [[ -z "$(find "$dir" -mindepth 1 -maxdepth 1 \( "${patterns[@]}" \) -print -quit)" ]] \
            || die "could not delete Grove's build products in $dir; delete them by hand and re-run"
    done
    # The cached build plan names the deleted folders' file maps: without it, SwiftPM plans anew.
    rm -f "$bin/description.json"
}

# For a script that launches topologies: a scratch directory in $work, and stop_launch, which
# ends the fsm-launch whose pid the script puts in $launch_pid (SIGTERM, then up to 5 s for it
# to stop its workers); on exit both run.
begin_launching() {
    work="$(mktemp -d)"
    launch_pid=""
    trap 'stop_launch; rm -rf "$work"' EXIT
}

stop_launch() {
    if [[ -n "$launch_pid" ]] && kill -0 "$launch_pid" 2>/dev/null; then
        kill -TERM "$launch_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$launch_pid" 2>/dev/null || break; sleep 0.1; done
    fi
    launch_pid=""
}

# Writes a copy of topology $1 into directory $2 (one of mktemp -d's: this user's alone) with its
# coordinator endpoints written out as sockets in $2, and prints the copy's path. Builds from
# before issue 34 need the endpoints written (the shipped topologies leave them to the runtime
# directory now, as docs/SECURITY.md says), and a run in its own directory collides with no other.
topology_with_endpoints_in() {
    python3 - "$1" "$2" <<'PY'
import json, os, sys
source, directory = sys.argv[1], sys.argv[2]
document = json.load(open(source))
document.pop("$schema", None)
document["coordinator"] = {name: f"ipc://{directory}/{name}" for name in ("clients", "workers", "events")}
copy = os.path.join(directory, os.path.basename(source))
json.dump(document, open(copy, "w"), indent=2)
print(copy)
PY
}
