//! One causal attention on the CPU backend in BF16 and in FP8, each checked against the other:
//!   ZYFA_LIB_DIR=<build dir> cargo run --example host_attention
use zyfa::convert::{bf16_from_f32, bf16_to_f32};
use zyfa::{Attention, HostDescale, HostDescales, Quantize};

fn main() -> Result<(), zyfa::Error> {
    let (batch, seqlen, nheads, nheads_k, d) = (1usize, 256usize, 8usize, 2usize, 128usize);
    let attn = Attention::builder().shape(batch as i64, seqlen as i64).heads(nheads as i64, nheads_k as i64).build();

    // Smooth deterministic inputs: a few sines, so the example needs no random number crate.
    let tensor = |heads: usize, phase: f32| -> Vec<u16> {
        (0..batch * seqlen * heads * d).map(|i| bf16_from_f32((i as f32 * 0.37 + phase).sin())).collect()
    };
    let (q, k, v) = (tensor(nheads, 0.0), tensor(nheads_k, 1.0), tensor(nheads_k, 2.0));
    let mut out_bf16 = vec![0u16; q.len()];
    attn.forward_host_bf16(&q, &k, &v, &mut out_bf16, None)?;

    let quantize = |x: &[u16]| -> Result<(Vec<u8>, f32), zyfa::Error> {
        let mut codes = vec![0u8; x.len()];
        let descale = Quantize::new((x.len() / d) as i64, d as i64).host(x, &mut codes)?;
        Ok((codes, descale))
    };
    let ((q8, qs), (k8, ks), (v8, vs)) = (quantize(&q)?, quantize(&k)?, quantize(&v)?);
    let descales = HostDescales { q: HostDescale::Value(qs), k: HostDescale::Value(ks), v: HostDescale::Value(vs) };
    let mut out_fp8 = vec![0u16; q.len()];
    attn.forward_host_fp8(&q8, &k8, &v8, &descales, &mut out_fp8, None)?;

    let (mut diff, mut norm) = (0.0f64, 0.0f64);
    for (a, b) in out_bf16.iter().zip(&out_fp8) {
        let (a, b) = (f64::from(bf16_to_f32(*a)), f64::from(bf16_to_f32(*b)));
        diff += (a - b).powi(2);
        norm += a * a;
    }
    println!("zyfa {} (header {}): out[0..4] = {:?}", zyfa::library_version(), zyfa::HEADER_VERSION,
             out_bf16[..4].iter().map(|x| bf16_to_f32(*x)).collect::<Vec<_>>());
    println!("FP8 against BF16: relative RMS difference {:.2e}", (diff / norm).sqrt());

    // Bad input is a typed error carrying the library's message.
    let bad = Attention::builder().shape(1, 16).heads(3, 2).build();
    let err = bad.forward_host_bf16(&q, &k, &v, &mut out_bf16, None).unwrap_err();
    println!("nheads 3 over nheads_k 2: {:?}: {}", err.status(), err.message());
    Ok(())
}
