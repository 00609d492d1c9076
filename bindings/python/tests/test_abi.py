"""The ctypes declarations against the header as a C compiler lays it out: bindings/abi_probe.c prints
every size, offset, constant and INIT default, and each must equal the Python value. The probe is
ZYFA_ABI_PROBE (set by CTest to the CMake-built zyfa_abi_probe), or compiled here with $CC."""
import ctypes
import os
import shutil
import subprocess

import pytest

from zyfa import _abi
from zyfa.errors import Status

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.normpath(os.path.join(HERE, "..", "..", ".."))


def probe_binary(tmp_path):
    if os.environ.get("ZYFA_ABI_PROBE"):
        return os.environ["ZYFA_ABI_PROBE"]
    compiler = os.environ.get("CC", "cc")
    if shutil.which(compiler) is None:
        pytest.fail(f"no C compiler `{compiler}` to build the ABI probe: set CC or ZYFA_ABI_PROBE")
    include = os.environ.get("ZYFA_INCLUDE_DIR", os.path.join(REPOSITORY, "include"))
    binary = str(tmp_path / "zyfa_abi_probe")
    subprocess.run([compiler, "-std=c99", "-I", include, os.path.join(REPOSITORY, "bindings", "abi_probe.c"),
                    "-o", binary], check=True)
    return binary


def c_layout(tmp_path):
    output = subprocess.run([probe_binary(tmp_path)], check=True, capture_output=True, text=True).stdout
    return {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in output.splitlines()}


def python_layout():
    layout = {"sizeof zyfa_status": ctypes.sizeof(_abi.c_enum)}
    structs = [_abi.zyfa_strides, _abi.zyfa_descale, _abi.zyfa_attn_desc, _abi.zyfa_quantize_desc,
               _abi.zyfa_plan_cache_stats]
    for struct in structs:
        layout[f"sizeof {struct.__name__}"] = ctypes.sizeof(struct)
        for field, _ in struct._fields_:
            layout[f"offsetof {struct.__name__}.{field}"] = getattr(struct, field).offset
    layout["const ZYFA_VERSION"] = _abi.ZYFA_VERSION
    layout["const ZYFA_STATUS_SUCCESS"] = _abi.ZYFA_STATUS_SUCCESS
    for status in Status:
        layout[f"const ZYFA_STATUS_{status.name}"] = int(status)
    for name in dir(_abi):
        if name.startswith(("ZYFA_DTYPE_", "ZYFA_LAYOUT_", "ZYFA_DESCALE_", "ZYFA_ROTATION_", "ZYFA_P_ROUNDING_")):
            layout[f"const {name}"] = getattr(_abi, name)
    attn, quantize, stats = _abi.zyfa_attn_desc(), _abi.zyfa_quantize_desc(), _abi.zyfa_plan_cache_stats()
    for key, value in [("zyfa_attn_desc.struct_size", attn.struct_size), ("zyfa_attn_desc.dtype", attn.dtype),
                       ("zyfa_attn_desc.layout", attn.layout), ("zyfa_attn_desc.d_qk", attn.d_qk),
                       ("zyfa_attn_desc.d_v", attn.d_v), ("zyfa_attn_desc.causal", attn.causal),
                       ("zyfa_attn_desc.q_descale.kind", attn.q_descale.kind),
                       ("zyfa_attn_desc.p_rounding", attn.p_rounding),
                       ("zyfa_attn_desc.reserved0", attn.reserved0),
                       ("zyfa_attn_desc.workspace_bytes", attn.workspace_bytes),
                       ("zyfa_quantize_desc.struct_size", quantize.struct_size),
                       ("zyfa_quantize_desc.rotation", quantize.rotation),
                       ("zyfa_plan_cache_stats.struct_size", stats.struct_size)]:
        layout[f"init {key}"] = value
    return layout


def test_declarations_match_the_c_header(tmp_path):
    c, py = c_layout(tmp_path), python_layout()
    assert c, "the probe printed nothing"
    mismatches = {key: (c.get(key), py.get(key)) for key in c.keys() | py.keys() if c.get(key) != py.get(key)}
    assert not mismatches, f"(C, Python) values that differ: {mismatches}"


def test_library_versions_loaded_and_refused():
    """The same or a newer release of the same major version loads (descriptors are append-only); an older
    one, or another major version, is refused before any call."""
    from zyfa._lib import check_version
    mine = _abi.ZYFA_VERSION
    major = mine // 10000
    for version in (mine, mine + 1, mine + 100, major * 10000 + 9999):
        check_version("libzyfa.so", version)
    for version in (mine - 1, (major + 1) * 10000):
        with pytest.raises(ImportError, match=f"version {version};"):
            check_version("libzyfa.so", version)
