//! The hand-written declarations against the header as a C compiler lays it out: bindings/abi_probe.c
//! prints every size, offset, constant and INIT default, and each line must equal the Rust value.
//! The probe is ZYFA_ABI_PROBE when set (CTest points it at the CMake-built zyfa_abi_probe); otherwise
//! this test compiles it with $CC (default `cc`) against ZYFA_INCLUDE_DIR or the repository's include/.
use std::collections::BTreeMap;
use std::env;
use std::mem::{offset_of, size_of};
use std::path::PathBuf;
use std::process::Command;

use zyfa_sys::*;

fn repository_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..").join(relative)
}

fn compile_probe() -> PathBuf {
    let include = env::var_os("ZYFA_INCLUDE_DIR").map(PathBuf::from).unwrap_or_else(|| repository_path("include"));
    let source = repository_path("bindings/abi_probe.c");
    let binary = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("zyfa_abi_probe");
    let compiler = env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(&compiler)
        .arg("-std=c99")
        .arg("-I")
        .arg(&include)
        .arg(&source)
        .arg("-o")
        .arg(&binary)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{compiler}` (set CC or ZYFA_ABI_PROBE): {e}"));
    assert!(status.success(), "{compiler} failed on {}", source.display());
    binary
}

fn c_layout() -> BTreeMap<String, i64> {
    let probe = env::var_os("ZYFA_ABI_PROBE").map(PathBuf::from).unwrap_or_else(compile_probe);
    let output = Command::new(&probe).output().unwrap_or_else(|e| panic!("cannot run {}: {e}", probe.display()));
    assert!(output.status.success(), "{} failed", probe.display());
    String::from_utf8(output.stdout)
        .expect("probe output is ASCII")
        .lines()
        .map(|line| {
            let (key, value) = line.rsplit_once(' ').expect("probe line: <what> <name> <value>");
            (key.to_string(), value.parse().expect("probe value is an integer"))
        })
        .collect()
}

macro_rules! sizes {
    ($map:ident: $($t:ident),* $(,)?) => {
        $( $map.insert(concat!("sizeof ", stringify!($t)).to_string(), size_of::<$t>() as i64); )*
    };
}
macro_rules! offsets {
    ($map:ident, $t:ident: $($field:ident),* $(,)?) => {
        $( $map.insert(concat!("offsetof ", stringify!($t), ".", stringify!($field)).to_string(),
                       offset_of!($t, $field) as i64); )*
    };
}
macro_rules! constants {
    ($map:ident: $($c:ident),* $(,)?) => {
        $( $map.insert(concat!("const ", stringify!($c)).to_string(), $c as i64); )*
    };
}

fn rust_layout() -> BTreeMap<String, i64> {
    let mut m = BTreeMap::new();
    sizes!(m: zyfa_status, zyfa_strides, zyfa_descale, zyfa_attn_desc, zyfa_quantize_desc, zyfa_plan_cache_stats);
    offsets!(m, zyfa_strides: batch, seq, head);
    offsets!(m, zyfa_descale: kind, value, ptr, batch_stride, head_stride);
    offsets!(m, zyfa_attn_desc: struct_size, dtype, layout, batch, seqlen, nheads, nheads_k, d_qk, d_v, q, k, v,
             out, lse, softmax_scale, causal, q_strides, k_strides, v_strides, out_strides, q_descale, k_descale,
             v_descale, p_rounding, reserved0, workspace, workspace_bytes);
    offsets!(m, zyfa_quantize_desc: struct_size, src, dst, descale, n_rows, dim, row_stride, rotation, rotation_seed);
    offsets!(m, zyfa_plan_cache_stats: struct_size, hits, misses, evictions, entries, capacity, device_bytes);
    constants!(m: ZYFA_VERSION, ZYFA_STATUS_SUCCESS, ZYFA_STATUS_NULL_ARGUMENT, ZYFA_STATUS_BAD_STRUCT_SIZE,
        ZYFA_STATUS_BAD_DTYPE, ZYFA_STATUS_BAD_LAYOUT, ZYFA_STATUS_UNSUPPORTED_HEAD_DIM, ZYFA_STATUS_BAD_SHAPE,
        ZYFA_STATUS_BAD_HEAD_RATIO, ZYFA_STATUS_BAD_STRIDE, ZYFA_STATUS_MISALIGNED, ZYFA_STATUS_NULL_TENSOR,
        ZYFA_STATUS_ALIASED_OUTPUT, ZYFA_STATUS_BAD_DESCALE, ZYFA_STATUS_FP8_FIELD_WITH_BF16, ZYFA_STATUS_NOT_CAUSAL,
        ZYFA_STATUS_SIZE_OVERFLOW, ZYFA_STATUS_BAD_SOFTMAX_SCALE, ZYFA_STATUS_NO_DEVICE,
        ZYFA_STATUS_UNSUPPORTED_DEVICE, ZYFA_STATUS_CUDA_ERROR, ZYFA_STATUS_OUT_OF_MEMORY, ZYFA_STATUS_NOT_PREPARED,
        ZYFA_STATUS_BAD_ARGUMENT, ZYFA_STATUS_INTERNAL, ZYFA_DTYPE_BF16, ZYFA_DTYPE_FP8_E4M3, ZYFA_LAYOUT_BSHD,
        ZYFA_LAYOUT_BHSD, ZYFA_LAYOUT_STRIDED, ZYFA_DESCALE_NONE, ZYFA_DESCALE_HOST, ZYFA_DESCALE_DEVICE,
        ZYFA_ROTATION_NONE, ZYFA_ROTATION_HADAMARD, ZYFA_P_ROUNDING_DEFAULT, ZYFA_P_ROUNDING_LEAN,
        ZYFA_P_ROUNDING_EXACT, ZYFA_P_ROUNDING_SPLIT);
    let attn = zyfa_attn_desc::default();
    let quantize = zyfa_quantize_desc::default();
    let stats = zyfa_plan_cache_stats::default();
    for (key, value) in [
        ("zyfa_attn_desc.struct_size", attn.struct_size as i64),
        ("zyfa_attn_desc.dtype", attn.dtype as i64),
        ("zyfa_attn_desc.layout", attn.layout as i64),
        ("zyfa_attn_desc.d_qk", attn.d_qk),
        ("zyfa_attn_desc.d_v", attn.d_v),
        ("zyfa_attn_desc.causal", attn.causal as i64),
        ("zyfa_attn_desc.q_descale.kind", attn.q_descale.kind as i64),
        ("zyfa_attn_desc.p_rounding", attn.p_rounding as i64),
        ("zyfa_attn_desc.reserved0", attn.reserved0 as i64),
        ("zyfa_attn_desc.workspace_bytes", attn.workspace_bytes as i64),
        ("zyfa_quantize_desc.struct_size", quantize.struct_size as i64),
        ("zyfa_quantize_desc.rotation", quantize.rotation as i64),
        ("zyfa_plan_cache_stats.struct_size", stats.struct_size as i64),
    ] {
        m.insert(format!("init {key}"), value);
    }
    m
}

#[test]
fn declarations_match_the_c_header() {
    let c = c_layout();
    let rust = rust_layout();
    let mismatches: Vec<String> = c
        .keys()
        .chain(rust.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|key| c.get(*key) != rust.get(*key))
        .map(|key| format!("{key}: C {:?}, Rust {:?}", c.get(key), rust.get(key)))
        .collect();
    assert!(!c.is_empty(), "the probe printed nothing");
    assert!(mismatches.is_empty(), "ABI mismatches:\n{}", mismatches.join("\n"));
}
