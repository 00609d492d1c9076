#!/usr/bin/env python3
"""Turns a results file (bench/results/<date>-<gpu>.json) into the README's tables and PNG plots.

  python3 bench/report.py bench/results/2026-11-29-h200.json [--markdown OUT.md] [--plots DIR]

Tables (markdown): kernel-mode TFLOP/s by dtype, shape family, implementation and S, and zyfa's over each
peer's (from the same device call where one holds both); sustained-mode
TFLOP/s; the accuracy study (relative RMS error against fp64, then max abs, LSE and rows-sum errors); and,
when the results hold zyfa runs with an explicit P rounding (zyfa_bench --p-rounding, records with
p_rounding), those runs as implementations of their own ("zyfa (exact P)") and lean P against exact P at
d = 128.
Plots (matplotlib, written next to the results file unless --plots says otherwise): TFLOP/s against S
per kernel and peer, one figure per dtype; relative RMS error per input kind, one figure per dtype.
Nothing is typed by hand: every number comes from the records.
"""
import argparse
import datetime
import json
import math
import os
from collections import defaultdict

IMPL_ORDER = ["zyfa", "zyfa-py", "cudnn", "fa3", "flashinfer", "torch-cudnn", "torch-flash"]
FAMILY_ORDER = ["mha-d128", "gqa-d128", "mha-d192", "gqa-d192", "llama3.1-8b"]
INPUT_ORDER = ["gaussian", "outlier", "structured"]
P_ROUNDING_ORDER = ["lean", "exact", "split"]
# One colour per implementation in every figure (matplotlib's default cycle, in IMPL_ORDER), then zyfa's
# runs with an explicit P rounding.
IMPL_COLORS = {impl: f"C{i}" for i, impl in enumerate(IMPL_ORDER)}
IMPL_COLORS.update({f"zyfa ({p} P)": f"C{len(IMPL_ORDER) + i}" for i, p in enumerate(P_ROUNDING_ORDER)})


def impl_label(r):
    """The row or column name of a record: its impl, or for a zyfa run with an explicit P rounding (a record
    with p_rounding) e.g. "zyfa (exact P)"; records without p_rounding ran the library's default."""
    return f"{r['impl']} ({r['p_rounding']} P)" if r.get("p_rounding") else r["impl"]


# Each implementation, then its runs with an explicit P rounding.
LABEL_ORDER = [x for impl in IMPL_ORDER for x in [impl] + [f"{impl} ({p} P)" for p in P_ROUNDING_ORDER]]


def family_of(r):
    if r.get("family"):
        return r["family"]
    kind = "mha" if r["nheads"] == r["nheads_k"] else "gqa"
    return f"{kind}-d{r['d_qk']}"


def order(values, preferred):
    return [v for v in preferred if v in values] + sorted(v for v in values if v not in preferred)


def seqlen_label(s):
    return f"{s // 1024}K" if s % 1024 == 0 else str(s)


def fmt(x, digits=0):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:.{digits}f}"


def sci(x):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:.2e}"


def protocol_first(dist):
    inputs, std = dist
    return (dist != ("gaussian", 0.1), INPUT_ORDER.index(inputs) if inputs in INPUT_ORDER else 9, std)


THROUGHPUT = "(TFLOP/s = B·H·S²·(d_qk + d_v) / time; batch 1, causal; H = max(32, 262144/S), Llama 64/8)"
CLOCK = ("SM clock in MHz during each record's timed repeats (median of nvidia-smi's 200 ms samples inside "
         "them; — where no sample fell inside)")


def tflops_of(r):
    return r.get("tflops")


def clock_of(r):
    return (r.get("clocks_in_window") or {}).get("sm_mhz_median")


def throughput_table(d, dtype, mode, inputs, std, value=tflops_of, what=THROUGHPUT):
    seqlens = sorted({r["seqlen"] for r in d})
    cells = defaultdict(dict)
    for r in d:
        cells[(family_of(r), impl_label(r))][r["seqlen"]] = value(r)
    out = [f"**{dtype.upper()}, {mode} mode, {inputs} inputs (std {std:g})** {what}\n",
           "| shape | impl | " + " | ".join(f"S={seqlen_label(s)}" for s in seqlens) + " |",
           "| --- | --- | " + " | ".join("---:" for _ in seqlens) + " |"]
    for fam in order({k[0] for k in cells}, FAMILY_ORDER):
        for impl in order({k[1] for k in cells if k[0] == fam}, LABEL_ORDER):
            row = cells[(fam, impl)]
            if all(v is None for v in row.values()):
                continue  # a peer that does not support this dtype or shape
            out.append(f"| {fam} | {impl} | " + " | ".join(fmt(row.get(s)) for s in seqlens) + " |")
    return "\n".join(out) + "\n"


