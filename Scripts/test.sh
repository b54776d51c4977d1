#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
# Usage: Scripts/test.sh [extra `swift test` arguments, e.g. --filter HostOrderingTests]
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$(repo_root)"
ensure_dependencies
ensure_pyzmq
say "building (debug) with tests"
swift build --build-tests
say "running the test suite"
swift test --skip-build "$@"
