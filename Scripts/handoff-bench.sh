#!/usr/bin/env bash
# Measures the time to hand off 10,000 keyed instances (issue 37's done-when): how long after a
# worker is killed with SIGKILL its instances answer from the other worker of the pool with
# their committed state. A benchmark, not a test: it asserts nothing, but prints the figures and
# any instance that answered with another state than the one acknowledged (none lost is part of
# what it shows).
#
# One topology: a pool `pool` of two workers (fsm-worker) hosting keyed `counter` instances
# (Counter), durability `state` in PostgreSQL with `durability.handoff` (graceMs), heartbeat
# every 250 ms with a timeout of 5000 ms (a worker claims each new instance in the store on its
# loop, one round trip each, and a debug build filling 10,000 keys misses a shorter timeout),
# the pool's supervision backoff an hour so that the killed worker stays down.
# A Python client (pyzmq, docs/PROTOCOL.md's batches, 200 envelopes a message) sends each of N
# keys (`counter/0` ... `counter/N-1`) one `add` of its own amount and keeps what was
# acknowledged; the store says which keys pool-1 owns. Then pool-1 is killed with SIGKILL and
# the client reads every one of pool-1's keys (`get`, one batch of 200 at a time: the adopter
# claims each instance in the store on its loop) round after round until each answers with
# a state (an `unavailable` is asked again in the next round) and compares it with the count
# acknowledged. Printed: the times from the kill to the first and to the last answer, the same
# minus the grace period (what is left includes the time to declare the worker lost), pool-2's resident memory before and after, and the workers' handoff log lines.
#
# Usage: Scripts/handoff-bench.sh [--bin DIR] [--keys N] [--grace MS]
#   --bin DIR    the folder of built fsm-launch, fsm-worker and fsm-load (default: the release
#                build if built, else the debug build; neither is built here)
#   --keys N     keyed instances (default 10000)
#   --grace MS   durability.handoff.graceMs (default 1000)
#   --heartbeat-timeout MS   heartbeat.timeoutMs (default 5000)
# The PostgreSQL server: GROVE_TEST_POSTGRES_URL and GROVE_TEST_POSTGRES_PASSWORD_FILE, as for
# the tests (Scripts/test.sh sets a server up and exports them). The run's rows are deleted after.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"

bin=""
keys=10000
grace=1000
heartbeat=5000
while [[ $# -gt 0 ]]; do
    case "$1" in
        --bin) bin="$2"; shift 2 ;;
        --keys) keys="$2"; shift 2 ;;
        --grace) grace="$2"; shift 2 ;;
        --heartbeat-timeout) heartbeat="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1'; see Scripts/handoff-bench.sh --help" ;;
    esac
done
[[ "$keys" =~ ^[1-9][0-9]*$ && "$keys" -ge 2 ]] || die "--keys must be a whole number of at least 2, got '$keys'"
[[ "$grace" =~ ^[0-9]+$ ]] || die "--grace must be a whole number of milliseconds, got '$grace'"
[[ "$heartbeat" =~ ^[1-9][0-9]*$ && "$heartbeat" -gt 250 ]] || die "--heartbeat-timeout must be a whole number of milliseconds above 250, got '$heartbeat'"

ensure_dependencies
ensure_pyzmq
# Not ensure_test_postgres: it sets the role's password anew, under tests that may be running.
[[ -n "${GROVE_TEST_POSTGRES_URL:-}" && -n "${GROVE_TEST_POSTGRES_PASSWORD_FILE:-}" ]] \
    || die "no PostgreSQL server: set GROVE_TEST_POSTGRES_URL (postgres://user@host:port/database) and GROVE_TEST_POSTGRES_PASSWORD_FILE (a file of mode 0600 holding the password), as Scripts/test.sh does"
command -v psql >/dev/null 2>&1 || die "psql is missing (Debian's postgresql-client); it reads which keys a worker owns"

if [[ -z "$bin" ]]; then
    release="$(swift build -c release --show-bin-path)"
    if [[ -x "$release/fsm-launch" && -x "$release/fsm-worker" && -x "$release/fsm-load" ]]; then
        bin="$(release_tools "$release")"
        build="release"
    else
        bin="$(swift build --show-bin-path)"
        [[ -x "$bin/fsm-launch" && -x "$bin/fsm-worker" ]] || die "no built tools in $release or $bin; run swift build, or pass --bin"
        build="debug"
    fi
else
    build="given"
fi
say "tools: $bin ($build build)"

