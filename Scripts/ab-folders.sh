#!/usr/bin/env bash
# Side by side, any number of builds: fsm-load against Topologies/load.json with the executables
# of each folder in turn, in interleaved rounds (A, B, C, A, B, C, ...), so that every build sees
# the same machine. Scripts/ab.sh builds an earlier commit and compares it with the working tree;
# this one takes builds already made, e.g. to bisect (a commit before a change, the change's last
# commit, and main, as in docs/BENCHMARKS.md "Issue 19 against its base").
#
# Usage: Scripts/ab-folders.sh ROUNDS FOLDER... [-- fsm-load options]
#   ROUNDS   rounds, each running every folder once
#   FOLDER   a folder holding fsm-load, fsm-launch and fsm-worker of one release build, e.g. made
#            with `git worktree add /tmp/b 90b315b && swift build -c release --package-path /tmp/b`
#            (then /tmp/b/.build/release), or a copy of those three files
#   options  passed to every fsm-load; default --mode ack,reply --codec binary --duration 5
# AB_TOPOLOGY=FILE runs every folder against FILE instead of Topologies/load.json with its
# endpoints written out: builds from before a topology section was added need one without it.
# Prints one line per run: the folder, the mode, events/s, and CPU µs per event of the
# coordinator and of the workers together; then each mode's medians (and ratios to the first
# folder). Do not run it beside another benchmark: they share the cores.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"
ensure_python3
[[ $# -ge 2 ]] || die "usage: Scripts/ab-folders.sh ROUNDS FOLDER... [-- fsm-load options]"
rounds="$1"; shift
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a whole number from 1, got '$rounds'"
folders=()
while [[ $# -gt 0 && "$1" != "--" ]]; do
    [[ -x "$1/fsm-load" && -x "$1/fsm-launch" && -x "$1/fsm-worker" ]] \
        || die "'$1' does not hold fsm-load, fsm-launch and fsm-worker; give the release build's folder"
    folders+=("$1"); shift
done
if [[ $# -gt 0 ]]; then shift; fi
options=("$@")
[[ ${#options[@]} -gt 0 ]] || options=(--mode ack,reply --codec binary --duration 5)
results="$(mktemp)"
work="$(mktemp -d)"
trap 'rm -f "$results"; rm -rf "$work"' EXIT
# Topologies/load.json with its endpoints written out, which every build reads alike (a build from
# before issue 34 needs them written; the shipped file leaves them to the runtime directory).
topology="${AB_TOPOLOGY:-$(topology_with_endpoints_in Topologies/load.json "$work")}"
read -r -d '' line <<'PY' || true
import json, sys
report = json.load(sys.stdin)
for run in report["runs"]:
    cpu = run["cpuSeconds"]
    per = lambda seconds: seconds * 1e6 / max(1, run["sent"])
    workers = sum(s for name, s in cpu.items() if name not in ("coordinator", "fsm-load"))
    print(sys.argv[1], run["mode"], round(run["eventsPerSecond"]), f"{per(cpu.get('coordinator', 0)):.3f}", f"{per(workers):.3f}")
PY
[[ -f "$topology" ]] || die "no topology file '$topology'"
echo "fsm-load $topology ${options[*]}"
for round in $(seq "$rounds"); do
    for folder in "${folders[@]}"; do
        "$folder/fsm-load" "$topology" --json "${options[@]}" 2>/dev/null | python3 -c "$line" "$folder" | tee -a "$results" \
            | awk -v r="$round" '{ printf "round %s  %-40s %-6s %10d events/s  CPU µs/event: coordinator %s, workers %s\n", r, $1, $2, $3, $4, $5 }'
    done
done
python3 - "$results" "${folders[@]}" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
folders = sys.argv[2:]
print("medians (ratio to the first folder):")
for mode in dict.fromkeys(row[1] for row in rows):
    rates = {f: [int(r[2]) for r in rows if r[0] == f and r[1] == mode] for f in folders}
    base = statistics.median(rates[folders[0]]) if rates[folders[0]] else 0
    parts = [f"{f}: {statistics.median(v):,.0f} ({statistics.median(v) / base:.2f})" for f, v in rates.items() if v and base]
    print(f"  {mode:<6} " + "  ".join(parts))
PY
