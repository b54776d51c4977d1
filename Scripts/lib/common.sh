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

# The PostgreSQL machine store's tests need a server: Debian's `postgresql`, its cluster started
# on loopback (Debian's default listen_addresses is localhost), a role and database `grove_test`
# with a fresh random password in a file of mode 0600. Exports GROVE_TEST_POSTGRES_URL and
# GROVE_TEST_POSTGRES_PASSWORD_FILE for the tests; leaves them unset, saying why, where it cannot
# (no root or sudo, no apt-get), and the tests then skip with that reason. A URL already set is
# used as it is.
ensure_test_postgres() {
    if [ -n "${GROVE_TEST_POSTGRES_URL:-}" ]; then return 0; fi
    local as_postgres
    if [ "$(id -u)" -eq 0 ]; then
        as_postgres=(su postgres -s /bin/sh -c)
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        as_postgres=(sudo -n -u postgres sh -c)
    else
        say "no root or sudo: the PostgreSQL store's tests will skip (set GROVE_TEST_POSTGRES_URL to use a server)"
        return 0
    fi
    if ! command -v pg_lsclusters >/dev/null 2>&1 || ! dpkg-query -W -f='${Status}' postgresql 2>/dev/null | grep -q "install ok installed"; then
        command -v apt-get >/dev/null 2>&1 || { say "no apt-get: the PostgreSQL store's tests will skip"; return 0; }
        ensure_debian_packages postgresql
    fi
    local cluster version name port status
    cluster=$(pg_lsclusters --no-header | head -1)
    [ -n "$cluster" ] || { say "Debian's postgresql has no cluster (pg_createcluster): the PostgreSQL store's tests will skip"; return 0; }
    read -r version name port status _ <<<"$cluster"
    if [ "$status" != "online" ]; then
        say "starting PostgreSQL $version/$name on 127.0.0.1:$port"
        pg_ctlcluster "$version" "$name" start
    fi
    local directory password
    directory=$(mktemp -d /tmp/grove-test-postgres.XXXXXX)
    chmod 700 "$directory"
    password=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
    ( umask 077; printf '%s\n' "$password" > "$directory/password" )
    "${as_postgres[@]}" "psql -q -p $port -v ON_ERROR_STOP=1" >/dev/null <<SQL
DO \$\$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'grove_test') THEN
    ALTER ROLE grove_test LOGIN PASSWORD '$password';
  ELSE
    CREATE ROLE grove_test LOGIN PASSWORD '$password';
  END IF;
END \$\$;
SQL
    "${as_postgres[@]}" "psql -tA -p $port -c \"SELECT 1 FROM pg_database WHERE datname = 'grove_test'\"" | grep -q 1 \
        || "${as_postgres[@]}" "createdb -p $port -O grove_test grove_test"
    # Its owner may create tables in its public schema (PostgreSQL 15 lets only the owner).
    "${as_postgres[@]}" "psql -q -p $port -c 'ALTER DATABASE grove_test OWNER TO grove_test'" >/dev/null
    export GROVE_TEST_POSTGRES_URL="postgres://grove_test@127.0.0.1:$port/grove_test"
    export GROVE_TEST_POSTGRES_PASSWORD_FILE="$directory/password"
    GROVE_TEST_POSTGRES_DIRECTORY="$directory"  # the caller removes it when done
    say "PostgreSQL for the tests: $GROVE_TEST_POSTGRES_URL"
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
# The folder holding fsm-launch, fsm-worker and fsm-load: $1 when given (--bin), else main's
# release build, built here when needed. Prints the folder; dies naming a missing tool.
release_tools() {
    local bin="$1"
    if [[ -z "$bin" ]]; then
        say "building (release)"
        swift build -c release --product fsm-launch >&2
        swift build -c release --product fsm-worker >&2
        swift build -c release --product fsm-load >&2
        bin="$(swift build -c release --show-bin-path)"
    fi
    local tool
    for tool in fsm-launch fsm-worker fsm-load; do
        [[ -x "$bin/$tool" ]] || die "$bin/$tool is missing; build it (swift build -c release) or pass --bin"
    done
    printf '%s\n' "$bin"
}

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
