#!/usr/bin/env bash
# Installs what is missing, builds, launches the default topology (Topologies/default.json: a
# coordinator, a worker hosting the machines, a worker running their io) and drives the
# auth → load → poll story with fsm-send, printing every state change and effect as it crosses
# processes. Usage: Scripts/run.sh [--local-demo]   (--local-demo: the single-process grove-demo)
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"
ensure_dependencies
if [ "${1:-}" = "--local-demo" ]; then
    shift
    swift build --product grove-demo >&2
    exec "$(swift build --show-bin-path)/grove-demo" "$@"
fi
say "building fsm-launch, fsm-worker, fsm-send"
for product in fsm-launch fsm-worker fsm-send; do swift build --product "$product" >&2; done
bin="$(swift build --show-bin-path)"
work="$(mktemp -d)"
launch_pid=""
watch_pid=""
cleanup() {
    [ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null || true
    if [ -n "$launch_pid" ]; then kill -TERM "$launch_pid" 2>/dev/null || true; wait "$launch_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

step "launching Topologies/default.json"
# Its machines are durable: a data directory of this run's own makes every demo start afresh
# (without --data-dir they would be kept in Topologies/grove-data/default, run after run).
"$bin/fsm-launch" Topologies/default.json --data-dir "$work/data" >"$work/launch.out" 2>"$work/launch.err" &
launch_pid=$!
for _ in $(seq 1 300); do
    grep -q '^ready ' "$work/launch.out" 2>/dev/null && break
    kill -0 "$launch_pid" 2>/dev/null || { cat "$work/launch.err" >&2; die "fsm-launch exited before it was ready"; }
    sleep 0.1
done
grep -q '^ready ' "$work/launch.out" || { cat "$work/launch.err" >&2; die "fsm-launch was not ready within 30 s"; }
printf '%s\n' "$(cat "$work/launch.out")"

# Arguments as a shell would need them: plain words as they are, anything else single-quoted.
quoted() {
    local out=() arg
    for arg in "$@"; do
        if [[ "$arg" =~ ^[A-Za-z0-9_./:@=-]+$ ]]; then out+=("$arg"); else out+=("${arg@Q}"); fi
    done
    printf '%s' "${out[*]}"
}
# Echoes the command, copy-pastable, then runs it; its errors show in line, with the exit status.
send() {
    printf '$ fsm-send %s\n' "$(quoted "$@")"
    local status=0
    "$bin/fsm-send" "$@" 2>&1 || status=$?
    [ "$status" -eq 0 ] || printf '  (exit status %d)\n' "$status"
    return "$status"
}
# Waits (up to 5 s, quietly) until the state of $1 contains $2.
await_state() {
    for _ in $(seq 1 50); do
        "$bin/fsm-send" state "$1" 2>/dev/null | grep -q "$2" && return 0
        sleep 0.1
    done
}
printf 'fsm-send is %s; to paste the commands below: export PATH=%s:"$PATH"\n' "$bin/fsm-send" "$(quoted "$bin")"

"$bin/fsm-send" list | python3 -c '
import json, sys
listing = json.load(sys.stdin)
print("workers: " + ", ".join("%s (pid %s)" % (w["name"], w["pid"]) for w in listing["workers"]))
print("machines: " + ", ".join(m["name"] + ("/<key>" if m["keyed"] else "") + " on " + m["worker"] for m in listing["machines"]))
'
"$bin/fsm-send" watch state: effect: >"$work/watch.out" 2>/dev/null &
watch_pid=$!
sleep 0.5

step "1. sign in: the Authenticate request runs on worker 'io' (400 ms), the result comes back as an event"
send auth startLogin
send auth '{"updateEmail":{"_0":"ada@example.com"}}'
send auth '{"updatePassword":{"_0":"analytical"}}'
send auth login
sleep 0.8
send state auth

step "2. the topology routes auth's signedIn output to loader's load; FetchItems runs on 'io'"
sleep 0.6
send state loader

step "3. reload, then cancel the fetch on the other worker by id: its late result never arrives"
send loader reload
send cancel loader fetch-items
sleep 0.6
send state loader
echo "loader stays loading: its fetch was cancelled, so no result will come to finish it. Reload again:"
send loader reload
await_state loader loaded
send state loader

step "4. poll every second through remote FetchData; pause cancels the fetch in flight"
send poller/demo '{"startPolling":{"interval":1}}'
sleep 2.3
send poller/demo pausePolling
send state poller/demo

step "5. bad input gets a clear error, and the topology keeps serving"
send auth '{"updateEmail":' || true
send auth '{"teleport":{}}' || true
send nowhere login || true
send state auth

sleep 0.3
step "what the events endpoint published (fsm-send watch state: effect:)"
python3 - "$work/watch.out" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    p = m["payload"]
    if m["kind"] == "effect":
        reason = f' ({p["reason"]})' if p.get("reason") else ""
        # io across processes names its request; work on the machine's own worker (a timer,
        # a task, local io) names its kind and effect id.
        what = p.get("request") or f'{p.get("kind", "?")} {json.dumps(p.get("effect"))}'
        print(f'  effect  {p["address"]:<12} {what:<12} {p["phase"]:<9} on {p["worker"]}{reason}')
    else:
        print(f'  state   {p["address"]:<12} {json.dumps(p["state"])[:90]}')
PY
grep -h "io request cancelled" "$work/launch.err" | sed 's/^/  worker log: /' || true
step "done: stopping the topology (SIGTERM to fsm-launch stops its workers)"
