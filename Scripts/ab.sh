#!/usr/bin/env bash
# Side by side: fsm-load against Topologies/load.json with two builds, an earlier commit and the
# working tree, in interleaved rounds (base, this, base, this, ...), so that both see the same
# machine; on a shared machine whose speed moves from hour to hour, only such pairs compare.
#
# Usage: Scripts/ab.sh BASE [ROUNDS] [-- fsm-load options]
#   BASE     a commit (c95381a, HEAD~3, a tag)
#   ROUNDS   rounds of the pair, default 3
#   options  passed to both fsm-loads; default --mode ack,reply --codec binary --duration 5
# Prints each run's line of each round (events/s, latency, sent, lost) and its CPU µs per event,
# all processes together and per process (coordinator, the workers together, fsm-load). The
# base is checked out and built in release mode under .build-ab/ (the first time with its
# dependencies, several minutes); both sides' Grove modules are compiled from scratch. Do not run
# it alongside Scripts/bench.sh or another ab.sh: they rebuild the same release directory and
# share the cores. AB_REUSE=1 skips both builds and reuses what the last ab.sh built (more
# rounds, or other options, against the same pair).
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"
ensure_dependencies
ensure_python3
[[ $# -ge 1 ]] || die "usage: Scripts/ab.sh BASE [ROUNDS] [-- fsm-load options]; BASE is a commit to compare the working tree with"
base="$1"; shift
rounds=3
if [[ $# -gt 0 && "$1" != "--" ]]; then rounds="$1"; shift; fi
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a whole number from 1, got '$rounds'"
if [[ $# -gt 0 && "$1" == "--" ]]; then shift; fi
options=("$@")
[[ ${#options[@]} -gt 0 ]] || options=(--mode ack,reply --codec binary --duration 5)
commit="$(git rev-parse --verify --quiet "$base^{commit}")" || die "'$base' is not a commit of this repository"

tree=".build-ab/base"
if [[ ! -d "$tree" ]]; then
    git worktree add --detach "$tree" "$commit" >/dev/null || die "could not check out $base into $tree"
else
    git -C "$tree" checkout --quiet --detach "$commit" || die "could not check out $base in $tree"
fi
base_bin="$(swift build -c release --package-path "$tree" --scratch-path "$tree/.build" --show-bin-path)"
this_bin="$(swift build -c release --show-bin-path)"
# Both sides' Grove modules from scratch (clean_grove_release_products says why).
if [[ "${AB_REUSE:-}" == 1 ]]; then
    [[ -x "$base_bin/fsm-load" && -x "$this_bin/fsm-load" ]] || die "AB_REUSE=1 needs both sides built by an earlier Scripts/ab.sh"
    say "reusing the release builds in $base_bin and $this_bin (AB_REUSE=1)"
else
    say "building $base (${commit:0:8}) in $tree (release, Grove's modules from scratch)"
    clean_grove_release_products "$base_bin"
    swift build -c release --package-path "$tree" --scratch-path "$tree/.build" >&2
    say "building the working tree (release, Grove's modules from scratch)"
    clean_grove_release_products "$this_bin"
    swift build -c release >&2
fi

# Each run's line, then its CPU µs per event over every process and per process, from fsm-load
# --json on stdin.
read -r -d '' summary <<'PY' || true
import json, sys
report = json.load(sys.stdin)
for run in report["runs"]:
    micros = lambda seconds: seconds * 1e6 / max(1, run["sent"])
    cpu = run["cpuSeconds"]
    workers = sum(seconds for name, seconds in cpu.items() if name not in ("coordinator", "fsm-load"))
    l = run["latencyMicros"]
    print(f"  {run['mode']:<6} {run['eventsPerSecond']:>12,.0f} events/s  p50 {l['p50']:>7} µs  p99 {l['p99']:>7} µs  "
          f"sent {run['sent']:>10,}  lost {run['lost']}  {micros(sum(cpu.values())):6.2f} µs CPU per event "
          f"(coordinator {micros(cpu.get('coordinator', 0)):.2f}, workers {micros(workers):.2f}, fsm-load {micros(cpu.get('fsm-load', 0)):.2f})")
PY
per_event() { python3 -c "$summary"; }
# Topologies/load.json with its endpoints written out, which both builds read alike (a base from
# before issue 34 needs them written; the shipped file leaves them to the runtime directory).
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
topology="$(topology_with_endpoints_in Topologies/load.json "$work")"
echo "fsm-load Topologies/load.json ${options[*]}"
for round in $(seq "$rounds"); do
    for side in base this; do
        bin="$this_bin"; name="working tree"
        if [[ "$side" == base ]]; then bin="$base_bin"; name="$base"; fi
        echo "round $round, $name:"
        "$bin/fsm-load" "$topology" --json "${options[@]}" | per_event
    done
done
