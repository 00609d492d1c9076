# Sourced on the device by the scripts that run zyfa_bench or bench/peers.py (run_bench.sh, run_ncu.sh):
# installs the carried peer wheels and sets PYTHONPATH and LD_LIBRARY_PATH. Needs CARRY (a bench carry, e.g.
# .carry-bench) and the repository root as the working directory.
# Python peers carried as wheels (.whl: fa3-fwd; .whl-flashinfer: FlashInfer and what the image lacks of its
# needs; both together come close to the 64 MiB a call carries, so FlashInfer travels in a call of its own,
# which also keeps its first-use compilation out of the other peers' time limit); the device's own
# PyTorch stays as it is. FlashInfer compiles its kernels with the device's nvcc on first use, into
# ~/.cache/flashinfer, which stays while the machine is warm.
for dir in .whl .whl-flashinfer; do
  if compgen -G "$dir/*.whl" > /dev/null && [[ ! -f "/tmp/site/.installed$dir" ]]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$dir"/*.whl \
      && touch "/tmp/site/.installed$dir"
  fi
done
[[ -d /tmp/site ]] && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}

# cuDNN 9.19 lives in PyTorch's environment on the device; nvrtc in the toolkit or there; Google
# Benchmark's shared library travels in .carry-bench/lib.
site="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
libdirs="$PWD/$CARRY/lib"
for lib in libcudnn.so.9 libnvrtc.so.13; do
  dir="$(dirname "$(find "$site/nvidia" /usr/local/cuda/lib64 /usr/local/cuda/lib -name "$lib" 2>/dev/null | head -1)" 2>/dev/null)"
  [[ -n "$dir" && "$dir" != "." ]] && libdirs="$libdirs:$dir"
done
export LD_LIBRARY_PATH="$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
# zyfa through its Python binding (peers.py's zyfa-py): the carry's libzyfa.so, the build zyfa_bench came from.
[[ -f "$CARRY/lib/libzyfa.so" ]] && export ZYFA_LIB="$PWD/$CARRY/lib/libzyfa.so"
