"""flash-attn's functions over zyfa. NumPy arrays run on the CPU backend; PyTorch CUDA tensors run on the
GPU through the torch.ops.zyfa.fwd operator. Arguments follow flash-attn 2 (see README, "Differences
from flash-attn"); the ZYFA extras (descales, p_rounding, return_lse, layout) are keyword-only."""
import numpy as np

from . import _args, host

# torch is optional. When installed it is imported here, at module level, so that code traced by
# torch.compile finds plain globals rather than imports.
try:
    import torch
    from . import _torch_ops
except ImportError:
    torch = None
    _torch_ops = None


def _backend(name, x):
    """'numpy' or 'torch' from the first input."""
    if isinstance(x, np.ndarray):
        return "numpy"
    if torch is not None and isinstance(x, torch.Tensor):
        return "torch"
    raise TypeError(f"{name}: expected NumPy arrays (CPU backend) or PyTorch CUDA tensors, got {type(x).__name__}")


def _attention(name, q, k, v, softmax_scale, bhsd, descales, return_lse, p_rounding):
    """(out, lse or None) in the layout of the inputs; p_rounding is a zyfa_p_rounding value."""
    if _backend(name, q) == "numpy":
        return host.attention(name, q, k, v, softmax_scale, bhsd, descales, return_lse, p_rounding)
    _torch_ops.check_inputs(name, q, k, v)
    _args.dims(name, q, k, v, bhsd)
    tensors, values = _torch_ops.descale_arguments(name, q, descales)
    out, lse = _torch_ops.fwd(q, k, v, *tensors, values, softmax_scale, bhsd, return_lse, p_rounding)
    return out, (lse if return_lse else None)


def _flash_attn(name, flash_args, q, k, v, descales, p_rounding, return_lse, return_attn_probs, bhsd=False):
    """flash-attn's argument rules, the call, and flash-attn's return form."""
    scale = _args.check_flash_attn_args(name, *flash_args)
    p_rounding = _args.p_rounding(name, p_rounding)
    out, lse = _attention(name, q, k, v, scale, bhsd, descales, bool(return_lse or return_attn_probs), p_rounding)
    return _args.result(out, lse, return_lse, return_attn_probs)


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                    alibi_slopes=None, deterministic=False, return_attn_probs=False, *, q_descale=None,
                    k_descale=None, v_descale=None, p_rounding="default", return_lse=False, layout="bshd"):
    """Causal attention of q (batch, seqlen, nheads, d_qk) over k (.., nheads_k, d_qk) and v (.., nheads_k,
    d_v); (batch, heads, seqlen, dim) with layout="bhsd". BF16 inputs, or FP8 e4m3 with one descale per
    tensor: a float, a one-element float32 tensor, or one of shape (batch, nheads_k). p_rounding (FP8 only)
    rounds the softmax probabilities to e4m3: "default" (lean at d_qk = 128, exact at 192), "lean" (either
    head dim; fewer instructions), "exact" (1.15-1.2x lower error at d = 128 on std-1 Gaussians) or "split" (P as exact P plus
    its e4m3 residual, a second P V product: P's rounding error 42x below exact P's, output error 0.09-0.095x
    exact P's on the H200 on Gaussian inputs and 0.27-0.70x on outlier and structured ones, at 0.82-0.93x its
    speed; on CUDA tensors it needs strides TMA can map, 16-byte multiples above 0, else ZyfaValueError naming
    p_rounding). Output BF16; with return_lse=True also the (batch, nheads, seqlen) natural-log LSE, and with
    return_attn_probs=True (out, lse, None). Outputs are deterministic (`deterministic` is accepted and always holds)."""
    name = "flash_attn_func"
    bhsd = _args.check_layout(name, layout)
    return _flash_attn(name, (dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes), q, k, v,
                       (q_descale, k_descale, v_descale), p_rounding, return_lse, return_attn_probs, bhsd)


def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                              softcap=0.0, alibi_slopes=None, deterministic=False, return_attn_probs=False, *,
                              q_descale=None, k_descale=None, v_descale=None, p_rounding="default",
                              return_lse=False):
    """qkv of shape (batch, seqlen, 3, nheads, d): q, k and v read in place as strided slices."""
    name = "flash_attn_qkvpacked_func"
    if len(qkv.shape) != 5 or qkv.shape[2] != 3:
        raise ValueError(f"{name}: qkv has shape {tuple(qkv.shape)}; expected (batch, seqlen, 3, nheads, head_dim)")
    return _flash_attn(name, (dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes), qkv[:, :, 0],
                       qkv[:, :, 1], qkv[:, :, 2], (q_descale, k_descale, v_descale), p_rounding, return_lse,
                       return_attn_probs)


