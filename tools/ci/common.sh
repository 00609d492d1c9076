# Sourced by tools/ci/*.sh: the clang toolchain of the sanitizer builds, and the configure step they share.
# A sanitizer build instruments host code only: it links the GPU code of a finished plain build
# (ZYFA_PREBUILT_KERNELS), so nvcc does not run again.

# Installs clang and its sanitizer runtimes (libclang-rt) when the image lacks them.
ci_require_clang() {
  local missing=()
  for pkg in clang libclang-rt-14-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    echo "ci: apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# ci_configure <plain build dir> <sanitizer build dir> <cmake options...>
ci_configure() {
  local plain=$1 dir=$2
  shift 2
  local kernels="$plain/libzyfa_static.a"
  if [[ ! -f "$kernels" ]]; then
    echo "ci: $kernels is missing: build the plain tree first (bash tools/test.sh $plain)" >&2
    return 1
  fi
  export PATH="/usr/local/cuda/bin:$PATH"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DZYFA_BUILD_BENCH=OFF -DZYFA_BUILD_TOOLS=OFF -DZYFA_PREBUILT_KERNELS="$(realpath "$kernels")" "$@" >/dev/null
}

# Prints how long the step took since `start`.
ci_elapsed() { echo "ci: $1 took $(( $(date +%s) - start )) s"; }
