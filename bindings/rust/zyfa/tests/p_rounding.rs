//! FP8 P rounding through the builder on the CPU backend: lean and exact P give different outputs at
//! both head dims, and DEFAULT is lean P at d = 128 and exact P at d_qk = 192.
mod common;

use common::*;
use zyfa::convert::e4m3_to_f32;
use zyfa::{Attention, HostDescale, HostDescales, PRounding, Quantize, Status};

/// Small FP8 inputs quantized through the library: (q, k, v) codes and their descales.
fn fp8_inputs(shape: &Shape, rng: &mut Rng) -> ([Vec<u8>; 3], HostDescales<'static>) {
    let mut quantize = |n: usize, dim: usize, scale: f32| {
        let src = rng.bf16_tensor(n, scale);
        let mut codes = vec![0u8; n];
        let descale = Quantize::new((n / dim) as i64, dim as i64).host(&src, &mut codes).expect("host quantize");
        (codes, descale)
    };
    let (q, qs) = quantize(shape.q_len(), shape.d_qk, 1.0);
    let (k, ks) = quantize(shape.k_len(), shape.d_qk, 1.0);
    let (v, vs) = quantize(shape.v_len(), shape.d_v, 0.5);
    let descales = HostDescales { q: HostDescale::Value(qs), k: HostDescale::Value(ks), v: HostDescale::Value(vs) };
    ([q, k, v], descales)
}

/// One FP8 call on the CPU backend with this P rounding; its output.
fn run(shape: &Shape, qkv: &[Vec<u8>; 3], descales: &HostDescales, p_rounding: PRounding) -> zyfa::Result<Vec<u16>> {
    let [q, k, v] = qkv;
    let mut out = vec![POISON_BF16; shape.out_len()];
    shape.attention_rounded(p_rounding).forward_host_fp8(q, k, v, descales, &mut out, None)?;
    assert!(out.iter().all(|x| *x != POISON_BF16), "{p_rounding:?}: unwritten outputs");
    Ok(out)
}

#[test]
fn exact_p_differs_from_default_which_is_lean_at_d128() {
    let shape = Shape { batch: 1, seqlen: 24, nheads: 2, nheads_k: 1, d_qk: 128, d_v: 128 };
    let (qkv, descales) = fp8_inputs(&shape, &mut Rng::fresh("p_rounding_d128"));
    let default = run(&shape, &qkv, &descales, PRounding::Default).expect("DEFAULT");
    let lean = run(&shape, &qkv, &descales, PRounding::Lean).expect("LEAN");
    let exact = run(&shape, &qkv, &descales, PRounding::Exact).expect("EXACT");
    assert_eq!(default, lean, "DEFAULT is lean P at d_qk = 128");
    assert_ne!(default, exact, "exact P gave lean P's output bit for bit");
    assert_eq!(Attention::builder().build().p_rounding(), PRounding::Default);
}

/// Codes times a host descale: the values the call sees.
fn fp8_values(codes: &[u8], descale: &HostDescale) -> Vec<f64> {
    let HostDescale::Value(scale) = descale else { panic!("these tests use one host descale per tensor") };
    codes.iter().map(|c| f64::from(e4m3_to_f32(*c)) * f64::from(*scale)).collect()
}

/// Split P is neither exact nor lean P (a wiring that sent it to either fails), and its error against
/// fp64 is well below exact P's (0.08-0.09x on the CPU backend; asked here: below 0.5x).
#[test]
fn split_p_is_its_own_rounding_and_the_most_accurate() {
    for d_qk in [128, 192] {
        let shape = Shape { batch: 1, seqlen: 128, nheads: 2, nheads_k: 1, d_qk, d_v: 128 };
        let (qkv, descales) = fp8_inputs(&shape, &mut Rng::fresh("p_rounding_split"));
        let split = run(&shape, &qkv, &descales, PRounding::Split).expect("SPLIT");
        let exact = run(&shape, &qkv, &descales, PRounding::Exact).expect("EXACT");
        let lean = run(&shape, &qkv, &descales, PRounding::Lean).expect("LEAN");
        assert_ne!(split, exact, "d_qk {d_qk}: split P gave exact P's output bit for bit");
        assert_ne!(split, lean, "d_qk {d_qk}: split P gave lean P's output bit for bit");
        assert_eq!(split, run(&shape, &qkv, &descales, PRounding::Split).expect("SPLIT"), "deterministic");
        let [q, k, v] = &qkv;
        let want = attention_fp64(&shape, &fp8_values(q, &descales.q), &fp8_values(k, &descales.k),
                                  &fp8_values(v, &descales.v), 1.0 / (d_qk as f64).sqrt());
        let split_error = relative_rms_error(&bf16_values(&split), &want.out);
        let exact_error = relative_rms_error(&bf16_values(&exact), &want.out);
        assert!(split_error < 0.5 * exact_error, "d_qk {d_qk}: split P errs {split_error:.3e}, exact P {exact_error:.3e}");
    }
}

#[test]
fn lean_p_differs_from_default_which_is_exact_at_d192() {
    let shape = Shape { batch: 1, seqlen: 24, nheads: 2, nheads_k: 1, d_qk: 192, d_v: 128 };
    let (qkv, descales) = fp8_inputs(&shape, &mut Rng::fresh("p_rounding_d192"));
    let default = run(&shape, &qkv, &descales, PRounding::Default).expect("DEFAULT");
    let lean = run(&shape, &qkv, &descales, PRounding::Lean).expect("LEAN");
    let exact = run(&shape, &qkv, &descales, PRounding::Exact).expect("EXACT");
    assert_eq!(default, exact, "DEFAULT is exact P at d_qk = 192");
    assert_ne!(default, lean, "lean P gave exact P's output bit for bit");
}

#[test]
fn p_rounding_with_bf16_is_refused() {
    let shape = Shape { batch: 1, seqlen: 16, nheads: 1, nheads_k: 1, d_qk: 128, d_v: 128 };
    let x = Rng::fresh("p_rounding_bf16").bf16_tensor(shape.q_len(), 1.0);
    let mut out = vec![POISON_BF16; shape.out_len()];
    let err = shape.attention_rounded(PRounding::Exact).forward_host_bf16(&x, &x, &x, &mut out, None).unwrap_err();
    assert_eq!(err.status(), Status::Fp8FieldWithBf16);
    assert!(err.message().contains("p_rounding"), "message: {}", err.message());
}
