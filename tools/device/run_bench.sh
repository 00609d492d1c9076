#!/usr/bin/env bash
# Runs the benchmark harness on the device from a build made here. Prepare here first:
#   tools/device/prepare_bench.sh [BUILD_DIR]      (builds zyfa_bench, fills .carry-bench/ and .whl/;
#                                                   FLASHINFER=1 also fills .whl-flashinfer/)
# then, on the device (the `run` tool, carry [".carry-bench", ".whl"]), one part per command:
#   tools/device/run_bench.sh PART [FLAGS...]
# PART: check | kernel | peers-kernel | sustained | accuracy | reconcile. FLAGS (--dtypes=, --families=, --seqlens=,
# --inputs=, --repeats=, --idle-s=, --p-rounding=) go to both zyfa_bench and bench/peers.py, so a part can be
# split to stay inside the 10-minute limit of one device command (--p-rounding=default,lean,exact adds zyfa FP8
# runs with an explicit P rounding; peers.py accepts it and ignores it). --impls= is split between the two:
# zyfa and cudnn go to zyfa_bench, the rest to peers.py, and a step whose share is empty does not run. Each
# part writes $OUT/part-PART.json (records, exact command, clocks before and after, the SM clock and power
# sampled every 200 ms while it ran, versions) and appends to $OUT/bench.log; bench/results_file.py merge turns
# the parts into bench/results/<date>-<gpu>.json here. Several parts can run in one device command, one after
# another.
set -uo pipefail

readonly PART="${1:?usage: tools/device/run_bench.sh check|kernel|peers-kernel|sustained|accuracy|reconcile [FLAGS...]}"
shift
readonly FLAGS=("$@")
readonly CARRY="${CARRY:-.carry-bench}"  # another build of zyfa_bench: CARRY=.carry-NAME
readonly BENCH="$CARRY/zyfa_bench"
readonly OUTDIR="${OUT:-$PWD/bench-out}"
# Each zyfa_bench or peers.py step is killed after this many seconds (its records are then lost, the
# part's other steps are kept): set it so that all parts of one device command end inside its limit.
readonly STEP_TIMEOUT="${STEP_TIMEOUT:-590}"    # each zyfa_bench step (one per family in most parts)
readonly PEERS_TIMEOUT="${PEERS_TIMEOUT:-$STEP_TIMEOUT}"  # each peers.py step
mkdir -p "$OUTDIR"
readonly LOG="$OUTDIR/bench.log"
readonly SCRATCH="$(mktemp -d)"  # clock readings: only the part file and the log go back
exec > >(tee -a "$LOG") 2>&1

[[ -x "$BENCH" ]] || { echo "no $BENCH: run tools/device/prepare_bench.sh here first"; exit 2; }
export PYTHONUNBUFFERED=1

# The peers' wheels, cuDNN and Google Benchmark's library (CARRY names the bench carry).
source tools/device/bench_env.sh

# The GPU the benchmarks run on (CUDA's device 0: the first of CUDA_VISIBLE_DEVICES), so that on a machine with
# several GPUs the clock readings and samples are that GPU's alone.
readonly GPU_INDEX="$(v="${CUDA_VISIBLE_DEVICES:-0}"; echo "${v%%,*}")"
clocks() {
  nvidia-smi -i "$GPU_INDEX" --query-gpu=timestamp,name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,pstate,clocks_event_reasons.active \
    --format=csv 2>&1
}

