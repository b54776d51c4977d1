#!/usr/bin/env bash
# Measures how long a worker that traps (a Swift runtime error) takes to come back, for each
# SWIFT_BACKTRACE setting, side by side. A benchmark, not a test: it asserts nothing but prints
# the figures.
#
# Swift's backtracer runs when a process traps, before it exits: by default it symbolicates the
# whole backtrace (reads the debug information of every image), which on a large binary takes
# seconds, and the worker is restarted only once its process has ended. fsm-launch therefore
# starts its workers with its own SWIFT_BACKTRACE unless the environment sets one (see
# ARCHITECTURE.md, "Supervision"); this measures what each choice costs.
#
# One topology per setting, all running at once (each fsm-launch gets the setting in its
# environment, which its workers inherit; "fsm-launch" leaves it unset, so fsm-launch chooses).
# Each has one worker `w` (fsm-worker --with-test-machines) hosting `crashy`
# (CrashTestCounter, durability none, so the trapping event is never quarantined), restarted at
# once (backoff 0). Round after round, taking the topologies in turn, a pyzmq client sends
# `crashWorkerForTesting` to `crashy` and times, from the send, the coordinator's `worker:w`
# publications: `lost` (the process has ended: fsm-launch saw it exit) and `registered` (the
# new process is welcomed and serves again). Reported: median and max over N rounds, after a
# round of warm-up; a setting whose worker is not back within 30 s is reported as such and left
# out of the later rounds (its fsm-launch, and a backtracer that hangs, are killed at the end).
#
# Usage: Scripts/trap-bench.sh [--release] [-n N] [settings...]
#   --release    use the release build (`swift build -c release`), not debug
#   -n N         rounds per setting (default 5)
#   settings     SWIFT_BACKTRACE values to compare (default: enable=yes symbolicate=fast
#                symbolicate=off enable=no fsm-launch); "fsm-launch" leaves it unset
# Needs python3 and pyzmq (Scripts/test.sh installs it).
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"

configuration=debug
rounds=5
settings=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --release) configuration=release; shift ;;
        -n) rounds="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown argument '$1'; see Scripts/trap-bench.sh --help" ;;
        *) settings+=("$1"); shift ;;
    esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "-n must be a whole number of at least 1, got '$rounds'"
