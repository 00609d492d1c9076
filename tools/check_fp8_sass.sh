#!/usr/bin/env bash
# The machine code of the FP8 kernels (the cubins that src/asmgen emits and the library embeds), from a build
# folder (src/asmgen/kernels/manifest.txt; the CTest asmgen_sass) or a device carry (.carry/asmgen/manifest.txt;
# tools/device/run_gpu_tests.sh). For each variant: no local memory anywhere (no LDL/STL: nothing spilled, no
# register array on the stack); the key loop (the innermost loop with matrix instructions) runs its products
# on the tensor cores: the wgmma kernels exactly one QGMMA per 32-deep k-step of S (d_qk / 32) and of each P V
# chain (4), and no HMMA or HGMMA; the mma.sync kernels (sm_90's FP8 mma.sync is HMMA on e4m3 widened to f16)
# HMMA. With lean P it computes no exponential per score and no f32 -> e4m3 conversion (MUFU.EX2 only for the
# two rows' lazy-rescale factors and block unscales, numerics.h: 4 per thread per block, on the quarter-rate
# unit), with exact P it does (one MUFU.EX2 per score); with split P it also runs the second P V chain (twice
# exact P's m64n136 QGMMAs) and the residual's f16x2 arithmetic (one f16 -> e4m3 conversion and one HADD2 per
# pair of scores), which exact P does not. Prints the key loop's instruction mix: one warp, one key block.
# Usage: tools/check_fp8_sass.sh CUOBJDUMP MANIFEST     (exit 77: no cuobjdump, the test is skipped)
set -euo pipefail
cuobjdump=$1
manifest=$2
if [[ ! -x "$cuobjdump" ]]; then
  echo "check_fp8_sass: no cuobjdump (configure with -DZYFA_CUOBJDUMP=<path>; PyPI's nvidia-cuda-cuobjdump has one)"
  exit 77
fi
export PATH="$(dirname "$cuobjdump"):$PATH"  # nvdisasm sits beside it
dir=$(dirname "$manifest")
# Exponentials a lean-P key loop may still take per thread: for each of its two rows, alpha of the lazy rescale
# and the block's unscale 2^((bmax - m) - G) (numerics.h); none per score.
readonly kLeanExpPerBlock=4
# Pairs of P a thread holds per key block (64 scores), and the wgmma schedule's P V QGMMAs per chain
# (m64n136k32: 128 keys / 32).
readonly kPairsPerBlock=32
readonly kPvQgmmaPerChain=4
readonly kQgmmaDepth=32  # the k of an e4m3 wgmma (m64nNk32)
# An empty or missing manifest checks nothing: a failure, not a pass.
if [[ ! -s "$manifest" ]]; then
  echo "check_fp8_sass: FAIL: the manifest $manifest lists no kernels"
  exit 1