begin_launching
dir="$work/handoff"
mkdir -p "$dir"
name="handoff-bench-$$"
cat >"$dir/topology.json" <<EOF
{
  "name": "$name",
  "coordinator": {
    "clients": "ipc://$dir/clients",
    "workers": "ipc://$dir/workers",
    "events": "ipc://$dir/events"
  },
  "workers": [ { "name": "pool", "count": 2, "supervision": { "backoff": { "initialMs": 3600000, "maxMs": 3600000 } } } ],
  "machines": [ { "name": "counter", "type": "Counter", "worker": "pool", "keyed": true, "durability": "state" } ],
  "durability": {
    "postgres": { "url": "$GROVE_TEST_POSTGRES_URL", "passwordFile": "$GROVE_TEST_POSTGRES_PASSWORD_FILE" },
    "handoff": { "graceMs": $grace }
  },
  "heartbeat": { "intervalMs": 250, "timeoutMs": $heartbeat },
  "queues": { "mailboxCapacity": 65536, "workerOutbox": 100000, "clientOutbox": 100000 },
  "limits": { "instancesPerMachine": $(( keys + 1000 )) }
}
EOF
# Its rows go with the run.
drop_rows() {
    PGPASSWORD="$(cat "$GROVE_TEST_POSTGRES_PASSWORD_FILE")" psql "$GROVE_TEST_POSTGRES_URL" -qtA >/dev/null 2>&1 <<SQL || true
DELETE FROM grove_machines WHERE topology = '$name';
DELETE FROM grove_journal WHERE topology = '$name';
DELETE FROM grove_journal_runs WHERE topology = '$name';
DELETE FROM grove_dead_letters WHERE topology = '$name';
DELETE FROM grove_crashes WHERE topology = '$name';
DELETE FROM grove_workers WHERE topology = '$name';
SQL
}
trap 'stop_launch; drop_rows; rm -rf "$work"' EXIT

"$bin/fsm-launch" "$dir/topology.json" >"$dir/launch.log" 2>&1 &
launch_pid=$!
for _ in $(seq 300); do grep -q '^ready ' "$dir/launch.log" && break; sleep 0.1; done
grep -q '^ready ' "$dir/launch.log" || { tail -20 "$dir/launch.log"; die "the topology was not ready within 30 s"; }

step "$build build; $keys keys, one add each; kill -9 of pool-1; graceMs $grace, heartbeat timeout $heartbeat ms"
PGPASSWORD="$(cat "$GROVE_TEST_POSTGRES_PASSWORD_FILE")" python3 - "ipc://$dir/clients" "$keys" "$grace" "$name" \
    "$GROVE_TEST_POSTGRES_URL" <<'PY' || { tail -30 "$dir/launch.log" | sed 's/^/    launch: /'; die "the measurement failed (above)"; }
import json, os, signal, struct, subprocess, sys, time, zmq

endpoint, keys, grace, topology, url = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
socket = zmq.Context().socket(zmq.DEALER)
socket.setsockopt(zmq.LINGER, 0)
socket.connect(endpoint)
correlation = 0

def request(kind, address, payload=b""):
    global correlation
    correlation += 1
    socket.send_multipart([struct.pack(">BBBBQ", 0x47, 1, kind, 0, correlation), address.encode(), payload])
    if not socket.poll(10000):
        sys.exit(f"no answer to request {kind:#x} within 10 s")
    _, _, answer = socket.recv_multipart()
    return json.loads(answer) if answer else None

def envelope(kind, number, address, payload):
    a = address.encode()
    return struct.pack(">BBQH", kind, 0, number, len(a)) + a + struct.pack(">I", len(payload)) + payload

def envelopes(payload):
    offset = 0
    while offset < len(payload):
        kind, _, number, length = struct.unpack_from(">BBQH", payload, offset)
        offset += 12 + length
        (size,) = struct.unpack_from(">I", payload, offset)
        yield kind, number, payload[offset + 4:offset + 4 + size]
        offset += 4 + size

def exchange(requests, batch=200, window=10):
    """Sends (kind, address, payload) requests in batches, at most `window` batches unanswered;
    returns {index: (kind, payload, monotonic time of the answer)}."""
    global correlation
    answers, sent, base = {}, 0, correlation + 1
    correlation += len(requests)
    while len(answers) < len(requests):
        while sent < len(requests) and sent - len(answers) < batch * window:
            part = requests[sent:sent + batch]
            body = b"".join(envelope(kind, base + sent + i, address, payload) for i, (kind, address, payload) in enumerate(part))
            socket.send_multipart([struct.pack(">BBBBQ", 0x47, 1, 0x07, 0, len(part)), b"", body])
            sent += len(part)
        if not socket.poll(30000):
            sys.exit(f"{len(requests) - len(answers)} requests unanswered for 30 s")
        header, _, payload = socket.recv_multipart()
        now = time.monotonic()
        kind, number = header[2], struct.unpack(">Q", header[4:])[0]
        for kind, number, body in (envelopes(payload) if kind == 0x07 else [(kind, number, payload)]):
            answers[number - base] = (kind, body, now)
    return answers

