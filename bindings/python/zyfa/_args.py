"""flash-attn's arguments and zyfa's rules for them, shared by the NumPy and the PyTorch paths. Only
shapes, dtypes and plain values are read here, so the same checks run eagerly and under torch.compile."""
from collections import namedtuple

from . import _abi
from .errors import Status, ZyfaValueError

# Tensor base pointers and the strides of dimensions longer than one must be multiples of this many bytes.
TENSOR_ALIGNMENT_BYTES = 16

# window_size values that mean "no window", which with causal=True is the causal mask.
NO_WINDOW = ((-1, -1), (-1, 0), (None, None))

LAYOUTS = ("bshd", "bhsd")

# p_rounding= of the FP8 entry points, and the zyfa_p_rounding each names.
P_ROUNDINGS = {"default": _abi.ZYFA_P_ROUNDING_DEFAULT, "lean": _abi.ZYFA_P_ROUNDING_LEAN,
               "exact": _abi.ZYFA_P_ROUNDING_EXACT, "split": _abi.ZYFA_P_ROUNDING_SPLIT}

# The shape of one call, from the tensors.
Dims = namedtuple("Dims", "batch seqlen nheads nheads_k d_qk d_v")


def check_flash_attn_args(name, dropout_p, softmax_scale, causal, window_size, softcap, alibi_slopes):
    """flash-attn 2's keyword arguments, checked against what zyfa implements. Returns the softmax scale
    for the descriptor (0.0: the library's default 1/sqrt(d_qk))."""
    if isinstance(softmax_scale, bool) or isinstance(dropout_p, bool):
        raise TypeError(
            f"{name}: softmax_scale={softmax_scale!r}: this looks like flash-attn 3's positional order "
            "(q, k, v, softmax_scale, causal); zyfa takes flash-attn 2's (q, k, v, dropout_p, softmax_scale, "
            "causal, ...), so pass softmax_scale and causal by keyword")
    if dropout_p:
        raise ValueError(f"{name}: dropout_p={dropout_p!r}: zyfa has no dropout (with flash-attn 3's positional "
                         "order, pass softmax_scale by keyword)")
    if causal is not True:
        raise ValueError(f"{name}: causal={causal!r}: only causal attention is implemented; pass causal=True")
    if window_size is None or tuple(window_size) not in NO_WINDOW:
        raise ValueError(f"{name}: window_size={window_size!r}: sliding windows are not supported; "
                         "use (-1, -1), (-1, 0) or (None, None)")
    if softcap:
        raise ValueError(f"{name}: softcap={softcap!r}: softcapping is not supported")
    if alibi_slopes is not None:
        raise ValueError(f"{name}: alibi_slopes: ALiBi is not supported")
    if softmax_scale is None:
        return 0.0
    if float(softmax_scale) == 0.0:
        # 0 means "default" in the C ABI; in flash-attn it would mean a zero scale. Refuse the ambiguity.
        raise ValueError(f"{name}: softmax_scale=0: pass None for 1/sqrt(head_dim)")
    return float(softmax_scale)


def check_layout(name, layout):
    """True for "bhsd"."""
    if not isinstance(layout, str) or layout.lower() not in LAYOUTS:
        raise ValueError(f"{name}: layout={layout!r}: must be 'bshd' or 'bhsd'")
    return layout.lower() == "bhsd"


def p_rounding(name, value):
    """The zyfa_p_rounding of p_rounding="default" | "lean" | "exact" | "split" (FP8's P rounding to e4m3). A name
    outside them is refused here, in the library's terms (BAD_ARGUMENT); the library itself refuses anything
    but "default" with BF16 inputs."""
    if isinstance(value, str) and value.lower() in P_ROUNDINGS:
        return P_ROUNDINGS[value.lower()]
    raise ZyfaValueError(Status.BAD_ARGUMENT,
                         f"{name}: p_rounding={value!r}: must be 'default', 'lean', 'exact' or 'split'")


