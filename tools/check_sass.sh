#!/usr/bin/env bash
# Checks the machine code of the BF16 Hopper kernels (src/kernels/bf16_attention.cu) in a built zyfa
# binary: each kernel issues HGMMA (its matrix work runs on wgmma, not on a slower path) and touches no
# local memory (no LDL or STL: nothing spilled, no register array demoted to the stack).
#
# Usage: tools/check_sass.sh [libzyfa.so | libzyfa_static.a | a program linking it]   (default build/libzyfa.so)
# Needs cuobjdump and nvdisasm: the CUDA toolkit on the device, or here the PyPI packages
# nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm (tools/find_cuobjdump.sh finds them; or CUOBJDUMP=<path>).
set -euo pipefail

binary=${1:-build/libzyfa.so}
kernel_pattern=${KERNEL_PATTERN:-bf16_attention_kernel}
cuobjdump=${CUOBJDUMP:-$(bash "$(dirname "$0")/find_cuobjdump.sh")}
if [[ -z "$cuobjdump" ]]; then
  echo "check_sass: cuobjdump not found (set CUOBJDUMP, or run tools/install_deps.sh)" >&2
  exit 2
fi
if [[ ! -f "$binary" ]]; then
  echo "check_sass: no such file: $binary" >&2
  exit 2
fi
# nvdisasm sits beside cuobjdump in both the toolkit and the PyPI packages.
export PATH="$(dirname "$cuobjdump"):$PATH"

sass=$(mktemp)
trap 'rm -f "$sass"' EXIT
"$cuobjdump" --dump-sass "$binary" >"$sass"

# One line per kernel whose name matches: name, HGMMA count, LDL/STL count.
report=$(awk -v pattern="$kernel_pattern" '
  /Function : / { if (name != "") print name, hgmma, local_mem; name = ""; split($0, f, "Function : ");
                  if (f[2] ~ pattern) { name = f[2]; hgmma = 0; local_mem = 0 } next }
  name != "" && /HGMMA/ { hgmma++ }
  name != "" && /(LDL|STL)[. ]/ { local_mem++ }
  END { if (name != "") print name, hgmma, local_mem }' "$sass")

if [[ -z "$report" ]]; then
  echo "check_sass: no kernel matching '$kernel_pattern' in $binary" >&2
  exit 1
fi
status=0
while read -r name hgmma local_mem; do
  verdict=ok
  if (( hgmma == 0 )); then verdict="FAIL: no HGMMA"; status=1; fi
  if (( local_mem > 0 )); then verdict="FAIL: $local_mem local-memory instructions"; status=1; fi
  printf '%-100s HGMMA %4d  LDL/STL %3d  %s\n' "$name" "$hgmma" "$local_mem" "$verdict"
done <<<"$report"
exit $status