def by_dtype_and_distribution(rs):
    """(dtype, inputs, std, records) for each dtype and input distribution that has records, BF16 first and
    the protocol's std-0.1 Gaussian first."""
    dist = lambda r: (r["inputs"], round(r.get("input_std") or 0, 3))  # noqa: E731
    for dtype in order({r["dtype"] for r in rs}, ["bf16", "fp8"]):
        for inputs, std in sorted({dist(r) for r in rs}, key=protocol_first):
            d = [r for r in rs if r["dtype"] == dtype and dist(r) == (inputs, std)]
            if d:
                yield dtype, inputs, std, d


def throughput_tables(records, mode, value=tflops_of, what=THROUGHPUT):
    """One table per dtype and input distribution, the protocol's std-0.1 Gaussian first; with `value`
    another number of the same records (clock_of: the SM clock while they ran), rows without it left out."""
    rs = [r for r in records if r["mode"] == mode and value(r) is not None]
    return "\n".join(throughput_table(d, dtype, mode, inputs, std, value, what)
                     for dtype, inputs, std, d in by_dtype_and_distribution(rs))


def clock_table(records):
    """The SM clock and board power inside each sustained record's timed window (results_file.py wrap matches
    nvidia-smi's 200 ms samples to it), and TFLOP/s per GHz: a kernel slower at the same clock needs more
    cycles; one slower at a lower clock draws more power per unit of work."""
    rs = [r for r in records if r["mode"] == "sustained" and r.get("tflops") is not None and clock_of(r)]
    if not rs:
        return ""
    out = ["**Sustained mode: SM clock and board power in each record's timed window** (medians of nvidia-smi's "
           "200 ms samples)\n",
           "| dtype | shape | S | inputs | impl | TFLOP/s | SM MHz | W | TFLOP/s per GHz | samples |",
           "| --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    rank = lambda value, preferred: preferred.index(value) if value in preferred else len(preferred)  # noqa: E731
    key = lambda r: (rank(r["dtype"], ["bf16", "fp8"]), rank(family_of(r), FAMILY_ORDER), r["seqlen"],  # noqa: E731
                     rank(r["inputs"], INPUT_ORDER), rank(impl_label(r), LABEL_ORDER))
    for r in sorted(rs, key=key):
        c = r["clocks_in_window"]
        out.append(f"| {r['dtype']} | {family_of(r)} | {seqlen_label(r['seqlen'])} | {r['inputs']} | {impl_label(r)} | "
                   f"{fmt(r['tflops'])} | {fmt(c['sm_mhz_median'])} | {fmt(c['power_w_median'])} | "
                   f"{fmt(r['tflops'] / (c['sm_mhz_median'] / 1e3))} | {c['samples']} |")
    return "\n".join(out) + "\n"


def unweighted(r):
    """An accuracy record from before 2026-12-07, whose sampled rows were summed unweighted (the first rows,
    whose outputs are the largest, dominate such a sum): not comparable with the weighted ones."""
    return r.get("rel_rms_err") is not None and not r.get("rows_weighted")


def accuracy_tables(records):
    rs = [r for r in records if r["mode"] == "accuracy"]
    if not rs:
        return ""
    impls = order({impl_label(r) for r in rs if r.get("rel_rms_err") is not None}, LABEL_ORDER)
    out = ["**Accuracy**: relative RMS error of one call against fp64 attention on the same quantized inputs "
           "(sampled query rows, each weighted by the rows it stands for, so that it estimates the whole output's; "
           "Gaussian std 1)\n",
           "| dtype | shape | S | inputs | " + " | ".join(impls) + " |",
           "| --- | --- | ---: | --- | " + " | ".join("---:" for _ in impls) + " |"]
    key = lambda r: (r["dtype"], family_of(r), r["seqlen"], r["inputs"])  # noqa: E731
    groups = defaultdict(dict)
    for r in rs:
        groups[key(r)][impl_label(r)] = r
    sort_key = lambda k: (["bf16", "fp8"].index(k[0]) if k[0] in ("bf16", "fp8") else 9,  # noqa: E731
                          case_sort_key(k[1:]))
    for k in sorted(groups, key=sort_key):
        g = groups[k]
        out.append(f"| {k[0]} | {k[1]} | {seqlen_label(k[2])} | {k[3]} | " +
                   " | ".join(sci(g.get(i, {}).get("rel_rms_err")) + (" †" if unweighted(g.get(i, {})) else "")
                              for i in impls) + " |")
    if any(unweighted(r) for r in rs):
        out += ["", "† an unweighted sample of rows (before 2026-12-07): the first rows, whose outputs are the "
                "largest, dominate it, so it is not the whole output's error (on Gaussian inputs it read 0.5x at 4K "
                "and 0.3x at 16K; on other inputs it can read high or low; bench/NOTES.md, session 52). Ratios "
                "between implementations on the same rows are less affected."]
    out += ["", "Max abs error / max LSE error (nats) / max |out − 1| with V = ones:\n",
            "| dtype | shape | S | inputs | " + " | ".join(impls) + " |",
            "| --- | --- | ---: | --- | " + " | ".join("---" for _ in impls) + " |"]
    for k in sorted(groups, key=sort_key):
        g = groups[k]
        cells = []
        for i in impls:
            r = g.get(i, {})
            # The weighted draw holds fewer long rows than the uniform one did, so the maxima of † records
            # cover other rows.
            cells.append(f"{sci(r.get('max_abs_err'))} / {sci(r.get('lse_max_abs_err'))} / "
                         f"{sci(r.get('rows_sum_max_err'))}" + (" †" if unweighted(r) else "")
                         if r.get("rel_rms_err") is not None else "—")
        out.append(f"| {k[0]} | {k[1]} | {seqlen_label(k[2])} | {k[3]} | " + " | ".join(cells) + " |")
    notes = sorted({f"{impl_label(r)} {r['dtype']}: {r['error']}" for r in rs if r.get("error")})
    if notes:
        out += ["", "Not measured: " + "; ".join(notes)]
    return "\n".join(out) + "\n"


def case_sort_key(k):
    """(family, seqlen, inputs) in the tables' order."""
    fam, seqlen, inputs = k
    return (FAMILY_ORDER.index(fam) if fam in FAMILY_ORDER else 99, seqlen,
            INPUT_ORDER.index(inputs) if inputs in INPUT_ORDER else 9)


def lean_exact_table(records):
    """Lean P against exact P (issue 5): zyfa's FP8 accuracy records per (shape, S, inputs), the lean P run's
    relative RMS error, the exact P run's, and their ratio. Each comes from the run with that p_rounding, or,
    when there is none, from zyfa's default run where the default is that rounding (marked: lean P at d_qk =
    128, exact P at 192, zyfa.h). Empty when no case has both."""
    rs = [r for r in records if r["mode"] == "accuracy" and r["impl"] == "zyfa" and r["dtype"] == "fp8"
          and r.get("rel_rms_err") is not None]
    groups = defaultdict(dict)
    for r in rs:
        groups[(family_of(r), r["seqlen"], r["inputs"])][r.get("p_rounding") or "default"] = r
    rows, ratios, from_default = [], [], False
    for k in sorted(groups, key=case_sort_key):
        g = groups[k]
        default_rounding = "lean" if next(iter(g.values()))["d_qk"] == 128 else "exact"
        picked = {}
        for p in ("lean", "exact"):
            # The explicit run, or the default run where the default is this rounding; a weighted one first.
            found = [r for r in (g.get(p), g.get("default") if p == default_rounding else None) if r is not None]
            picked[p] = next((r for r in found if not unweighted(r)), found[0] if found else None)
        if picked["lean"] is None or picked["exact"] is None:
            continue
        lean, exact = picked["lean"], picked["exact"]
        if unweighted(lean) != unweighted(exact):  # one weighted, one not: their errors are not on one footing
            continue
        marks = {p: ("" if picked[p] is g.get(p) else " *") + (" †" if unweighted(picked[p]) else "") for p in picked}
        from_default |= any("*" in m for m in marks.values())
        ratio = lean["rel_rms_err"] / exact["rel_rms_err"] if exact["rel_rms_err"] else None
        if ratio is not None:
            ratios.append(ratio)
        rows.append(f"| {k[0]} | {seqlen_label(k[1])} | {k[2]} | {sci(lean['rel_rms_err'])}{marks['lean']} | "
                    f"{sci(exact['rel_rms_err'])}{marks['exact']} | {fmt(ratio, 2)} |")
    if not rows:
        return ""
    out = ["**Lean P against exact P**: zyfa FP8, relative RMS error against fp64 (as above) with each P rounding "
           "(`zyfa_attn_desc.p_rounding`)\n",
           "| shape | S | inputs | lean P | exact P | lean / exact |",
           "| --- | ---: | --- | ---: | ---: | ---: |"] + rows
    if ratios:
        out += ["", f"lean / exact: {fmt(min(ratios), 2)}-{fmt(max(ratios), 2)} over {len(ratios)} cases."]
    if from_default:
        out += ["", "\\* zyfa's default run (no explicit run of that rounding for the case, or only an unweighted one; "
                "the library's default is lean P at d_qk = 128 and exact P at 192)."]
    return "\n".join(out) + "\n"


def provenance(records):
    """Which zyfa build each table's rows ran, when a results file merges runs of several commits (merge
    --base): per mode, the commit and the implementations measured with it. Peers do not depend on zyfa's
    commit, but rows from different runs are not side by side in one run, and the reader must see that."""
    by_mode = defaultdict(lambda: defaultdict(set))
    for r in records:
        if r.get("tflops") is None and r.get("rel_rms_err") is None:
            continue
        label = impl_label(r)
        by_mode[r["mode"]][(r.get("git_commit") or "unknown")[:9]].add(label)
    if len({commit for runs in by_mode.values() for commit in runs}) <= 1:
        return ""
    lines = ["**Where the rows come from** (zyfa commit of each run merged into this file; rows of different "
             "commits were measured in different runs on the same GPU):\n"]
    for mode in sorted(by_mode):
        runs = sorted(by_mode[mode].items(), key=lambda kv: kv[0])
        lines.append(f"- {mode}: " + "; ".join(f"{', '.join(order(impls, LABEL_ORDER))} at {commit}"
                                                for commit, impls in runs))
    return "\n".join(lines) + "\n"


# A device call lasts at most 10 minutes: records of one cell whose timings started further apart than this
# came from different calls (merge --base keeps the older ones), so their ratio is not a side-by-side one.
SAME_CALL_S = 20 * 60


def measured_at(r):
    """When a timed record's first repeat started (Unix seconds), or None (a record recovered from a log)."""
    windows = r.get("windows_unix_ms") or []
    return windows[0][0] / 1e3 if windows else None


def same_call(a, b):
    """Whether two timed records ran in one device call: the same zyfa build, their timings started within
    SAME_CALL_S (records without timing windows, recovered from a log, only with each other)."""
    if (a.get("git_commit") or "?")[:7] != (b.get("git_commit") or "?")[:7]:
        return False
    ta, tb = measured_at(a), measured_at(b)
    if ta is None or tb is None:
        return ta is None and tb is None
    return abs(ta - tb) <= SAME_CALL_S


def mixed_cells(records):
    """The cells of the kernel tables whose implementations were timed in different device calls (or builds),
    one line per shape family and distribution, the lengths with the same runs together: a ratio read across
    such a cell compares two runs, not two kernels side by side."""
    groups = defaultdict(list)
    for r in records:
        if r["mode"] == "kernel" and r.get("tflops") is not None:
            groups[(r["dtype"], family_of(r), r["inputs"], round(r.get("input_std") or 0, 3), r["seqlen"])].append(r)
    by_runs = defaultdict(list)  # (dtype, family, inputs, std, the runs' description) -> seqlens
    for (dtype, fam, inputs, std, s), rs in groups.items():
        runs = []  # [first record, labels]: a record in the same call as a run's first joins it
        for r in sorted(rs, key=lambda r: (measured_at(r) is None, measured_at(r) or 0)):
            run = next((x for x in runs if same_call(x[0], r)), None)
            if run is None:
                run = [r, []]
                runs.append(run)
            run[1].append(impl_label(r))
        if len(runs) < 2:
            continue
        day = lambda t: (datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d")  # noqa: E731
                         if t is not None else "time not recorded")
        text = "; ".join(f"{', '.join(order(set(labels), LABEL_ORDER))} ({day(measured_at(first))}, "
                         f"{(first.get('git_commit') or '?')[:7]})" for first, labels in runs)
        by_runs[(dtype, fam, inputs, std, text)].append(s)
    if not by_runs:
        return ""
    lines = [f"- {dtype} {fam} {inputs}, S={','.join(seqlen_label(s) for s in sorted(ss))}: {text}"
             for (dtype, fam, inputs, std, text), ss in sorted(by_runs.items(), key=lambda kv: kv[0])]
    return ("**Cells timed in different device calls** (each run's implementations, its day and zyfa commit; a "
            "ratio across two runs compares runs, not kernels side by side):\n\n" + "\n".join(lines) + "\n")


# zyfa's own rows: through zyfa_bench (beside cuDNN) and through the Python binding (beside the Python peers).
ZYFA_IMPLS = ["zyfa", "zyfa-py"]


def ratio_tables(records):
    """zyfa's kernel-mode TFLOP/s over each peer's, per dtype and input distribution: for each peer record the
    zyfa run of the same device call (the nearest in time where there are two), else zyfa from another call,
    marked †. zyfa's runs with an explicit P rounding are not peers and not the library's default."""
    rs = [r for r in records if r["mode"] == "kernel" and r.get("tflops")]
    tables = []
    for dtype, inputs, std, d in by_dtype_and_distribution(rs):
        zyfas = [r for r in d if r["impl"] in ZYFA_IMPLS and not r.get("p_rounding")]
        cells = defaultdict(dict)
        for peer in (r for r in d if r["impl"] not in ZYFA_IMPLS):
            mine = [z for z in zyfas if family_of(z) == family_of(peer) and z["seqlen"] == peer["seqlen"]]
            together = [z for z in mine if same_call(z, peer)]
            if together:
                z, mark = min(together, key=lambda z: abs((measured_at(z) or 0) - (measured_at(peer) or 0))), ""
            elif mine:
                z, mark = min(mine, key=lambda z: ZYFA_IMPLS.index(z["impl"])), "†"
            else:
                continue
            cells[(family_of(peer), impl_label(peer))][peer["seqlen"]] = f"{z['tflops'] / peer['tflops']:.2f}{mark}"
        if not cells:
            continue
        seqlens = sorted({s for row in cells.values() for s in row})
        out = [f"**{dtype.upper()}, kernel mode, {inputs} inputs (std {std:g}): zyfa's TFLOP/s over each peer's** "
               "(zyfa from the peer's own device call; † from another call)\n",
               "| shape | ratio | " + " | ".join(f"S={seqlen_label(s)}" for s in seqlens) + " |",
               "| --- | --- | " + " | ".join("---:" for _ in seqlens) + " |"]
        for fam in order({k[0] for k in cells}, FAMILY_ORDER):
            for peer in order({k[1] for k in cells if k[0] == fam}, LABEL_ORDER):
                row = cells[(fam, peer)]
                out.append(f"| {fam} | zyfa / {peer} | " + " | ".join(row.get(s, "—") for s in seqlens) + " |")
        tables.append("\n".join(out) + "\n")
    return "\n".join(tables)


def failures(records):
    fails = sorted({f"{impl_label(r)} {r['dtype']} ({r['mode']}): {r['error'].splitlines()[0][:160]}"
                    for r in records if r["mode"] != "accuracy" and r.get("tflops") is None and r.get("error")})
    return ("Not timed: " + "; ".join(fails) + "\n") if fails else ""


def save(fig, path):
    import matplotlib.pyplot as plt
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_throughput(records, path_prefix):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    written = []
    rs = [r for r in records if r["mode"] == "kernel" and r["inputs"] == "gaussian" and r.get("tflops")
          and round(r.get("input_std") or 0, 3) == 0.1]
    for dtype in order({r["dtype"] for r in rs}, ["bf16", "fp8"]):
        d = [r for r in rs if r["dtype"] == dtype]
        fams = order({family_of(r) for r in d}, FAMILY_ORDER)
        fig, axes = plt.subplots(1, len(fams), figsize=(max(6.0, 4 * len(fams)), 3.6), squeeze=False, sharey=True)
        for ax, fam in zip(axes[0], fams):
            for impl in order({impl_label(r) for r in d if family_of(r) == fam}, LABEL_ORDER):
                pts = sorted((r["seqlen"], r["tflops"]) for r in d if family_of(r) == fam and impl_label(r) == impl)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=impl, color=IMPL_COLORS.get(impl))
            ax.set_xscale("log", base=2)
            ax.set_xticks(sorted({r["seqlen"] for r in d}))
            ax.set_xticklabels([seqlen_label(s) for s in sorted({r["seqlen"] for r in d})])
            ax.set_title(fam)
            ax.set_xlabel("S")
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("TFLOP/s")
        handles = {}
        for ax in axes[0]:
            for h, label in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(label, h)
        labels = order(set(handles), LABEL_ORDER)
        axes[0][-1].legend([handles[k] for k in labels], labels, fontsize=8)
        fig.suptitle(f"{dtype.upper()} causal attention (kernel mode, Gaussian std 0.1, batch 1)")
        written.append(save(fig, f"{path_prefix}-tflops-{dtype}.png"))
    return written


