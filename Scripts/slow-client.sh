#!/usr/bin/env bash
# Reproduces issue 22's two slow-client runs against a real topology and prints the memory of
# the coordinator (the fsm-launch process) and of the worker: peak RSS (VmHWM, from /proc), and
# RSS once the client has gone away. A benchmark, not a test: it asserts nothing but prints
# whether each peak stayed under the bound below.
#
#   1. events: a pyzmq client sends N no-wait events (default 1,000,000) without reading its
#      replies, waits, then reads them all and counts: every request must have exactly one reply
#      (its own `accepted`, a `busy`, `mailbox-full`), none missing, none twice.
#   2. gets: `auth`'s state is made K KiB (default 100), a client sends G `get auth` (default
#      200,000) without reading, waits, then reads them all and counts the same way (`state`,
#      `busy`, `reply-dropped`); then it closes and the RSS is read again.
#
# Each run launches its own topology (the default queues: clientOutbox 10000, clientOutboxBytes
# 16 MiB, workerOutbox 10000, workerOutboxBytes 64 MiB), so each peak is that run's.
#
# The bound, with those queues: coordinator peak RSS under 200 MB and worker peak RSS under
# 250 MB in both runs, whatever N and G (at 68eceab run 2 took the worker to 1.4 GB and the
# coordinator to 204 MB, which it kept after the client closed). The coordinator holds for a slow
# client at most 16 MiB in its outbox and, over 1 KiB, unwritten in ZeroMQ's queue, and 1,000 small replies; a
# worker at most about 64 MiB of replies on the way back (docs/PROTOCOL.md, Backpressure).
#
# Usage: Scripts/slow-client.sh [--debug] [--events N] [--gets G] [--state-kib K] [--pause S]
#   --debug      use the debug build (`swift build`), not release: slower, the same bounds
#   --pause S    seconds the client waits, not reading, before it reads (default 5)
# Release: builds with `swift build -c release` (incremental; Scripts/bench.sh says when a clean
# build is needed). Needs python3 and pyzmq (Scripts/test.sh installs it).
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"

configuration=release
events=1000000
gets=200000
state_kib=100
pause=5
while [[ $# -gt 0 ]]; do
    case "$1" in
        --debug) configuration=debug; shift ;;
        --events) events="$2"; shift 2 ;;
        --gets) gets="$2"; shift 2 ;;
        --state-kib) state_kib="$2"; shift 2 ;;
        --pause) pause="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1'; see Scripts/slow-client.sh --help" ;;
    esac
done
for number in "$events" "$gets" "$state_kib" "$pause"; do
    [[ "$number" =~ ^[0-9]+$ ]] || die "expected a whole number, got '$number'"
done

ensure_dependencies
ensure_pyzmq
say "building ($configuration)"
swift build -c "$configuration" >&2
bin="$(swift build -c "$configuration" --show-bin-path)"
begin_launching

coordinator_bound_kb=$((200 * 1000))
worker_bound_kb=$((250 * 1000))

cat >"$work/topology.json" <<EOF
{
  "name": "slow-client",
  "coordinator": {
    "clients": "ipc://$work/clients.ipc",
    "workers": "ipc://$work/workers.ipc",
    "events": "ipc://$work/events.ipc"
  },
  "workers": [ { "name": "main" } ],
  "machines": [
    { "name": "auth", "type": "AuthFlow", "worker": "main" },
    { "name": "counter", "type": "Counter", "worker": "main", "keyed": true }
  ]
}
EOF

cat >"$work/client.py" <<'EOF'
import json, struct, sys, time
import zmq

endpoint, scenario, count, state_kib, pause = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
EVENT, GET, ACCEPTED, STATE, ERROR = 0x01, 0x02, 0x11, 0x10, 0x12
NO_WAIT = 0x02
context = zmq.Context()
socket = context.socket(zmq.DEALER)
socket.setsockopt(zmq.LINGER, 0)
socket.connect(endpoint)

def message(kind, correlation, address, payload=b"", flags=0):
    return [struct.pack(">BBBBQ", 0x47, 1, kind, flags, correlation), address.encode(), payload]

def request(kind, correlation, address, payload=b""):
    socket.send_multipart(message(kind, correlation, address, payload))
    while True:
        frames = socket.recv_multipart()
        if struct.unpack(">BBBBQ", frames[0])[4] == correlation:
            return frames

