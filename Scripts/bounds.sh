#!/usr/bin/env bash
# Issue 34's attacks 4 and 5 against a launched topology over CURVE (tcp on 127.0.0.1), with
# the coordinator's RSS sampled and `fsm-send list` timed throughout. A measurement, not a test
# (Tests/GroveEndToEndTests/BoundsTests.swift holds the pass/fail versions): it prints the
# figures, and whether the coordinator's peak stayed under the bound docs/SECURITY.md states
# ("Bounds before work") and every `list` answered within a second.
#
#   address        a client whose key has `send` on `counter*` only stops reading: it sends
#                  no-wait events until the coordinator says it is behind, then N requests for
#                  distinct addresses of M MiB (default 60 of 8 MiB), then reads every reply and
#                  counts them (each request exactly one reply; what the big ones got).
#   subscription   a watcher whose key has `read` sends one subscription frame of S MiB
#                  (default 64) on its XSUB socket, then (with --prefixes P) P distinct prefixes
#                  of 1 KiB; it counts the publications it gets after.
#   watcher        a watcher whose key has `read` subscribes to everything and never reads
#                  while a client grows a keyed AppNavigator's state to K KB (default 900) and
#                  changes it C times (default 1000): the second review's run.
#
# Each mode launches its own topology (default limits and queues), so each peak is its own.
# Figures: the coordinator's RSS before, its peak (sampled every 0.2 s, and VmHWM), at the end
# of the attack and 2 s after the attacker closed; `fsm-send list` answers (count, p50, max).
#
# Usage: Scripts/bounds.sh [--debug] [--mode address|subscription|watcher|both|all] [--requests N]
#                          [--address-mib M] [--subscription-mib S] [--prefixes P] [--pause SECONDS]
#                          [--state-kb K] [--changes C]
#   --mode      both (the default) runs address and subscription; all runs the three
#   --debug     the debug build (`swift build`), not release
#   --pause     seconds the address attacker waits, not reading, before it reads (default 5)
# Release: builds with `swift build -c release` (incremental). Needs python3 and pyzmq.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"

configuration=release
mode=both
requests=60
address_mib=8
subscription_mib=64
prefixes=0
pause=5
state_kb=900
changes=1000
while [[ $# -gt 0 ]]; do
    case "$1" in
        --debug) configuration=debug; shift ;;
        --mode) mode="$2"; shift 2 ;;
        --requests) requests="$2"; shift 2 ;;
        --address-mib) address_mib="$2"; shift 2 ;;
        --subscription-mib) subscription_mib="$2"; shift 2 ;;
        --prefixes) prefixes="$2"; shift 2 ;;
        --pause) pause="$2"; shift 2 ;;
        --state-kb) state_kb="$2"; shift 2 ;;
        --changes) changes="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1'; see Scripts/bounds.sh --help" ;;
    esac
done
[[ "$mode" =~ ^(address|subscription|watcher|both|all)$ ]] || die "--mode is address, subscription, watcher, both or all, not '$mode'"
for number in "$requests" "$address_mib" "$subscription_mib" "$prefixes" "$pause" "$state_kb" "$changes"; do
    [[ "$number" =~ ^[0-9]+$ ]] || die "expected a whole number, got '$number'"
done

ensure_dependencies
ensure_pyzmq
say "building ($configuration)"
swift build -c "$configuration" >&2
bin="$(swift build -c "$configuration" --show-bin-path)"
begin_launching

# docs/SECURITY.md, "Bounds before work": the coordinator's RSS under these attacks, default limits.
bound_kb=$((300 * 1024))

for pair in coordinator ops sender watcher; do "$bin/fsm-keys" new "$pair" --dir "$work/keys" >/dev/null; done
cat >"$work/topology.json" <<EOF
{
  "name": "bounds",
  "coordinator": { "clients": "tcp://127.0.0.1:*", "workers": "tcp://127.0.0.1:*", "events": "tcp://127.0.0.1:*" },
  "workers": [ { "name": "main" } ],
  "machines": [ { "name": "counter", "type": "Counter", "worker": "main", "keyed": true },
                { "name": "nav", "type": "AppNavigator", "worker": "main", "keyed": true } ],
  "security": {
    "coordinatorKey": "keys/coordinator.key_secret",
    "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                 { "key": "keys/sender.key", "roles": ["send"], "machines": ["counter*"] },
                 { "key": "keys/watcher.key", "roles": ["read"] } ]
  }
}
EOF

cat >"$work/attack.py" <<'EOF'
import json, os, sys, time
import zmq, zmq.auth

mode, endpoint, work = sys.argv[1], sys.argv[2], sys.argv[3]
count, mib, prefixes, pause = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
context = zmq.Context()
server, _ = zmq.auth.load_certificate(f"{work}/keys/coordinator.key")
pub, sec = zmq.auth.load_certificate(f"{work}/keys/{dict(address='sender', watcher='ops').get(mode, 'watcher')}.key_secret")
socket = context.socket(zmq.XSUB if mode == "subscription" else zmq.DEALER)
socket.linger = 0
if mode == "address":
    # Read nothing, and let little wait on the way: small queues fill sooner.
    socket.rcvhwm = 5
    socket.rcvbuf = 4096
