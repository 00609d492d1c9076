//! The CPU backend through the safe API against the fp64 oracle, on fresh random inputs each run.
mod common;

use common::*;
use zyfa::convert::e4m3_to_f32;
use zyfa::{HostDescale, HostDescales, Layout};

fn run_bf16(shape: &Shape, rng: &mut Rng, layout: Layout, softmax_scale: f32) {
    let (q, k, v) = (rng.bf16_tensor(shape.q_len(), 1.0), rng.bf16_tensor(shape.k_len(), 1.0), rng.bf16_tensor(shape.v_len(), 1.0));
    let mut out = vec![POISON_BF16; shape.out_len()];
    let mut lse = vec![f32::NAN; shape.lse_len()];
    let attn = zyfa::Attention::builder()
        .shape(shape.batch as i64, shape.seqlen as i64)
        .heads(shape.nheads as i64, shape.nheads_k as i64)
        .head_dims(shape.d_qk as i64, shape.d_v as i64)
        .layout(layout)
        .softmax_scale(softmax_scale)
        .build();
    let bhsd = layout == Layout::Bhsd;
    let arrange = |x: &[u16], heads, dim| if bhsd { transpose_seq_heads(x, shape.batch, shape.seqlen, heads, dim) } else { x.to_vec() };
    attn.forward_host_bf16(
        &arrange(&q, shape.nheads, shape.d_qk),
        &arrange(&k, shape.nheads_k, shape.d_qk),
        &arrange(&v, shape.nheads_k, shape.d_v),
        &mut out,
        Some(&mut lse),
    )
    .expect("BF16 host attention");
    if bhsd {
        out = transpose_seq_heads(&out, shape.batch, shape.nheads, shape.seqlen, shape.d_v);
    }
    let scale = if softmax_scale == 0.0 { 1.0 / (shape.d_qk as f64).sqrt() } else { f64::from(softmax_scale) };
    let want = attention_fp64(shape, &bf16_values(&q), &bf16_values(&k), &bf16_values(&v), scale);
    check_against(shape, &out, &lse, &want, BF16_OUT_TOLERANCE, BF16_LSE_TOLERANCE);
}

#[test]
fn bf16_gqa_with_a_partial_tile_matches_fp64() {
    let shape = Shape { batch: 2, seqlen: 133, nheads: 4, nheads_k: 2, d_qk: 128, d_v: 128 };
    run_bf16(&shape, &mut Rng::fresh("bf16_gqa"), Layout::Bshd, 0.0);
}

#[test]
fn bf16_bhsd_layout_with_explicit_scale_matches_fp64() {
    let shape = Shape { batch: 1, seqlen: 70, nheads: 2, nheads_k: 1, d_qk: 128, d_v: 128 };
    run_bf16(&shape, &mut Rng::fresh("bf16_bhsd"), Layout::Bhsd, 0.2);
}

#[test]
fn bf16_d192_matches_fp64() {
    let shape = Shape { batch: 1, seqlen: 150, nheads: 2, nheads_k: 2, d_qk: 192, d_v: 128 };
    run_bf16(&shape, &mut Rng::fresh("bf16_d192"), Layout::Bshd, 0.0);
}

