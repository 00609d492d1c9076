"""PyTorch CUDA tensors through zyfa_attn_fwd, as the custom operators torch.ops.zyfa.fwd and
torch.ops.zyfa.quantize_fp8. Their fake implementations give torch.compile the output shapes without
running anything, and the real ones only enqueue work on the current stream, so calls can be captured
in CUDA graphs. Imported only when torch is."""
import ctypes
import math
from typing import List, Optional, Tuple

import torch
from torch import Tensor
from torch._subclasses.fake_tensor import is_fake

from . import _args, _desc, _lib, errors


def _operand(t):
    """A (batch, seqlen, heads, dim) view the kernel can read in place, or a contiguous copy of it (the
    copy is freed in stream order, after the kernel that reads it)."""
    if not _args.usable_in_place(t.shape, t.stride(), t.element_size(), t.data_ptr()):
        t = t.clone(memory_format=torch.contiguous_format)
    return t, _desc.Operand(t.data_ptr(), tuple(t.stride()[:3]))


def _logical(t, bhsd):
    return t.transpose(1, 2) if bhsd else t


def _outputs(q, v, bhsd, return_lse):
    """Fresh contiguous outputs: out in the inputs' layout, and lse (batch, nheads, seqlen) or an empty
    placeholder (an operator cannot return None)."""
    if bhsd:
        b, h, s, _ = q.shape
        out_shape = (b, h, s, v.shape[-1])
    else:
        b, s, h, _ = q.shape
        out_shape = (b, s, h, v.shape[-1])
    out = q.new_empty(out_shape, dtype=torch.bfloat16)
    lse = q.new_empty((b, h, s) if return_lse else (0,), dtype=torch.float32)
    return out, lse


# descale_values entry of a descale that was not given (an operator argument cannot be None in a list).
NOT_GIVEN = float("nan")


def _descale(t, value, d):
    if t is None:
        return None if math.isnan(value) else _desc.Descale(value, None, 0, 0)
    batch_stride, head_stride = _args.descale_strides("zyfa::fwd", "descale", t.shape, t.stride(), d)
    return _desc.Descale(0.0, t.data_ptr(), batch_stride, head_stride)


def _prepare_outside_capture(desc, stream):
    """zyfa_attn_prepare before every call that is not being captured: it builds the shape's plans (also
    those of the layouts a later capture may use) or finds them, so a capture after an uncaptured call of
    the same shape finds its plan even after the cache evicted it meanwhile (a set of "prepared" shapes here
    would go stale). Under capture the library answers ZYFA_STATUS_NOT_PREPARED where no plan is ready,
    which says to run the shape once first: uploading a plan is something a capture cannot record."""
    if not torch.cuda.is_current_stream_capturing():
        _lib.check(_lib.lib().zyfa_attn_prepare(_desc.byref(desc), ctypes.c_void_p(stream)))


@torch.library.custom_op("zyfa::fwd", mutates_args=(), device_types="cuda")
def fwd(q: Tensor, k: Tensor, v: Tensor, q_descale: Optional[Tensor], k_descale: Optional[Tensor],
        v_descale: Optional[Tensor], descale_values: List[float], softmax_scale: float, bhsd: bool,
        return_lse: bool, p_rounding: int) -> Tuple[Tensor, Tensor]:
    """Causal attention. Each descale comes from its tensor, or else from descale_values (NaN: not given,
    which BF16 needs and FP8 refuses). p_rounding is a zyfa_p_rounding value (0: default)."""
    fp8 = q.dtype == torch.float8_e4m3fn
    d = _args.dims("zyfa::fwd", q, k, v, bhsd)
    out, lse = _outputs(q, v, bhsd, return_lse)
    operands = [_operand(_logical(t, bhsd)) for t in (q, k, v)]
    out_operand = _desc.Operand(out.data_ptr(), tuple(_logical(out, bhsd).stride()[:3]))
    descales = [_descale(t, value, d) for t, value in zip((q_descale, k_descale, v_descale), descale_values)]
    desc = _desc.attn_desc(fp8, d, *(o for _, o in operands), out_operand,
                           lse.data_ptr() if return_lse else None, softmax_scale, descales, p_rounding)
    with torch.cuda.device(q.device):
        stream = torch.cuda.current_stream(q.device).cuda_stream
        # The scratch that makes long FP8 calls faster, from PyTorch's allocator on this stream: freed in
        # stream order after the kernels that use it, and taken from the graph's pool under capture.
        workspace_bytes = ctypes.c_size_t(0)
        _lib.check(_lib.lib().zyfa_attn_workspace_size(_desc.byref(desc), ctypes.byref(workspace_bytes)))
        workspace = None
        if workspace_bytes.value:
            workspace = torch.empty(workspace_bytes.value, dtype=torch.uint8, device=q.device)
            desc.workspace = workspace.data_ptr()
            desc.workspace_bytes = workspace_bytes.value
        _prepare_outside_capture(desc, stream)
        _lib.check(_lib.lib().zyfa_attn_fwd(_desc.byref(desc), ctypes.c_void_p(stream)))
    return out, lse


