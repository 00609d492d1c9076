#!/usr/bin/env bash
# Here: a bench carry that runs another carry's zyfa_bench with environment variables set, so that one build of a
# diagnostic candidate that reads ZYFA_DIAG_* variables (e.g. sessions 47-48's diag-vt-stream-env.patch, in git at 95ab752) takes part
# in run_bench_ab.sh as several builds, at a few KiB of carry each.
# Usage: tools/device/prepare_env_variant.sh NAME BASE VAR=VALUE...
#   e.g. tools/device/prepare_env_variant.sh vts48 vts ZYFA_DIAG_VT_STREAM_BLOCKS=48 (session 47, on a build of
#   the deleted fp8-vt-stream) made .carry-bench-vts48/zyfa_bench, which runs .carry-bench-vts/zyfa_bench
#   (carry both).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
readonly NAME="${1:?usage: prepare_env_variant.sh NAME BASE VAR=VALUE...}" BASE="${2:?no BASE}"
shift 2
(( $# > 0 )) || { echo "prepare_env_variant: no VAR=VALUE given"; exit 2; }
[[ -x ".carry-bench-$BASE/zyfa_bench" ]] || { echo "prepare_env_variant: no .carry-bench-$BASE/zyfa_bench"; exit 2; }
readonly DIR=".carry-bench-$NAME"
rm -rf "$DIR" && mkdir -p "$DIR"
printf '%s (%s)\n' "$(cat ".carry-bench-$BASE/COMMIT")" "$*" > "$DIR/COMMIT"
{
  echo '#!/usr/bin/env bash'
  echo "base=\"\$(cd \"\$(dirname \"\$0\")/../.carry-bench-$BASE\" && pwd)\""
  echo 'export LD_LIBRARY_PATH="$base/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"'
  for kv in "$@"; do printf 'export %q\n' "$kv"; done
  echo 'exec "$base/zyfa_bench" "$@"'
} > "$DIR/zyfa_bench"
chmod +x "$DIR/zyfa_bench"
echo "prepare_env_variant: $DIR runs .carry-bench-$BASE with $*"
