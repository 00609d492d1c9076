#!/usr/bin/env bash
# On the device: the zyfa command from several builds, interleaved round by round over the same shapes,
# so that an A/B between two branches' kernels is measured in one call on one warm GPU.
# Here, per build: tools/device/prepare.sh BUILD_DIR, then copy .carry to .carry-NAME (ignored by git);
# carry them all. Usage: ROUNDS=2 bash tools/device/run_ab.sh ".carry-a .carry-b" "ZYFA ARGS" ["ZYFA ARGS" ...]
# Prints one line per (round, build, args): the TFLOP/s and the error against fp64; exit 1 if a run fails.
set -uo pipefail
read -r -a builds <<< "${1:?usage: run_ab.sh \"CARRY_DIRS\" \"ZYFA ARGS\"...}"
shift
(( $# > 0 )) || { echo "usage: run_ab.sh \"CARRY_DIRS\" \"ZYFA ARGS\"..."; exit 2; }
status=0
for round in $(seq "${ROUNDS:-2}"); do
  for args in "$@"; do
    # The builds' order rotates by round, so that drift (clocks, temperature) favours none of them.
    for i in "${!builds[@]}"; do
      build="${builds[$(( (i + round - 1) % ${#builds[@]} ))]}"
      # shellcheck disable=SC2086
      line="$(timeout -k 5 120 "$build/zyfa" $args 2>&1)" || status=1
      tflops="$(grep -oE '[0-9.]+ TFLOP/s' <<< "$line")"
      err="$(grep -oE 'rel_rms_err [0-9.e+-]+' <<< "$line")"
      printf 'round %s  %-14s %-60s %12s  %s  (%s)\n' "$round" "$build" "$args" "$tflops" "$err" "$(cat "$build/COMMIT")"
    done
  done
done
exit $status
