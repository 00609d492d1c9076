//! Shared by the integration tests: a seeded generator, the fp64 oracle, error norms and poisoning.
#![allow(dead_code)]
use std::time::{SystemTime, UNIX_EPOCH};

use zyfa::convert::{bf16_from_f32, bf16_to_f32, e4m3_to_f32};
use zyfa::Quantize;

// Bounds on the relative RMS error of out and the largest LSE error (nats) against fp64, about 2.5x what
// these inputs measured on 2026-11-29: BF16 rounds P and out to 8 mantissa bits (out 1.9e-3, LSE 1.7e-3);
// FP8 rounds P to 3 bits, with lean P at d = 128 (out 2.7e-2, LSE 6.5e-2; lean P's codes overestimate
// 2^x by up to 6% inside a binade and underflow below 2^-7 of the block max). A wrong scale, mask,
// layout or descale gives errors of order 1.
pub const BF16_OUT_TOLERANCE: f64 = 5e-3;
pub const BF16_LSE_TOLERANCE: f64 = 5e-3;
pub const FP8_OUT_TOLERANCE: f64 = 7e-2;
pub const FP8_LSE_TOLERANCE: f64 = 0.16;

/// The BF16 NaN written into outputs before a call, so an element the call forgets to write is caught.
pub const POISON_BF16: u16 = 0x7fc0;

/// splitmix64: enough randomness for test inputs without a crates.io dependency.
pub struct Rng(u64);

impl Rng {
    /// Fresh inputs every run; the seed is printed so a failure can be replayed with ZYFA_TEST_SEED.
    pub fn fresh(test: &str) -> Rng {
        let seed = std::env::var("ZYFA_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_nanos() as u64
        });
        eprintln!("{test}: ZYFA_TEST_SEED={seed}");
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    pub fn uniform(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    /// `n` BF16 values uniform in [-scale, scale).
    pub fn bf16_tensor(&mut self, n: usize, scale: f32) -> Vec<u16> {
        (0..n).map(|_| bf16_from_f32(self.uniform() * scale)).collect()
    }
}

/// A (batch, seqlen, heads, dim) shape for the oracle, in BSHD order.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub batch: usize,
    pub seqlen: usize,
    pub nheads: usize,
    pub nheads_k: usize,
    pub d_qk: usize,
    pub d_v: usize,
}

impl Shape {
    pub fn attention(&self) -> zyfa::Attention {
        self.attention_rounded(zyfa::PRounding::Default)
    }
    /// The shape's descriptor with an FP8 P rounding.
    pub fn attention_rounded(&self, p_rounding: zyfa::PRounding) -> zyfa::Attention {
        zyfa::Attention::builder()
            .shape(self.batch as i64, self.seqlen as i64)
            .heads(self.nheads as i64, self.nheads_k as i64)
            .head_dims(self.d_qk as i64, self.d_v as i64)
            .p_rounding(p_rounding)
            .build()
    }
    pub fn q_len(&self) -> usize {
        self.batch * self.seqlen * self.nheads * self.d_qk
    }
    pub fn k_len(&self) -> usize {
        self.batch * self.seqlen * self.nheads_k * self.d_qk
    }
    pub fn v_len(&self) -> usize {
        self.batch * self.seqlen * self.nheads_k * self.d_v
    }
    pub fn out_len(&self) -> usize {
        self.batch * self.seqlen * self.nheads * self.d_v
    }
    pub fn lse_len(&self) -> usize {
        self.batch * self.nheads * self.seqlen
    }
}

pub struct Reference {
    pub out: Vec<f64>, // BSHD
    pub lse: Vec<f64>, // (batch, nheads, seqlen)
}