fi
status=0
checked=0
while read -r name entry threads smem d_qk d_v lean_p schedule split_p _vt_prepass _tile_rows _overlaps_prepass; do
  sass=$("$cuobjdump" -sass "$dir/$name.cubin")
  local_mem=$(grep -cE '\b(LDL|STL)(\.|\s)' <<<"$sass" || true)
  # The key loop: the shortest region [target, branch] of a conditional backward branch that holds a matrix
  # instruction. Unconditional backward jumps are left out: ptxas puts the mbarrier waits' retry paths after
  # the EXIT, and each ends in a plain BRA back into the body, so [target, jump] would span the last P V
  # products and the epilogue without being a loop.
  mix=$(awk '
    function hex(s,   i, v) {  # portable (mawk has no strtonum)
      v = 0; sub(/^0x/, "", s)
      for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return v
    }
    match($0, /\/\*[0-9a-f]+\*\//) {
      addr = hex(substr($0, RSTART + 2, RLENGTH - 4))
      text = substr($0, RSTART + RLENGTH); sub(/;.*/, "", text); gsub(/^[ \t]+|[ \t]+$/, "", text)
      n++; at[n] = addr; ins[n] = text; index_of[addr] = n
      if (text ~ /^@!?P[T0-9]+[ \t]+BRA/ && match(text, /0x[0-9a-f]+/)) {
        target = hex(substr(text, RSTART, RLENGTH))
        if (target < addr && (target in index_of)) { nb++; from[nb] = index_of[target]; to[nb] = n }
      }
    }
    END {
      best = 0
      for (b = 1; b <= nb; b++) {
        has = 0
        for (i = from[b]; i <= to[b]; i++) if (ins[i] ~ /(HMMA|HGMMA|QGMMA)/) { has = 1; break }
        if (has && (best == 0 || to[b] - from[b] < to[best] - from[best])) best = b
      }
      if (best == 0) { print "none"; exit }
      for (i = from[best]; i <= to[best]; i++) {
        op = ins[i]; sub(/^@!?U?P[T0-9]+[ \t]+/, "", op); split(op, f, /[ \t]/); count[f[1]]++
      }
      for (op in count) printf "%s %d\n", op, count[op]
    }' <<<"$sass")
  if [[ "$mix" == none ]]; then
    echo "$name: FAIL: no loop with matrix instructions"
    status=1
    continue
  fi
  sum() { awk -v re="$1" '$1 ~ re { s += $2 } END { print s + 0 }' <<<"$mix"; }
  matrix=$(sum '^(HMMA|HGMMA|QGMMA)')
  ex2=$(sum '^MUFU\.EX2')
  pack=$(sum '^F2FP\..*E4M3\.F32')
  total=$(sum '.')
  pv_qgmma=$(sum '^QGMMA\.64x136x32')
  residual=$(sum '^F2FP\..*E4M3\.F16')
  hadd=$(sum '^HADD2$')
  s_qgmma=$(sum '^QGMMA\.64x128x32')
  hmma=$(sum '^(HMMA|HGMMA)')
  verdict=ok
  if (( local_mem > 0 )); then verdict="FAIL: $local_mem local-memory instructions"; status=1; fi
  if (( lean_p )) && (( ex2 > kLeanExpPerBlock || pack > 0 )); then
    verdict="FAIL: lean P with $ex2 MUFU.EX2 and $pack f32->e4m3 conversions in the key loop"; status=1
  fi
  if (( ! lean_p )) && (( ex2 < 64 )); then verdict="FAIL: exact P with only $ex2 MUFU.EX2"; status=1; fi
  # Split P's second P V chain is counted with the wgmma kernels' products below.
  if (( split_p )) && (( residual != kPairsPerBlock || hadd < kPairsPerBlock )); then
    verdict="FAIL: split P with $residual f16->e4m3 conversions, $hadd HADD2"; status=1
  fi
  if (( split_p )) && [[ "$schedule" != wgmma ]]; then verdict="FAIL: split P outside the wgmma schedule"; status=1; fi
  chains=$(( split_p ? 2 : 1 ))
  if [[ "$schedule" == wgmma ]] &&
     (( s_qgmma != d_qk / kQgmmaDepth || pv_qgmma != chains * kPvQgmmaPerChain || hmma > 0 )); then
    verdict="FAIL: wgmma kernel with $s_qgmma S QGMMAs (want $(( d_qk / kQgmmaDepth ))), $pv_qgmma P V QGMMAs (want $(( chains * kPvQgmmaPerChain ))), $hmma HMMA/HGMMA"
    status=1
  fi
  if [[ "$schedule" == mma_sync ]] && (( hmma == 0 )); then verdict="FAIL: mma.sync kernel without HMMA"; status=1; fi
  if [[ "$schedule" != wgmma && "$schedule" != mma_sync ]]; then verdict="FAIL: unknown schedule $schedule"; status=1; fi
  if (( ! split_p )) && (( residual > 0 )); then verdict="FAIL: $residual f16->e4m3 conversions without split P"; status=1; fi
  echo "$name ($entry, lean_p $lean_p, split_p $split_p): key loop $total instructions, $matrix matrix, $ex2 MUFU.EX2, $pack f32->e4m3, $residual f16->e4m3; LDL/STL $local_mem: $verdict"
  sort -k2 -nr <<<"$mix" | head -24 | awk '{ printf "  %s %s", $1, $2 } END { print "" }'
  checked=$((checked + 1))
done <"$manifest"
if (( checked == 0 )); then echo "check_fp8_sass: FAIL: no kernel checked"; status=1; fi
exit $status
