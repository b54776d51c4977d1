#!/usr/bin/env bash
# Side by side: Topologies/load.json (durability none), Topologies/load-durable.json (state)
# and Topologies/load-journal.json (journal), with the release build of the working tree, in
# interleaved rounds (none, state, journal, none, state, journal, ...), so that all three see
# the same machine.
#
# Usage: Scripts/durability-ab.sh [ROUNDS]   (default 3)
# Prints each round's events/s for batched binary ack and reply. Builds release first (reused
# when current). Do not run it alongside another benchmark: they share the cores.
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"
ensure_dependencies
ensure_python3
rounds="${1:-3}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a whole number from 1, got '$rounds'"
swift build -c release >&2 || die "the release build failed"
bin="$(swift build -c release --show-bin-path)"
for round in $(seq "$rounds"); do
    for topology in load load-durable load-journal; do
        # Each run from an empty store: a run that first brings back the last run's machines
        # measures recovery too (and, with long journals under load, trips the heartbeat).
        rm -rf "Topologies/grove-data/$topology"
        "$bin/fsm-load" "Topologies/$topology.json" --json --mode ack,reply --no-baseline --codec binary \
            --batch 200 --window 4000 --duration 5 2>/dev/null | python3 -c "
import json, sys
report = json.load(sys.stdin)
print('$round', '$topology', ' '.join('%s=%.0f' % (run['mode'], run['eventsPerSecond']) for run in report['runs']))
"
    done
done