fn run_fp8(shape: &Shape, rng: &mut Rng, per_kv_head: bool) {
    assert_eq!(shape.nheads, shape.nheads_k, "q's descale is per kv head here, so q has nheads_k heads");
    let q = rng.bf16_tensor(shape.q_len(), 1.0);
    let k = rng.bf16_tensor(shape.k_len(), 1.0);
    let v = rng.bf16_tensor(shape.v_len(), 0.5);
    let ((q8, qs), (k8, ks), (v8, vs)) = (quantize(&q, shape.d_qk), quantize(&k, shape.d_qk), quantize(&v, shape.d_v));
    // Expanded descales: each (batch, kv head) scaled by its own power of two, so a descale read from
    // the wrong place shows in the result.
    let expand = |d: f32| -> Vec<f32> {
        (0..shape.batch * shape.nheads_k).map(|i| if per_kv_head { d * (1 << (i % 3)) as f32 } else { d }).collect()
    };
    let (qd, kd, vd) = (expand(qs), expand(ks), expand(vs));
    let descales = if per_kv_head {
        HostDescales { q: HostDescale::PerKvHead(&qd), k: HostDescale::PerKvHead(&kd), v: HostDescale::PerKvHead(&vd) }
    } else {
        HostDescales { q: HostDescale::Value(qs), k: HostDescale::Value(ks), v: HostDescale::Value(vs) }
    };
    let mut out = vec![POISON_BF16; shape.out_len()];
    let mut lse = vec![f32::NAN; shape.lse_len()];
    shape.attention().forward_host_fp8(&q8, &k8, &v8, &descales, &mut out, Some(&mut lse)).expect("FP8 host attention");
    let want = attention_fp64(
        shape,
        &fp8_values(&q8, shape, shape.nheads_k, shape.d_qk, |b, hk| qd[b * shape.nheads_k + hk]),
        &fp8_values(&k8, shape, shape.nheads_k, shape.d_qk, |b, hk| kd[b * shape.nheads_k + hk]),
        &fp8_values(&v8, shape, shape.nheads_k, shape.d_v, |b, hk| vd[b * shape.nheads_k + hk]),
        1.0 / (shape.d_qk as f64).sqrt(),
    );
    check_against(shape, &out, &lse, &want, FP8_OUT_TOLERANCE, FP8_LSE_TOLERANCE);
}

#[test]
fn fp8_lean_p_matches_fp64() {
    let shape = Shape { batch: 2, seqlen: 140, nheads: 2, nheads_k: 2, d_qk: 128, d_v: 128 };
    run_fp8(&shape, &mut Rng::fresh("fp8_d128"), false);
}

#[test]
fn fp8_exact_p_d192_matches_fp64() {
    let shape = Shape { batch: 1, seqlen: 129, nheads: 2, nheads_k: 2, d_qk: 192, d_v: 128 };
    run_fp8(&shape, &mut Rng::fresh("fp8_d192"), false);
}

#[test]
fn fp8_descales_per_batch_and_kv_head_match_fp64() {
    let shape = Shape { batch: 2, seqlen: 64, nheads: 3, nheads_k: 3, d_qk: 128, d_v: 128 };
    run_fp8(&shape, &mut Rng::fresh("fp8_per_head"), true);
}

#[test]
fn repeated_calls_are_bitwise_identical() {
    let shape = Shape { batch: 1, seqlen: 200, nheads: 2, nheads_k: 1, d_qk: 128, d_v: 128 };
    let mut rng = Rng::fresh("determinism");
    let (q, k, v) = (rng.bf16_tensor(shape.q_len(), 1.0), rng.bf16_tensor(shape.k_len(), 1.0), rng.bf16_tensor(shape.v_len(), 1.0));
    let run = || {
        let mut out = vec![POISON_BF16; shape.out_len()];
        shape.attention().forward_host_bf16(&q, &k, &v, &mut out, None).expect("BF16 host attention");
        out
    };
    let first = run();
    assert!(first.iter().all(|x| *x != POISON_BF16));
    assert_eq!(first, run());
}

#[test]
fn quantize_round_trips_within_one_e4m3_step() {
    let mut rng = Rng::fresh("quantize");
    let (rows, dim) = (16, 128);
    let src = rng.bf16_tensor(rows * dim, 3.0);
    let (codes, descale) = quantize(&src, dim);
    assert!(descale > 0.0 && descale.log2().fract() == 0.0, "descale {descale} is not a power of two");
    let amax = bf16_values(&src).iter().fold(0.0f64, |m, x| m.max(x.abs()));
    // 2^ceil(log2(amax / 448)): the largest value maps into (224, 448].
    assert!(amax / f64::from(descale) <= 448.0 && amax / f64::from(descale) > 224.0);
    for (s, c) in bf16_values(&src).iter().zip(&codes) {
        let back = f64::from(e4m3_to_f32(*c)) * f64::from(descale);
        // e4m3 keeps 3 mantissa bits: a rounding error of at most 1/16 of the value, or half the smallest
        // subnormal step (2^-10 * descale) near zero.
        assert!((back - s).abs() <= s.abs() / 16.0 + f64::from(descale) * 2f64.powi(-10), "{s} -> {back}");
    }
}

