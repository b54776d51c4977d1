#!/usr/bin/env bash
# Measures the latency of an acknowledged cross-process cancel (issue 22, item 6) at light load:
# one io request at a time runs on another worker and is cancelled by its machine's client.
# A benchmark, not a test: it asserts nothing but prints the figures.
#
# Topology: worker `edge` hosts `loader` (DataLoader, keyed); worker `io` runs its FetchItems,
# each of which takes 10 minutes (`--io-delay-ms 600000`), so every cancel lands mid-flight.
# Each round, a pyzmq client
#   1. sends `load` to a fresh loader/bN and waits for `effect … started` on the events socket
#      (the request was forwarded to `io`);
#   2. notes CLOCK_MONOTONIC and sends `cancel loader/bN fetch-items`;
#   3. waits for `effect … cancelled`, which the coordinator publishes once `io` said the task
#      ended; that event carries `taskEndedAtNs`, when `io` saw the task end, on its
#      CLOCK_MONOTONIC (one host: the same clock in every process).
# Reported: from the cancel sent to the task ended on `io` ("ended"), and to the `cancelled`
# event received by the client ("published"), as p50/p90/p99/p99.9/max over N rounds after W
# rounds of warm-up, with the load average before and after.
#
# Path of one cancel: client → coordinator → edge (the machine cancels its effect; the task's
# cancellation hops onto edge's loop and sends io-cancel) → coordinator → io (the task is
# cancelled; it ends; io-cancelled) → coordinator → events socket → client.
#
# Usage: Scripts/cancel-bench.sh [--debug] [-n N] [--warmup W]
#   --debug      use the debug build (`swift build`), not release
#   -n N         measured rounds (default 2000)
#   --warmup W   rounds left out first (default 200)
# Needs python3 and pyzmq (Scripts/test.sh installs it).
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"

configuration=release
rounds=2000
warmup=200
while [[ $# -gt 0 ]]; do
    case "$1" in
        --debug) configuration=debug; shift ;;
        -n) rounds="$2"; shift 2 ;;
        --warmup) warmup="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1'; see Scripts/cancel-bench.sh --help" ;;
    esac
done
for number in "$rounds" "$warmup"; do
    [[ "$number" =~ ^[0-9]+$ ]] || die "expected a whole number, got '$number'"
done
[[ "$rounds" -ge 1 ]] || die "-n must be at least 1"

ensure_dependencies
ensure_pyzmq
say "building ($configuration)"
swift build -c "$configuration" >&2
bin="$(swift build -c "$configuration" --show-bin-path)"
begin_launching

cat >"$work/topology.json" <<EOF
{
  "name": "cancel-bench",
  "coordinator": {
    "clients": "ipc://$work/clients.ipc",
    "workers": "ipc://$work/workers.ipc",
    "events": "ipc://$work/events.ipc"
  },
  "workers": [
    { "name": "edge" },
    { "name": "io", "arguments": ["--io-delay-ms", "600000"] }
  ],
  "machines": [ { "name": "loader", "type": "DataLoader", "worker": "edge", "keyed": true } ],
  "io": [ { "request": "FetchItems", "worker": "io" } ]
}
EOF

cat >"$work/client.py" <<'EOF'
import json, struct, sys, time
import zmq

clients, events, rounds, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
EVENT, CANCEL, STATE, ACCEPTED = 0x01, 0x03, 0x10, 0x11
context = zmq.Context()
dealer = context.socket(zmq.DEALER)
dealer.setsockopt(zmq.LINGER, 0)
dealer.setsockopt(zmq.RCVTIMEO, 10000)
dealer.connect(clients)
sub = context.socket(zmq.SUB)
sub.setsockopt(zmq.SUBSCRIBE, b"effect:loader/")
sub.setsockopt(zmq.RCVTIMEO, 10000)
sub.connect(events)
correlation = 0

def request(kind, address, payload, expect):
    global correlation
    correlation += 1
    dealer.send_multipart([struct.pack(">BBBBQ", 0x47, 1, kind, 0, correlation), address.encode(), payload])
    header, _, reply = dealer.recv_multipart()
    if header[2] != expect or struct.unpack(">Q", header[4:])[0] != correlation:
        sys.exit(f"unexpected reply to {address}: kind {header[2]:#x}, {reply[:200]!r}")

def effect(address, phase):
    """The next effect event of `address` in `phase`, and when it was received."""
    while True:
        frames = sub.recv_multipart()
        received = time.monotonic_ns()
        event = json.loads(frames[-1])
        # The coordinator's io-call events only: a worker's own effects (timers, tasks) carry a
        # "kind" and are published on the same topic.
        if event.get("address") == address and event.get("phase") == phase and "kind" not in event:
            return event, received

def load(address):
    request(EVENT, address, b'"load"', STATE)
    effect(address, "started")

# A new subscription takes a moment to reach the publisher: load until one `started` is seen.
probe = 0
sub.setsockopt(zmq.RCVTIMEO, 100)
while True:
    probe += 1
    request(EVENT, f"loader/probe{probe}", b'"load"', STATE)
    try:
        effect(f"loader/probe{probe}", "started")
        break
    except zmq.Again:
        if probe > 300:
            sys.exit("no effect events on the events socket after 300 probes")
sub.setsockopt(zmq.RCVTIMEO, 10000)

ended, published, fates = [], [], {}
for n in range(warmup + rounds):
    address = f"loader/b{n}"
    load(address)
    sent = time.monotonic_ns()
    request(CANCEL, address, b'"fetch-items"', ACCEPTED)
    event, received = effect(address, "cancelled")
    if n < warmup:
        continue
    fates[event.get("task")] = fates.get(event.get("task"), 0) + 1
    published.append(received - sent)
    if event.get("taskEndedAtNs") is not None:
        ended.append(event["taskEndedAtNs"] - sent)

def percentiles(values):
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))] / 1e6
    return {"p50": pick(0.50), "p90": pick(0.90), "p99": pick(0.99), "p99.9": pick(0.999), "max": values[-1] / 1e6}

print(json.dumps({"rounds": rounds, "warmup": warmup, "task": fates,
                  "endedMs": percentiles(ended), "publishedMs": percentiles(published)}))
EOF

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

step "cancel latency, $rounds rounds after $warmup of warm-up ($configuration build)"
echo "load average before: $(loadavg)   cores: $(nproc)"
"$bin/fsm-launch" "$work/topology.json" --log-level warning --exit-with-parent --parent-pid $$ \
    >"$work/launch.out" 2>"$work/launch.err" &
launch_pid=$!
for _ in $(seq 600); do grep -q '^ready' "$work/launch.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^ready' "$work/launch.out" || { cat "$work/launch.err" >&2; die "fsm-launch did not get ready within 60 s"; }
result="$(python3 "$work/client.py" "ipc://$work/clients.ipc" "ipc://$work/events.ipc" "$rounds" "$warmup")"
echo "load average after:  $(loadavg)"
python3 - "$result" <<'EOF'
import json, sys
r = json.loads(sys.argv[1])
print(f"task fates: {r['task']}")
for name, label in (("endedMs", "cancel sent → task ended on io"), ("publishedMs", "cancel sent → cancelled received")):
    p = r[name]
    print(f"{label:34} p50 {p['p50']:.3f} ms  p90 {p['p90']:.3f}  p99 {p['p99']:.3f}  p99.9 {p['p99.9']:.3f}  max {p['max']:.3f}")
EOF
warnings="$(grep -c -E 'warning|error' "$work/launch.err" || true)"
echo "fsm-launch warnings and errors during the run: $warnings"
stop_launch
