//! The GPU path with real numbers: forward_device and Quantize::device on device memory, checked against
//! fp64 and against the host path. Without a GPU each test says so and returns (ZYFA_REQUIRE_DEVICE=1
//! makes that a failure).
mod common;
#[path = "common/cuda.rs"]
mod cuda;

use common::*;
use cuda::{gpu_usable, DeviceBuffer};
use zyfa::{Attention, DeviceDescale, DevicePrecision, DeviceTensors, DeviceWorkspace, PRounding, Quantize, Rotation};

/// out and lse in device memory, poisoned (BF16 NaN, float NaN) so an element the call forgets shows.
fn poisoned_outputs(shape: &Shape) -> (DeviceBuffer<u16>, DeviceBuffer<f32>) {
    (DeviceBuffer::upload(&vec![POISON_BF16; shape.out_len()]), DeviceBuffer::upload(&vec![f32::NAN; shape.lse_len()]))
}

/// q, k and v copied to the device.
fn upload_qkv<T: Copy>(q: &[T], k: &[T], v: &[T]) -> [DeviceBuffer<T>; 3] {
    [DeviceBuffer::upload(q), DeviceBuffer::upload(k), DeviceBuffer::upload(v)]
}

/// One forward_device into poisoned outputs; returns out and lse once the launch is done.
fn run<T: Copy>(shape: &Shape, precision: DevicePrecision, qkv: &[DeviceBuffer<T>; 3], workspace: DeviceWorkspace) -> (Vec<u16>, Vec<f32>) {
    run_with(shape, &shape.attention(), precision, qkv, workspace)
}

/// run() through a given descriptor of the shape (a P rounding, say).
fn run_with<T: Copy>(shape: &Shape, attention: &Attention, precision: DevicePrecision, qkv: &[DeviceBuffer<T>; 3], workspace: DeviceWorkspace) -> (Vec<u16>, Vec<f32>) {
    let (out, lse) = poisoned_outputs(shape);
    let tensors = DeviceTensors { q: qkv[0].as_ptr(), k: qkv[1].as_ptr(), v: qkv[2].as_ptr(), out: out.as_mut_ptr(), lse: lse.as_mut_ptr().cast() };
    // SAFETY: every pointer is device memory of the shape's size, alive until download() waits for the launch.
    unsafe { attention.forward_device_with_workspace(precision, &tensors, workspace, std::ptr::null_mut()) }
        .expect("forward_device");
    (out.download(), lse.download())
}

/// Fresh FP8 q, k, v (d = 128) quantized on the host, each with its descale; v's values span [-v_scale, v_scale).
fn fp8_inputs(shape: &Shape, rng: &mut Rng, v_scale: f32) -> ([Vec<u8>; 3], [f32; 3]) {
    let (q8, qs) = quantize(&rng.bf16_tensor(shape.q_len(), 1.0), 128);
    let (k8, ks) = quantize(&rng.bf16_tensor(shape.k_len(), 1.0), 128);
    let (v8, vs) = quantize(&rng.bf16_tensor(shape.v_len(), v_scale), 128);
    ([q8, k8, v8], [qs, ks, vs])
}

#[test]
fn device_bf16_gqa_with_a_partial_tile_matches_fp64() {
    if !gpu_usable("device_bf16_gqa") {
        return;
    }
    let shape = Shape { batch: 2, seqlen: 197, nheads: 4, nheads_k: 2, d_qk: 192, d_v: 128 };
    let mut rng = Rng::fresh("device_bf16_gqa");
    let (q, k, v) = (rng.bf16_tensor(shape.q_len(), 1.0), rng.bf16_tensor(shape.k_len(), 1.0), rng.bf16_tensor(shape.v_len(), 1.0));
    let (out, lse) = run(&shape, DevicePrecision::Bf16, &upload_qkv(&q, &k, &v), DeviceWorkspace::NONE);
    let want = attention_fp64(&shape, &bf16_values(&q), &bf16_values(&k), &bf16_values(&v), 1.0 / 192f64.sqrt());
    check_against(&shape, &out, &lse, &want, BF16_OUT_TOLERANCE, BF16_LSE_TOLERANCE);
}

