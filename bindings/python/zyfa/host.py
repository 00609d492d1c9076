"""NumPy arrays through zyfa's CPU backend (zyfa_attn_fwd_host), which runs the GPU kernels' algorithm
and numerics on host memory. BF16 is carried as uint16 bit patterns or ml_dtypes.bfloat16, FP8 e4m3 as
uint8 codes or ml_dtypes.float8_e4m3fn; outputs follow the inputs' convention."""
import numpy as np

from . import _args, _desc, _lib
from .numeric import bf16_bits

_BF16, _FP8 = "bf16", "fp8"


def _storage(name, which, a):
    """'bf16' or 'fp8' from an array's dtype."""
    if a.dtype == np.uint16 or a.dtype.name == "bfloat16":
        return _BF16
    if a.dtype == np.uint8 or a.dtype.name == "float8_e4m3fn":
        return _FP8
    raise TypeError(f"{name}: {which} has dtype {a.dtype}; the CPU backend takes BF16 (uint16 bit patterns or "
                    "ml_dtypes.bfloat16; zyfa.numeric.bf16_bits converts floats) or FP8 e4m3 (uint8 codes or "
                    "ml_dtypes.float8_e4m3fn)")


def _aligned_empty(shape, dtype):
    """An uninitialized array whose data starts on a 16-byte boundary, as the library requires."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    align = _args.TENSOR_ALIGNMENT_BYTES
    raw = np.empty(nbytes + align, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def _element_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def _operand(a):
    """A (batch, seqlen, heads, dim) view the library can read in place, or an aligned contiguous copy."""
    if not _args.usable_in_place(a.shape, _element_strides(a), a.itemsize, a.ctypes.data) or any(
            s % a.itemsize for s in a.strides):
        copy = _aligned_empty(a.shape, a.dtype)
        copy[...] = a
        a = copy
    return a, _desc.Operand(a.ctypes.data, _element_strides(a)[:3])


def _logical(a, bhsd):
    return a.transpose(0, 2, 1, 3) if bhsd else a


def _descale(name, which, x, d, keep):
    if isinstance(x, (int, float, np.floating, np.integer)):
        return _desc.Descale(float(x), None, 0, 0)
    a = np.asarray(x)
    if a.dtype != np.float32:
        a = a.astype(np.float32)
    # The library reads descales in whole, aligned, non-negative element strides; a field of a structured
    # array or a reversed view is copied rather than read at strides rounded to elements.
    if not a.flags.aligned or any(s < 0 or s % a.itemsize for s in a.strides):
        a = np.ascontiguousarray(a)
    batch_stride, head_stride = _args.descale_strides(name, which, a.shape, _element_strides(a), d)
    keep.append(a)
    return _desc.Descale(0.0, a.ctypes.data, batch_stride, head_stride)


def attention(name, q, k, v, softmax_scale, bhsd, descales, return_lse, p_rounding):
    """One causal attention on the CPU backend; returns (out, lse or None). p_rounding is a
    zyfa_p_rounding value."""
    kinds = {_storage(name, w, a) for w, a in (("q", q), ("k", k), ("v", v))}
    if len(kinds) > 1:
        raise TypeError(f"{name}: q, k and v must share one dtype; got {q.dtype}, {k.dtype}, {v.dtype}")
    fp8 = kinds == {_FP8}
    d = _args.dims(name, q, k, v, bhsd)
    keep = []  # arrays whose memory the call reads: alive until it returns
    operands = []
    for a in (q, k, v):
        a, operand = _operand(_logical(a, bhsd))
        keep.append(a)
        operands.append(operand)
    out_dtype = np.uint16
    if q.dtype.name in ("bfloat16", "float8_e4m3fn"):
        import ml_dtypes  # the inputs came from it, so it is installed
        out_dtype = ml_dtypes.bfloat16
    out = _aligned_empty((d.batch, d.nheads, d.seqlen, d.d_v) if bhsd else (d.batch, d.seqlen, d.nheads, d.d_v),
                         out_dtype)
    lse = _aligned_empty((d.batch, d.nheads, d.seqlen), np.float32) if return_lse else None
    out_operand = _desc.Operand(out.ctypes.data, _element_strides(_logical(out, bhsd))[:3])
    descale_args = [None if x is None else _descale(name, w, x, d, keep)
                    for w, x in zip(("q_descale", "k_descale", "v_descale"), descales)]
    desc = _desc.attn_desc(fp8, d, *operands, out_operand, lse.ctypes.data if lse is not None else None,
                           softmax_scale, descale_args, p_rounding)
    _lib.check(_lib.lib().zyfa_attn_fwd_host(_desc.byref(desc)))
    return out, lse


def quantize(x, rotation, seed):
    """BF16 (or float, rounded to BF16 first) to FP8 e4m3 codes with one power-of-two descale."""
    x = np.asarray(x)
    ml_typed = x.dtype.name == "bfloat16"
    if x.dtype.kind == "f" and not ml_typed:
        x = bf16_bits(x)
    elif x.dtype != np.uint16 and not ml_typed:
        raise TypeError(f"fp8_quantize: dtype {x.dtype}: expected BF16 (uint16 bits or ml_dtypes) or floats")
    if x.ndim < 1:
        raise ValueError("fp8_quantize: a scalar has no rows")
    dim = x.shape[-1]
    rows = x.reshape(-1, dim)
    # Strides in bytes that are not whole elements (a view of a view) fail the element checks too.
    row_stride, col_stride = (s // rows.itemsize if s % rows.itemsize == 0 else -1 for s in rows.strides)
    row_stride = _args.quantize_row_stride(rows.shape[0], dim, row_stride, col_stride, rows.itemsize,
                                           rows.ctypes.data)
    if row_stride is None:
        copy = _aligned_empty(rows.shape, rows.dtype)
        copy[...] = rows
        rows = copy
        row_stride = dim
    codes = _aligned_empty(x.shape, np.uint8)
    descale = np.zeros(1, dtype=np.float32)
    desc = _desc.quantize_desc(rows.ctypes.data, codes.ctypes.data, descale.ctypes.data, rows.shape[0], dim,
                               row_stride, rotation, seed)
    _lib.check(_lib.lib().zyfa_quantize_fp8_host(_desc.byref(desc)))
    if ml_typed:
        import ml_dtypes
        codes = codes.view(ml_dtypes.float8_e4m3fn)
    return codes, descale