if scenario == "gets":
    request(EVENT, 1 << 60, "auth", b'"startLogin"')
    email = "e" * (state_kib * 1024) + "@example.com"
    reply = request(EVENT, (1 << 60) + 1, "auth", json.dumps({"updateEmail": {"_0": email}}).encode())
    print(f"auth's state: {len(reply[2])} bytes", file=sys.stderr)

started = time.monotonic()
for correlation in range(1, count + 1):
    if scenario == "events":
        socket.send_multipart(message(EVENT, correlation, "counter/slow", b'"increment"', NO_WAIT), copy=False)
    else:
        socket.send_multipart(message(GET, correlation, "auth"), copy=False)
print(f"sent {count} in {time.monotonic() - started:.1f} s without reading; waiting {pause} s", file=sys.stderr)
time.sleep(pause)

kinds, codes, seen, twice = {}, {}, set(), 0
poller = zmq.Poller()
poller.register(socket, zmq.POLLIN)
while len(seen) < count or poller.poll(1000):
    if not poller.poll(10000):
        break
    frames = socket.recv_multipart()
    correlation, kind = struct.unpack(">BBBBQ", frames[0])[4], frames[0][2]
    if correlation in seen:
        twice += 1
    seen.add(correlation)
    if kind == ERROR:
        code = json.loads(frames[2]).get("code", "?")
        codes[code] = codes.get(code, 0) + 1
    else:
        kinds[kind] = kinds.get(kind, 0) + 1
missing = count - len(seen & set(range(1, count + 1)))
own = sum(kinds.values())
print(json.dumps({"sent": count, "answered": len(seen), "own": own, "errors": codes, "missing": missing, "twice": twice}))
socket.close()
context.term()
EOF

# VmHWM and VmRSS of a process, in kB.
memory() { awk '/^VmHWM/ {h=$2} /^VmRSS/ {r=$2} END {print h+0, r+0}' "/proc/$1/status" 2>/dev/null || echo "0 0"; }

run() {
    local scenario="$1" count="$2"
    step "$scenario: $count requests without reading ($configuration build)"
    "$bin/fsm-launch" "$work/topology.json" --exit-with-parent --parent-pid $$ >"$work/launch.out" 2>"$work/launch.err" &
    launch_pid=$!
    for _ in $(seq 600); do grep -q '^ready' "$work/launch.out" 2>/dev/null && break; sleep 0.1; done
    grep -q '^ready' "$work/launch.out" || { cat "$work/launch.err" >&2; die "fsm-launch did not get ready within 60 s"; }
    local worker_pid
    worker_pid="$(ps --ppid "$launch_pid" -o pid= | head -n 1 | tr -d ' ')"
    [[ -n "$worker_pid" ]] || die "no worker process under fsm-launch ($launch_pid)"
    python3 "$work/client.py" "ipc://$work/clients.ipc" "$scenario" "$count" "$state_kib" "$pause"
    local now_pid
    now_pid="$(ps --ppid "$launch_pid" -o pid= | head -n 1 | tr -d ' ')"
    if [[ "$now_pid" != "$worker_pid" ]]; then
        # A worker that fell silent past the heartbeat timeout is declared lost and restarted: its
        # peak went with it, and its requests were answered worker-lost.
        echo "the worker was restarted during the run (pid $worker_pid, now ${now_pid:-none}); its peak is lost. From the log:"
        grep -E 'lost|exited|silent' "$work/launch.err" | head -n 5 || true
        worker_pid="$now_pid"
    fi
    read -r coordinator_peak _ < <(memory "$launch_pid")
    read -r worker_peak _ < <(memory "${worker_pid:-0}")
    # The client is gone: what was held for it is released (the coordinator trims at its next tick).
    sleep 2
    read -r _ coordinator_after < <(memory "$launch_pid")
    read -r _ worker_after < <(memory "${worker_pid:-0}")
    printf '%-12s peak RSS %7d kB (bound %d kB: %s), after the client closed %7d kB\n' \
        coordinator "$coordinator_peak" "$coordinator_bound_kb" \
        "$([[ $coordinator_peak -lt $coordinator_bound_kb ]] && echo within || echo OVER)" "$coordinator_after"
    printf '%-12s peak RSS %7d kB (bound %d kB: %s), after the client closed %7d kB\n' \
        worker "$worker_peak" "$worker_bound_kb" \
        "$([[ $worker_peak -lt $worker_bound_kb ]] && echo within || echo OVER)" "$worker_after"
    # grep -c prints 0 and fails when nothing matched: a client that kept up is no error.
    echo "coordinator warnings about slow clients: $(grep -c 'not reading its replies' "$work/launch.err" || true)"
    stop_launch
}

run events "$events"
run gets "$gets"
