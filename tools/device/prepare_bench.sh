#!/usr/bin/env bash
# Here (the CPU machine): builds zyfa_bench with the cuDNN peer and lays out what the device needs,
# all in paths .git/info/exclude ignores:
#   .carry-bench/zyfa_bench, .carry-bench/lib/ (Google Benchmark's shared library), .carry-bench/COMMIT
#   .whl/ (the fa3-fwd wheel for bench/peers.py; 27 MB of the 64 MiB a device call may carry)
# Then: run tools/device/run_bench.sh PART on the device with carry [".carry-bench", ".whl"].
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
readonly BUILD="${1:-/work/build-bench}"
readonly FA3_WHEEL="fa3-fwd==0.0.3"

tools/install_cudnn_frontend.sh
cmake -S . -B "$BUILD" -DZYFA_BUILD_BENCH=ON -DZYFA_BUILD_TESTS=OFF -DZYFA_BUILD_TOOLS=OFF > /dev/null
cmake --build "$BUILD" --target zyfa_bench -j2

for p in /.carry-bench/ /.whl/; do grep -qxF "$p" .git/info/exclude 2>/dev/null || echo "$p" >> .git/info/exclude; done
rm -rf .carry-bench && mkdir -p .carry-bench/lib
cp "$BUILD/bench/zyfa_bench" .carry-bench/
# The Debian package has no static Google Benchmark: its shared library travels with the binary.
for lib in $(ldd .carry-bench/zyfa_bench | awk '/libbenchmark/ {print $3}'); do cp -L "$lib" .carry-bench/lib/; done
echo "$(git rev-parse HEAD)$(git diff --quiet HEAD -- src include bench || echo '+dirty')" > .carry-bench/COMMIT

mkdir -p .whl
if ! compgen -G ".whl/fa3_fwd-*.whl" > /dev/null; then
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_28_x86_64 -d .whl "$FA3_WHEEL"
fi
du -sh .carry-bench .whl
