"""PyTorch CUDA tensors on the GPU: against scaled_dot_product_attention in float64, under
torch.compile, and in CUDA graph capture and replay, each bitwise equal to eager calls. They skip
without torch or a CUDA device; tools/device/run_python_tests.sh runs them on the H200."""
import math
import os

import pytest

# tools/device/run_python_tests.sh sets it: on the device a missing torch or GPU is a failure, not a skip.
if os.environ.get("ZYFA_REQUIRE_DEVICE") == "1":
    import torch
    assert torch.cuda.is_available(), "ZYFA_REQUIRE_DEVICE=1 but torch sees no CUDA device"
else:
    torch = pytest.importorskip("torch", reason="torch is not installed: the device tests need PyTorch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the device tests need a GPU")

import zyfa  # noqa: E402
from conftest import (BF16_LSE_TOLERANCE, BF16_OUT_TOLERANCE, FP8_LSE_TOLERANCE,  # noqa: E402
                      FP8_OUT_TOLERANCE)

# Long enough for several query tiles and a partial last one.
SEQLEN = 1000


@pytest.fixture
def gen(rng):
    g = torch.Generator(device="cuda")
    g.manual_seed(int(rng.integers(2**62)))
    return g


def randn(gen, *shape, scale=1.0):
    return (torch.randn(*shape, device="cuda", generator=gen) * scale).to(torch.bfloat16)


def sdpa_fp64(q, k, v, scale=None):
    """Causal attention in float64 through PyTorch's SDPA, BSHD in and out, and the LSE from the scores."""
    qd, kd, vd = (x.double().transpose(1, 2) for x in (q, k, v))
    group = qd.shape[1] // kd.shape[1]
    kd, vd = kd.repeat_interleave(group, dim=1), vd.repeat_interleave(group, dim=1)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    out = torch.nn.functional.scaled_dot_product_attention(qd, kd, vd, is_causal=True, scale=scale)
    scores = (qd @ kd.transpose(-1, -2)) * scale
    mask = torch.ones(scores.shape[-2:], dtype=torch.bool, device=q.device).tril()
    lse = scores.masked_fill(~mask, float("-inf")).logsumexp(dim=-1)
    return out.transpose(1, 2), lse


def check_against(out, lse, want_out, want_lse, out_tolerance, lse_tolerance):
    assert out.dtype == torch.bfloat16 and lse.dtype == torch.float32
    got = out.double()
    assert torch.isfinite(got).all() and torch.isfinite(lse).all()
    out_error = ((got - want_out).norm() / want_out.norm()).item()
    lse_error = (lse.double() - want_lse).abs().max().item()
    print(f"relative RMS error of out {out_error:.3e}, max LSE error {lse_error:.3e}")
    assert out_error < out_tolerance and lse_error < lse_tolerance


@pytest.mark.parametrize("d_qk,nheads,nheads_k", [(128, 8, 2), (192, 4, 4)])
def test_bf16_matches_sdpa_fp64(gen, d_qk, nheads, nheads_k):
    q = randn(gen, 2, SEQLEN, nheads, d_qk)
    k = randn(gen, 2, SEQLEN, nheads_k, d_qk)
    v = randn(gen, 2, SEQLEN, nheads_k, 128)
    out, lse = zyfa.flash_attn_func(q, k, v, causal=True, return_lse=True)
    check_against(out, lse, *sdpa_fp64(q, k, v), BF16_OUT_TOLERANCE, BF16_LSE_TOLERANCE)


@pytest.mark.parametrize("d_qk", [128, 192])
def test_fp8_matches_sdpa_fp64_with_every_descale_form(gen, d_qk):
    batch, nheads, nheads_k = 2, 8, 2
    q = randn(gen, batch, SEQLEN, nheads, d_qk)
    k = randn(gen, batch, SEQLEN, nheads_k, d_qk)
    v = randn(gen, batch, SEQLEN, nheads_k, 128, scale=0.5)
    (q8, qs), (k8, ks), (v8, vs) = zyfa.fp8_quantize(q), zyfa.fp8_quantize(k), zyfa.fp8_quantize(v)
    assert q8.dtype == torch.float8_e4m3fn and qs.shape == (1,) and qs.is_cuda
    out, lse = zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=qs, k_descale=ks, v_descale=vs,
                                    return_lse=True)
    dequantized = [x8.double() * s.double() for x8, s in ((q8, qs), (k8, ks), (v8, vs))]
    check_against(out, lse, *sdpa_fp64(*dequantized), FP8_OUT_TOLERANCE, FP8_LSE_TOLERANCE)
    as_floats = zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=qs.item(), k_descale=ks.item(),
                                     v_descale=vs.item())
    expanded = zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=qs.expand(batch, nheads_k),
                                    k_descale=ks.expand(batch, nheads_k), v_descale=vs.expand(batch, nheads_k))
    assert torch.equal(as_floats, out) and torch.equal(expanded, out)


