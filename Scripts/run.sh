#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo: the example machines driven locally, each
# transition printed as it happens.
# Usage: Scripts/run.sh [grove-demo arguments, e.g. --help]
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"
ensure_dependencies
say "building grove-demo"
swift build --product grove-demo >&2   # build progress is for people: stderr; stdout is the demo
say "running the demo"
exec "$(swift build --show-bin-path)/grove-demo" "$@"
