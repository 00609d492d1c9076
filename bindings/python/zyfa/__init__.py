"""zyfa: FP8 and BF16 causal prefill attention on NVIDIA Hopper, with flash-attn's Python interface.

PyTorch CUDA tensors run on the GPU (torch.ops.zyfa.fwd, traceable by torch.compile and capturable in
CUDA graphs); NumPy arrays run on zyfa's CPU backend, the same algorithm on host memory. torch is
optional: without it, the NumPy path works as it is. libzyfa.so is found through ZYFA_LIB, ZYFA_LIB_DIR,
this package's folder, or the system's library path, and is never built here."""
from ._abi import ZYFA_VERSION as HEADER_VERSION
from . import plan_cache
from ._lib import library_version
from .api import (flash_attn_func, flash_attn_kvpacked_func, flash_attn_qkvpacked_func, flash_attn_varlen_func,
                  fp8_quantize)
from .errors import Status, ZyfaError, ZyfaRuntimeError, ZyfaValueError

__version__ = "0.2.0"

__all__ = [
    "HEADER_VERSION", "Status", "ZyfaError", "ZyfaRuntimeError", "ZyfaValueError", "flash_attn_func",
    "flash_attn_kvpacked_func", "flash_attn_qkvpacked_func", "flash_attn_varlen_func", "fp8_quantize",
    "library_version", "plan_cache",
]