def plot_accuracy(records, path_prefix):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    written = []
    rs = [r for r in records if r["mode"] == "accuracy" and r.get("rel_rms_err") is not None]
    for dtype in order({r["dtype"] for r in rs}, ["bf16", "fp8"]):
        d = [r for r in rs if r["dtype"] == dtype]
        if any(not unweighted(r) for r in d):  # medians of weighted records only, where there are any
            d = [r for r in d if not unweighted(r)]
        impls = order({impl_label(r) for r in d}, LABEL_ORDER)
        kinds = order({r["inputs"] for r in d}, INPUT_ORDER)
        fig, ax = plt.subplots(figsize=(max(6.0, 2.2 + 2.2 * len(kinds)), 3.6))
        width = 0.8 / max(1, len(impls))
        for j, impl in enumerate(impls):
            # The median over shapes and lengths of each input kind; the tables give every case.
            ys = []
            for kind in kinds:
                vals = sorted(r["rel_rms_err"] for r in d if impl_label(r) == impl and r["inputs"] == kind)
                ys.append(vals[len(vals) // 2] if vals else float("nan"))
            ax.bar([i + j * width for i in range(len(kinds))], ys, width, label=impl, color=IMPL_COLORS.get(impl))
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(kinds))])
        ax.set_xticklabels(kinds)
        ax.set_yscale("log")
        ax.set_ylabel("relative RMS error vs fp64 (median)")
        ax.set_title(f"{dtype.upper()}: error of one call per input kind")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3, axis="y")
        written.append(save(fig, f"{path_prefix}-error-{dtype}.png"))
    return written