/// A contiguous BSHD tensor copied into rows of `row` elements (its seq stride), a gap after each token's
/// heads; the buffer and its strides.
fn padded(x: &[u16], shape: &Shape, heads: usize, dim: usize, row: usize) -> (Vec<u16>, zyfa::Strides) {
    let tokens = shape.batch * shape.seqlen;
    let mut y = vec![0u16; tokens * row];
    for t in 0..tokens {
        y[t * row..][..heads * dim].copy_from_slice(&x[t * heads * dim..][..heads * dim]);
    }
    (y, zyfa::Strides { batch: (shape.seqlen * row) as i64, seq: row as i64, head: dim as i64 })
}

/// The strided layout (padded rows) gives BSHD's bits, and a slice one element short of a strided span is
/// refused before the call.
#[test]
fn bf16_strided_layout_gives_bshd_bits_and_spans_are_checked() {
    let shape = Shape { batch: 2, seqlen: 37, nheads: 4, nheads_k: 2, d_qk: 128, d_v: 128 };
    let rng = &mut Rng::fresh("bf16_strided");
    let (q, k, v) = (rng.bf16_tensor(shape.q_len(), 1.0), rng.bf16_tensor(shape.k_len(), 1.0), rng.bf16_tensor(shape.v_len(), 1.0));
    let mut want = vec![POISON_BF16; shape.out_len()];
    let mut want_lse = vec![f32::NAN; shape.lse_len()];
    shape.attention().forward_host_bf16(&q, &k, &v, &mut want, Some(&mut want_lse)).expect("BSHD");

    const PAD: usize = 8; // 16 bytes: the strides stay 16-byte granular
    let (hq, hk, d) = (shape.nheads, shape.nheads_k, shape.d_qk);
    let (qs, q_strides) = padded(&q, &shape, hq, d, hq * d + PAD);
    let (ks, k_strides) = padded(&k, &shape, hk, d, hk * d + PAD);
    let (vs, v_strides) = padded(&v, &shape, hk, d, hk * d + 2 * PAD);
    let (mut outs, out_strides) = padded(&vec![0u16; shape.out_len()], &shape, hq, d, hq * d + PAD);
    let attn = zyfa::Attention::builder()
        .shape(shape.batch as i64, shape.seqlen as i64)
        .heads(hq as i64, hk as i64)
        .layout(Layout::Strided { q: q_strides, k: k_strides, v: v_strides, out: out_strides })
        .build();
    let mut lse = vec![f32::NAN; shape.lse_len()];
    attn.forward_host_bf16(&qs, &ks, &vs, &mut outs, Some(&mut lse)).expect("strided");
    let row = out_strides.seq as usize;
    let got: Vec<u16> = (0..shape.batch * shape.seqlen).flat_map(|t| outs[t * row..][..hq * d].to_vec()).collect();
    assert_eq!(got, want, "strided output differs from BSHD");
    assert_eq!(lse, want_lse, "strided LSE differs from BSHD");

    // v's span ends at its last element, not at batch * its batch stride.
    let span = (shape.batch - 1) * v_strides.batch as usize + (shape.seqlen - 1) * v_strides.seq as usize + (hk - 1) * d + d;
    let short = attn.forward_host_bf16(&qs, &ks, &vs[..span - 1], &mut outs, None);
    assert!(short.is_err(), "v one element short of its span was accepted");
    attn.forward_host_bf16(&qs, &ks, &vs[..span], &mut outs, None).expect("v exactly its span");
}
