#!/usr/bin/env bash
# Issue 34, third review, item 4: a client sending `list` in a loop as fast as it can (64 in
# flight) against the default topology with N keyed counter instances. A measurement, not a test
# (CoordinatorCoreListingCacheTests holds the pass/fail part): it prints another client's `get`
# latency (count, p50, p99, max) and the coordinator's CPU, idle and under the flood, and the
# lists answered per second. docs/BENCHMARKS.md has the figures.
#
# Usage: Scripts/list-flood.sh [--debug] [--instances N] [--seconds S]
#   --debug       the debug build (`swift build`), not release
#   --instances   keyed counter instances spawned first (default 10000)
#   --seconds     each phase's length (default 8)
# Needs python3 and pyzmq.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"

configuration=release
instances=10000
seconds=8
while [[ $# -gt 0 ]]; do
    case "$1" in
        --debug) configuration=debug; shift ;;
        --instances) instances="$2"; shift 2 ;;
        --seconds) seconds="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1'; see Scripts/list-flood.sh --help" ;;
    esac
done
for number in "$instances" "$seconds"; do
    [[ "$number" =~ ^[0-9]+$ ]] || die "expected a whole number, got '$number'"
done

ensure_dependencies
ensure_pyzmq
say "building ($configuration)"
swift build -c "$configuration" --product fsm-launch >&2
swift build -c "$configuration" --product fsm-worker >&2
bin="$(swift build -c "$configuration" --show-bin-path)"
begin_launching

# The default topology, in a runtime and a data directory of this run's own.
mkdir -m 700 "$work/runtime"
GROVE_RUNTIME_DIR="$work/runtime" "$bin/fsm-launch" --data-dir "$work/data" --exit-with-parent --parent-pid $$ \
    >"$work/launch.out" 2>"$work/launch.err" &
launch_pid=$!
for _ in $(seq 600); do grep -q '^ready' "$work/launch.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^ready' "$work/launch.out" || { cat "$work/launch.err" >&2; die "fsm-launch did not get ready within 60 s"; }
clients="$(sed -n 's/^ready \([^ ]*\).*/\1/p' "$work/launch.out" | head -n 1)"

step "list flood ($configuration, $instances instances, $seconds s a phase)"
python3 "$(dirname "${BASH_SOURCE[0]}")/lib/list-flood.py" "$clients" "$launch_pid" "$instances" "$seconds"
lost="$(grep -c -E 'worker [a-z]+ lost|did not run for' "$work/launch.err" || true)"
echo "workers lost or coordinator stalled (log lines): $lost"