/// Each descale form once, with different values per tensor and per (batch, kv head), so a descale read
/// from the wrong tensor or element shows: q's one float in device memory, k's expanded to (batch,
/// nheads_k) in device memory and stored head-major, v's a host value.
#[test]
fn device_fp8_descale_forms_match_fp64() {
    if !gpu_usable("device_fp8_descales") {
        return;
    }
    let shape = Shape { batch: 2, seqlen: 150, nheads: 4, nheads_k: 2, d_qk: 128, d_v: 128 };
    let ([q8, k8, v8], [qs, ks, vs]) = fp8_inputs(&shape, &mut Rng::fresh("device_fp8_descales"), 0.5);
    // No factor of 1, and q's descale 3x its quantizer's: no two descales the kernel could confuse are equal
    // (the quantizer gives q and k the same power of two on these inputs).
    let qs = 3.0 * qs;
    let k_factor = |b: usize, hk: usize| [1.5f32, 2.0, 0.5, 0.75][b * shape.nheads_k + hk];
    let mut k_stored = vec![0f32; shape.batch * shape.nheads_k]; // element hk * batch + b
    for b in 0..shape.batch {
        for hk in 0..shape.nheads_k {
            k_stored[hk * shape.batch + b] = ks * k_factor(b, hk);
        }
    }
    let (q_descale, k_descale) = (DeviceBuffer::upload(&[qs]), DeviceBuffer::upload(&k_stored));
    let precision = DevicePrecision::Fp8 {
        q_descale: DeviceDescale::Device { ptr: q_descale.as_ptr().cast(), batch_stride: 0, head_stride: 0 },
        k_descale: DeviceDescale::Device { ptr: k_descale.as_ptr().cast(), batch_stride: 1, head_stride: shape.batch as i64 },
        v_descale: DeviceDescale::Value(vs),
    };
    let (out, lse) = run(&shape, precision, &upload_qkv(&q8, &k8, &v8), DeviceWorkspace::NONE);
    let want = attention_fp64(
        &shape,
        &fp8_values(&q8, &shape, shape.nheads, 128, |_, _| qs),
        &fp8_values(&k8, &shape, shape.nheads_k, 128, |b, hk| ks * k_factor(b, hk)),
        &fp8_values(&v8, &shape, shape.nheads_k, 128, |_, _| vs),
        1.0 / 128f64.sqrt(),
    );
    check_against(&shape, &out, &lse, &want, FP8_OUT_TOLERANCE, FP8_LSE_TOLERANCE);
}

/// Each float's bits, so that equal NaNs compare equal and -0 differs from 0.
fn f32_bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

/// FP8 with q's, k's and v's descales as host values.
fn host_descales([q, k, v]: [f32; 3]) -> DevicePrecision {
    DevicePrecision::Fp8 { q_descale: DeviceDescale::Value(q), k_descale: DeviceDescale::Value(k), v_descale: DeviceDescale::Value(v) }
}

/// A workspace changes where V^T comes from, not the output: the same bits with and without one.
#[test]
fn device_fp8_workspace_gives_the_same_bits() {
    if !gpu_usable("device_fp8_workspace") {
        return;
    }
    // (nheads / nheads_k) * seqlen keys of 8800: long enough for a workspace.
    let shape = Shape { batch: 1, seqlen: 1100, nheads: 8, nheads_k: 1, d_qk: 128, d_v: 128 };
    let ([q8, k8, v8], [qs, ks, vs]) = fp8_inputs(&shape, &mut Rng::fresh("device_fp8_workspace"), 1.0);
    let precision = host_descales([qs, ks, vs]);
    let bytes = shape.attention().workspace_size(precision).expect("workspace_size");
    assert!(bytes > 0, "this shape should use a workspace");
    let qkv = upload_qkv(&q8, &k8, &v8);
    // The workspace starts as e4m3 NaN codes (0x7f), which no quantized input holds: a kernel that read bytes
    // the call did not write would give NaN outputs, and a call that ignored the workspace would leave it as
    // it was. cuMemAlloc's memory is 256-byte aligned.
    const E4M3_NAN: u8 = 0x7f;
    let scratch = DeviceBuffer::upload(&vec![E4M3_NAN; bytes]);
    let (without, without_lse) = run(&shape, precision, &qkv, DeviceWorkspace::NONE);
    let (with, with_lse) = run(&shape, precision, &qkv, DeviceWorkspace { ptr: scratch.as_mut_ptr(), bytes });
    let overwritten = scratch.download().iter().filter(|b| **b != E4M3_NAN).count();
    let v_t_bytes = shape.seqlen * shape.nheads_k * shape.d_v;
    assert!(overwritten >= v_t_bytes, "the call wrote {overwritten} workspace bytes; V^T alone is {v_t_bytes}");
    assert!(bf16_values(&without).iter().all(|x| x.is_finite()), "unwritten outputs");
    assert!(with == without, "the outputs differ with the workspace");
    assert!(without_lse.iter().all(|x| x.is_finite()) && f32_bits(&with_lse) == f32_bits(&without_lse), "the LSE differs");
}