def test_fp8_distinct_descales_per_batch_and_kv_head(gen):
    """Device descales of shape (batch, nheads_k) with distinct values, row-major and as a transposed view
    (strides (1, batch)): each (batch, kv head) is decoded with its own, so a swapped stride fails."""
    batch, nheads, nheads_k = 2, 8, 2
    q = randn(gen, batch, SEQLEN, nheads, 128)
    k = randn(gen, batch, SEQLEN, nheads_k, 128)
    v = randn(gen, batch, SEQLEN, nheads_k, 128, scale=0.5)
    (q8, qs), (k8, ks), (v8, vs) = zyfa.fp8_quantize(q), zyfa.fp8_quantize(k), zyfa.fp8_quantize(v)
    # q's and k's factors multiply into the scores' scale, so they stay within 4x (see the host test).
    factors = [torch.tensor(f, dtype=torch.float32, device="cuda")
               for f in ([[1, 2], [0.5, 1.5]], [[1, 2], [0.5, 1.5]], [[1, 2], [4, 0.5]])]
    per_head = [s * f for s, f in zip((qs, ks, vs), factors)]
    out, lse = zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=per_head[0], k_descale=per_head[1],
                                    v_descale=per_head[2], return_lse=True)
    group = nheads // nheads_k
    q_scale = per_head[0].repeat_interleave(group, dim=1)  # q's heads read their kv head's descale
    dequantized = [x8.double() * s.double()[:, None, :, None]
                   for x8, s in ((q8, q_scale), (k8, per_head[1]), (v8, per_head[2]))]
    check_against(out, lse, *sdpa_fp64(*dequantized), FP8_OUT_TOLERANCE, FP8_LSE_TOLERANCE)
    transposed = [x.t().contiguous().t() for x in per_head]
    assert transposed[0].stride() == (1, batch)
    again = zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=transposed[0], k_descale=transposed[1],
                                 v_descale=transposed[2])
    assert torch.equal(again, out)


@pytest.mark.parametrize("seed", [7, 2**64 - 1])  # rotation_seed is a uint64_t, its top bit included
def test_fp8_quantize_rotation_seed_matches_the_host(gen, seed):
    x = randn(gen, 64, 128)
    codes, descale = zyfa.fp8_quantize(x, rotation="hadamard", seed=seed)
    bits = x.view(torch.int16).cpu().numpy().view("uint16")
    want_codes, want_descale = zyfa.fp8_quantize(bits, rotation="hadamard", seed=seed)
    assert (codes.view(torch.uint8).cpu().numpy() == want_codes).all()
    assert descale.item() == want_descale[0]


def test_fp8_long_sequence_with_workspace_matches_sdpa_fp64_eager_and_replayed(gen):
    """From group * seqlen = 4K the op gives each FP8 call a workspace (zyfa_attn_workspace_size) from
    PyTorch's allocator, and the library writes V^T into it before the kernel: eager and graph-replayed
    calls alike match SDPA in float64 and each other."""
    batch, seqlen, nheads, nheads_k = 1, 4096, 8, 2
    q, k, v = (randn(gen, batch, seqlen, h, 128) for h in (nheads, nheads_k, nheads_k))
    (q8, qs), (k8, ks), (v8, vs) = zyfa.fp8_quantize(q), zyfa.fp8_quantize(k), zyfa.fp8_quantize(v)

    def step():
        return zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=qs, k_descale=ks, v_descale=vs,
                                    return_lse=True)

    out, lse = step()
    dequantized = [x8.double() * s.double() for x8, s in ((q8, qs), (k8, ks), (v8, vs))]
    check_against(out, lse, *sdpa_fp64(*dequantized), FP8_OUT_TOLERANCE, FP8_LSE_TOLERANCE)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = step()
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(captured[0], out) and torch.equal(captured[1], lse)


def test_layouts_packed_and_strided_forms_equal_flash_attn_func(gen):
    batch, nheads = 2, 4
    qkv = randn(gen, batch, SEQLEN, 3, nheads, 128)
    q, k, v = qkv.unbind(dim=2)
    out, lse = zyfa.flash_attn_func(q.contiguous(), k.contiguous(), v.contiguous(), causal=True, return_lse=True)
    assert torch.equal(zyfa.flash_attn_func(q, k, v, causal=True), out)  # strided slices, read in place
    assert torch.equal(zyfa.flash_attn_qkvpacked_func(qkv, causal=True), out)
    assert torch.equal(zyfa.flash_attn_kvpacked_func(q, qkv[:, :, 1:], causal=True), out)
    bhsd = zyfa.flash_attn_func(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal=True, layout="bhsd")
    assert torch.equal(bhsd, out.transpose(1, 2))
    cu = torch.arange(0, (batch + 1) * SEQLEN, SEQLEN, device="cuda", dtype=torch.int32)
    flat = [x.reshape(batch * SEQLEN, nheads, 128) for x in (q, k, v)]
    out_varlen, lse_varlen, probs = zyfa.flash_attn_varlen_func(*flat, cu, cu, SEQLEN, SEQLEN, causal=True,
                                                                return_attn_probs=True)
    assert probs is None
    assert torch.equal(out_varlen, out.reshape(batch * SEQLEN, nheads, 128))
    assert torch.equal(lse_varlen, lse.transpose(0, 1).reshape(nheads, batch * SEQLEN))


