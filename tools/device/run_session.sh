#!/usr/bin/env bash
# One device call that checks and measures everything, in order of priority, each step under its own
# timeout so that the whole stays inside one 10-minute command. Prepare here first:
#   tools/device/prepare.sh BUILD && (copy BUILD/bench/zyfa_bench into .carry-bench, see prepare_bench.sh)
# then the `run` tool with carry [".carry", ".carry-bench", ".whl"]: bash tools/device/run_session.sh
# Every step's log and JSON land in $OUT; bench parts become bench/results/<date>-h200.json here.
# zyfa_bench's --p-rounding per bench step: KERNEL_P_ROUNDING (default: the library's default only, the 16K
# step has little time to spare) and ACCURACY_P_ROUNDING (default: also lean and exact P, one more zyfa call
# each per FP8 case, next to nothing beside the fp64 reference).
set -uo pipefail
readonly KERNEL_P_ROUNDING="${KERNEL_P_ROUNDING:-default}"
readonly ACCURACY_P_ROUNDING="${ACCURACY_P_ROUNDING:-default,lean,exact}"
step() {  # NAME SECONDS COMMAND...
  local name="$1" seconds="$2"; shift 2
  local t0=$(date +%s)
  echo "=== $name (limit ${seconds}s)"
  timeout -k 5 "$seconds" "$@"
  echo "=== $name: exit $? after $(( $(date +%s) - t0 )) s"
}
export TEST_TIMEOUT=150 ZYFA_RELIABILITY_SECONDS="${ZYFA_RELIABILITY_SECONDS:-8}"
# The 32K-key cases (about 80 s, mostly the fp64 oracle) stay out of this step: the whole suite, with them, is
# run_gpu_tests.sh alone (about 250 s).
step gpu-tests 180 bash tools/device/run_gpu_tests.sh '-*Reliability*:*s32767*'
step bench-kernel-16k 160 env STEP_TIMEOUT=36 bash tools/device/run_bench.sh kernel --seqlens=16384 \
  --families=mha-d128,gqa-d128,mha-d192,llama3.1-8b --p-rounding="$KERNEL_P_ROUNDING"
step reliability 90 env TEST_TIMEOUT=85 bash tools/device/run_reliability.sh
step bench-accuracy-4k 130 env STEP_TIMEOUT=35 PEERS_TIMEOUT=45 bash tools/device/run_bench.sh accuracy \
  --seqlens=4096 --families=gqa-d128,mha-d192 --inputs=gaussian,outlier,structured --p-rounding="$ACCURACY_P_ROUNDING"
step python 45 bash tools/device/run_python_tests.sh .carry/libzyfa.so
# The steps' limits add up to the 10-minute command: the Rust and Go tests (tools/device/run_binding_tests.sh,
# about 10 s) go in another call, e.g. after run_candidate_tests.sh.
echo "=== session done"
