#!/usr/bin/env bash
# Builds zyfa and runs the main job: one attention call, checked against fp64, on the GPU, or on the
# CPU backend when there is none. Arguments go to the zyfa command (zyfa --help lists them).
# Usage: bash tools/run.sh [--dtype fp8] [--seqlen 4096] ...
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
bash tools/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" --target zyfa_cli
./build/tools/zyfa "$@"
