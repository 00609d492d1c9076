"""The C ABI of include/zyfa/zyfa.h in ctypes, written by hand (tests/test_abi.py checks every size,
offset, constant and default against the header as a C compiler lays it out)."""
import ctypes

ZYFA_VERSION_MAJOR, ZYFA_VERSION_MINOR, ZYFA_VERSION_PATCH = 0, 2, 0
ZYFA_VERSION = ZYFA_VERSION_MAJOR * 10000 + ZYFA_VERSION_MINOR * 100 + ZYFA_VERSION_PATCH

ZYFA_STATUS_SUCCESS = 0

ZYFA_DTYPE_BF16 = 0
ZYFA_DTYPE_FP8_E4M3 = 1

ZYFA_LAYOUT_BSHD = 0
ZYFA_LAYOUT_BHSD = 1
ZYFA_LAYOUT_STRIDED = 2

ZYFA_DESCALE_NONE = 0
ZYFA_DESCALE_HOST = 1
ZYFA_DESCALE_DEVICE = 2

ZYFA_ROTATION_NONE = 0
ZYFA_ROTATION_HADAMARD = 1

ZYFA_P_ROUNDING_DEFAULT = 0
ZYFA_P_ROUNDING_LEAN = 1
ZYFA_P_ROUNDING_EXACT = 2
ZYFA_P_ROUNDING_SPLIT = 3

# C enums are int on every ABI zyfa targets.
c_enum = ctypes.c_int


class zyfa_strides(ctypes.Structure):
    _fields_ = [("batch", ctypes.c_int64), ("seq", ctypes.c_int64), ("head", ctypes.c_int64)]


class zyfa_descale(ctypes.Structure):
    _fields_ = [
        ("kind", c_enum),
        ("value", ctypes.c_float),
        ("ptr", ctypes.c_void_p),
        ("batch_stride", ctypes.c_int64),
        ("head_stride", ctypes.c_int64),
    ]


class zyfa_attn_desc(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("dtype", c_enum),
        ("layout", c_enum),
        ("batch", ctypes.c_int64),
        ("seqlen", ctypes.c_int64),
        ("nheads", ctypes.c_int64),
        ("nheads_k", ctypes.c_int64),
        ("d_qk", ctypes.c_int64),
        ("d_v", ctypes.c_int64),
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("out", ctypes.c_void_p),
        ("lse", ctypes.c_void_p),
        ("softmax_scale", ctypes.c_float),
        ("causal", ctypes.c_int32),
        ("q_strides", zyfa_strides),
        ("k_strides", zyfa_strides),
        ("v_strides", zyfa_strides),
        ("out_strides", zyfa_strides),
        ("q_descale", zyfa_descale),
        ("k_descale", zyfa_descale),
        ("v_descale", zyfa_descale),
        ("p_rounding", c_enum),
        ("reserved0", ctypes.c_int32),  # the padding after p_rounding, named in zyfa.h; never read
        ("workspace", ctypes.c_void_p),
        ("workspace_bytes", ctypes.c_size_t),
    ]

    def __init__(self, **fields):
        """ZYFA_ATTN_DESC_INIT, then `fields`."""
        defaults = dict(struct_size=ctypes.sizeof(zyfa_attn_desc), dtype=ZYFA_DTYPE_BF16, layout=ZYFA_LAYOUT_BSHD,
                        d_qk=128, d_v=128, causal=1, p_rounding=ZYFA_P_ROUNDING_DEFAULT)
        super().__init__(**{**defaults, **fields})


class zyfa_quantize_desc(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("src", ctypes.c_void_p),
        ("dst", ctypes.c_void_p),
        ("descale", ctypes.c_void_p),
        ("n_rows", ctypes.c_int64),
        ("dim", ctypes.c_int64),
        ("row_stride", ctypes.c_int64),
        ("rotation", c_enum),
        ("rotation_seed", ctypes.c_uint64),
    ]

    def __init__(self, **fields):
        """ZYFA_QUANTIZE_DESC_INIT, then `fields`."""
        super().__init__(**{"struct_size": ctypes.sizeof(zyfa_quantize_desc), **fields})


class zyfa_plan_cache_stats(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("hits", ctypes.c_uint64),
        ("misses", ctypes.c_uint64),
        ("evictions", ctypes.c_uint64),
        ("entries", ctypes.c_uint64),
        ("capacity", ctypes.c_uint64),
        ("device_bytes", ctypes.c_uint64),
    ]

    def __init__(self, **fields):
        """ZYFA_PLAN_CACHE_STATS_INIT."""
        super().__init__(**{"struct_size": ctypes.sizeof(zyfa_plan_cache_stats), **fields})


# (name, restype, argtypes) of every exported function.
FUNCTIONS = [
    ("zyfa_status_string", ctypes.c_char_p, [c_enum]),
    ("zyfa_last_error", ctypes.c_char_p, []),
    ("zyfa_version", ctypes.c_int, []),
    ("zyfa_attn_fwd", c_enum, [ctypes.POINTER(zyfa_attn_desc), ctypes.c_void_p]),
    ("zyfa_attn_prepare", c_enum, [ctypes.POINTER(zyfa_attn_desc), ctypes.c_void_p]),
    ("zyfa_attn_workspace_size", c_enum, [ctypes.POINTER(zyfa_attn_desc), ctypes.POINTER(ctypes.c_size_t)]),
    ("zyfa_attn_fwd_host", c_enum, [ctypes.POINTER(zyfa_attn_desc)]),
    ("zyfa_quantize_fp8", c_enum, [ctypes.POINTER(zyfa_quantize_desc), ctypes.c_void_p]),
    ("zyfa_quantize_fp8_host", c_enum, [ctypes.POINTER(zyfa_quantize_desc)]),
    ("zyfa_plan_cache_get_stats", c_enum, [ctypes.POINTER(zyfa_plan_cache_stats)]),
    ("zyfa_plan_cache_set_capacity", c_enum, [ctypes.c_uint64]),
    ("zyfa_plan_cache_clear", c_enum, []),
]
