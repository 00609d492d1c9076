#!/usr/bin/env bash
# On the device: whether two or more builds write bitwise the same output and LSE, by the zyfa command's output
# digest on the same seeds (a change that should not move a bit: a reordered schedule, a skipped step that the
# numerics make redundant). Each case runs once per build with one seed; the digests must all agree.
# Here, per build: tools/device/prepare_candidate.sh NAME (its .carry-NAME); carry them all.
# Usage: bash tools/device/compare_outputs.sh "NAME NAME..." "ZYFA ARGS" ["ZYFA ARGS" ...]
#   e.g. bash tools/device/compare_outputs.sh "main bf16spec" "--dtype bf16 --seqlen 4097 --std 3 --seed 7"
# Prints one line per case: the digests, and SAME or DIFFERENT; exit 1 if any case differs or fails.
set -uo pipefail
read -r -a names <<< "${1:?usage: compare_outputs.sh \"NAMES\" \"ZYFA ARGS\"...}"
shift
(( $# > 0 )) || { echo "usage: compare_outputs.sh \"NAMES\" \"ZYFA ARGS\"..."; exit 2; }
status=0
for args in "$@"; do
  digests=()
  for name in "${names[@]}"; do
    # shellcheck disable=SC2086
    line="$(timeout -k 5 300 ".carry-$name/zyfa" $args --iters 1 2>&1)"
    digest="$(grep -oE 'output digest [0-9a-f]+' <<< "$line" | awk '{print $3}')"
    grep -q '^PASS' <<< "$line" || { status=1; digest="${digest:-none}(FAIL)"; }
    digests+=("$name=${digest:-none}")
  done
  verdict=SAME
  first="${digests[0]#*=}"
  for d in "${digests[@]}"; do [[ "${d#*=}" == "$first" && "$first" != none* && "$first" != *FAIL* ]] || verdict=DIFFERENT; done
  [[ "$verdict" == SAME ]] || status=1
  printf '%-9s %-70s %s\n' "$verdict" "$args" "${digests[*]}"
done
exit $status
