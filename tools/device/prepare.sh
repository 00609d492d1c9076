#!/usr/bin/env bash
# Here (the CPU machine): builds the GPU test binary, the zyfa command and libzyfa.so, and copies them
# into .carry/ (ignored by git) for the device: the `run` tool with carry [".carry"], then
#   bash tools/device/run_gpu_tests.sh [GTEST_FILTER]
# Usage: tools/device/prepare.sh [BUILD_DIR]
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
build="${1:-build}"
# Tests and tools on explicitly: prepare_bench.sh switches them off in the build folder it is given, and a
# folder shared by both would otherwise leave stale test binaries behind for ctest.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DZYFA_BUILD_TESTS=ON -DZYFA_BUILD_TOOLS=ON > /dev/null
cmake --build "$build" -j "$(nproc)" --target zyfa_gpu_tests zyfa_cli zyfa
rm -rf .carry && mkdir -p .carry
cp "$build/test/zyfa_gpu_tests" "$build/tools/zyfa" .carry/
cp -L "$build/libzyfa.so" .carry/libzyfa.so
# The emitted FP8 kernels (PTX, cubins, manifest) for the SASS check on the device, which has cuobjdump.
mkdir -p .carry/asmgen && cp "$build"/src/asmgen/kernels/{manifest.txt,*.cubin,*.ptxas.txt} .carry/asmgen/
echo "$(git rev-parse HEAD)$(git diff --quiet HEAD -- src include test tools || echo '+dirty')" > .carry/COMMIT
du -sh .carry
