#!/usr/bin/env bash
# On the device, from a build made here (tools/device/prepare.sh, carry [".carry"]): the reliability tests
# (test/gpu/test_reliability_*.cpp): 16 threads x 4 streams against single-threaded bits, CUDA graph
# capture and 100 replays, tensors past 4 GiB, odd sequence lengths, 100-call determinism with cuBLAS
# GEMMs interleaved, and every status. The figures each test prints, and its gtest JSON, go to $OUT.
# Usage: bash tools/device/run_reliability.sh [GTEST_FILTER] (default: every reliability test)
set -uo pipefail
readonly FILTER="${1:-*Reliability*}"
readonly OUTDIR="${OUT:-$PWD/device-out}"
mkdir -p "$OUTDIR"
exec > >(tee -a "$OUTDIR/reliability.log") 2>&1
echo "commit $(cat .carry/COMMIT 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv

# The determinism test's GEMMs come from cuBLAS, loaded at run time: PyTorch's copy, or the toolkit's.
site="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)"
ZYFA_CUBLAS_LIBRARY="$(find "$site/nvidia" /usr/local/cuda/lib64 -name 'libcublas.so.13' 2>/dev/null | head -1)"
export ZYFA_CUBLAS_LIBRARY
echo "ZYFA_CUBLAS_LIBRARY=$ZYFA_CUBLAS_LIBRARY"
# The concurrency test's duration: long enough for tens of thousands of calls, short enough for the call.
export ZYFA_RELIABILITY_SECONDS="${ZYFA_RELIABILITY_SECONDS:-20}"

start=$(date +%s)
timeout -k 5 "${TEST_TIMEOUT:-420}" .carry/zyfa_gpu_tests --gtest_brief=1 --gtest_filter="$FILTER" \
  --gtest_output="json:$OUTDIR/reliability.json"
status=$?
echo "run_reliability: exit $status after $(( $(date +%s) - start )) s"
exit $status