def count(body):
    try:
        return json.loads(body).get("count")
    except (ValueError, AttributeError):
        return None

workers = {w["name"]: w.get("pid") for w in request(0x05, "")["workers"]}
addresses = [f"counter/{i}" for i in range(keys)]
# One add each, of its own amount: a record read back under another key shows.
started = time.monotonic()
# A batch of 50 at a time: a worker claims each new instance in the store on its loop, and a
# turn of thousands would keep it from its heartbeats past the timeout.
answers = exchange([(0x01, a, json.dumps({"add": {"_0": i + 1}}).encode()) for i, a in enumerate(addresses)], batch=50, window=1)
acknowledged = {addresses[i]: i + 1 for i, (kind, body, _) in answers.items() if kind == 0x10 and count(body) == i + 1}
print(f"    filled: {len(acknowledged)} of {keys} events acknowledged in {time.monotonic() - started:.2f} s")
refused = {}
for i, (kind, body, _) in answers.items():
    if addresses[i] not in acknowledged:
        what = json.loads(body).get("code", "?") if kind == 0x12 else f"kind {kind:#x} {body[:60]!r}"
        refused[what] = refused.get(what, 0) + 1
for what, number in refused.items():
    print(f"      not acknowledged: {what} x {number}")

rows = subprocess.run(["psql", url, "-qtA", "-c",
                       f"SELECT address FROM grove_machines WHERE topology = '{topology}' AND owner = 'pool-1'"],
                      check=True, capture_output=True, text=True).stdout.split()
lost = sorted(set(rows) & set(acknowledged))
print(f"    pool-1 owns {len(lost)} of them")

def resident(pid):
    figures = {}
    if not os.path.exists(f"/proc/{pid}/status"):
        return {"VmRSS": "(gone)", "VmHWM": "(gone)"}
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(("VmRSS", "VmHWM")):
            figures[line.split(":")[0]] = int(line.split()[1]) // 1024
    return figures

before = resident(workers["pool-2"])
killed = time.monotonic()
os.kill(workers["pool-1"], signal.SIGKILL)
answered, wrong, others, rounds = {}, {}, {}, 0
pending = list(lost)
declared = None
while pending and time.monotonic() - killed < 600:
    rounds += 1
    if declared is None and not any(w["name"] == "pool-1" and w.get("registered") for w in request(0x05, "")["workers"]):
        declared = time.monotonic() - killed
    # One batch at a time, as in the fill: the adopter claims each instance on its loop.
    replies = exchange([(0x02, a, b"") for a in pending], window=1)
    still = []
    for i, address in enumerate(pending):
        kind, body, when = replies[i]
        if kind == 0x10:
            answered[address] = when - killed
            if count(body) != acknowledged[address]:
                wrong[address] = body.decode()
        else:
            code = json.loads(body).get("code") if body else "?"
            if code not in ("unavailable", "worker-lost", "busy"):
                others[code] = others.get(code, 0) + 1
            still.append(address)
    if len(still) == len(pending):
        time.sleep(0.005)
    pending = still
after = resident(workers["pool-2"])

times = sorted(answered.values())
if times:
    first, last = times[0], times[-1]
    print(f"    {len(answered)} of {len(lost)} answered from pool-2 ({rounds} rounds of get)")
    print(f"    from the kill: first {first * 1000:.0f} ms, last {last * 1000:.0f} ms")
    print(f"    minus the grace ({grace} ms): first {first * 1000 - grace:.0f} ms, last {last * 1000 - grace:.0f} ms "
          f"(the time to declare pool-1 lost is part of it)")
if declared is not None:
    print(f"    pool-1 listed as not registered {declared * 1000:.0f} ms after the kill; from then to the first answer "
          f"{(first - declared) * 1000:.0f} ms, to the last {(last - declared) * 1000:.0f} ms")
    print(f"    the last half: {(last - times[len(times) // 2]) * 1000:.0f} ms; "
          f"from the first to the last: {(last - first) * 1000:.0f} ms ({len(times) / max(last - first, 1e-9):.0f} instances/s)")
print(f"    pool-2 resident: {before.get('VmRSS')} MiB before the kill, {after.get('VmRSS')} MiB after "
      f"(peak {after.get('VmHWM')} MiB)")
print(f"    lost (never answered with a state): {len(pending)}; answered with another count than acknowledged: {len(wrong)}")
for address, body in list(wrong.items())[:5]:
    print(f"      {address}: {body}, acknowledged {acknowledged[address]}")
for code, number in others.items():
    print(f"    answered {code}: {number} times")
PY
grep -E 'lost|handed|adopt|claim' "$dir/launch.log" | grep -v 'Claim' | head -8 | sed 's/^/    log: /'
stop_launch
