#!/usr/bin/env bash
# Here (the CPU machine): builds the Rust and Go bindings' test programs against a build's libzyfa.so and
# copies them, with the library under its soname, into .carry-bindings/ (ignored by git). The device
# machine has no cargo or go; it runs these with tools/device/run_binding_tests.sh, carry [".carry-bindings"].
# Usage: tools/device/prepare_bindings.sh [BUILD_DIR]   (a configured build; its libzyfa target is rebuilt)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
build="$(realpath "${1:-build}")"
cmake --build "$build" --target zyfa > /dev/null
rm -rf .carry-bindings && mkdir -p .carry-bindings
soname=$(readelf -d "$build/libzyfa.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
cp -L "$build/libzyfa.so" ".carry-bindings/$soname"

(cd bindings/go && CGO_ENABLED=1 CGO_LDFLAGS="-L$build" GOPROXY=off GOTOOLCHAIN=local \
  go test -c -o "$OLDPWD/.carry-bindings/zyfa_go.test" .)

# cargo names its test programs by hash: ask it where each one went.
ZYFA_LIB_DIR="$build" cargo test --offline --locked --no-run --manifest-path bindings/rust/Cargo.toml \
  --message-format=json |
  python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        target = m["target"]
        crate = target["src_path"].split("/bindings/rust/")[1].split("/")[0]  # zyfa or zyfa-sys
        shutil.copy(m["executable"], ".carry-bindings/rust_%s_%s_%s.test" % (crate, target["kind"][0], target["name"]))
'
# The ABI probe the Rust layout test compares its declarations with (it would compile one on the spot).
cc -std=c99 -Iinclude bindings/abi_probe.c -o .carry-bindings/zyfa_abi_probe
# Debug information is most of their size, and a call carries at most 64 MiB.
strip --strip-debug .carry-bindings/*.test .carry-bindings/zyfa_abi_probe
dirty=$(git status --porcelain -- src include bindings)
echo "$(git rev-parse HEAD)${dirty:++dirty}" > .carry-bindings/COMMIT
ls .carry-bindings && du -sh .carry-bindings