socket.curve_serverkey, socket.curve_publickey, socket.curve_secretkey = server, pub, sec
socket.connect(endpoint)

def header(kind, correlation, flags=0):
    return bytes([0x47, 1, kind, flags]) + correlation.to_bytes(8, "big")

if mode == "address":
    correlation = 0
    slow = b"counter/" + b"k" * 800
    # Stop reading: no-wait events whose replies carry a long address fill the buffers on the
    # way until the coordinator holds replies for this client (it logs that it is behind).
    while correlation < 500000 and not os.path.exists(f"{work}/behind"):
        for _ in range(2000):
            correlation += 1
            socket.send_multipart([header(1, correlation, 2), slow, b'"increment"'])
        time.sleep(0.2)
    first = correlation + 1
    started = time.monotonic()
    for index in range(count):
        correlation += 1
        socket.send_multipart([header(1, correlation), b"counter/" + (b"a" * (mib << 20)) + str(index).encode(), b'"increment"'])
    print(f"sent {count} addresses of {mib} MiB in {time.monotonic() - started:.1f} s (after {first - 1} to fall behind); "
          f"not reading for {pause} s", file=sys.stderr, flush=True)
    open(f"{work}/attack-sent", "w").close()
    time.sleep(pause)
    answers, codes, biggest = {}, {}, 0
    while True:
        if not socket.poll(500 if len(answers) >= correlation else 20000):
            break
        h, address, payload = socket.recv_multipart()
        number = int.from_bytes(h[4:12], "big")
        answers[number] = answers.get(number, 0) + 1
        if number >= first:
            code = json.loads(payload).get("code", "?") if h[2] == 0x12 else "own reply"
            codes[code] = codes.get(code, 0) + 1
            biggest = max(biggest, len(h) + len(address) + len(payload))
    print(json.dumps({"sent": correlation, "answered": len(answers), "twice": sum(1 for n in answers.values() if n != 1),
                      "big requests' replies": codes, "largest of those replies (bytes)": biggest}))
elif mode == "watcher":
    # count changes of a state of mib KB (the run passes --state-kb), each waiting for its state,
    # while a watcher with the read key subscribed to everything never reads.
    pub, sec = zmq.auth.load_certificate(f"{work}/keys/watcher.key_secret")
    silent = context.socket(zmq.SUB)
    silent.linger, silent.rcvhwm, silent.rcvbuf = 0, 1, 4096
    silent.curve_serverkey, silent.curve_publickey, silent.curve_secretkey = server, pub, sec
    silent.setsockopt(zmq.SUBSCRIBE, b"")
    silent.connect(sys.argv[8])
    time.sleep(1)
    def event(correlation, payload):
        socket.send_multipart([header(1, correlation), b"nav/big", payload])
        while True:
            h, _, reply = socket.recv_multipart()
            if int.from_bytes(h[4:12], "big") == correlation: return h[2] == 0x10
    started = time.monotonic()
    grown = event(1, json.dumps({"push": {"_0": {"detail": {"_0": {"id": "i", "title": "x" * (mib * 1000)}}}}}).encode())
    open(f"{work}/attack-sent", "w").close()
    changed = sum(event(2 + index, b'{"presentModal":{"_0":{"settings":{}}}}' if index % 2 == 0 else b'{"dismissModal":{}}') for index in range(count))
    print(f"grew nav/big to {mib} KB and changed it {changed} times in {time.monotonic() - started:.1f} s; the watcher read nothing",
          file=sys.stderr, flush=True)
    time.sleep(pause)
    print(json.dumps({"grown": grown, "changes": changed}))
else:
    started = time.monotonic()
    socket.send(b"\x01state:" + b"x" * (mib << 20))
    for index in range(prefixes):
        socket.send(b"\x01state:" + (b"p%07d" % index) * 128)
    socket.send(b"\x01state:counter/")
    print(f"subscribed: one frame of {mib} MiB, {prefixes} prefixes of 1 KiB in {time.monotonic() - started:.1f} s",
          file=sys.stderr, flush=True)
    open(f"{work}/attack-sent", "w").close()
    received, end = 0, time.monotonic() + pause + 5
    while time.monotonic() < end:
        if socket.poll(200):
            socket.recv_multipart()
            received += 1
    print(json.dumps({"publications received after subscribing": received}))
# pyzmq has been seen to crash closing a socket with a 64 MiB subscription queued: skip the teardown.
sys.stdout.flush()
os._exit(0)
EOF

# VmHWM and VmRSS of a process, in kB.
memory() { awk '/^VmHWM/ {h=$2} /^VmRSS/ {r=$2} END {print h+0, r+0}' "/proc/$1/status" 2>/dev/null || echo "0 0"; }

