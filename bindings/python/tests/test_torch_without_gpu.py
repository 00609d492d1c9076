"""The PyTorch path where torch is installed but no GPU is: torch.compile traces the public functions
into one graph on fake CUDA tensors, and the operators' real implementations, with their three GPU entry
points (zyfa_attn_fwd, zyfa_attn_prepare, zyfa_quantize_fp8) redirected to the CPU backend, build the
same descriptors as the NumPy path: outputs bitwise equal. Skipped without torch."""
import contextlib
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

import zyfa  # noqa: E402
from zyfa import _abi, _lib, _torch_ops  # noqa: E402
from conftest import random_bf16  # noqa: E402


def as_torch(x):
    """A uint16 BF16 (or uint8 e4m3) NumPy array as a CPU torch tensor of that dtype, sharing no memory."""
    if x.dtype == np.uint16:
        return torch.from_numpy(x.astype(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(x.copy()).view(torch.float8_e4m3fn)


def as_numpy(t):
    return t.view(torch.int16).numpy().view(np.uint16) if t.dtype == torch.bfloat16 else t.view(torch.uint8).numpy()


@pytest.fixture
def cpu_backend(monkeypatch):
    """Runs the operators' implementations on CPU tensors through the host entry points."""
    monkeypatch.setattr(_lib, "lib", lambda real=_lib.lib(): HostRedirect(real))
    monkeypatch.setattr(torch.cuda, "device", lambda device: contextlib.nullcontext())
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: types.SimpleNamespace(cuda_stream=0))
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    return _torch_ops.fwd._init_fn, _torch_ops.quantize_fp8._init_fn


class HostRedirect:
    """The loaded library with the GPU entry points answered by their host twins."""

    def __init__(self, real):
        self.real = real
        self.zyfa_attn_fwd = lambda desc, stream: real.zyfa_attn_fwd_host(desc)
        self.zyfa_attn_prepare = lambda desc, stream: 0
        self.zyfa_quantize_fp8 = lambda desc, stream: real.zyfa_quantize_fp8_host(desc)

    def __getattr__(self, name):
        return getattr(self.real, name)


NOT_GIVEN = _torch_ops.NOT_GIVEN
DEFAULT, LEAN, EXACT, SPLIT = (_abi.ZYFA_P_ROUNDING_DEFAULT, _abi.ZYFA_P_ROUNDING_LEAN, _abi.ZYFA_P_ROUNDING_EXACT,
                               _abi.ZYFA_P_ROUNDING_SPLIT)


def test_bf16_operator_equals_numpy_path(rng, cpu_backend):
    fwd, _ = cpu_backend
    qkv = random_bf16(rng, (2, 70, 3, 4, 128))
    q, k, v = qkv[:, :, 0], qkv[:, :, 1, :2], qkv[:, :, 2, :2]
    want, want_lse = zyfa.flash_attn_func(q, k, v, causal=True, return_lse=True)
    tq = as_torch(qkv)
    out, lse = fwd(tq[:, :, 0], tq[:, :, 1, :2], tq[:, :, 2, :2], None, None, None, [NOT_GIVEN] * 3, 0.0, False, True,
                   DEFAULT)
    assert out.shape == (2, 70, 4, 128) and lse.shape == (2, 4, 70)
    np.testing.assert_array_equal(as_numpy(out), want)
    np.testing.assert_array_equal(lse.numpy(), want_lse)
    to_bhsd = lambda t: t.transpose(1, 2)
    out_bhsd, empty = fwd(to_bhsd(tq[:, :, 0]), to_bhsd(tq[:, :, 1, :2]), to_bhsd(tq[:, :, 2, :2]), None, None, None,
                          [NOT_GIVEN] * 3, 0.0, True, False, DEFAULT)
    assert empty.numel() == 0
    np.testing.assert_array_equal(as_numpy(out_bhsd.transpose(1, 2).contiguous()), want)


def test_fp8_operator_descale_forms_equal_numpy_path(rng, cpu_backend):
    fwd, quantize = cpu_backend
    batch, seqlen, nheads, nheads_k = 2, 40, 4, 2
    x = [random_bf16(rng, (batch, seqlen, h, 128)) for h in (nheads, nheads_k, nheads_k)]
    quantized = [zyfa.fp8_quantize(a) for a in x]
    want = zyfa.flash_attn_func(*(c for c, _ in quantized), causal=True,
                                **{f"{n}_descale": s for n, (_, s) in zip("qkv", quantized)})
    # The operator's quantization gives the NumPy path's codes and descales.
    torch_quantized = [quantize(as_torch(a), False, 0) for a in x]
    for (codes, descale), (tcodes, tdescale) in zip(quantized, torch_quantized):
        np.testing.assert_array_equal(as_numpy(tcodes), codes)
        assert tdescale.shape == (1,) and tdescale.item() == descale[0]
    q8, k8, v8 = (c for c, _ in torch_quantized)
    descales = [s for _, s in torch_quantized]
    one_element, _ = fwd(q8, k8, v8, *descales, [NOT_GIVEN] * 3, 0.0, False, False, DEFAULT)
    expanded, _ = fwd(q8, k8, v8, *(s.expand(batch, nheads_k) for s in descales), [NOT_GIVEN] * 3, 0.0, False, False,
                      DEFAULT)
    values, _ = fwd(q8, k8, v8, None, None, None, [s.item() for s in descales], 0.0, False, False, DEFAULT)
    for out in (one_element, expanded, values):
        np.testing.assert_array_equal(as_numpy(out), want)


def test_missing_fp8_descale_is_the_librarys_error(rng, cpu_backend):
    fwd, _ = cpu_backend
    q8 = as_torch(np.full((1, 16, 1, 128), 0x38, dtype=np.uint8))
    with pytest.raises(zyfa.ZyfaError) as info:
        fwd(q8, q8, q8, None, None, None, [1.0, 1.0, NOT_GIVEN], 0.0, False, False, DEFAULT)
    assert info.value.status is zyfa.Status.BAD_DESCALE and "v_descale" in info.value.message


def test_nan_host_descale_is_refused_not_taken_as_missing():
    # NaN is the operator's "not given": a caller's NaN must not turn into no descale (BF16 would then run).
    q = torch.zeros(1, 16, 1, 128, dtype=torch.bfloat16)
    with pytest.raises(zyfa.ZyfaValueError) as info:
        _torch_ops.descale_arguments("zyfa.flash_attn_func", q, (float("nan"), None, None))
    assert info.value.status is zyfa.Status.BAD_DESCALE and "q_descale = nan" in info.value.message


def test_fp8_operator_p_rounding_equals_numpy_path(rng, cpu_backend):
    fwd, _ = cpu_backend
    quantized = [zyfa.fp8_quantize(random_bf16(rng, (1, 24, 2, 128))) for _ in range(3)]
    codes = [as_torch(c) for c, _ in quantized]
    values = [float(s[0]) for _, s in quantized]
    outs = {}
    for p_rounding, code in (("default", DEFAULT), ("lean", LEAN), ("exact", EXACT), ("split", SPLIT)):
        outs[p_rounding] = as_numpy(fwd(*codes, None, None, None, values, 0.0, False, False, code)[0])
        want = zyfa.flash_attn_func(*(c for c, _ in quantized), causal=True, q_descale=values[0],
                                    k_descale=values[1], v_descale=values[2], p_rounding=p_rounding)
        np.testing.assert_array_equal(outs[p_rounding], want)
    np.testing.assert_array_equal(outs["lean"], outs["default"])
    assert not np.array_equal(outs["exact"], outs["default"])
    assert not np.array_equal(outs["split"], outs["exact"])


def test_compile_traces_the_public_functions_into_one_graph():
    from torch._subclasses.fake_tensor import FakeTensorMode
    mode = FakeTensorMode()
    with mode:
        q = torch.empty(2, 64, 4, 128, dtype=torch.bfloat16, device="cuda")
        k = torch.empty(2, 64, 2, 128, dtype=torch.bfloat16, device="cuda")
        v = torch.empty(2, 64, 2, 128, dtype=torch.bfloat16, device="cuda")

    def layer(q, k, v):
        out, lse = zyfa.flash_attn_func(q, k, v, causal=True, return_lse=True)
        (q8, qs), (k8, ks) = zyfa.fp8_quantize(q), zyfa.fp8_quantize(k, rotation="hadamard", seed=3)
        out8 = zyfa.flash_attn_func(q8, k8, k8, causal=True, q_descale=qs, k_descale=ks.expand(2, 2), v_descale=0.5,
                                    p_rounding="exact")
        packed = zyfa.flash_attn_qkvpacked_func(torch.stack([q[:, :, :2], k, v], dim=2), causal=True,
                                                return_attn_probs=True)
        cu = torch.arange(0, 3 * 64, 64, device=q.device, dtype=torch.int32)
        flat = [x.reshape(-1, x.shape[2], 128) for x in (q, k, v)]
        varlen = zyfa.flash_attn_varlen_func(*flat, cu, cu, 64, 64, causal=True, return_lse=True)
        bhsd = zyfa.flash_attn_func(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal=True,
                                    layout="bhsd")
        return out, lse, out8, packed[0], packed[1], varlen[0], varlen[1], bhsd

    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)

        def run(*args):  # on the fake tensors: nothing runs on a device
            with mode:
                return gm(*args)
        return run

    outs = torch.compile(layer, backend=backend, fullgraph=True)(q, k, v)
    assert len(graphs) == 1
    assert sum("zyfa" in str(n.target) for n in graphs[0].graph.nodes) == 7
    assert [tuple(o.shape) for o in outs] == [(2, 64, 4, 128), (2, 4, 64), (2, 64, 4, 128), (2, 64, 2, 128),
                                              (2, 2, 64), (128, 4, 128), (4, 128), (2, 4, 64, 128)]

