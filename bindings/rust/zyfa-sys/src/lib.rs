//! Raw declarations of libzyfa's C ABI, written by hand from `include/zyfa/zyfa.h` (no bindgen, so the
//! build needs no libclang). `tests/layout.rs` checks every size, offset and constant against the header
//! compiled by a C compiler. The safe API is the `zyfa` crate.
#![allow(non_camel_case_types)]
#![no_std]

use core::ffi::{c_char, c_int, c_void};
use core::mem::size_of;
use core::ptr;

pub const ZYFA_VERSION_MAJOR: c_int = 0;
pub const ZYFA_VERSION_MINOR: c_int = 2;
pub const ZYFA_VERSION_PATCH: c_int = 0;
/// major * 10000 + minor * 100 + patch, as the header's ZYFA_VERSION.
pub const ZYFA_VERSION: c_int = ZYFA_VERSION_MAJOR * 10000 + ZYFA_VERSION_MINOR * 100 + ZYFA_VERSION_PATCH;

// C enums are `int` on every ABI zyfa targets; constants keep unknown values representable.
pub type zyfa_status = c_int;
pub const ZYFA_STATUS_SUCCESS: zyfa_status = 0;
pub const ZYFA_STATUS_NULL_ARGUMENT: zyfa_status = 1;
pub const ZYFA_STATUS_BAD_STRUCT_SIZE: zyfa_status = 2;
pub const ZYFA_STATUS_BAD_DTYPE: zyfa_status = 3;
pub const ZYFA_STATUS_BAD_LAYOUT: zyfa_status = 4;
pub const ZYFA_STATUS_UNSUPPORTED_HEAD_DIM: zyfa_status = 5;
pub const ZYFA_STATUS_BAD_SHAPE: zyfa_status = 6;
pub const ZYFA_STATUS_BAD_HEAD_RATIO: zyfa_status = 7;
pub const ZYFA_STATUS_BAD_STRIDE: zyfa_status = 8;
pub const ZYFA_STATUS_MISALIGNED: zyfa_status = 9;
pub const ZYFA_STATUS_NULL_TENSOR: zyfa_status = 10;
pub const ZYFA_STATUS_ALIASED_OUTPUT: zyfa_status = 11;
pub const ZYFA_STATUS_BAD_DESCALE: zyfa_status = 12;
pub const ZYFA_STATUS_FP8_FIELD_WITH_BF16: zyfa_status = 13;
pub const ZYFA_STATUS_NOT_CAUSAL: zyfa_status = 14;
pub const ZYFA_STATUS_SIZE_OVERFLOW: zyfa_status = 15;
pub const ZYFA_STATUS_BAD_SOFTMAX_SCALE: zyfa_status = 16;
pub const ZYFA_STATUS_NO_DEVICE: zyfa_status = 17;
pub const ZYFA_STATUS_UNSUPPORTED_DEVICE: zyfa_status = 18;
pub const ZYFA_STATUS_CUDA_ERROR: zyfa_status = 19;
pub const ZYFA_STATUS_OUT_OF_MEMORY: zyfa_status = 20;
pub const ZYFA_STATUS_NOT_PREPARED: zyfa_status = 21;
pub const ZYFA_STATUS_BAD_ARGUMENT: zyfa_status = 22;
pub const ZYFA_STATUS_INTERNAL: zyfa_status = 23;

pub type zyfa_dtype = c_int;
pub const ZYFA_DTYPE_BF16: zyfa_dtype = 0;
pub const ZYFA_DTYPE_FP8_E4M3: zyfa_dtype = 1;

pub type zyfa_layout = c_int;
pub const ZYFA_LAYOUT_BSHD: zyfa_layout = 0;
pub const ZYFA_LAYOUT_BHSD: zyfa_layout = 1;
pub const ZYFA_LAYOUT_STRIDED: zyfa_layout = 2;

pub type zyfa_descale_kind = c_int;
pub const ZYFA_DESCALE_NONE: zyfa_descale_kind = 0;
pub const ZYFA_DESCALE_HOST: zyfa_descale_kind = 1;
pub const ZYFA_DESCALE_DEVICE: zyfa_descale_kind = 2;

pub type zyfa_rotation = c_int;
pub const ZYFA_ROTATION_NONE: zyfa_rotation = 0;
pub const ZYFA_ROTATION_HADAMARD: zyfa_rotation = 1;

/// How FP8 attention rounds P to e4m3: DEFAULT is lean at d_qk = 128 and exact at 192; LEAN and EXACT take either;
/// SPLIT (either head dim) is exact P plus its e4m3 residual in a second P V product.
pub type zyfa_p_rounding = c_int;
pub const ZYFA_P_ROUNDING_DEFAULT: zyfa_p_rounding = 0;
pub const ZYFA_P_ROUNDING_LEAN: zyfa_p_rounding = 1;
pub const ZYFA_P_ROUNDING_EXACT: zyfa_p_rounding = 2;
pub const ZYFA_P_ROUNDING_SPLIT: zyfa_p_rounding = 3;

/// Strides in elements of a (batch, seqlen, heads, dim) tensor; read only with ZYFA_LAYOUT_STRIDED.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct zyfa_strides {
    pub batch: i64,
    pub seq: i64,
    pub head: i64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zyfa_descale {
    pub kind: zyfa_descale_kind,
    pub value: f32,
    pub ptr: *const f32,
    pub batch_stride: i64,
    pub head_stride: i64,
}

