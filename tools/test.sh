#!/usr/bin/env bash
# Builds zyfa and runs every test: host tests, GPU tests (which skip without a GPU), the bindings.
# Usage: bash tools/test.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export PATH="/usr/local/cuda/bin:$PATH"
bash tools/install_deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
