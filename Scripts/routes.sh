#!/usr/bin/env bash
# The two roads side by side: fsm-load drives Topologies/load.json (its workers serving direct
# routes) through the coordinator and straight to the workers, in interleaved runs of one launched
# topology per round, so both roads see the same machine (docs/DIRECT-ROUTES.md, step 6).
#
# Usage: Scripts/routes.sh [--bin DIR] [ROUNDS] [-- fsm-load options]
#   --bin DIR  the folder of fsm-launch, fsm-worker and fsm-load (default: build main's release)
#   ROUNDS     rounds, default 3; each runs every mode once per road, coordinator first
#   options    passed to fsm-load; default --mode ack --codec binary --batch 200 --window 4000 --duration 5
# Prints each run's line (events/s, latency, sent, lost) with its CPU µs per event, all processes
# together and per process, then the medians per road and the direct road's ratio to the
# coordinator's. Timing: run it on a quiet machine, and compare roads within one run only.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"
ensure_dependencies
bin=""
if [[ $# -gt 1 && "$1" == "--bin" ]]; then bin="$2"; shift 2; fi
rounds=3
if [[ $# -gt 0 && "$1" != "--" ]]; then rounds="$1"; shift; fi
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a whole number from 1, got '$rounds'"
if [[ $# -gt 0 && "$1" == "--" ]]; then shift; fi
options=("$@")
[[ ${#options[@]} -gt 0 ]] || options=(--mode ack --codec binary --batch 200 --window 4000 --duration 5)
bin="$(release_tools "$bin")"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
topology="$(topology_with_endpoints_in Topologies/load.json "$work")"
python3 - "$topology" <<'PY'
import json, sys
path = sys.argv[1]
document = json.load(open(path))
for group in document["workers"]:
    group["direct"] = True
json.dump(document, open(path, "w"), indent=2)
PY

read -r -d '' summary <<'PY' || true
import json, sys, statistics
runs = {}
for line in open(sys.argv[1]):
    for run in json.loads(line)["runs"]:
        runs.setdefault((run["mode"], run.get("route", "coordinator")), []).append(run)
def micros(run, seconds): return seconds * 1e6 / max(1, run["sent"])
for (mode, route), each in sorted(runs.items()):
    for run in each:
        cpu = run["cpuSeconds"]
        workers = sum(s for name, s in cpu.items() if name not in ("coordinator", "fsm-load"))
        l = run["latencyMicros"]
        print(f"  {mode}/{route:<11} {run['eventsPerSecond']:>12,.0f} events/s  p50 {l['p50']:>7} µs  p99 {l['p99']:>7} µs  "
              f"lost {run['lost']}  failed {run['failed']}  {micros(run, sum(cpu.values())):6.2f} µs CPU per event "
              f"(coordinator {micros(run, cpu.get('coordinator', 0)):.2f}, workers {micros(run, workers):.2f}, "
              f"fsm-load {micros(run, cpu.get('fsm-load', 0)):.2f})")
for mode in sorted({mode for mode, _ in runs}):
    coordinator, direct = runs.get((mode, "coordinator"), []), runs.get((mode, "direct"), [])
    if not coordinator or not direct: continue
    rate = lambda runs: statistics.median(r["eventsPerSecond"] for r in runs)
    p50 = lambda runs: statistics.median(r["latencyMicros"]["p50"] for r in runs)
    print(f"{mode}: medians coordinator {rate(coordinator):,.0f} events/s p50 {p50(coordinator)} µs, "
          f"direct {rate(direct):,.0f} events/s p50 {p50(direct)} µs; direct/coordinator events/s {rate(direct) / rate(coordinator):.2f}, "
          f"p50 {p50(direct) / max(1, p50(coordinator)):.2f}")
PY
echo "fsm-load Topologies/load.json (direct on) --route coordinator,direct ${options[*]}"
for round in $(seq "$rounds"); do
    "$bin/fsm-load" "$topology" --json --no-baseline --route coordinator,direct "${options[@]}" >> "$work/runs.jsonl" \
        || die "round $round failed; run fsm-load by hand with the same options to see why"
done
python3 -c "$summary" "$work/runs.jsonl"
