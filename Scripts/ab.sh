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
# all processes together. The base is checked out and built in release mode under .build-ab/
# (the first time with its dependencies, several minutes); the working tree builds as usual.
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
say "building $base (${commit:0:8}) in $tree (release)"
swift build -c release --package-path "$tree" --scratch-path "$tree/.build" >&2
say "building the working tree (release)"
swift build -c release >&2
base_bin="$(swift build -c release --package-path "$tree" --scratch-path "$tree/.build" --show-bin-path)"
this_bin="$(swift build -c release --show-bin-path)"

# Each run's line, then its CPU µs per event over every process, from fsm-load --json on stdin.
read -r -d '' summary <<'PY' || true
import json, sys
report = json.load(sys.stdin)
for run in report["runs"]:
    cpu = sum(run["cpuSeconds"].values()) * 1e6 / max(1, run["sent"])
    l = run["latencyMicros"]
    print(f"  {run['mode']:<6} {run['eventsPerSecond']:>12,.0f} events/s  p50 {l['p50']:>7} µs  p99 {l['p99']:>7} µs  "
          f"sent {run['sent']:>10,}  lost {run['lost']}  {cpu:6.2f} µs CPU per event")
PY
per_event() { python3 -c "$summary"; }
echo "fsm-load Topologies/load.json ${options[*]}"
for round in $(seq "$rounds"); do
    for side in base this; do
        bin="$this_bin"; name="working tree"
        if [[ "$side" == base ]]; then bin="$base_bin"; name="$base"; fi
        echo "round $round, $name:"
        "$bin/fsm-load" Topologies/load.json --json "${options[@]}" | per_event
    done
done
