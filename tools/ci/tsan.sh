#!/usr/bin/env bash
# ThreadSanitizer over the host test suite: the plan cache's concurrent lookups, evictions and statistics
# (test/host/test_plan_cache.cpp), the multi-threaded CPU backend and reference, thread-local errors.
# Host code only; the GPU code comes from the plain build.
# Usage: bash tools/ci/tsan.sh [plain build dir (build)] [sanitizer build dir (build-tsan)]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/ci/common.sh
plain=${1:-build}
dir=${2:-build-tsan}
# The s1000 and s4096 shapes run the same code as the smaller ones, ten times longer or more (see asan.sh).
filter='-*_s1000_*:*_s4096_*'
ci_require_clang

start=$(date +%s)
ci_configure "$plain" "$dir" -DZYFA_SANITIZE=thread
cmake --build "$dir" -j "$(nproc)" --target zyfa_host_tests
ci_elapsed "TSan build"

# halt_on_error: the first data race fails the step, with both stacks.
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
start=$(date +%s)
"$dir/test/zyfa_host_tests" --gtest_brief=1 --gtest_filter="$filter"
ci_elapsed "TSan tests"