# --impls names the implementations of two programs: zyfa_bench times zyfa and cuDNN (its cudnn-frontend
# graphs) and refuses other names; bench/peers.py times the Python peers. Each gets its share of the list,
# and an explicit list with no name of one program skips that program's steps (their records would be none).
readonly ZYFA_BENCH_IMPLS=" zyfa cudnn "
FAMILIES=(mha-d128 gqa-d128 mha-d192 gqa-d192 llama3.1-8b)
BENCH_FLAGS=()  # FLAGS for zyfa_bench: --impls cut to its share
PEER_FLAGS=()   # FLAGS for peers.py: --impls cut to its share
BENCH_ONLY_FLAGS=()  # BENCH_FLAGS without --families (bench_per_family sets it per family)
RUN_BENCH=1 RUN_PEERS=1
for f in "${FLAGS[@]}"; do
  case "$f" in
    --impls=*)
      bench_share=() peer_share=()
      IFS=, read -r -a asked <<< "${f#--impls=}"
      for impl in "${asked[@]}"; do
        if [[ "$ZYFA_BENCH_IMPLS" == *" $impl "* ]]; then bench_share+=("$impl"); else peer_share+=("$impl"); fi
      done
      RUN_BENCH=$(( ${#bench_share[@]} > 0 )) RUN_PEERS=$(( ${#peer_share[@]} > 0 ))
      bench_impls="--impls=$(IFS=,; echo "${bench_share[*]}")"
      BENCH_FLAGS+=("$bench_impls")
      BENCH_ONLY_FLAGS+=("$bench_impls")
      PEER_FLAGS+=("--impls=$(IFS=,; echo "${peer_share[*]}")")
      ;;
    --families=*) IFS=, read -r -a FAMILIES <<< "${f#--families=}"; BENCH_FLAGS+=("$f"); PEER_FLAGS+=("$f") ;;
    *) BENCH_FLAGS+=("$f"); BENCH_ONLY_FLAGS+=("$f"); PEER_FLAGS+=("$f") ;;
  esac
done

records=()
bench() {  # zyfa_bench NAME ARGS...: records into $OUTDIR/PART-NAME.json
  local name="$1"; shift
  if (( ! RUN_BENCH )); then echo "skip zyfa_bench step $name: --impls names none of$ZYFA_BENCH_IMPLS"; return; fi
  local json="$OUTDIR/$PART-$name.json"
  echo "+ $BENCH $* --json=$json"
  timeout -k 5 "$STEP_TIMEOUT" "$BENCH" "$@" --json="$json" --benchmark_counters_tabular=true \
    || echo "step $name failed or was killed (exit $?): keeping the records it wrote"
  [[ -s "$json" ]] && records+=("$json")
}
# One zyfa_bench process per shape family: a kernel that faults (an illegal address poisons the whole
# CUDA context) then costs that family's remaining cases, not the rest of the part.
bench_per_family() {  # NAME ARGS...
  local name="$1"; shift
  for fam in "${FAMILIES[@]}"; do bench "$name-$fam" "$@" --families="$fam" "${BENCH_ONLY_FLAGS[@]}"; done
}
peers() {  # bench/peers.py NAME ARGS...
  local name="$1"; shift
  if (( ! RUN_PEERS )); then echo "skip peers.py step $name: --impls names no peer"; return; fi
  local json="$OUTDIR/$PART-$name.json"
  echo "+ python3 bench/peers.py --bench $BENCH $* --json $json"
  timeout -k 5 "$PEERS_TIMEOUT" python3 bench/peers.py --bench "$BENCH" "$@" --json "$json" \
    || echo "step $name failed or was killed (exit $?): keeping the records it wrote"
  [[ -s "$json" ]] && records+=("$json")
}

clocks > "$SCRATCH/clocks-before"
nvidia-smi -i "$GPU_INDEX" --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv,noheader,nounits \
  -lms 200 > "$SCRATCH/clock-samples" 2>/dev/null &
sampler=$!
start=$(date +%s)
case "$PART" in
  check)
    "$BENCH" --mode=dry | tail -3
    bench cudnn-llama --mode=kernel --families=llama3.1-8b --seqlens=4096,16384 "${BENCH_FLAGS[@]}"
    bench cudnn-llama-std1 --mode=kernel --impls=cudnn --families=llama3.1-8b --seqlens=16384 --input-std=1 "${BENCH_FLAGS[@]}"
    peers peers-llama --mode=kernel --families=llama3.1-8b --seqlens=16384 "${PEER_FLAGS[@]}"
    bench accuracy --mode=accuracy --families=gqa-d128 --seqlens=4096 --inputs=gaussian,structured "${BENCH_FLAGS[@]}"
    peers peers-accuracy --mode=accuracy --families=gqa-d128 --seqlens=4096 --inputs=gaussian,structured "${PEER_FLAGS[@]}"
    ;;
  kernel) bench_per_family kernel --mode=kernel ;;
  peers-kernel) peers peers-kernel --mode=kernel "${PEER_FLAGS[@]}" ;;
  sustained)
    bench_per_family sustained --mode=sustained
    peers peers-sustained --mode=sustained "${PEER_FLAGS[@]}"
    ;;
  accuracy)
    bench_per_family accuracy --mode=accuracy
    peers peers-accuracy --mode=accuracy "${PEER_FLAGS[@]}"
    ;;
  reconcile)  # NVIDIA's protocol (isolated calls after an L2 flush) next to ours, for the published figures
    bench isolated --mode=isolated --families=llama3.1-8b "${BENCH_FLAGS[@]}"
    ;;
  *) echo "unknown part $PART"; exit 2 ;;
esac
kill "$sampler" 2>/dev/null
clocks > "$SCRATCH/clocks-after"
echo "part $PART took $(( $(date +%s) - start )) s"

if (( ${#records[@]} == 0 )); then echo "no records"; exit 1; fi
python3 bench/results_file.py wrap --part "$PART" --command "tools/device/run_bench.sh $PART ${FLAGS[*]}" \
  --commit "$(cat "$CARRY/COMMIT" 2>/dev/null || echo unknown)" \
  --clocks-before "$SCRATCH/clocks-before" --clocks-after "$SCRATCH/clocks-after" --clock-samples "$SCRATCH/clock-samples" \
  --out "$OUTDIR/part-$PART.json" "${records[@]}"
rm -rf "${records[@]}" "$SCRATCH"
