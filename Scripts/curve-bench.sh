#!/usr/bin/env bash
# CURVE against plain tcp, side by side: fsm-load against two tcp copies of Topologies/load.json,
# one with keys (security.coordinatorKey, a client key) and one "insecure", in interleaved rounds
# (plain, curve, plain, curve, ...) with the same release build, so both see the same machine.
#
# Usage: Scripts/curve-bench.sh [ROUNDS] [-- fsm-load options]
#   ROUNDS   rounds of the pair, default 3
#   options  passed to every fsm-load; default --mode ack,reply --codec binary --duration 5
# Prints each run's events/s and, per mode, the medians and CURVE's share of plain. The keys and
# topologies live in a temp dir removed at the end. Run it on a quiet machine, not beside a build.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"
ensure_dependencies
ensure_python3
rounds=3
if [[ $# -gt 0 && "$1" != "--" ]]; then rounds="$1"; shift; fi
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a whole number from 1, got '$rounds'"
if [[ $# -gt 0 && "$1" == "--" ]]; then shift; fi
options=("$@")
[[ ${#options[@]} -gt 0 ]] || options=(--mode ack,reply --codec binary --duration 5)

say "building (release)"
swift build -c release >&2 || die "the release build failed"
bin="$(swift build -c release --show-bin-path)"
dir="$(mktemp -d /tmp/grove-curve-bench.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
for pair in coordinator load; do
    "$bin/fsm-keys" new "$pair" --dir "$dir/keys" >/dev/null || die "fsm-keys new $pair failed"
done
python3 - "$dir" <<'PY'
import json, sys
directory = sys.argv[1]
base = json.load(open("Topologies/load.json"))
base.pop("$schema", None)
base["coordinator"] = {name: "tcp://127.0.0.1:*" for name in ("clients", "workers", "events")}
plain = dict(base, name="load-tcp", security={"insecure": True})
curve = dict(base, name="load-curve", security={
    "coordinatorKey": "keys/coordinator.key_secret",
    "clients": [{"key": "keys/load.key", "roles": ["read", "send"]}]})
json.dump(plain, open(f"{directory}/plain.json", "w"), indent=2)
json.dump(curve, open(f"{directory}/curve.json", "w"), indent=2)
PY

read -r -d '' summary <<'PY' || true
import json, sys
side, path = sys.argv[1], sys.argv[2]
report = json.load(sys.stdin)
with open(path, "a") as out:
    for run in report["runs"]:
        print(f"  {side:<6} {run['mode']:<6} {run['eventsPerSecond']:>12,.0f} events/s  sent {run['sent']:>10,}  lost {run['lost']}")
        out.write(f"{side} {run['mode']} {run['eventsPerSecond']}\n")
PY
results="$dir/results"
echo "fsm-load (tcp, load.json) ${options[*]}"
for round in $(seq "$rounds"); do
    echo "round $round:"
    "$bin/fsm-load" "$dir/plain.json" --json "${options[@]}" | python3 -c "$summary" plain "$results"
    "$bin/fsm-load" "$dir/curve.json" --json --key-file "$dir/keys/load.key_secret" \
        --coordinator-key "$dir/keys/coordinator.key" "${options[@]}" | python3 -c "$summary" curve "$results"
done
python3 - "$results" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    side, mode, rate = line.split()
    runs.setdefault(mode, {}).setdefault(side, []).append(float(rate))
for mode, sides in runs.items():
    plain, curve = statistics.median(sides.get("plain", [0])), statistics.median(sides.get("curve", [0]))
    share = f"{100 * curve / plain:.0f} %" if plain else "n/a"
    print(f"median {mode:<6} plain {plain:>12,.0f}  curve {curve:>12,.0f}  curve/plain {share}")
PY
