"""Builds the C descriptors from plain numbers and addresses, for both backends. Every tensor goes in
as ZYFA_LAYOUT_STRIDED with the strides of its (batch, seqlen, heads, dim) view, so BSHD, BHSD and the
slices of packed tensors all take one path."""
import ctypes
from collections import namedtuple

from . import _abi

# A tensor for the descriptor: address and (batch, seq, head) strides in elements.
Operand = namedtuple("Operand", "ptr strides")
# One descale: a host value (ptr None), or an address with (batch, head) strides in elements.
Descale = namedtuple("Descale", "value ptr batch_stride head_stride")


def attn_desc(fp8, d, q, k, v, out, lse_ptr, softmax_scale, descales, p_rounding):
    desc = _abi.zyfa_attn_desc(
        dtype=_abi.ZYFA_DTYPE_FP8_E4M3 if fp8 else _abi.ZYFA_DTYPE_BF16,
        layout=_abi.ZYFA_LAYOUT_STRIDED,
        batch=d.batch, seqlen=d.seqlen, nheads=d.nheads, nheads_k=d.nheads_k, d_qk=d.d_qk, d_v=d.d_v,
        q=q.ptr, k=k.ptr, v=v.ptr, out=out.ptr, lse=lse_ptr or None,
        softmax_scale=softmax_scale, p_rounding=p_rounding,
        q_strides=_abi.zyfa_strides(*q.strides), k_strides=_abi.zyfa_strides(*k.strides),
        v_strides=_abi.zyfa_strides(*v.strides), out_strides=_abi.zyfa_strides(*out.strides))
    desc.q_descale, desc.k_descale, desc.v_descale = (_descale(x) for x in descales)
    return desc


def _descale(x):
    """None stays ZYFA_DESCALE_NONE, so the library names a descale that FP8 needs and did not get."""
    if x is None:
        return _abi.zyfa_descale(kind=_abi.ZYFA_DESCALE_NONE)
    if x.ptr is None:
        return _abi.zyfa_descale(kind=_abi.ZYFA_DESCALE_HOST, value=x.value)
    return _abi.zyfa_descale(kind=_abi.ZYFA_DESCALE_DEVICE, ptr=x.ptr, batch_stride=x.batch_stride,
                             head_stride=x.head_stride)


def quantize_desc(src_ptr, dst_ptr, descale_ptr, n_rows, dim, row_stride, rotation, seed):
    return _abi.zyfa_quantize_desc(
        src=src_ptr, dst=dst_ptr, descale=descale_ptr, n_rows=n_rows, dim=dim, row_stride=row_stride,
        rotation=_rotation(rotation), rotation_seed=seed)


def _rotation(rotation):
    if rotation is None:
        return _abi.ZYFA_ROTATION_NONE
    if rotation == "hadamard":
        return _abi.ZYFA_ROTATION_HADAMARD
    raise ValueError(f"rotation={rotation!r}: must be None or 'hadamard'")


def byref(desc):
    return ctypes.byref(desc)
