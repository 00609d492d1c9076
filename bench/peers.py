#!/usr/bin/env python3
"""The Python peers of zyfa_bench, on the device, over the same cases, protocol and inputs.

Peers: PyTorch SDPA with the cuDNN backend (torch-cudnn) and the flash backend (torch-flash, FA2),
FlashAttention-3 forward (fa3, BF16 and FP8) from the fa3-fwd wheel, and FlashInfer's single-request prefill
(flashinfer, its fa3 backend, BF16 and FP8; batch 1, as the seed protocol is) from the flashinfer-python wheel,
which compiles its kernels with the device's nvcc on first use (FLASHINFER=1 tools/device/prepare_bench.sh). The inputs are not generated
here: for every case the zyfa_bench binary writes its tensors (--mode=dump), so the peers see the very
BF16 values, FP8 codes and descales that zyfa and cuDNN get (and, for the accuracy study, the same
sampled rows and fp64 reference).

Protocol (as zyfa_bench's): kernel mode warms each peer up, then times at least `repeats` rounds (whole
rotations) of back-to-back calls between CUDA events, the peer order rotating by one each round, the GPU
idling before long cases; the record keeps the median round. Sustained mode: idle, 1 s back to back
untimed, >= 3 s timed.

Records follow bench/results' schema (impl, dtype, d_qk, d_v, batch, seqlen, nheads, nheads_k, inputs,
mode, tflops, rel_rms_err, ...). A peer that cannot run a case gets a record with its error.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the command line (and its host test) needs no PyTorch; main() does
    torch = F = None

# zyfa-py is zyfa itself through bindings/python (torch.ops.zyfa.fwd, with its workspace and LSE), so that
# zyfa runs in the same process and the same rotation as the Python peers: a ratio between two records of
# one peers.py case has no process, load history or clock state between them that the other lacks.
IMPLS = ["zyfa-py", "torch-cudnn", "torch-flash", "fa3", "flashinfer"]
BENCH_IMPLS = ["zyfa", "cudnn"]  # timed by zyfa_bench, not here
ZYFA_PYTHON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python")
FAMILIES = ["mha-d128", "gqa-d128", "mha-d192", "gqa-d192", "llama3.1-8b"]
SEQLENS = [2048, 4096, 8192, 16384, 32768]


# ---------------------------------------------------------------- inputs from zyfa_bench --mode=dump
def dump_case(bench, tmp, family, seqlen, inputs, dtype, purpose, rows_per_head):
    """Runs the bench binary for one case and returns its directory (the only one under tmp)."""
    shutil.rmtree(tmp, ignore_errors=True)
    cmd = [bench, "--mode=dump", f"--dump-dir={tmp}", f"--families={family}", f"--seqlens={seqlen}",
           f"--inputs={inputs}", f"--dtypes={dtype}", f"--purpose={purpose}", f"--rows-per-head={rows_per_head}"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
    return out[-1]


def load_case(case_dir, device):
    with open(os.path.join(case_dir, "meta.json")) as f:
        meta = json.load(f)
    b, s, h, hk = meta["batch"], meta["seqlen"], meta["nheads"], meta["nheads_k"]
    dqk, dv = meta["d_qk"], meta["d_v"]
    dt = torch.float8_e4m3fn if meta["dtype"] == "fp8" else torch.bfloat16
    raw_dtype = torch.uint8 if meta["dtype"] == "fp8" else torch.int16

    def tensor(name, heads, dim):
        x = torch.from_file(os.path.join(case_dir, name), dtype=raw_dtype, size=b * s * heads * dim)
        return x.view(dt).view(b, s, heads, dim).to(device)

    t = {"q": tensor("q.bin", h, dqk), "k": tensor("k.bin", hk, dqk), "v": tensor("v.bin", hk, dv)}
    if meta["rows"] > 0:
        n = meta["rows"]
        t["rows"] = torch.from_file(os.path.join(case_dir, "rows.bin"), dtype=torch.int64, size=3 * n).view(n, 3)
        # The rows of its (batch, head) each sampled row stands for (sampled_reference.hpp, RowId::weight).
        weights_file = os.path.join(case_dir, "row_weights.bin")
        if not os.path.exists(weights_file):  # unweighted errors would not compare with zyfa_bench's
            raise OSError(f"{weights_file} is missing: the zyfa_bench that dumped it predates the weighted row "
                          "sample (rebuild it with tools/device/prepare_bench.sh)")
        t["row_weights"] = torch.from_file(weights_file, dtype=torch.float64, size=n)
        t["ref_out"] = torch.from_file(os.path.join(case_dir, "ref_out.bin"), dtype=torch.float64, size=n * dv).view(n, dv)
        t["ref_lse"] = torch.from_file(os.path.join(case_dir, "ref_lse.bin"), dtype=torch.float64, size=n)
    return meta, t


# ---------------------------------------------------------------- the peers
class Unsupported(Exception):
    pass


def make_call(impl, meta, t, want_lse=False):
    """A zero-argument callable running one attention call; returns (out BSHD, lse (B,H,S) or None)."""
    fp8 = meta["dtype"] == "fp8"
    h, hk = meta["nheads"], meta["nheads_k"]
    q, k, v = t["q"], t["k"], t["v"]
    scale = meta["softmax_scale"]
    if impl in ("torch-cudnn", "torch-flash"):
        if fp8:
            raise Unsupported("PyTorch SDPA has no FP8 path")
        if impl == "torch-flash" and meta["d_qk"] != meta["d_v"]:
            raise Unsupported("PyTorch's flash backend rejects d_qk != d_v")
        backend = (torch.nn.attention.SDPBackend.CUDNN_ATTENTION if impl == "torch-cudnn"
                   else torch.nn.attention.SDPBackend.FLASH_ATTENTION)
        # BSHD storage seen as (B, H, S, D) views, as a model passes it (the anchors measured both).
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        gqa = h != hk

        def call():
            with torch.nn.attention.sdpa_kernel(backend):
                o = F.scaled_dot_product_attention(qt, kt, vt, is_causal=True, scale=scale, enable_gqa=gqa)
            return o.transpose(1, 2), None

        if want_lse:
            # The public API returns no LSE; the backend's own op does (keys expanded for GQA: same math).
            ke = kt.repeat_interleave(h // hk, dim=1) if gqa else kt
            ve = vt.repeat_interleave(h // hk, dim=1) if gqa else vt

            def call_lse():
                out, _ = call()
                if impl == "torch-cudnn":
                    r = torch.ops.aten._scaled_dot_product_cudnn_attention(qt, ke, ve, None, True, 0.0, True, False,
                                                                            scale=scale)
                else:
                    r = torch.ops.aten._scaled_dot_product_flash_attention(qt, ke, ve, 0.0, True, False, scale=scale)
                return out, r[1]
            return call_lse
        return call
    if impl == "fa3":
        try:
            from fa3_fwd_interface import flash_attn_func
        except Exception as e:  # noqa: BLE001 - any import failure means the wheel does not run here
            raise Unsupported(f"fa3-fwd does not import: {type(e).__name__}: {e}")
        kw = {"causal": True, "softmax_scale": scale}
        if fp8:
            b = meta["batch"]
            for name in ("q", "k", "v"):
                kw[f"{name}_descale"] = torch.full((b, hk), meta[f"{name}_descale"], dtype=torch.float32, device=q.device)

        def call():
            r = flash_attn_func(q, k, v, return_attn_probs=want_lse, **kw)
            if isinstance(r, tuple):
                return r[0], (r[1] if want_lse else None)
            return r, None
        return call
    if impl == "flashinfer":
        if meta["batch"] != 1:
            raise Unsupported("flashinfer's single-request prefill takes batch 1")
        if fp8 and meta["d_qk"] != meta["d_v"]:
            raise Unsupported("flashinfer's FP8 prefill asserts d_qk == d_v")
        try:
            import flashinfer
        except ModuleNotFoundError as e:
            # Its wheels (.whl-flashinfer) travel in a call of their own: elsewhere it is absent, not broken.
            raise Unsupported(f"flashinfer not installed in this call (carry .whl-flashinfer): {e}")
        except Exception as e:  # noqa: BLE001 - any other import failure means the wheel does not run here
            raise Unsupported(f"flashinfer does not import: {type(e).__name__}: {e}")
        kw = {"causal": True, "sm_scale": scale, "backend": "fa3", "kv_layout": "NHD"}
        if fp8:
            # One descale per tensor, given per head as FlashInfer takes it; the output in BF16, as zyfa's.
            for name, heads in (("q", h), ("k", hk), ("v", hk)):
                kw[f"scale_{name}"] = torch.full((heads,), meta[f"{name}_descale"], dtype=torch.float32, device=q.device)
            kw["o_dtype"] = torch.bfloat16
        q3, k3, v3 = q[0], k[0], v[0]  # (S, heads, d): FlashInfer's NHD

        def call():
            # No LSE: FlashInfer's is in its own base and shape, not checked here against the reference.
            return flashinfer.single_prefill_with_kv_cache(q3, k3, v3, **kw).unsqueeze(0), None

        # The first call compiles the kernel (minutes, with the device's nvcc): here, outside any timing.
        try:
            call()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - a kernel FlashInfer cannot build or run is a reason, not a crash
            raise Unsupported(f"flashinfer failed its first call: {type(e).__name__}: {e}")
        return call
    if impl == "zyfa-py":
        try:
            if ZYFA_PYTHON not in sys.path:  # once per process, not once per case
                sys.path.insert(0, ZYFA_PYTHON)
            import zyfa
        except Exception as e:  # noqa: BLE001 - no libzyfa.so (ZYFA_LIB) or a binding that does not import
            raise Unsupported(f"zyfa's Python binding does not import (ZYFA_LIB: the carry's libzyfa.so): "
                              f"{type(e).__name__}: {e}")
        kw = {"causal": True, "softmax_scale": scale, "return_lse": True}  # zyfa_bench times it with its LSE
        if fp8:
            for name in ("q", "k", "v"):
                kw[f"{name}_descale"] = meta[f"{name}_descale"]

        def call():
            out, lse = zyfa.flash_attn_func(q, k, v, **kw)
            return out, (lse if want_lse else None)
        return call
    raise Unsupported(f"unknown peer {impl}")


# ---------------------------------------------------------------- timing
def time_calls(call, calls):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        call()
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop) / calls


def warm_up(call, seconds, min_calls, timer=time_calls):
    """Runs `call` for `seconds` (and `min_calls`); returns the ms per call of the last batch, the steady
    state: an average over the whole warm-up would carry a slow first call (a lazy module load, a JIT
    compilation), and a timing sized from it would run far too few calls."""
    total_ms, total_calls, batch = 0.0, 0, 1
    # At least two batches, so that the last one never holds the first call.
    while batch < 4 or total_calls < min_calls or total_ms < seconds * 1e3:
        last_ms = timer(call, batch)
        total_ms += last_ms * batch
        total_calls += batch
        batch = min(batch * 2, 64)
    return last_ms


def unix_ms_now():
    return int(time.time() * 1e3)


# A sustained timing that came out short (the estimate from the warm-up was off) is run again, sized from
# itself, up to this many times.
SUSTAINED_ATTEMPTS = 3


def time_sustained(call, seconds, warmup_s, timer=time_calls):
    """Back-to-back calls for at least `seconds` after `warmup_s` of warm-up (the seed's sustained mode):
    returns (ms per call, calls, timed seconds, window) of the first timed window that lasted `seconds`;
    window holds its wall-clock bounds, [start, end] in Unix milliseconds, as zyfa_bench's records do."""
    ms = warm_up(call, warmup_s, 1, timer)
    for _ in range(SUSTAINED_ATTEMPTS):
        n = max(1, math.ceil(1.1 * seconds * 1e3 / max(ms, 1e-6)))
        start = unix_ms_now()
        ms = timer(call, n)
        if ms * n >= seconds * 1e3:
            return ms, n, ms * n / 1e3, [start, unix_ms_now()]
    raise RuntimeError(f"sustained timing stayed under {seconds} s after {SUSTAINED_ATTEMPTS} attempts")


def whole_rotation_rounds(repeats, implementations):
    """Rounds for at least `repeats` timings each in whole rotations, so that each implementation takes each
    place in the order equally often (3 repeats of two made the first one lead twice; on a card at its power cap
    the place moves a repeat by 10%): zyfa_bench's rule (bench/timing.hpp)."""
    n = max(implementations, 1)
    return -(-repeats // n) * n


def calls_per_repeat(args, ms):
    return int(min(max(math.ceil(args.min_time_s * 1e3 / max(ms, 1e-6)), 10), args.max_calls))


def base_record(impl, meta, mode):
    keys = ["dtype", "d_qk", "d_v", "batch", "seqlen", "nheads", "nheads_k", "inputs"]
    r = {"impl": impl, **{k: meta[k] for k in keys}, "mode": mode, "family": meta["family"],
         "input_std": meta["input_std"]}
    return r


def run_timing(args, meta, t, impls, case_index):
    flops = meta["batch"] * meta["nheads"] * meta["seqlen"] ** 2 * (meta["d_qk"] + meta["d_v"])
    calls, errors, ms_list, info = {}, {}, {i: [] for i in impls}, {}
    for impl in impls:
        try:
            calls[impl] = make_call(impl, meta, t)
        except Unsupported as e:
            errors[impl] = str(e)
    live = [i for i in impls if i in calls]
    if meta["seqlen"] >= args.idle_from:
        time.sleep(args.idle_s)
    if args.mode == "sustained":
        for j in range(len(live)):
            impl = live[(j + case_index) % len(live)]
            try:
                time.sleep(args.sustained_idle_s)
                ms, n, timed_s, window = time_sustained(calls[impl], args.sustained_time_s, args.sustained_warmup_s)
                ms_list[impl].append(ms)
                info[impl] = {"calls": n, "timed_s": timed_s, "windows_unix_ms": [window]}
            except Exception as e:  # noqa: BLE001 - a failing peer is recorded, the run goes on
                errors[impl] = f"{type(e).__name__}: {e}"
    else:
        for r in range(whole_rotation_rounds(args.repeats, len(live))):
            for j in range(len(live)):
                impl = live[(j + r) % len(live)]
                if impl in errors:
                    continue
                try:
                    if impl not in info:
                        info[impl] = {"calls": calls_per_repeat(args, warm_up(calls[impl], args.warmup_s, 3)),
                                      "windows_unix_ms": []}
                    start = unix_ms_now()
                    ms_list[impl].append(time_calls(calls[impl], info[impl]["calls"]))
                    info[impl]["windows_unix_ms"].append([start, unix_ms_now()])
                except Exception as e:  # noqa: BLE001
                    errors[impl] = f"{type(e).__name__}: {e}"
    records = []
    for impl in impls:
        rec = base_record(impl, meta, args.mode)
        ms = sorted(ms_list[impl])
        if ms and impl not in errors:
            med = statistics.median(ms)
            rec.update({"tflops": flops / (med * 1e-3) / 1e12, "time_ms": med,
                        "tflops_repeats": [flops / (m * 1e-3) / 1e12 for m in ms_list[impl]], **info[impl],
                        "repeats": len(ms)})
        else:
            rec.update({"tflops": None, "error": errors.get(impl, "not run")})
        records.append(rec)
        print(json.dumps(rec), flush=True)
    return records


# ---------------------------------------------------------------- accuracy
def weighted_rel_rms(diff, ref, weights):
    """zyfa_bench's relative RMS (src/ref/error_norms.cpp): each sampled row's squares weighted by the rows it
    stands for, in both sums, so that the sample estimates the whole output's. Tensors or arrays; weights
    (rows, 1) against (rows, d_v)."""
    return float(((weights * diff ** 2).sum() / (weights * ref ** 2).sum()) ** 0.5)


def run_accuracy(args, meta, t, impls):
    rows = t["rows"].to(t["q"].device)
    b_idx, h_idx, s_idx = rows[:, 0], rows[:, 1], rows[:, 2]
    ref_out, ref_lse = t["ref_out"], t["ref_lse"]
    weights = t["row_weights"].reshape(-1, 1)  # zyfa_bench's weighting, so that both estimate the whole output
    records = []
    ones = dict(t, v=torch.ones_like(t["v"].float()).to(t["v"].dtype))
    for impl in impls:
        rec = base_record(impl, meta, "accuracy")
        rec.update({"tflops": None, "rows_checked": int(rows.shape[0]), "rows_weighted": True})
        try:
            out, lse = make_call(impl, meta, t, want_lse=True)()
            torch.cuda.synchronize()
            got = out[b_idx, s_idx, h_idx].double().cpu()
            diff = got - ref_out
            rec["rel_rms_err"] = weighted_rel_rms(diff, ref_out, weights)
            rec["max_abs_err"] = float(diff.abs().max())
            rec["nonfinite_out"] = int((~torch.isfinite(out.float())).sum())
            if lse is not None:
                lse_rows = lse.reshape(meta["batch"], meta["nheads"], -1)[b_idx, h_idx, s_idx].double().cpu()
                rec["lse_max_abs_err"] = float((lse_rows - ref_lse).abs().max())
            else:
                rec["lse_max_abs_err"] = None
            ones_meta = dict(meta, v_descale=1.0)
            o1, _ = make_call(impl, ones_meta, ones)()
            torch.cuda.synchronize()
            rec["rows_sum_max_err"] = float((o1.float() - 1.0).abs().max())
        except Unsupported as e:
            rec.update({"rel_rms_err": None, "error": str(e)})
        except Exception as e:  # noqa: BLE001
            rec.update({"rel_rms_err": None, "error": f"{type(e).__name__}: {e}"})
        records.append(rec)
        print(json.dumps(rec), flush=True)
    return records


# ---------------------------------------------------------------- main
def parser():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bench", required=True, help="the zyfa_bench binary (writes the inputs)")
    p.add_argument("--mode", choices=["kernel", "sustained", "accuracy"], default="kernel")
    p.add_argument("--impls", default=",".join(IMPLS))
    p.add_argument("--dtypes", default="bf16,fp8")
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--seqlens", default=None)
    p.add_argument("--inputs", default=None)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--idle-s", type=float, default=5.0)
    p.add_argument("--idle-from", type=int, default=16384)
    p.add_argument("--warmup-s", type=float, default=0.2)
    p.add_argument("--min-time-s", type=float, default=0.25)
    p.add_argument("--max-calls", type=int, default=100)
    p.add_argument("--sustained-idle-s", type=float, default=2.0)
    p.add_argument("--sustained-warmup-s", type=float, default=1.0)
    p.add_argument("--sustained-time-s", type=float, default=3.0)
    p.add_argument("--rows-per-head", type=int, default=64)
    p.add_argument("--tmp", default="/tmp/zyfa-peers")
    p.add_argument("--json", required=True)
    # zyfa_bench's flag, which tools/device/run_bench.sh passes here too: the peers have no P rounding to
    # choose, so it is accepted and ignored (every peer record is the peer as it is).
    p.add_argument("--p-rounding", default="default", help="zyfa_bench's; ignored here")
    return p


def write_results(path, versions, records):
    """The records file run_bench.sh collects (results_file.py wrap reads it)."""
    with open(path, "w") as f:
        json.dump({"tool": "bench/peers.py", "argv": sys.argv, "versions": versions, "records": records}, f, indent=1)


def peer_impls(arg):
    """The peers this script runs out of --impls. zyfa_bench's own names are skipped (run_bench.sh gives
    each program its share, but a list written for both still works here); any other unknown name stops
    the script."""
    asked = arg.split(",")
    unknown = [i for i in asked if i not in IMPLS and i not in BENCH_IMPLS]
    if unknown:
        sys.exit(f"peers.py: --impls={arg}: unknown {','.join(unknown)} (peers: {','.join(IMPLS)})")
    return [i for i in asked if i in IMPLS]


def main():
    args = parser().parse_args()
    impls = peer_impls(args.impls)
    if not impls:
        print(f"peers.py: --impls={args.impls} names no peer of this script: nothing to run")
        write_results(args.json, {}, [])
        return
    if torch is None:
        sys.exit("peers.py: PyTorch is not installed")
    defaults = {"kernel": (SEQLENS, "gaussian"), "sustained": ([16384], "gaussian"),
                "accuracy": ([4096, 16384], "gaussian,outlier,structured")}[args.mode]
    seqlens = [int(s) for s in args.seqlens.split(",")] if args.seqlens else defaults[0]
    inputs = (args.inputs or defaults[1]).split(",")
    purpose = "accuracy" if args.mode == "accuracy" else "timing"
    device = torch.device("cuda")
    records = []
    case_index = 0
    versions = {"torch": torch.__version__, "torch_cuda": torch.version.cuda,
                "torch_cudnn": torch.backends.cudnn.version()}
    import importlib.metadata as md
    for package in ("fa3_fwd", "flashinfer-python"):
        try:
            versions[package] = md.version(package)
        except Exception:  # noqa: BLE001 - not installed
            versions[package] = None

    def save():  # after every case, so that a timeout keeps what was measured
        write_results(args.json, versions, records)

    for family in args.families.split(","):
        for s in seqlens:
            for inp in inputs:
                for dtype in args.dtypes.split(","):
                    try:
                        case_dir = dump_case(args.bench, args.tmp, family, s, inp, dtype, purpose, args.rows_per_head)
                        meta, t = load_case(case_dir, device)
                    except (subprocess.CalledProcessError, OSError, RuntimeError) as e:
                        print(f"peers.py: no inputs for {dtype}/{family}/S{s}/{inp}: {e}", file=sys.stderr, flush=True)
                        continue
                    meta["family"] = family
                    if args.mode == "accuracy":
                        records += run_accuracy(args, meta, t, impls)
                    else:
                        records += run_timing(args, meta, t, impls, case_index)
                    case_index += 1
                    del t
                    torch.cuda.empty_cache()
                    save()
    shutil.rmtree(args.tmp, ignore_errors=True)
    save()
    print(f"peers.py: {len(records)} records, {sum(r.get('tflops') is None and r['mode'] != 'accuracy' for r in records)}"
          " without a time", file=sys.stderr)


if __name__ == "__main__":
    main()
