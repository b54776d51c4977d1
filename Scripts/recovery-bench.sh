#!/usr/bin/env bash
# Measures how long workers take to bring back their durable instances after kill -9. A
# benchmark, not a test: it asserts nothing but prints the figures.
#
# For each durability given, a topology of two workers (`bench`, fsm-worker) hosting keyed
# `counter` instances (Counter) with that durability, its store in a scratch directory. fsm-load
# creates N instances with E events each (`--mode ack`, batches of 200), then each worker is
# killed with SIGKILL; fsm-launch restarts them, and each reports in its log how many instances
# it brought back and how long that took from opening its store ("recovered … in …"). Printed:
# those lines, and whether either worker was declared lost meanwhile. With `--load`, a second
# fsm-load run starts right after the kill (events for every instance, so most come back on
# demand, before their turn).
#
# Usage: Scripts/recovery-bench.sh [--bin DIR] [-n N] [-e E] [--load] [durability...]
#   --bin DIR    the folder of prebuilt fsm-launch, fsm-worker and fsm-load (default: build
#                release and use it)
#   -n N         instances (default 100000)
#   -e E         events per instance before the kill (default 2)
#   --load       drive the instances again right after the kill
#   durability   state, journal (default: both)
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"

bin=""
instances=100000
events=2
load_after=0
durabilities=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --bin) bin="$2"; shift 2 ;;
        -n) instances="$2"; shift 2 ;;
        -e) events="$2"; shift 2 ;;
        --load) load_after=1; shift ;;
        -h|--help) sed -n '2,/^source/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown argument '$1'; see Scripts/recovery-bench.sh --help" ;;
        state|journal) durabilities+=("$1"); shift ;;
        *) die "durability '$1' is not one of state, journal" ;;
    esac
done
[[ "$instances" =~ ^[1-9][0-9]*$ ]] || die "-n must be a whole number of at least 1, got '$instances'"
[[ "$events" =~ ^[1-9][0-9]*$ ]] || die "-e must be a whole number of at least 1, got '$events'"
[[ ${#durabilities[@]} -gt 0 ]] || durabilities=(state journal)

ensure_dependencies
bin="$(release_tools "$bin")"

begin_launching
# fsm-load's connections split the addresses; each sends --count events.
connections=2
per_connection=$(( instances * events / connections ))

for durability in "${durabilities[@]}"; do
    dir="$work/$durability"
    mkdir -p "$dir"
    name="recovery-bench-$durability-$$"
    cat >"$dir/topology.json" <<EOF
{
  "name": "$name",
  "coordinator": {
    "clients": "ipc://$dir/clients",
    "workers": "ipc://$dir/workers",
    "events": "ipc://$dir/events"
  },
  "workers": [ { "name": "bench", "count": 2 } ],
  "machines": [ { "name": "counter", "type": "Counter", "worker": "bench", "keyed": true, "durability": "$durability" } ],
  "heartbeat": { "intervalMs": 250, "timeoutMs": 1500 },
  "queues": { "mailboxCapacity": 65536, "workerOutbox": 100000, "clientOutbox": 100000 }
}
EOF
    step "$durability: $instances instances, $events event(s) each"
    "$bin/fsm-launch" "$dir/topology.json" >"$dir/launch.log" 2>&1 &
    launch_pid=$!
    for _ in $(seq 300); do grep -q '^ready ' "$dir/launch.log" && break; sleep 0.1; done
    grep -q '^ready ' "$dir/launch.log" || { tail -20 "$dir/launch.log"; die "the $durability topology was not ready within 30 s"; }
    "$bin/fsm-load" --endpoint "ipc://$dir/clients" --machine counter --machines "$instances" --mode ack --no-baseline \
        --codec binary --batch 200 --window 4000 --connections "$connections" --count "$per_connection" >"$dir/fill.txt" 2>&1 \
        || { cat "$dir/fill.txt"; die "filling the $durability instances failed"; }
    before=$(grep -c 'recovered ' "$dir/launch.log" || true)
    for worker in $(pgrep -f "fsm-worker --name bench-[12] .*ipc://$dir/workers" || true); do kill -KILL "$worker"; done
    if [[ $load_after -eq 1 ]]; then
        "$bin/fsm-load" --endpoint "ipc://$dir/clients" --machine counter --machines "$instances" --mode ack --no-baseline \
            --codec binary --batch 200 --window 4000 --connections "$connections" --count $(( instances / connections )) \
            >"$dir/load.txt" 2>&1 || true
    fi
    for _ in $(seq 1200); do
        [[ $(( $(grep -c 'recovered ' "$dir/launch.log" || true) - before )) -ge 2 ]] && break
        sleep 0.1
    done
    grep 'recovered ' "$dir/launch.log" | tail -n +$(( before + 1 )) | sed -E 's/^.*worker=([^ ]+) .*(recovered .*)$/    \1: \2/'
    if grep -q 'no heartbeat' "$dir/launch.log"; then
        echo "    a worker was declared lost:"; grep 'no heartbeat' "$dir/launch.log" | sed 's/^/      /'
    else
        echo "    no worker declared lost"
    fi
    [[ $load_after -eq 1 ]] && grep -E '^(run|ack) ' "$dir/load.txt" | sed 's/^/    /'
    stop_launch
done
