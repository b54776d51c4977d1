#!/usr/bin/env bash
# Prints counts that depend on how fast this machine is, which the tests therefore do not assert
# (they assert only what holds at any pace). Printed, never checked:
#   1. fsm-load --linger: how many messages a paced run of 2,000 events in 1 s, at most 50 events
#      a message and held up to 200 ms, takes (LoadToolTests asserts at least 40 and fewer than
#      2,000; 40 is every message full);
#   2. fsm-send --timeout 0.3 against a machine that stays unavailable: how many requests the
#      client's retry (50 ms apart, doubling to 500 ms) fits in 300 ms (ClientRetryTests asserts
#      only that there is a retry, with a 2 s timeout).
# Usage: Scripts/pacing.sh [rounds]   (default 3 rounds of each; PACING_CONFIGURATION=debug to
# use the debug build that Scripts/test.sh makes instead of building in release)
# Scripts/bench.sh runs it after its own release build and puts its output in its report.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"
ensure_dependencies
rounds="${1:-3}"
configuration="${PACING_CONFIGURATION:-release}"
say "building ($configuration)"
swift build -c "$configuration" >&2
bin="$(swift build -c "$configuration" --show-bin-path)"
work="$(mktemp -d)"
launched=""
cleanup() {
    [[ -n "$launched" ]] && kill "$launched" 2>/dev/null && wait "$launched" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# Topologies/load.json with endpoints of its own, so that a bench run elsewhere does not collide.
topology_with_endpoints_in Topologies/load.json "$work" >/dev/null
echo "fsm-load --rate 2000 --duration 1 --batch 50 --linger 200000 (Topologies/load.json): messages per run, 40 at the least"
for round in $(seq "$rounds"); do
    "$bin/fsm-load" "$work/load.json" --json --mode reply --codec binary --rate 2000 --duration 1 --machines 10 \
        --batch 50 --linger 200000 >"$work/linger.json"
    python3 - "$work/linger.json" "$round" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
print(f"  round {sys.argv[2]}: " + ", ".join(f"{run['mode']} {run['messages']} messages for {run['sent']} events" for run in report["runs"]))
PY
done

# A topology whose only worker is external and never started: its machines stay unavailable.
cat >"$work/unavailable.json" <<JSON
{
  "name": "pacing",
  "coordinator": {
    "clients": "ipc://$work/clients.ipc",
    "workers": "ipc://$work/workers.ipc",
    "events": "ipc://$work/events.ipc"
  },
  "workers": [ { "name": "absent", "external": true } ],
  "machines": [ { "name": "counter", "type": "Counter", "worker": "absent", "keyed": true } ]
}
JSON
"$bin/fsm-launch" "$work/unavailable.json" --ready-timeout 1000000 >/dev/null 2>"$work/launch.log" &
launched=$!
echo "fsm-send --timeout 0.3 to a machine that stays unavailable: requests sent"
for round in $(seq "$rounds"); do
    # The first rounds may find the coordinator still binding (unreachable): wait for it.
    for attempt in $(seq 50); do
        "$bin/fsm-send" send counter/1 increment --endpoint "ipc://$work/clients.ipc" --timeout 0.3 2>"$work/send.err" && break
        grep -q "still unavailable" "$work/send.err" && break
        sleep 0.1
    done
    printf '  round %s: %s\n' "$round" \
        "$(grep -oE 'retrying for [^:]*: [0-9]+ requests' "$work/send.err" || echo "no retry count; fsm-send said: $(cat "$work/send.err")")"
done
