#!/usr/bin/env bash
# Runs the benchmark harness on the device from a build made here. Prepare here first:
#   tools/device/prepare_bench.sh [BUILD_DIR]      (builds zyfa_bench, fills .carry-bench/ and .whl/)
# then, on the device (the `run` tool, carry [".carry-bench", ".whl"]), one part per command:
#   tools/device/run_bench.sh PART [FLAGS...]
# PART: check | kernel | peers-kernel | sustained | accuracy. FLAGS (--dtypes=, --families=, --seqlens=,
# --inputs=, --repeats=, --idle-s=) go to both zyfa_bench and bench/peers.py, so a part can be split to
# stay inside the 10-minute limit of one device command. Each part writes $OUT/part-PART.json (records,
# exact command, clocks before and after, versions) and $OUT/PART.log; bench/results_file.py merge turns
# the parts into bench/results/<date>-<gpu>.json here.
set -uo pipefail

readonly PART="${1:?usage: tools/device/run_bench.sh check|kernel|peers-kernel|sustained|accuracy [FLAGS...]}"
shift
readonly FLAGS=("$@")
readonly CARRY=.carry-bench
readonly BENCH="$CARRY/zyfa_bench"
readonly OUTDIR="${OUT:-$PWD/bench-out}"
mkdir -p "$OUTDIR"
readonly LOG="$OUTDIR/$PART.log"
exec > >(tee -a "$LOG") 2>&1

[[ -x "$BENCH" ]] || { echo "no $BENCH: run tools/device/prepare_bench.sh here first"; exit 2; }
export PYTHONUNBUFFERED=1

# Python peers carried as wheels (fa3-fwd); the device's own PyTorch stays as it is.
if compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi

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

clocks() {
  nvidia-smi --query-gpu=timestamp,name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,pstate,clocks_event_reasons.active \
    --format=csv 2>&1
}

records=()
bench() {  # zyfa_bench NAME ARGS...: records into $OUTDIR/PART-NAME.json
  local name="$1"; shift
  local json="$OUTDIR/$PART-$name.json"
  echo "+ $BENCH $* --json=$json"
  "$BENCH" "$@" --json="$json" --benchmark_counters_tabular=true && records+=("$json")
}
peers() {  # bench/peers.py NAME ARGS...
  local name="$1"; shift
  local json="$OUTDIR/$PART-$name.json"
  echo "+ python3 bench/peers.py --bench $BENCH $* --json $json"
  python3 bench/peers.py --bench "$BENCH" "$@" --json "$json" && records+=("$json")
}

clocks > "$OUTDIR/.clocks-before"
start=$(date +%s)
case "$PART" in
  check)
    "$BENCH" --mode=dry | tail -3
    bench cudnn-llama --mode=kernel --families=llama3.1-8b --seqlens=4096,16384 "${FLAGS[@]}"
    bench cudnn-llama-std1 --mode=kernel --impls=cudnn --families=llama3.1-8b --seqlens=16384 --input-std=1 "${FLAGS[@]}"
    peers peers-llama --mode=kernel --families=llama3.1-8b --seqlens=16384 "${FLAGS[@]}"
    bench accuracy --mode=accuracy --families=gqa-d128 --seqlens=4096 --inputs=gaussian,structured "${FLAGS[@]}"
    peers peers-accuracy --mode=accuracy --families=gqa-d128 --seqlens=4096 --inputs=gaussian,structured "${FLAGS[@]}"
    ;;
  kernel) bench kernel --mode=kernel "${FLAGS[@]}" ;;
  peers-kernel) peers peers-kernel --mode=kernel "${FLAGS[@]}" ;;
  sustained)
    bench sustained --mode=sustained "${FLAGS[@]}"
    peers peers-sustained --mode=sustained "${FLAGS[@]}"
    ;;
  accuracy)
    bench accuracy --mode=accuracy "${FLAGS[@]}"
    peers peers-accuracy --mode=accuracy "${FLAGS[@]}"
    ;;
  *) echo "unknown part $PART"; exit 2 ;;
esac
clocks > "$OUTDIR/.clocks-after"
echo "part $PART took $(( $(date +%s) - start )) s"

if (( ${#records[@]} == 0 )); then echo "no records"; exit 1; fi
python3 bench/results_file.py wrap --part "$PART" --command "tools/device/run_bench.sh $PART ${FLAGS[*]}" \
  --commit "$(cat "$CARRY/COMMIT" 2>/dev/null || echo unknown)" \
  --clocks-before "$OUTDIR/.clocks-before" --clocks-after "$OUTDIR/.clocks-after" \
  --out "$OUTDIR/part-$PART.json" "${records[@]}"
rm -f "${records[@]}"
