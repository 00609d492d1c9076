#!/usr/bin/env bash
# Installs what building and testing zyfa needs on a fresh Debian 12 machine with the CUDA 13 toolkit.
# Idempotent: skips whatever is already present. Used by tools/test.sh, tools/run.sh and .ci/run.
set -euo pipefail

apt_install() {
  echo "install_deps: apt-get install $*"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

need_apt=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in cmake g++ make pkg-config libgtest-dev libbenchmark-dev golang-go; do
  have_pkg "$pkg" || need_apt+=("$pkg")
done
# Rust >= 1.77 for the Rust binding's test (its crates' rust-version): Debian 12's `cargo` is 1.63, its
# `cargo-web` (with rustc-web, kept current for the browsers) is new enough and installs /usr/bin/cargo. A
# toolchain already on PATH or in ~/.cargo/bin (rustup) is used as it is.
if ! command -v cargo >/dev/null 2>&1 && [[ ! -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]]; then
  need_apt+=(cargo-web)
fi
if ((${#need_apt[@]})); then apt_install "${need_apt[@]}"; fi

if ! command -v nvcc >/dev/null 2>&1; then
  if [[ -x /usr/local/cuda/bin/nvcc ]]; then
    echo "install_deps: nvcc is in /usr/local/cuda/bin: add it to PATH"
  else
    echo "install_deps: the CUDA 13 toolkit (nvcc) is required and is not installed" >&2
    exit 1
  fi
fi

# Python: the bindings' host tests need numpy and pytest.
py=${PYTHON:-python3}
# Debian's own python3 refuses pip installs (PEP 668) or has no pip: it gets Debian's packages instead.
if ! "$py" -c "import numpy, pytest" >/dev/null 2>&1; then
  echo "install_deps: pip install numpy pytest"
  if ! "$py" -m pip install -q numpy pytest; then
    [[ "$(command -v "$py")" == /usr/bin/* ]] || { echo "install_deps: pip failed for $py" >&2; exit 1; }
    apt_install python3-numpy python3-pytest
  fi
fi

# cuobjdump and nvdisasm, for the SASS checks (CTest asmgen_sass): the toolkit here ships without them, PyPI
# has them. Not fatal: without them that test reports itself skipped.
if [[ -z "$(bash tools/find_cuobjdump.sh)" ]]; then
  echo "install_deps: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm"
  "$py" -m pip install -q nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm ||
    echo "install_deps: warning: no cuobjdump, the SASS checks will be skipped" >&2
fi
