#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer over the host code: the whole host test suite, then the
# libFuzzer target (test/fuzz) for ZYFA_FUZZ_SECONDS from its committed corpus. A sanitizer report, a
# leak, a failed test or a fuzz finding fails the step. Host code only: the GPU code comes from the plain
# build. Usage: bash tools/ci/asan.sh [plain build dir (build)] [sanitizer build dir (build-asan)]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tools/ci/common.sh
plain=${1:-build}
dir=${2:-build-asan}
ci_require_clang

start=$(date +%s)
ci_configure "$plain" "$dir" -DZYFA_SANITIZE=ON -DZYFA_FUZZ=ON -DZYFA_FUZZ_SECONDS="${ZYFA_FUZZ_SECONDS:-60}"
cmake --build "$dir" -j "$(nproc)" --target zyfa_host_tests zyfa_fuzz_api
ci_elapsed "ASan/UBSan build"

# Leaks are errors; UBSan aborts on its first report (-fno-sanitize-recover=all) with a stack.
export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1
# The CPU backend's s1000 and s4096 shapes take the code paths of its s128-s300 shapes and run 80 s or
# more each under ASan; they run unsanitized in the main suite.
start=$(date +%s)
"$dir/test/zyfa_host_tests" --gtest_brief=1 --gtest_filter='-*_s1000_*:*_s4096_*'
ci_elapsed "ASan/UBSan host tests"

start=$(date +%s)
ctest --test-dir "$dir" -R '^fuzz_api$' --output-on-failure
# libFuzzer's own count of inputs run, for the README's figures.
grep -E '^(Done [0-9]+ runs|stat::number_of_executed_units|stat::average_exec_per_sec)' \
  "$dir/Testing/Temporary/LastTest.log" || true
ci_elapsed "fuzz run"