# The coordinator's key as its 40 Z85 characters: fsm-send takes a path of exactly 40 characters
# (mktemp's /tmp/tmp.XXXXXXXXXX/keys/coordinator.key is one) for a key. After `=`, since a Z85
# key may start with `-`, which would read as an option.
ops=(--key-file "$work/keys/ops.key_secret" --coordinator-key="$("$bin/fsm-keys" show "$work/keys/coordinator.key")")

run() {
    local which="$1" count="$2" mib="$3"
    local what="a subscription of $mib MiB, $prefixes prefixes"
    [[ $which == address ]] && what="$count addresses of $mib MiB"
    [[ $which == watcher ]] && what="a watcher that does not read, $count changes of a $mib KB state"
    step "$which: $what ($configuration build)"
    rm -f "$work/behind" "$work/attack-sent" "$work/samples" "$work/lists"
    "$bin/fsm-launch" "$work/topology.json" --exit-with-parent --parent-pid $$ >"$work/launch.out" 2>"$work/launch.err" &
    launch_pid=$!
    for _ in $(seq 600); do grep -q '^ready' "$work/launch.out" 2>/dev/null && break; sleep 0.1; done
    grep -q '^ready' "$work/launch.out" || { cat "$work/launch.err" >&2; die "fsm-launch did not get ready within 60 s"; }
    local clients events
    clients="$(sed -n 's/^ready \([^ ]*\).*/\1/p' "$work/launch.out" | head -n 1)"
    events="$("$bin/fsm-send" list --endpoint "$clients" "${ops[@]}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')"
    local before
    read -r _ before < <(memory "$launch_pid")
    # Samples: the coordinator's RSS every 0.2 s; `fsm-send list` timed back to back.
    ( while kill -0 "$launch_pid" 2>/dev/null; do read -r _ rss < <(memory "$launch_pid"); echo "$rss" >>"$work/samples"; sleep 0.2; done ) &
    local sampler=$!
    ( while kill -0 "$launch_pid" 2>/dev/null; do
        start=$(date +%s%N)
        if timeout 10 "$bin/fsm-send" list --endpoint "$clients" "${ops[@]}" >/dev/null 2>&1; then status=ok; else status=failed; fi
        phase=before; [[ -e "$work/attack-sent" ]] && phase=attack
        echo "$(( ($(date +%s%N) - start) / 1000000 )) $status $phase" >>"$work/lists"
        sleep 0.3
      done ) &
    local lister=$!
    local endpoint="$clients"
    [[ $which == subscription ]] && endpoint="$events"
    python3 "$work/attack.py" "$which" "$endpoint" "$work" "$count" "$mib" "$prefixes" "$pause" "$events" &
    local attacker=$!
    if [[ $which == address ]]; then
        for _ in $(seq 1200); do grep -q 'not reading its replies' "$work/launch.err" && break; sleep 0.1; done
        touch "$work/behind"
    fi
    for _ in $(seq 3000); do [[ -e "$work/attack-sent" ]] && break; sleep 0.1; done
    read -r _ during < <(memory "$launch_pid")
    wait "$attacker" || echo "the attacker failed (status $?)"
    read -r _ end < <(memory "$launch_pid")
    sleep 2
    local peak after
    read -r peak after < <(memory "$launch_pid")
    kill "$sampler" "$lister" 2>/dev/null || true
    wait "$sampler" "$lister" 2>/dev/null || true
    local sampled
    sampled="$(sort -n "$work/samples" | tail -n 1)"
    printf 'coordinator RSS: %d kB before, %d kB once the attack was sent, %d kB at its end, %d kB 2 s after; peak %d kB (VmHWM; sampled %d kB): %s the bound of %d kB\n' \
        "$before" "$during" "$end" "$after" "$peak" "${sampled:-0}" "$([[ $peak -lt $bound_kb ]] && echo within || echo OVER)" "$bound_kb"
    python3 - "$work/lists" <<'PY'
import sys
rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
for phase, what in (("before", "before the attack (a client falling behind, if any)"), ("attack", "once the attack was sent")):
    times = sorted(int(ms) for ms, status, when in rows if status == "ok" and when == phase)
    failed = sum(1 for _, status, when in rows if status != "ok" and when == phase)
    if times:
        print(f"fsm-send list {what}: {len(times)} answered, {failed} failed; p50 {times[len(times) // 2]} ms, max {times[-1]} ms: "
              + ("every one within a second" if times[-1] < 1000 and failed == 0 else "NOT all within a second"))
    elif failed:
        print(f"fsm-send list {what}: none answered, {failed} failed")
PY
    grep -E 'not reading|limits\.|reset [0-9]+ connection|lost|refused' "$work/launch.err" | sed 's/^/  log: /' | cut -c1-240 | sort | uniq -c | sort -rn | head -n 8 || true
    stop_launch
}

if [[ $mode =~ ^(address|both|all)$ ]]; then run address "$requests" "$address_mib"; fi
if [[ $mode =~ ^(subscription|both|all)$ ]]; then run subscription 1 "$subscription_mib"; fi
if [[ $mode =~ ^(watcher|all)$ ]]; then run watcher "$changes" "$state_kb"; fi