impl Default for zyfa_descale {
    fn default() -> Self {
        zyfa_descale { kind: ZYFA_DESCALE_NONE, value: 0.0, ptr: ptr::null(), batch_stride: 0, head_stride: 0 }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zyfa_attn_desc {
    pub struct_size: usize,
    pub dtype: zyfa_dtype,
    pub layout: zyfa_layout,
    pub batch: i64,
    pub seqlen: i64,
    pub nheads: i64,
    pub nheads_k: i64,
    pub d_qk: i64,
    pub d_v: i64,
    pub q: *const c_void,
    pub k: *const c_void,
    pub v: *const c_void,
    pub out: *mut c_void,
    pub lse: *mut f32,
    pub softmax_scale: f32,
    pub causal: i32,
    pub q_strides: zyfa_strides,
    pub k_strides: zyfa_strides,
    pub v_strides: zyfa_strides,
    pub out_strides: zyfa_strides,
    pub q_descale: zyfa_descale,
    pub k_descale: zyfa_descale,
    pub v_descale: zyfa_descale,
    /// FP8 only; BF16 leaves it ZYFA_P_ROUNDING_DEFAULT.
    pub p_rounding: zyfa_p_rounding,
    /// The padding after p_rounding, named in zyfa.h so that ZYFA_ATTN_DESC_INIT zeroes it; never read.
    pub reserved0: i32,
    /// Optional device scratch that makes some calls faster: zyfa_attn_workspace_size bytes or more.
    pub workspace: *mut c_void,
    pub workspace_bytes: usize,
}

/// ZYFA_ATTN_DESC_INIT: BF16, BSHD, d = 128, causal, no LSE, default softmax scale.
impl Default for zyfa_attn_desc {
    fn default() -> Self {
        zyfa_attn_desc {
            struct_size: size_of::<zyfa_attn_desc>(),
            dtype: ZYFA_DTYPE_BF16,
            layout: ZYFA_LAYOUT_BSHD,
            batch: 0,
            seqlen: 0,
            nheads: 0,
            nheads_k: 0,
            d_qk: 128,
            d_v: 128,
            q: ptr::null(),
            k: ptr::null(),
            v: ptr::null(),
            out: ptr::null_mut(),
            lse: ptr::null_mut(),
            softmax_scale: 0.0,
            causal: 1,
            q_strides: zyfa_strides::default(),
            k_strides: zyfa_strides::default(),
            v_strides: zyfa_strides::default(),
            out_strides: zyfa_strides::default(),
            q_descale: zyfa_descale::default(),
            k_descale: zyfa_descale::default(),
            v_descale: zyfa_descale::default(),
            p_rounding: ZYFA_P_ROUNDING_DEFAULT,
            reserved0: 0,
            workspace: ptr::null_mut(),
            workspace_bytes: 0,
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct zyfa_quantize_desc {
    pub struct_size: usize,
    pub src: *const c_void,
    pub dst: *mut c_void,
    pub descale: *mut f32,
    pub n_rows: i64,
    pub dim: i64,
    pub row_stride: i64,
    pub rotation: zyfa_rotation,
    pub rotation_seed: u64,
}

/// ZYFA_QUANTIZE_DESC_INIT.
impl Default for zyfa_quantize_desc {
    fn default() -> Self {
        zyfa_quantize_desc {
            struct_size: size_of::<zyfa_quantize_desc>(),
            src: ptr::null(),
            dst: ptr::null_mut(),
            descale: ptr::null_mut(),
            n_rows: 0,
            dim: 0,
            row_stride: 0,
            rotation: ZYFA_ROTATION_NONE,
            rotation_seed: 0,
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct zyfa_plan_cache_stats {
    pub struct_size: usize,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    pub entries: u64,
    pub capacity: u64,
    pub device_bytes: u64,
}

/// ZYFA_PLAN_CACHE_STATS_INIT.
impl Default for zyfa_plan_cache_stats {
    fn default() -> Self {
        zyfa_plan_cache_stats {
            struct_size: size_of::<zyfa_plan_cache_stats>(),
            hits: 0,
            misses: 0,
            evictions: 0,
            entries: 0,
            capacity: 0,
            device_bytes: 0,
        }
    }
}

extern "C" {
    pub fn zyfa_status_string(status: zyfa_status) -> *const c_char;
    pub fn zyfa_last_error() -> *const c_char;
    pub fn zyfa_version() -> c_int;

    pub fn zyfa_attn_fwd(desc: *const zyfa_attn_desc, stream: *mut c_void) -> zyfa_status;
    pub fn zyfa_attn_prepare(desc: *const zyfa_attn_desc, stream: *mut c_void) -> zyfa_status;
    pub fn zyfa_attn_workspace_size(desc: *const zyfa_attn_desc, bytes: *mut usize) -> zyfa_status;
    pub fn zyfa_attn_fwd_host(desc: *const zyfa_attn_desc) -> zyfa_status;

    pub fn zyfa_quantize_fp8(desc: *const zyfa_quantize_desc, stream: *mut c_void) -> zyfa_status;
    pub fn zyfa_quantize_fp8_host(desc: *const zyfa_quantize_desc) -> zyfa_status;

    pub fn zyfa_plan_cache_get_stats(stats: *mut zyfa_plan_cache_stats) -> zyfa_status;
    pub fn zyfa_plan_cache_set_capacity(capacity: u64) -> zyfa_status;
    pub fn zyfa_plan_cache_clear() -> zyfa_status;
}