README_BEGIN = "<!-- bench/report.py: begin -->"
README_END = "<!-- bench/report.py: end -->"


def replace_between_markers(path, text):
    """The README's performance section is this script's output, never typed by hand."""
    with open(path) as f:
        doc = f.read()
    begin, end = doc.index(README_BEGIN) + len(README_BEGIN), doc.index(README_END)
    with open(path, "w") as f:
        f.write(doc[:begin] + "\n" + text.rstrip() + "\n" + doc[end:])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results")
    p.add_argument("--markdown", help="write the tables here instead of printing them")
    p.add_argument("--plots", help="folder for the PNGs (default: next to the results file)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--readme", help="also put the tables into this file between the lines "
                   f"'{README_BEGIN}' and '{README_END}'")
    args = p.parse_args()
    with open(args.results) as f:
        res = json.load(f)
    records = res["records"]
    head = (f"Measured on {res.get('gpu', '?')} (driver {res.get('driver', '?')}, {res.get('cuda', '?')}, "
            f"cuDNN {res.get('cudnn', '?')}, PyTorch {res.get('torch', '?')}) on {res.get('date', '?')}, "
            f"zyfa commit {res.get('git_commit', '?')}; generated by bench/report.py from "
            f"{os.path.basename(args.results)}.\n")
    if res.get("mixed"):  # results_file.py merge --mixed: parts from different GPUs or software, and why
        head += ("\n**Merged from several machines or versions** (the header above is the newest part's): "
                 f"{res['mixed']}.\n")
    text = "\n".join(t for t in [head, provenance(records), throughput_tables(records, "kernel"), ratio_tables(records),
                                 throughput_tables(records, "kernel", clock_of, CLOCK),
                                 throughput_tables(records, "sustained"), clock_table(records),
                                 throughput_tables(records, "isolated"),
                                 accuracy_tables(records), lean_exact_table(records), mixed_cells(records),
                                 failures(records)] if t)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
        print(f"wrote {args.markdown}")
    else:
        print(text)
    if args.readme:
        replace_between_markers(args.readme, text)
        print(f"updated {args.readme}")
    if not args.no_plots:
        prefix = os.path.join(args.plots or os.path.dirname(os.path.abspath(args.results)),
                              os.path.splitext(os.path.basename(args.results))[0])
        for path in plot_throughput(records, prefix) + plot_accuracy(records, prefix):
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