def test_torch_compile_equals_eager(gen):
    q, k, v = randn(gen, 1, SEQLEN, 8, 128), randn(gen, 1, SEQLEN, 2, 128), randn(gen, 1, SEQLEN, 2, 128)

    def layer(q, k, v):
        bf16, lse = zyfa.flash_attn_func(q, k, v, causal=True, return_lse=True)
        (q8, qs), (k8, ks), (v8, vs) = zyfa.fp8_quantize(q), zyfa.fp8_quantize(k), zyfa.fp8_quantize(v)
        fp8 = zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=qs, k_descale=ks, v_descale=vs)
        return bf16 * 2, lse, fp8

    compiled = torch.compile(layer, fullgraph=True)
    eager = layer(q, k, v)
    traced = compiled(q, k, v)
    for a, b in zip(eager, traced):
        assert torch.equal(a, b)


def test_cuda_graph_replay_equals_eager(gen):
    q, k, v = randn(gen, 2, SEQLEN, 8, 128), randn(gen, 2, SEQLEN, 2, 128), randn(gen, 2, SEQLEN, 2, 128)

    def step(q, k, v):
        (q8, qs), (k8, ks), (v8, vs) = zyfa.fp8_quantize(q), zyfa.fp8_quantize(k), zyfa.fp8_quantize(v)
        fp8 = zyfa.flash_attn_func(q8, k8, v8, causal=True, q_descale=qs, k_descale=ks, v_descale=vs)
        bf16, lse = zyfa.flash_attn_func(q, k, v, causal=True, return_lse=True)
        return fp8, bf16, lse

    # Warm up on a side stream, as PyTorch asks before capture: this also prepares the shapes' plans.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step(q, k, v)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = step(q, k, v)
    for _ in range(2):  # new inputs each replay, copied into the captured buffers
        for x in (q, k, v):
            x.copy_(randn(gen, *x.shape))
        graph.replay()
        torch.cuda.synchronize()
        for a, b in zip(captured, step(q, k, v)):
            assert torch.equal(a, b)


def test_capturing_a_shape_that_never_ran_says_not_prepared(gen):
    """A capture cannot record a plan's upload: without an eager call of the shape first, the captured call
    raises NOT_PREPARED (the README's instruction), and after one eager call the same capture works."""
    q, k, v = randn(gen, 1, 333, 4, 128), randn(gen, 1, 333, 1, 128), randn(gen, 1, 333, 1, 128)
    torch.cuda.synchronize()
    zyfa.plan_cache.clear()  # nothing of this shape is prepared, whatever ran before
    with pytest.raises(zyfa.ZyfaRuntimeError) as refused:
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            zyfa.flash_attn_func(q, k, v, causal=True)
    assert refused.value.status == zyfa.Status.NOT_PREPARED
    eager = zyfa.flash_attn_func(q, k, v, causal=True)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = zyfa.flash_attn_func(q, k, v, causal=True)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(captured, eager)


def test_forward_runs_with_gradients_and_backward_raises(gen):
    q = randn(gen, 1, 64, 2, 128).requires_grad_()
    k, v = randn(gen, 1, 64, 2, 128), randn(gen, 1, 64, 2, 128)
    out = zyfa.flash_attn_func(q, k, v, causal=True)
    assert torch.equal(out.detach(), zyfa.flash_attn_func(q.detach(), k, v, causal=True))
    with pytest.raises(RuntimeError, match="no backward"):
        out.float().sum().backward()


def test_device_errors_carry_the_librarys_message(gen):
    q, k, v = randn(gen, 1, 16, 3, 128), randn(gen, 1, 16, 2, 128), randn(gen, 1, 16, 2, 128)
    with pytest.raises(zyfa.ZyfaError) as info:
        zyfa.flash_attn_func(q, k, v, causal=True)
    assert info.value.status is zyfa.Status.BAD_HEAD_RATIO and "nheads" in info.value.message
    with pytest.raises(ValueError, match="CUDA"):
        zyfa.flash_attn_func(q.cpu(), k.cpu(), v.cpu(), causal=True)


def test_fp8_quantize_copies_rows_it_cannot_read_in_place(gen):
    """A broadcast row (stride 0, which the library would read as row_stride = dim), overlapping windows and a
    transposed single row give the codes of their contiguous copies."""
    row = randn(gen, 128)
    cases = {"broadcast": row.expand(64, 128), "overlapping": randn(gen, 256).unfold(0, 128, 8),
             "one transposed row": randn(gen, 128, 1).t()}
    for name, view in cases.items():
        codes, descale = zyfa.fp8_quantize(view)
        want_codes, want_descale = zyfa.fp8_quantize(view.contiguous())
        assert torch.equal(codes.view(torch.uint8), want_codes.view(torch.uint8)), name
        assert torch.equal(descale, want_descale), name