def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None, causal=False, window_size=(-1, -1),
                             softcap=0.0, alibi_slopes=None, deterministic=False, return_attn_probs=False, *,
                             q_descale=None, k_descale=None, v_descale=None, p_rounding="default",
                             return_lse=False):
    """q (batch, seqlen, nheads, d) and kv (batch, seqlen, 2, nheads_k, d)."""
    name = "flash_attn_kvpacked_func"
    if len(kv.shape) != 5 or kv.shape[2] != 2:
        raise ValueError(f"{name}: kv has shape {tuple(kv.shape)}; expected (batch, seqlen, 2, nheads_k, head_dim)")
    return _flash_attn(name, (dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes), q, kv[:, :, 0],
                       kv[:, :, 1], (q_descale, k_descale, v_descale), p_rounding, return_lse, return_attn_probs)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                           softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           deterministic=False, return_attn_probs=False, block_table=None, *, q_descale=None,
                           k_descale=None, v_descale=None, p_rounding="default", return_lse=False):
    """q (total, nheads, d), k and v (total, nheads_k, d) holding sequences of one common length
    max_seqlen_q = max_seqlen_k. cu_seqlens are checked to be 0, L, 2L, ... in eager calls (reading them
    waits for the GPU), and trusted under torch.compile and CUDA graph capture. The LSE has flash-attn 2's
    varlen shape (nheads, total)."""
    name = "flash_attn_varlen_func"
    scale = _args.check_flash_attn_args(name, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes)
    p_rounding = _args.p_rounding(name, p_rounding)
    if block_table is not None:
        raise ValueError(f"{name}: block_table: paged KV caches are not supported")
    if int(max_seqlen_q) != int(max_seqlen_k):
        raise ValueError(f"{name}: max_seqlen_q = {max_seqlen_q} and max_seqlen_k = {max_seqlen_k} differ; "
                         "zyfa needs seqlen_q = seqlen_k")
    for which, t in (("q", q), ("k", k), ("v", v)):
        if len(t.shape) != 3:
            raise ValueError(f"{name}: {which} has shape {tuple(t.shape)}; expected (total_tokens, heads, head_dim)")
    batch, seqlen = _args.equal_length(name, q.shape[0], max_seqlen_q)
    torch_inputs = _backend(name, q) == "torch"
    for cu in (cu_seqlens_q, cu_seqlens_k):
        if not torch_inputs:
            _args.check_cu_seqlens(name, np.asarray(cu).tolist(), batch, seqlen)
        elif _torch_ops.can_read_back(cu):
            _args.check_cu_seqlens(name, cu.tolist(), batch, seqlen)

    def sequences(t):
        return t.reshape(batch, seqlen, *t.shape[1:])

    want_lse = bool(return_lse or return_attn_probs)
    out, lse = _attention(name, sequences(q), sequences(k), sequences(v), scale, False,
                          (q_descale, k_descale, v_descale), want_lse, p_rounding)
    out = out.reshape(batch * seqlen, *out.shape[2:])
    if lse is not None:
        # (batch, nheads, seqlen) -> (nheads, batch * seqlen)
        lse = lse.transpose(1, 0, 2) if isinstance(lse, np.ndarray) else lse.transpose(0, 1)
        lse = lse.reshape(lse.shape[0], batch * seqlen)
    return _args.result(out, lse, return_lse, return_attn_probs)


def fp8_quantize(x, *, rotation=None, seed=0):
    """x to FP8 e4m3 with one power-of-two scale per tensor: returns (codes, descale) with
    codes * descale ~ x. rotation="hadamard" applies zyfa's random-sign Hadamard rotation over the last
    dim (128, or 192 through a 3-point DCT x 64-point Hadamard) first; use one seed for q and k and leave v
    unrotated. Takes BF16 (other float dtypes are rounded to BF16 first). For CUDA tensors the descale is
    a one-element float32 tensor on the GPU, for NumPy a one-element float32 array."""
    if rotation not in (None, "hadamard"):
        raise ValueError(f"fp8_quantize: rotation={rotation!r}: must be None or 'hadamard'")
    seed = int(seed)
    if not 0 <= seed < 2 ** 64:
        raise ValueError(f"fp8_quantize: seed={seed}: must be in [0, 2^64), as rotation_seed is a uint64_t")
    if _backend("fp8_quantize", x) == "numpy":
        return host.quantize(x, rotation, seed)
    if not x.is_cuda:
        raise ValueError(f"fp8_quantize: x is on {x.device}; pass a CUDA tensor or a NumPy array")
    if x.dtype != torch.bfloat16:
        if not x.dtype.is_floating_point:
            raise TypeError(f"fp8_quantize: dtype {x.dtype}: expected a floating-point tensor")
        x = x.to(torch.bfloat16)
    # The custom op's int is an int64: the seed crosses it as the same 64 bits, signed.
    return _torch_ops.quantize_fp8(x, rotation == "hadamard", seed - 2 ** 64 if seed >= 2 ** 63 else seed)
