"""tools/device/run_bench.sh splits --impls between zyfa_bench (zyfa, cudnn) and bench/peers.py (the rest).

The script runs in a scratch copy of the repository's layout with stand-ins for zyfa_bench, peers.py and
nvidia-smi that log their command lines and write empty record files, so no GPU is needed."""
import json
import os
import shutil
import stat
import subprocess

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
STUB = """#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
with open(os.environ["STUB_LOG"], "a") as f:
    f.write(json.dumps([os.path.basename(sys.argv[0])] + args) + "\\n")
out = [a.split("=", 1)[1] for a in args if a.startswith("--json=")]
out += [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--json"]
for path in out:
    with open(path, "w") as f:
        json.dump({"tool": "stub", "records": []}, f)
"""


def _executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


@pytest.fixture
def layout(tmp_path):
    for rel in ("tools/device/run_bench.sh", "tools/device/bench_env.sh", "bench/results_file.py"):
        os.makedirs(tmp_path / os.path.dirname(rel), exist_ok=True)
        shutil.copy(os.path.join(ROOT, rel), tmp_path / rel)
    _executable(tmp_path / "bench/peers.py", STUB)
    os.makedirs(tmp_path / ".carry-bench")
    _executable(tmp_path / ".carry-bench/zyfa_bench", STUB)
    os.makedirs(tmp_path / "bin")
    _executable(tmp_path / "bin/nvidia-smi", "#!/bin/sh\necho 'stub nvidia-smi'\n")
    return tmp_path


def run_part(layout, *args):
    """The (program, its --impls or None) of every step that ran, in order."""
    log = layout / "stub.log"
    env = dict(os.environ, PATH=f"{layout / 'bin'}:{os.environ['PATH']}", OUT=str(layout / "out"),
               STUB_LOG=str(log))
    # peers.py runs through python3, so its log name is peers.py; the script's own exit is not checked:
    # with empty record files its last step (results_file.py wrap) has nothing to merge.
    subprocess.run(["bash", "tools/device/run_bench.sh", *args], cwd=layout, env=env, capture_output=True,
                   text=True, timeout=60)
    steps = []
    if log.exists():
        for line in log.read_text().splitlines():
            argv = json.loads(line)
            impls = [a.split("=", 1)[1] for a in argv[1:] if a.startswith("--impls=")]
            impls += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--impls"]
            steps.append((argv[0], impls[-1] if impls else None))
    return steps


def test_mixed_list_goes_to_each_program(layout):
    steps = run_part(layout, "accuracy", "--impls=zyfa,fa3", "--families=gqa-d128,mha-d192")
    assert steps == [("zyfa_bench", "zyfa"), ("zyfa_bench", "zyfa"), ("peers.py", "fa3")]


def test_peers_only_skips_zyfa_bench(layout):
    assert run_part(layout, "sustained", "--impls=fa3", "--families=gqa-d128") == [("peers.py", "fa3")]


def test_zyfa_only_skips_peers(layout):
    assert run_part(layout, "accuracy", "--impls=zyfa,cudnn", "--families=gqa-d128") == [
        ("zyfa_bench", "zyfa,cudnn")]


def test_no_impls_runs_both_with_their_defaults(layout):
    assert run_part(layout, "accuracy", "--families=gqa-d128") == [("zyfa_bench", None), ("peers.py", None)]


def test_other_flags_reach_both(layout):
    run_part(layout, "sustained", "--impls=zyfa,fa3", "--families=gqa-d128", "--seqlens=16384")
    lines = [json.loads(x) for x in (layout / "stub.log").read_text().splitlines()]
    assert all("--seqlens=16384" in argv for argv in lines) and len(lines) == 2
    assert "--families=gqa-d128" in lines[0] and "--families=gqa-d128" in lines[1]
