#!/usr/bin/env bash
# Measures what passivation buys when many keys are each addressed once (issue 37 item 4): the
# workers' peak resident memory, and the event rate against the rate over 1,000 keys in the
# same run. A benchmark, not a test: it asserts nothing but prints the figures.
#
# One topology, Topologies/load.json's shape: two workers (`bench`, fsm-worker) hosting keyed
# `counter` instances (Counter), durability `state` on SQLite (each worker's file in the
# scratch directory) unless --durability says otherwise, `passivateAfterMs` small,
# limits.instancesPerMachine above the keys. With `--durability none`, as Topologies/load.json
# has it (where issue 37 measured a tenth), an idle instance leaves memory and is dropped: what
# is measured is making and passivating instances alone, without a store row per fresh key.
# fsm-load (`--mode ack`, binary codec, batches of 200, window 4000, two connections) first
# sends K events to 1,000 keys (`hot/0` ... `hot/999`: the 1,000-key rate), then one event to each of K
# keys (`counter/0` ... `counter/K-1`). Printed: both rates and their ratio, the workers' CPU
# time per event in each (user and system, from /proc: less noisy than the rates on a shared
# machine), each worker's peak resident memory (VmHWM) and resident memory at the end (VmRSS),
# the coordinator's CPU time per event likewise, and the workers' last `passivated ...` log
# line.
#
# Usage: Scripts/passivation-bench.sh [--bin DIR] [--keys K] [--after MS] [--durability D]
#   --bin DIR    the folder of prebuilt fsm-launch, fsm-worker and fsm-load (default: build
#                release and use it)
#   --keys K     keys addressed once each (default 1000000)
#   --after MS   passivateAfterMs (default 200)
#   --durability D  both machines' durability: state (default), journal or none
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"

bin=""
keys=1000000
after=200
durability=state
while [[ $# -gt 0 ]]; do
    case "$1" in
        --bin) bin="$2"; shift 2 ;;
        --keys) keys="$2"; shift 2 ;;
        --after) after="$2"; shift 2 ;;
        --durability) durability="$2"; shift 2 ;;
        -h|--help) sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1'; see Scripts/passivation-bench.sh --help" ;;
    esac
done
[[ "$keys" =~ ^[1-9][0-9]*$ && "$keys" -ge 2 ]] || die "--keys must be a whole number of at least 2, got '$keys'"
[[ "$after" =~ ^[1-9][0-9]*$ ]] || die "--after must be a whole number of milliseconds of at least 1, got '$after'"
[[ "$durability" =~ ^(state|journal|none)$ ]] || die "--durability must be state, journal or none, got '$durability'"

ensure_dependencies
bin="$(release_tools "$bin")"

begin_launching
dir="$work/passivation"
mkdir -p "$dir"
cat >"$dir/topology.json" <<EOF
{
  "name": "passivation-bench-$$",
  "coordinator": {
    "clients": "ipc://$dir/clients",
    "workers": "ipc://$dir/workers",
    "events": "ipc://$dir/events"
  },
  "workers": [ { "name": "bench", "count": 2 } ],
  "machines": [
    { "name": "hot", "type": "Counter", "worker": "bench", "keyed": true, "durability": "$durability", "passivateAfterMs": $after },
    { "name": "counter", "type": "Counter", "worker": "bench", "keyed": true, "durability": "$durability", "passivateAfterMs": $after }
  ],
  "heartbeat": { "intervalMs": 250, "timeoutMs": 1500 },
  "queues": { "mailboxCapacity": 65536, "workerOutbox": 100000, "clientOutbox": 100000 },
  "limits": { "instancesPerMachine": $(( keys + 1000 )) }
}
EOF
"$bin/fsm-launch" "$dir/topology.json" >"$dir/launch.log" 2>&1 &
launch_pid=$!
for _ in $(seq 300); do grep -q '^ready ' "$dir/launch.log" && break; sleep 0.1; done
grep -q '^ready ' "$dir/launch.log" || { tail -20 "$dir/launch.log"; die "the topology was not ready within 30 s"; }
workers=$(pgrep -f "fsm-worker --name bench-[12] .*ipc://$dir/workers" || true)
[[ -n "$workers" ]] || die "no bench worker found running for ipc://$dir/workers"

connections=2
# The CPU time so far of the processes $@, user and system, in clock ticks.
cpu_of() {
    local pid total=0
    for pid in "$@"; do total=$(( total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat") )); done
    echo "$total"
}
# The workers', and fsm-launch's (the coordinator runs in it: each fresh key costs it a
# placement and a place among the listed instances).
workers_cpu() { cpu_of $workers; }
coordinator_cpu() { cpu_of "$launch_pid"; }
ticks=$(getconf CLK_TCK)
# The workers' CPU microseconds per event between two workers_cpu readings $1 and $2.
cpu_per_event() {
    python3 -c "import sys; a, b, t, n = map(float, sys.argv[1:]); print(f'{(b - a) / t * 1e6 / n:.2f}')" "$1" "$2" "$ticks" \
        "$(( keys / connections * connections ))"
}
# Runs fsm-load over $1 (machine) with $2 addresses; prints its ack rate (events/s).
load() {
    "$bin/fsm-load" --endpoint "ipc://$dir/clients" --machine "$1" --machines "$2" --mode ack --no-baseline \
        --codec binary --batch 200 --window 4000 --connections "$connections" --count $(( keys / connections )) \
        >"$dir/load-$1.txt" 2>&1 || { cat "$dir/load-$1.txt" >&2; die "fsm-load over $2 $1 key(s) failed"; }
    awk '$1 == "ack" { print $2; exit }' "$dir/load-$1.txt"
}

step "durability $durability, passivateAfterMs $after; $(( keys / connections * connections )) events to 1,000 keys, then one to each of $keys keys"
before=$(workers_cpu) coordinator_before=$(coordinator_cpu)
hot=$(load hot 1000)
between=$(workers_cpu) coordinator_between=$(coordinator_cpu)
cold=$(load counter "$keys")
after=$(workers_cpu) coordinator_after=$(coordinator_cpu)
printf '    1,000 keys:  %s events/s, workers %s us CPU per event\n' "$hot" "$(cpu_per_event "$before" "$between")"
printf '    %s keys: %s events/s' "$keys" "$cold"
python3 -c "import sys; h, c = float(sys.argv[1]), float(sys.argv[2]); print(f' ({c / h:.2f} of the 1,000-key rate)' if h > 0 else '', end='')" "$hot" "$cold"
printf ', workers %s us CPU per event\n' "$(cpu_per_event "$between" "$after")"
printf '    coordinator: %s us CPU per event over 1,000 keys, %s over %s keys\n' \
    "$(cpu_per_event "$coordinator_before" "$coordinator_between")" "$(cpu_per_event "$coordinator_between" "$coordinator_after")" "$keys"
for pid in $workers; do
    name=$(tr '\0' ' ' <"/proc/$pid/cmdline" | sed -E 's/.*--name ([^ ]+).*/\1/')
    peak=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")
    now=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")
    printf '    %s: peak resident %d MiB, now %d MiB\n' "$name" $(( peak / 1024 )) $(( now / 1024 ))
done
grep 'passivated ' "$dir/launch.log" | tail -2 | sed -E 's/^.*worker=([^ ]+) \[[^]]*\] (passivated .*)$/    \1: \2/'
if grep -q 'no heartbeat' "$dir/launch.log"; then
    echo "    a worker was declared lost:"; grep 'no heartbeat' "$dir/launch.log" | sed 's/^/      /'
else
    echo "    no worker declared lost"
fi
stop_launch
