#!/usr/bin/env bash
# Issue 34, item 0, as a user would try it: on the default topology's machines, a pyzmq client
# sends no-wait `increment` events to counter/s0 … counter/s99 as fast as its socket takes them
# and reads nothing for S seconds (default 60; the issue asks for 60 and 300), then reads every
# reply. Meanwhile a second client sends `increment` to counter/probe four times a second and
# times each answer. A benchmark, not a test (SilentClientTests is the scaled test): it prints
#   - the silent client's count: sent, answered, busy, missing, answered twice;
#   - the other client's answers: how many, their kinds, p50/p99/max latency, how many > 1 s;
#   - whether a worker was declared lost or restarted, and whether fsm-launch still runs;
#   - the coordinator's peak RSS.
# Usage: Scripts/silent-client.sh [--debug] [--seconds S]
#   --debug      use the debug build (`swift build`), not release
# Needs python3 and pyzmq (Scripts/test.sh installs it).
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"

configuration=release
seconds=60
while [[ $# -gt 0 ]]; do
    case "$1" in
        --debug) configuration=debug; shift ;;
        --seconds) seconds="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1'; see Scripts/silent-client.sh --help" ;;
    esac
done
[[ "$seconds" =~ ^[0-9]+$ ]] || die "--seconds takes a whole number, got '$seconds'"

ensure_dependencies
ensure_pyzmq
say "building ($configuration)"
for product in fsm-launch fsm-worker; do swift build -c "$configuration" --product "$product" >&2; done
bin="$(swift build -c "$configuration" --show-bin-path)"
begin_launching

# The default topology's machines and workers, with this run's own endpoints and data.
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
topology = json.load(open("Topologies/default.json"))
topology.pop("$schema", None)
topology["coordinator"] = {key: f"ipc://{work}/{key}.ipc" for key in ("clients", "workers", "events")}
json.dump(topology, open(f"{work}/topology.json", "w"), indent=2)
PY

cat >"$work/silent.py" <<'PY'
import json, struct, sys, time, zmq
endpoint, seconds = sys.argv[1], float(sys.argv[2])
EVENT, ERROR, NO_WAIT = 0x01, 0x12, 0x02
context = zmq.Context()
socket = context.socket(zmq.DEALER)
socket.setsockopt(zmq.LINGER, 0)
socket.connect(endpoint)
started, sent = time.monotonic(), 0
while time.monotonic() - started < seconds:
    sent += 1
    header = struct.pack(">BBBBQ", 0x47, 1, EVENT, NO_WAIT, sent)
    socket.send_multipart([header, b"counter/s%d" % (sent % 100), b'"increment"'])
print(f"silent client: sent {sent:,} in {time.monotonic() - started:.0f} s without reading; reading", file=sys.stderr, flush=True)
seen, twice, kinds = set(), 0, {}
poller = zmq.Poller()
poller.register(socket, zmq.POLLIN)
while len(seen) < sent and poller.poll(30000):
    frames = socket.recv_multipart()
    correlation, kind = struct.unpack(">BBBBQ", frames[0])[4], frames[0][2]
    twice += correlation in seen
    seen.add(correlation)
    name = json.loads(frames[2]).get("code", "error") if kind == ERROR else "own reply"
    kinds[name] = kinds.get(name, 0) + 1
print(json.dumps({"sent": sent, "answered": len(seen), "missing": sent - len(seen), "twice": twice, "kinds": kinds}))
PY

cat >"$work/probe.py" <<'PY'
import json, struct, sys, time, zmq
endpoint, stop_file = sys.argv[1], sys.argv[2]
import os
EVENT, ERROR = 0x01, 0x12
context = zmq.Context()
socket = context.socket(zmq.DEALER)
socket.setsockopt(zmq.LINGER, 0)
socket.connect(endpoint)
latencies, kinds, correlation = [], {}, 0
while not os.path.exists(stop_file):
    correlation += 1
    sent = time.monotonic()
    socket.send_multipart([struct.pack(">BBBBQ", 0x47, 1, EVENT, 0, correlation), b"counter/probe", b'"increment"'])
    while socket.poll(30000):
        frames = socket.recv_multipart()
        if struct.unpack(">BBBBQ", frames[0])[4] == correlation:
            latencies.append(time.monotonic() - sent)
            kind = json.loads(frames[2]).get("code", "error") if frames[0][2] == ERROR else "own state"
            kinds[kind] = kinds.get(kind, 0) + 1
            break
    else:
        kinds["no answer in 30 s"] = kinds.get("no answer in 30 s", 0) + 1
    time.sleep(0.25)
latencies.sort()
def at(q): return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else 0
print(json.dumps({"requests": correlation, "kinds": kinds, "p50_ms": round(at(0.5), 1), "p99_ms": round(at(0.99), 1),
                  "max_ms": round(latencies[-1] * 1000 if latencies else 0, 1),
                  "over_1s": sum(1 for l in latencies if l > 1)}))
PY

step "the default topology ($configuration build); a client silent for $seconds s"
"$bin/fsm-launch" "$work/topology.json" --data-dir "$work/data" --exit-with-parent --parent-pid $$ \
    >"$work/launch.out" 2>"$work/launch.err" &
launch_pid=$!
for _ in $(seq 600); do grep -q '^ready' "$work/launch.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^ready' "$work/launch.out" || { cat "$work/launch.err" >&2; die "fsm-launch did not get ready within 60 s"; }
workers_before="$(ps --ppid "$launch_pid" -o pid= | sort | tr -d ' ' | tr '\n' ' ')"
python3 "$work/probe.py" "ipc://$work/clients.ipc" "$work/stop-probe" >"$work/probe.out" &
probe_pid=$!
python3 "$work/silent.py" "ipc://$work/clients.ipc" "$seconds" | sed 's/^/silent client: /'
touch "$work/stop-probe"
wait "$probe_pid" || true
sed 's/^/the other client: /' "$work/probe.out"
workers_after="$(ps --ppid "$launch_pid" -o pid= | sort | tr -d ' ' | tr '\n' ' ')"
losses="$(grep -ac 'lost (' "$work/launch.err" || true)"
echo "workers: pids before ${workers_before}, after ${workers_after}; declared lost ${losses} times"
grep -a -E 'lost \(|did not run|escalat' "$work/launch.err" | cut -c1-300 | head -n 10 || true
if kill -0 "$launch_pid" 2>/dev/null; then echo "fsm-launch: running"; else echo "fsm-launch: EXITED"; fi
awk '/^VmHWM/ { printf "coordinator (fsm-launch) peak RSS: %d MB\n", $2 / 1000 }' "/proc/$launch_pid/status" 2>/dev/null || true