[[ ${#settings[@]} -gt 0 ]] || settings=(enable=yes symbolicate=fast symbolicate=off enable=no fsm-launch)

ensure_dependencies
ensure_pyzmq
say "building ($configuration)"
swift build -c "$configuration" --product fsm-launch >&2
swift build -c "$configuration" --product fsm-worker >&2
bin="$(swift build -c "$configuration" --show-bin-path)"

work="$(mktemp -d)"
pids=()
stop_all() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        # One whose worker never ended (a backtracer that hangs) waits for it forever.
        kill -KILL "$pid" 2>/dev/null || true
    done
    # Backtracers that hang outlive everything; they write to this run's files, which is how
    # they are told from anyone else's.
    for fd in /proc/[0-9]*/fd/2; do
        if [[ "$(readlink "$fd" 2>/dev/null)" == "$work/"* ]]; then
            pid="${fd#/proc/}"; kill -KILL "${pid%%/*}" 2>/dev/null || true
        fi
    done
    rm -rf "$work"
}
trap stop_all EXIT

endpoints=()
for index in "${!settings[@]}"; do
    dir="$work/t$index"
    mkdir -p "$dir"
    cat >"$dir/topology.json" <<EOF
{
  "name": "trap-bench-$index",
  "coordinator": {
    "clients": "ipc://$dir/clients.ipc",
    "workers": "ipc://$dir/workers.ipc",
    "events": "ipc://$dir/events.ipc"
  },
  "workers": [
    { "name": "w", "arguments": ["--with-test-machines"],
      "supervision": { "intensity": 1000, "periodMs": 1000, "backoff": { "initialMs": 0, "maxMs": 0 } } }
  ],
  "machines": [ { "name": "crashy", "type": "CrashTestCounter", "worker": "w" } ]
}
EOF
    setting="${settings[$index]}"
    (
        unset SWIFT_BACKTRACE
        [[ "$setting" == fsm-launch ]] || export SWIFT_BACKTRACE="$setting"
        exec "$bin/fsm-launch" "$dir/topology.json" --log-level warning --exit-with-parent --parent-pid $$ \
            >"$dir/launch.out" 2>"$dir/launch.err"
    ) &
    pids+=($!)
    endpoints+=("ipc://$dir/clients.ipc" "ipc://$dir/events.ipc")
done
for index in "${!settings[@]}"; do
    dir="$work/t$index"
    for _ in $(seq 600); do grep -q '^ready' "$dir/launch.out" 2>/dev/null && break; sleep 0.1; done
    grep -q '^ready' "$dir/launch.out" || { cat "$dir/launch.err" >&2; die "fsm-launch ($index) did not get ready within 60 s"; }
done

cat >"$work/client.py" <<'EOF'
import json, statistics, struct, sys, time
import zmq

rounds, settings, endpoints = int(sys.argv[1]), sys.argv[2].split(" "), sys.argv[3:]
EVENT, NO_WAIT = 0x01, 0x02
context = zmq.Context()
topologies = []
for index, setting in enumerate(settings):
    dealer = context.socket(zmq.DEALER)
    dealer.setsockopt(zmq.LINGER, 0)
    dealer.connect(endpoints[2 * index])
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"worker:w")
    sub.setsockopt(zmq.RCVTIMEO, 30000)
    sub.connect(endpoints[2 * index + 1])
    topologies.append({"setting": setting, "dealer": dealer, "sub": sub, "lost": [], "back": [], "stuck": None})

def phase(sub, wanted):
    """When the next `worker:w` publication in phase `wanted` came; None after 30 s without it."""
    try:
        while True:
            frames = sub.recv_multipart()
            if json.loads(frames[-1]).get("phase") == wanted:
                return time.monotonic_ns()
    except zmq.Again:
        return None

def crash(topology):
    global correlation
    correlation += 1
    topology["dealer"].send_multipart([struct.pack(">BBBBQ", 0x47, 1, EVENT, NO_WAIT, correlation), b"crashy",
                                       b'"crashWorkerForTesting"'])

# A round of warm-up, timed by nothing: a new subscription takes a moment to reach the
# publisher, so only the `registered` that follows the restart (long after) is awaited.
correlation = 0
for topology in topologies:
    crash(topology)
    if phase(topology["sub"], "registered") is None:
        topology["stuck"] = "in the warm-up"

for _ in range(rounds):
    for topology in topologies:
        if topology["stuck"]:
            continue
        sent = time.monotonic_ns()
        crash(topology)
        lost = phase(topology["sub"], "lost")
        back = phase(topology["sub"], "registered") if lost is not None else None
        if back is None:
            topology["stuck"] = f"in round {len(topology['back']) + 1}"
            continue
        topology["lost"].append((lost - sent) / 1e6)
        topology["back"].append((back - sent) / 1e6)

for topology in topologies:
    lost, back = topology["lost"], topology["back"]
    line = f"{topology['setting']:18}"
    if back:
        line += (f" trap → exit seen  median {statistics.median(lost):6.0f} ms  max {max(lost):6.0f}   "
                 f"trap → worker back  median {statistics.median(back):6.0f} ms  max {max(back):6.0f}  ({len(back)} rounds)")
    if topology["stuck"]:
        line += f" not back within 30 s {topology['stuck']}: the trapped worker did not end"
    print(line)
EOF

step "trap → worker back, $rounds rounds per SWIFT_BACKTRACE setting ($configuration build)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)   cores: $(nproc)"
python3 "$work/client.py" "$rounds" "${settings[*]}" "${endpoints[@]}"
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