/// Exact causal attention in fp64 of inputs already decoded to their values (BSHD, contiguous).
pub fn attention_fp64(shape: &Shape, q: &[f64], k: &[f64], v: &[f64], softmax_scale: f64) -> Reference {
    let Shape { batch, seqlen, nheads, nheads_k, d_qk, d_v } = *shape;
    let group = nheads / nheads_k;
    let mut out = vec![0.0; shape.out_len()];
    let mut lse = vec![0.0; shape.lse_len()];
    let mut scores = vec![0.0f64; seqlen];
    for b in 0..batch {
        for h in 0..nheads {
            let hk = h / group;
            for i in 0..seqlen {
                let qi = &q[((b * seqlen + i) * nheads + h) * d_qk..][..d_qk];
                for (j, score) in scores.iter_mut().enumerate().take(i + 1) {
                    let kj = &k[((b * seqlen + j) * nheads_k + hk) * d_qk..][..d_qk];
                    *score = softmax_scale * qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>();
                }
                let max = scores[..=i].iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let weights: Vec<f64> = scores[..=i].iter().map(|s| (s - max).exp()).collect();
                let sum: f64 = weights.iter().sum();
                lse[(b * nheads + h) * seqlen + i] = max + sum.ln();
                let oi = &mut out[((b * seqlen + i) * nheads + h) * d_v..][..d_v];
                for (j, w) in weights.iter().enumerate() {
                    let vj = &v[((b * seqlen + j) * nheads_k + hk) * d_v..][..d_v];
                    for (o, x) in oi.iter_mut().zip(vj) {
                        *o += w / sum * x;
                    }
                }
            }
        }
    }
    Reference { out, lse }
}

pub fn bf16_values(bits: &[u16]) -> Vec<f64> {
    bits.iter().map(|b| f64::from(bf16_to_f32(*b))).collect()
}

/// ||got - want|| / ||want||; panics on a non-finite element (an unwritten, poisoned output).
pub fn relative_rms_error(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    assert!(got.iter().all(|x| x.is_finite()), "the output has non-finite (unwritten) elements");
    let err: f64 = got.iter().zip(want).map(|(g, w)| (g - w).powi(2)).sum();
    let norm: f64 = want.iter().map(|w| w * w).sum();
    (err / norm).sqrt()
}

pub fn max_abs_error(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    assert!(got.iter().all(|x| x.is_finite()), "non-finite elements");
    got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max)
}

/// BSHD to BHSD (or, with the counts swapped, back).
pub fn transpose_seq_heads<T: Copy>(x: &[T], batch: usize, first: usize, second: usize, dim: usize) -> Vec<T> {
    let mut y = Vec::with_capacity(x.len());
    for b in 0..batch {
        for s in 0..second {
            for f in 0..first {
                y.extend_from_slice(&x[((b * first + f) * second + s) * dim..][..dim]);
            }
        }
    }
    y
}

/// Fails the test unless out and lse are within the bounds of fp64's, and prints both errors.
pub fn check_against(shape: &Shape, out: &[u16], lse: &[f32], want: &Reference, out_tolerance: f64, lse_tolerance: f64) {
    let out_error = relative_rms_error(&bf16_values(out), &want.out);
    let lse_error = max_abs_error(&lse.iter().map(|x| f64::from(*x)).collect::<Vec<_>>(), &want.lse);
    eprintln!("{shape:?}: relative RMS error of out {out_error:.3e}, max LSE error {lse_error:.3e}");
    assert!(out_error < out_tolerance, "out error {out_error:.3e} >= {out_tolerance:.1e}");
    assert!(lse_error < lse_tolerance, "LSE error {lse_error:.3e} >= {lse_tolerance:.1e}");
}

/// Contiguous rows of `dim` quantized through the library's host path: the codes and their descale.
pub fn quantize(src: &[u16], dim: usize) -> (Vec<u8>, f32) {
    let mut codes = vec![0u8; src.len()];
    let descale = Quantize::new((src.len() / dim) as i64, dim as i64).host(src, &mut codes).expect("host quantize");
    (codes, descale)
}

/// The e4m3 codes of a BSHD tensor with `heads` heads decoded with descale(b, h): the exact inputs a call sees.
pub fn fp8_values(codes: &[u8], shape: &Shape, heads: usize, dim: usize, descale: impl Fn(usize, usize) -> f32) -> Vec<f64> {
    codes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let row = i / dim; // (b * seqlen + s) * heads + h
            f64::from(e4m3_to_f32(*c)) * f64::from(descale(row / (shape.seqlen * heads), row % heads))
        })
        .collect()
}
