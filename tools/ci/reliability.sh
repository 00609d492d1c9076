#!/usr/bin/env bash
# The reliability steps of CI, after the plain build and its tests: ASan/UBSan host suite and fuzz run,
# the TSan concurrency tests, valgrind over `zyfa --cpu`. Usage: bash tools/ci/reliability.sh [plain build dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
plain=${1:-build}
bash tools/ci/asan.sh "$plain"
bash tools/ci/tsan.sh "$plain"
bash tools/ci/valgrind.sh "$plain"
