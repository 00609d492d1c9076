#!/usr/bin/env bash
# On the device: whether two or more builds write bitwise the same output and LSE, by the zyfa command's output
# digest on the same seeds (a change that should not move a bit: a reordered schedule, a skipped step that the
# numerics make redundant). Each case runs once per build with one seed; the digests must all agree.
# Here, per build: tools/device/prepare_candidate.sh NAME (its .carry-NAME); carry them all.
# Usage: bash tools/device/compare_outputs.sh "NAME NAME..." "ZYFA ARGS" ["ZYFA ARGS" ...]
#   e.g. bash tools/device/compare_outputs.sh "main bf16spec" "--dtype bf16 --seqlen 4097 --std 3 --seed 7"
# Prints one line per case: SAME or DIFFERENT, the digests, and which builds failed the fp64 check; exit 1 if
# any case differs or prints no digest.
set -uo pipefail
read -r -a names <<< "${1:?usage: compare_outputs.sh \"NAMES\" \"ZYFA ARGS\"...}"
shift
(( $# > 0 )) || { echo "usage: compare_outputs.sh \"NAMES\" \"ZYFA ARGS\"..."; exit 2; }
status=0
for args in "$@"; do
  digests=()
  checks=""
  for name in "${names[@]}"; do
    # shellcheck disable=SC2086
    line="$(timeout -k 5 300 ".carry-$name/zyfa" $args --iters 1 2>&1)"
    digest="$(grep -oE 'output digest [0-9a-f]+' <<< "$line" | awk '{print $3}')"
    # The fp64 check's verdict is reported, not required: inputs far from the speed protocol (a large --std)
    # may fail the tolerance in every build alike, and the comparison is still bit for bit.
    grep -q '^PASS' <<< "$line" || checks+=" fp64-check-failed:$name"
    digests+=("$name=${digest:-none}")
  done
  verdict=SAME
  first="${digests[0]#*=}"
  for d in "${digests[@]}"; do [[ "${d#*=}" == "$first" && "$first" != none ]] || verdict=DIFFERENT; done
  [[ "$verdict" == SAME ]] || status=1
  printf '%-9s %-70s %s%s\n' "$verdict" "$args" "${digests[*]}" "$checks"
done
exit $status
