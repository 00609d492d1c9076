"""NumPy conversions for the host backend's storage formats: BF16 as uint16 bit patterns and FP8 e4m3
as uint8 codes (ml_dtypes' bfloat16 and float8_e4m3fn arrays work as they are). Both round to nearest
even, as the library does."""
import numpy as np


def bf16_bits(x):
    """The BF16 bit patterns (uint16) nearest to the values of `x` (ties to even; NaN stays NaN)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    rounded = ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, ((bits >> 16) | np.uint32(0x40)).astype(np.uint16), rounded)


def bf16_to_float32(bits):
    """The float32 values of BF16 bit patterns (or of an ml_dtypes bfloat16 array)."""
    bits = np.asarray(bits)
    if bits.dtype.name == "bfloat16":
        return bits.astype(np.float32)
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _e4m3_table():
    codes = np.arange(256)
    exponent, mantissa = (codes >> 3) & 15, codes & 7
    magnitude = np.where(exponent == 0, mantissa * 2.0 ** -9, (8 + mantissa) * 2.0 ** (exponent - 10))
    magnitude[(exponent == 15) & (mantissa == 7)] = np.nan  # OCP e4m3fn: no infinities, 0x7f/0xff are NaN
    return np.where(codes & 0x80, -magnitude, magnitude).astype(np.float32)


_E4M3_VALUES = _e4m3_table()


def e4m3_to_float32(codes):
    """The float32 values of e4m3 codes (or of an ml_dtypes float8_e4m3fn array)."""
    codes = np.asarray(codes)
    if codes.dtype.name == "float8_e4m3fn":
        codes = codes.view(np.uint8)
    return _E4M3_VALUES[codes]