def dims(name, q, k, v, bhsd):
    """The call's shape from q (batch, seqlen, nheads, d_qk), k (.., nheads_k, d_qk) and v (.., nheads_k,
    d_v), with seqlen and heads swapped for bhsd. The C descriptor has one batch and one seqlen, so
    every tensor must agree on them."""
    for t, tname in ((q, "q"), (k, "k"), (v, "v")):
        if len(t.shape) != 4:
            raise ValueError(f"{name}: {tname} has shape {tuple(t.shape)}; expected 4 dimensions "
                             f"({'batch, heads, seqlen, dim' if bhsd else 'batch, seqlen, heads, dim'})")
    if bhsd:
        (b, h, s, dqk), (bk, hk, sk, dk), (bv, hv, sv, dv) = q.shape, k.shape, v.shape
    else:
        (b, s, h, dqk), (bk, sk, hk, dk), (bv, sv, hv, dv) = q.shape, k.shape, v.shape
    if not (b == bk == bv):
        raise ValueError(f"{name}: batch sizes of q, k, v differ: {b}, {bk}, {bv}")
    if not (s == sk == sv):
        raise ValueError(f"{name}: sequence lengths of q, k, v differ: {s}, {sk}, {sv} (seqlen_q must equal seqlen_k)")
    if hk != hv:
        raise ValueError(f"{name}: k has {hk} heads and v has {hv}")
    if dqk != dk:
        raise ValueError(f"{name}: q's head dim {dqk} differs from k's {dk}")
    return Dims(int(b), int(s), int(h), int(hk), int(dqk), int(dv))


def usable_in_place(shape, strides, itemsize, address):
    """Whether the kernel can read a (batch, seqlen, heads, dim) view as it is: dim contiguous, no
    negative strides, 16-byte granular strides and base. Otherwise the caller copies it."""
    if any(s < 0 for s in strides):
        return False
    if shape[-1] > 1 and strides[-1] != 1:
        return False
    if any(n > 1 and (s * itemsize) % TENSOR_ALIGNMENT_BYTES for n, s in zip(shape[:-1], strides[:-1])):
        return False
    return address % TENSOR_ALIGNMENT_BYTES == 0


def quantize_row_stride(n_rows, dim, row_stride, col_stride, itemsize, address):
    """The row_stride to give zyfa_quantize_fp8 for (n_rows, dim) rows read as they are, strides in elements,
    or None where the caller must copy them (into contiguous rows, whose stride is dim). As they are means:
    dim contiguous, rows at least dim apart (the library reads row_stride 0 as dim, so a broadcast row, whose
    stride is 0, would be read as n_rows different ones) on 16-byte granular strides, the base aligned. A
    single row has no row stride to check, and gets dim."""
    if dim > 1 and col_stride != 1:
        return None
    if n_rows > 1 and (row_stride < dim or (row_stride * itemsize) % TENSOR_ALIGNMENT_BYTES):
        return None
    if address % TENSOR_ALIGNMENT_BYTES:
        return None
    return row_stride if n_rows > 1 else dim


def descale_strides(name, which, shape, strides, d):
    """(batch_stride, head_stride) of a descale tensor: one element, or shaped (batch, nheads_k)."""
    numel = 1
    for n in shape:
        numel *= n
    if numel == 1:
        return 0, 0
    if tuple(shape) == (d.batch, d.nheads_k):
        return int(strides[0]), int(strides[1])
    raise ValueError(f"{name}: {which} has shape {tuple(shape)}; expected one element or (batch, nheads_k) = "
                     f"({d.batch}, {d.nheads_k})")


def result(out, lse, return_lse, return_attn_probs):
    """flash-attn 2's return_attn_probs gives (out, lse, None); return_lse (flash-attn 3's form) (out, lse)."""
    if return_attn_probs:
        return out, lse, None
    if return_lse:
        return out, lse
    return out


def equal_length(name, total, max_seqlen):
    """batch and the common length of a varlen call from total tokens and max_seqlen (a Python int)."""
    max_seqlen = int(max_seqlen)
    if max_seqlen < 1 or total % max_seqlen:
        raise ValueError(f"{name}: {total} tokens are not whole sequences of max_seqlen = {max_seqlen}; "
                         "zyfa needs sequences of equal length")
    return total // max_seqlen, max_seqlen


def check_cu_seqlens(name, values, batch, seqlen):
    """cu_seqlens (as a list of ints) must be 0, L, 2L, ..., batch * L."""
    if list(values) != [i * seqlen for i in range(batch + 1)]:
        raise ValueError(f"{name}: cu_seqlens {list(values)[:8]}... do not describe {batch} sequences of length "
                         f"{seqlen}; zyfa needs sequences of equal length")
