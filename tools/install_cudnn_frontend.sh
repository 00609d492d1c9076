#!/usr/bin/env bash
# Installs the header-only C++ API of cudnn-frontend (the cuDNN peer of bench/zyfa_bench) from PyPI's
# nvidia-cudnn-frontend wheel: the wheel carries the same headers as the GitHub release under include/.
# Only the headers are unpacked; nothing is pip-installed into any Python environment.
#
#   tools/install_cudnn_frontend.sh [PREFIX]      default PREFIX: /opt/cudnn-frontend
#
# Then configure with -DCUDNN_FRONTEND_ROOT=PREFIX (or leave the default, which CMake also searches).
set -euo pipefail

readonly VERSION="${CUDNN_FRONTEND_VERSION:-1.32.0}"
readonly PREFIX="${1:-/opt/cudnn-frontend}"
readonly STAMP="$PREFIX/include/.nvidia-cudnn-frontend-$VERSION"

if [[ -f "$STAMP" ]]; then
  echo "cudnn-frontend $VERSION headers already in $PREFIX/include"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$work" \
  "nvidia-cudnn-frontend==$VERSION"
wheel="$(ls "$work"/nvidia_cudnn_frontend-*.whl)"

mkdir -p "$PREFIX"
python3 - "$wheel" "$PREFIX" <<'PY'
import sys, zipfile
wheel, prefix = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    headers = [n for n in z.namelist() if n.startswith("include/") and not n.endswith("/")]
    z.extractall(prefix, members=headers)
print(f"unpacked {len(headers)} headers into {prefix}/include")
PY

# The wheel must really hold the C++ graph API the bench includes.
for h in cudnn_frontend.h cudnn_frontend/graph_interface.h cudnn_frontend_version.h; do
  [[ -f "$PREFIX/include/$h" ]] || { echo "error: $h missing from the wheel" >&2; exit 1; }
done
touch "$STAMP"
grep -E "define CUDNN_FRONTEND_(MAJOR|MINOR|PATCH)_VERSION" "$PREFIX/include/cudnn_frontend_version.h"
