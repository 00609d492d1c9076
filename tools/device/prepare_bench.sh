#!/usr/bin/env bash
# Here (the CPU machine): builds zyfa_bench with the cuDNN peer and lays out what the device needs,
# all in paths .gitignore ignores (/.carry*/, /.whl*/):
#   .carry-bench/zyfa_bench, .carry-bench/lib/ (Google Benchmark's shared library), .carry-bench/COMMIT
#   .whl/ (the fa3-fwd wheel for bench/peers.py; 27 MB of the 64 MiB a device call may carry)
#   with FLASHINFER=1, .whl-flashinfer/ (flashinfer-python and the needs the device image lacks, about 28 MB:
#   carry it instead of .whl, with PART peers-kernel or accuracy and --impls=flashinfer)
# Then: run tools/device/run_bench.sh PART on the device with carry [".carry-bench", ".whl"].
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
readonly BUILD="${1:-/work/build-bench}"
readonly FA3_WHEEL="fa3-fwd==0.0.3"
# 0.6.13: the newest flashinfer-python under one call's 64 MiB (0.7.4 is 101 MB); its kernels are compiled on the
# device. The image has its other needs (KINDS.md's package list) but these.
readonly FLASHINFER_WHEELS=("flashinfer-python==0.6.13" "apache-tvm-ffi==0.1.15.post2" "nvidia-cudnn-frontend==1.32.0")

tools/install_cudnn_frontend.sh
cmake -S . -B "$BUILD" -DZYFA_BUILD_BENCH=ON -DZYFA_BUILD_TESTS=OFF -DZYFA_BUILD_TOOLS=OFF > /dev/null
cmake --build "$BUILD" --target zyfa_bench zyfa -j2

rm -rf .carry-bench && mkdir -p .carry-bench/lib
cp "$BUILD/bench/zyfa_bench" .carry-bench/
# The Debian package has no static Google Benchmark: its shared library travels with the binary.
for lib in $(ldd .carry-bench/zyfa_bench | awk '/libbenchmark/ {print $3}'); do cp -L "$lib" .carry-bench/lib/; done
# libzyfa.so of the same build, for peers.py's zyfa-py (zyfa through bindings/python, timed in the peers'
# own rotation; bench_env.sh points ZYFA_LIB at it).
cp -L "$BUILD/libzyfa.so" .carry-bench/lib/libzyfa.so
echo "$(git rev-parse HEAD)$(git diff --quiet HEAD -- src include bench || echo '+dirty')" > .carry-bench/COMMIT

mkdir -p .whl
if ! compgen -G ".whl/fa3_fwd-*.whl" > /dev/null; then
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_28_x86_64 -d .whl "$FA3_WHEEL"
fi
if [[ "${FLASHINFER:-0}" == 1 ]]; then
  mkdir -p .whl-flashinfer
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 -d .whl-flashinfer "${FLASHINFER_WHEELS[@]}"
  du -sh .whl-flashinfer
fi
du -sh .carry-bench .whl
