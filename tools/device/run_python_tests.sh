#!/usr/bin/env bash
# The Python binding's tests on the device machine (PyTorch and an H200): the device tests (against
# scaled_dot_product_attention in float64, under torch.compile, under CUDA graph capture and replay)
# and the host tests. Device tests may not skip here: ZYFA_REQUIRE_DEVICE=1 turns a skip into a failure.
#
# Build libzyfa.so on the CPU machine, carry it with the work tree, and run this in one call:
#   mkdir -p .carry-python && cp -L build/libzyfa.so .carry-python/     (.carry-*/ is git-ignored locally)
#   run: bash tools/device/run_python_tests.sh .carry-python/libzyfa.so   carry: [".carry-python"]
# Extra arguments go to pytest (e.g. -k compile).
set -euo pipefail
cd "$(dirname "$0")/../.."
lib=${1:?usage: bash tools/device/run_python_tests.sh <libzyfa.so> [pytest arguments]}
shift
[[ -f $lib ]] || { echo "run_python_tests: no library at $lib" >&2; exit 1; }
py=${PYTHON:-python3}
"$py" - <<'PY'
import sys, torch
print(f"python {sys.version.split()[0]}, torch {torch.__version__}, cuda {torch.version.cuda}, "
      f"device {torch.cuda.get_device_name() if torch.cuda.is_available() else 'none'}")
PY

# Install the package from the carried tree: no index (the device reaches no registry), no build
# isolation (setuptools comes from the image). Where pip cannot, import the tree itself.
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
if "$py" -m pip install -q --no-deps --no-index --no-build-isolation --target "$site" bindings/python; then
  echo "run_python_tests: installed zyfa from bindings/python"
  export PYTHONPATH="$site"
else
  echo "run_python_tests: pip could not install the package; importing bindings/python directly"
  export PYTHONPATH="$PWD/bindings/python"
fi
export ZYFA_LIB=$(realpath "$lib") ZYFA_REQUIRE_DEVICE=1

# The ABI check compiles bindings/abi_probe.c unless a built probe is given; without a C compiler it
# is left to the CPU machines, which run it in every ctest.
args=()
if [[ -z ${ZYFA_ABI_PROBE:-} ]] && ! command -v "${CC:-cc}" >/dev/null 2>&1; then
  echo "run_python_tests: no C compiler for the ABI probe: its test runs in CI instead"
  args+=(--deselect tests/test_abi.py::test_declarations_match_the_c_header)
fi
cd bindings/python
"$py" -m pytest -v -rs -p no:cacheprovider tests "${args[@]}" "$@"
