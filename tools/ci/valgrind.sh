#!/usr/bin/env bash
# valgrind memcheck over the zyfa command's CPU backend path (build/tools/zyfa --cpu): BF16 and FP8, d_qk
# 128 and 192, both layouts, odd sequence lengths and GQA. Any memcheck error or definite leak fails.
# Usage: bash tools/ci/valgrind.sh [plain build dir (build)]
set -euo pipefail
cd "$(dirname "$0")/../.."
plain=${1:-build}
zyfa="$plain/tools/zyfa"
[[ -x "$zyfa" ]] || { echo "ci: $zyfa is missing: build the plain tree first" >&2; exit 1; }
if ! command -v valgrind >/dev/null 2>&1; then
  echo "ci: apt-get install valgrind"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind >/dev/null
fi

# Small shapes: memcheck runs the CPU backend some 30 times slower.
runs=(
  "--dtype bf16 --seqlen 129 --heads 4 --heads-k 2 --d 128 --layout bshd"
  "--dtype bf16 --seqlen 1 --heads 2 --heads-k 1 --d 192 --layout bhsd"
  "--dtype fp8 --seqlen 200 --heads 2 --heads-k 2 --d 128 --layout bhsd"
  "--dtype fp8 --seqlen 131 --batch 2 --heads 3 --heads-k 1 --d 192 --layout bshd --no-lse"
)
start=$(date +%s)
for args in "${runs[@]}"; do
  # shellcheck disable=SC2086  # the arguments are meant to split
  valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --show-leak-kinds=definite,indirect --track-origins=yes --quiet "$zyfa" --cpu --iters 1 $args
done
echo "ci: valgrind memcheck: ${#runs[@]} runs of zyfa --cpu, no errors, in $(( $(date +%s) - start )) s"
