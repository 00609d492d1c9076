#!/usr/bin/env bash
# Here (the CPU machine): builds a kernel candidate for the device from main plus one or more patches of
# bench/candidates/, in a worktree of its own, and leaves its carries in this checkout:
#   .carry-NAME        (tools/device/prepare.sh: GPU tests, the zyfa command, libzyfa.so, the emitted kernels)
#   .carry-bench-NAME  (tools/device/prepare_bench.sh: zyfa_bench)
# A build folder per candidate is kept under /work/build-cand-NAME{,-bench}, so rebuilding after an edit of the
# worktree (/work/wt-NAME) is incremental. NAME main with no patch is the A/B baseline: its worktree follows HEAD.
# Usage: tools/device/prepare_candidate.sh NAME [PATCH...]
#   e.g. tools/device/prepare_candidate.sh main
#        tools/device/prepare_candidate.sh fp8notr bench/candidates/diag-fp8-notranspose.patch
# Then on the device: run_candidate_tests.sh 'NAME=FILTER' and run_bench_ab.sh "main NAME" FLAGS.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
readonly NAME="${1:?usage: prepare_candidate.sh NAME [PATCH...]}"
shift
readonly REPO="$PWD"
readonly WT="${WORKTREE_ROOT:-/work}/wt-$NAME"
readonly BUILD="${BUILD_ROOT:-/work}/build-cand-$NAME"
patches=()
for p in "$@"; do patches+=("$(realpath "$p")"); done

if [[ ! -d "$WT" ]]; then
  git worktree add -q --detach "$WT" HEAD
  if (( ${#patches[@]} > 0 )); then git -C "$WT" am -q "${patches[@]}"; fi
elif [[ "$NAME" == main ]]; then
  # The baseline is main as it is now, not as it was when its worktree was made.
  git -C "$WT" checkout -q --detach "$(git rev-parse HEAD)"
elif (( ${#patches[@]} > 0 )) && ! git merge-base --is-ancestor HEAD "$(git -C "$WT" rev-parse HEAD)"; then
  echo "prepare_candidate: $WT is not built on this HEAD: remove it (git worktree remove --force $WT) to rebuild"
  exit 1
fi
# An existing worktree given no patches is a candidate edited by hand: it is built as it stands.
# The bench's wheels are the same for every build: fetch them once (prepare_bench.sh skips what .whl holds).
[[ -d "$REPO/.whl" && ! -d "$WT/.whl" ]] && cp -r "$REPO/.whl" "$WT/.whl"
echo "prepare_candidate: $NAME at $(git -C "$WT" rev-parse --short HEAD) ($WT)"
(cd "$WT" && tools/device/prepare.sh "$BUILD" && tools/device/prepare_bench.sh "$BUILD-bench") > "$BUILD.log" 2>&1 ||
  { echo "prepare_candidate: build failed, see $BUILD.log"; exit 1; }
rm -rf "$REPO/.carry-$NAME" "$REPO/.carry-bench-$NAME"
cp -r "$WT/.carry" "$REPO/.carry-$NAME"
cp -r "$WT/.carry-bench" "$REPO/.carry-bench-$NAME"
[[ -d "$REPO/.whl" ]] || cp -r "$WT/.whl" "$REPO/.whl"
grep -h "Potential Performance Loss\|spill" "$BUILD.log" | sort | uniq -c || true
du -sh "$REPO/.carry-$NAME" "$REPO/.carry-bench-$NAME"