@fwd.register_fake
def _fwd_fake(q, k, v, q_descale, k_descale, v_descale, descale_values, softmax_scale, bhsd, return_lse, p_rounding):
    return _outputs(q, v, bhsd, return_lse)


def _no_backward(ctx, *grads):
    raise RuntimeError("zyfa has no backward pass: its attention is forward-only (inference prefill)")


fwd.register_autograd(_no_backward, setup_context=lambda ctx, inputs, output: None)


@torch.library.custom_op("zyfa::quantize_fp8", mutates_args=(), device_types="cuda")
def quantize_fp8(x: Tensor, hadamard: bool, seed: int) -> Tuple[Tensor, Tensor]:
    """BF16 rows of x's last dim to FP8 e4m3 with one power-of-two descale, written to device memory."""
    dim = x.shape[-1]
    rows = x.reshape(-1, dim)
    row_stride = _args.quantize_row_stride(rows.shape[0], dim, rows.stride(0), rows.stride(1), rows.element_size(),
                                           rows.data_ptr())
    if row_stride is None:
        rows = rows.clone(memory_format=torch.contiguous_format)
        row_stride = dim
    codes, descale = _quantize_outputs(x)
    desc = _desc.quantize_desc(rows.data_ptr(), codes.data_ptr(), descale.data_ptr(), rows.shape[0], dim,
                               row_stride, "hadamard" if hadamard else None, seed % 2 ** 64)  # int64 -> uint64
    with torch.cuda.device(x.device):
        stream = torch.cuda.current_stream(x.device).cuda_stream
        _lib.check(_lib.lib().zyfa_quantize_fp8(_desc.byref(desc), ctypes.c_void_p(stream)))
    return codes, descale


def _quantize_outputs(x):
    return (torch.empty(x.shape, dtype=torch.float8_e4m3fn, device=x.device),
            torch.empty((1,), dtype=torch.float32, device=x.device))


@quantize_fp8.register_fake
def _quantize_fake(x, hadamard, seed):
    return _quantize_outputs(x)


# ---- checks of the public functions' tensor arguments (shapes and dtypes only: traceable)

def check_inputs(name, q, k, v):
    for which, t in (("q", q), ("k", k), ("v", v)):
        if not t.is_cuda:
            raise ValueError(f"{name}: {which} is on {t.device}; zyfa runs on CUDA tensors (pass NumPy arrays "
                             "for the CPU backend)")
        if t.device != q.device:
            raise ValueError(f"{name}: {which} is on {t.device} and q on {q.device}")
    dtypes = {q.dtype, k.dtype, v.dtype}
    if len(dtypes) > 1:
        raise TypeError(f"{name}: q, k and v must share one dtype; got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.dtype not in (torch.bfloat16, torch.float8_e4m3fn):
        raise TypeError(f"{name}: dtype {q.dtype}: zyfa takes torch.bfloat16 or torch.float8_e4m3fn")
    return q.dtype == torch.float8_e4m3fn


def descale_arguments(name, q, descales):
    """(tensors, values) for the operator: a Python float goes by value, a tensor is read on the GPU."""
    tensors, values = [], []
    for which, x in zip(("q_descale", "k_descale", "v_descale"), descales):
        if isinstance(x, (int, float)) and math.isnan(x):
            # NaN stands for "not given" in the operator's values, so it is refused here, with the status the
            # library gives a NaN descale on the other paths.
            raise errors.ZyfaValueError(errors.Status.BAD_DESCALE,
                                        f"{name}: {which} = nan: a descale must be positive, finite and normal")
        if x is None or isinstance(x, (int, float)):
            tensors.append(None)
            values.append(NOT_GIVEN if x is None else float(x))
            continue
        if not isinstance(x, torch.Tensor) or x.device != q.device:
            raise ValueError(f"{name}: {which} must be a float or a float32 tensor on {q.device}")
        tensors.append(x if x.dtype == torch.float32 else x.float())
        values.append(NOT_GIVEN)
    return tensors, values


def can_read_back(t):
    """Whether t's values can be read on the host: not while torch.compile, torch.export or make_fx trace
    (t is then a fake tensor) and not during CUDA graph capture (a read waits for the GPU)."""
    if torch.compiler.is_compiling() or is_fake(t):
        return False
    return not (t.is_cuda and torch.cuda.is_current_stream_capturing())