/// Split P on the GPU, after a prepare: against fp64 it errs under half what exact P errs on the same inputs
/// (a call that ran exact or lean P fails), and a second call gives the same bits.
#[test]
fn device_fp8_split_p_after_prepare_is_the_most_accurate() {
    if !gpu_usable("device_fp8_split") {
        return;
    }
    let shape = Shape { batch: 1, seqlen: 300, nheads: 4, nheads_k: 2, d_qk: 128, d_v: 128 };
    let ([q8, k8, v8], [qs, ks, vs]) = fp8_inputs(&shape, &mut Rng::fresh("device_fp8_split"), 1.0);
    let precision = host_descales([qs, ks, vs]);
    let (split, exact) = (shape.attention_rounded(PRounding::Split), shape.attention_rounded(PRounding::Exact));
    // SAFETY: prepare reads the descriptor and uploads its plan and kernels on the legacy stream.
    unsafe { split.prepare(precision, std::ptr::null_mut()) }.expect("prepare");
    let qkv = upload_qkv(&q8, &k8, &v8);
    let (out, lse) = run_with(&shape, &split, precision, &qkv, DeviceWorkspace::NONE);
    let want = attention_fp64(
        &shape,
        &fp8_values(&q8, &shape, shape.nheads, 128, |_, _| qs),
        &fp8_values(&k8, &shape, shape.nheads_k, 128, |_, _| ks),
        &fp8_values(&v8, &shape, shape.nheads_k, 128, |_, _| vs),
        1.0 / 128f64.sqrt(),
    );
    check_against(&shape, &out, &lse, &want, FP8_OUT_TOLERANCE, FP8_LSE_TOLERANCE);
    let (exact_out, _) = run_with(&shape, &exact, precision, &qkv, DeviceWorkspace::NONE);
    let split_error = relative_rms_error(&bf16_values(&out), &want.out);
    let exact_error = relative_rms_error(&bf16_values(&exact_out), &want.out);
    assert!(split_error < 0.5 * exact_error, "split P errs {split_error:.3e}, exact P {exact_error:.3e}");
    let (again, again_lse) = run_with(&shape, &split, precision, &qkv, DeviceWorkspace::NONE);
    assert!(again == out && f32_bits(&again_lse) == f32_bits(&lse), "a second split P call differs");
}

/// Quantize::device is bit-identical to Quantize::host, with a row stride and with the rotation; its
/// descale lands in device memory.
#[test]
fn device_quantize_matches_host_bits() {
    if !gpu_usable("device_quantize") {
        return;
    }
    let mut rng = Rng::fresh("device_quantize");
    let seed = rng.next_u64();
    for qz in [
        Quantize { row_stride: 160, ..Quantize::new(300, 128) },
        Quantize { row_stride: 200, ..Quantize::new(77, 192) }.rotation(Rotation::Hadamard { seed }),
    ] {
        let src = rng.bf16_tensor(((qz.n_rows - 1) * qz.row_stride + qz.dim) as usize, 3.0);
        let mut want = vec![0u8; (qz.n_rows * qz.dim) as usize];
        let want_descale = qz.host(&src, &mut want).expect("host quantize");
        let (dsrc, dst, descale) = (DeviceBuffer::upload(&src), DeviceBuffer::upload(&vec![0u8; want.len()]), DeviceBuffer::upload(&[f32::NAN]));
        // SAFETY: src spans the strided rows, dst n_rows * dim bytes, descale one float; download() waits.
        unsafe { qz.device(dsrc.as_ptr(), dst.as_mut_ptr(), descale.as_mut_ptr().cast(), std::ptr::null_mut()) }.expect("device quantize");
        assert_eq!(descale.download()[0].to_bits(), want_descale.to_bits(), "{qz:?}: descale");
        assert!(dst.download() == want, "{qz:?}: the codes differ from the host's");
    }
}
