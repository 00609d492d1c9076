//! Bad input comes back as a typed error carrying the library's message, never as a crash.
mod common;

use common::*;
use zyfa::{Attention, HostDescale, HostDescales, Status};

fn buffers(shape: &Shape) -> (Vec<u16>, Vec<u16>, Vec<u16>, Vec<u16>) {
    let mut rng = Rng::fresh("errors");
    (rng.bf16_tensor(shape.q_len(), 1.0), rng.bf16_tensor(shape.k_len(), 1.0), rng.bf16_tensor(shape.v_len(), 1.0), vec![POISON_BF16; shape.out_len()])
}

const SHAPE: Shape = Shape { batch: 1, seqlen: 16, nheads: 2, nheads_k: 1, d_qk: 128, d_v: 128 };

#[test]
fn unsupported_head_dim_names_the_field_and_value() {
    let shape = Shape { d_qk: 64, d_v: 64, ..SHAPE };
    let (q, k, v, mut out) = buffers(&shape);
    let err = shape.attention().forward_host_bf16(&q, &k, &v, &mut out, None).unwrap_err();
    assert_eq!(err.status(), Status::UnsupportedHeadDim);
    assert!(err.message().contains("d_qk") && err.message().contains("64"), "message: {}", err.message());
    // Display carries the message and the status description.
    let shown = err.to_string();
    assert!(shown.contains(err.message()) && shown.contains("ZYFA_STATUS_UNSUPPORTED_HEAD_DIM"), "{shown}");
    assert!(out.iter().all(|x| *x == POISON_BF16), "a refused call wrote its output");
}

#[test]
fn head_ratio_and_shape_errors_are_typed() {
    let bad_ratio = Shape { nheads: 3, nheads_k: 2, ..SHAPE };
    let (q, k, v, mut out) = buffers(&bad_ratio);
    let err = bad_ratio.attention().forward_host_bf16(&q, &k, &v, &mut out, None).unwrap_err();
    assert_eq!(err.status(), Status::BadHeadRatio);
    assert!(err.message().contains("nheads"), "message: {}", err.message());

    let empty = Attention::builder().shape(0, 16).heads(2, 1).build();
    let err = empty.forward_host_bf16(&[], &[], &[], &mut [], None).unwrap_err();
    assert_eq!(err.status(), Status::BadShape);
    assert!(err.message().contains("batch"), "message: {}", err.message());
}

#[test]
fn a_short_slice_is_refused_before_the_call() {
    let (q, k, v, mut out) = buffers(&SHAPE);
    let err = SHAPE.attention().forward_host_bf16(&q[..q.len() - 1], &k, &v, &mut out, None).unwrap_err();
    assert_eq!(err.status(), Status::BadArgument);
    assert!(err.message().starts_with("q:"), "message: {}", err.message());
    let mut lse = vec![0.0f32; SHAPE.lse_len() - 1];
    let err = SHAPE.attention().forward_host_bf16(&q, &k, &v, &mut out, Some(&mut lse)).unwrap_err();
    assert!(err.message().starts_with("lse:"), "message: {}", err.message());
}

#[test]
fn a_misaligned_tensor_is_refused_by_the_library() {
    let (q, k, v, mut out) = buffers(&Shape { seqlen: SHAPE.seqlen + 1, ..SHAPE });
    // One element in: 2 bytes off the 16-byte alignment the library requires.
    let err = SHAPE.attention().forward_host_bf16(&q[1..], &k, &v, &mut out, None).unwrap_err();
    assert_eq!(err.status(), Status::Misaligned);
    assert!(err.message().contains('q'), "message: {}", err.message());
}

#[test]
fn fp8_descale_must_be_positive() {
    let (q8, k8, v8) = (vec![0x38u8; SHAPE.q_len()], vec![0x38u8; SHAPE.k_len()], vec![0x38u8; SHAPE.v_len()]);
    let mut out = vec![POISON_BF16; SHAPE.out_len()];
    let descales = HostDescales { q: HostDescale::Value(1.0), k: HostDescale::Value(-2.0), v: HostDescale::Value(1.0) };
    let err = SHAPE.attention().forward_host_fp8(&q8, &k8, &v8, &descales, &mut out, None).unwrap_err();
    assert_eq!(err.status(), Status::BadDescale);
    assert!(err.message().contains("k_descale"), "message: {}", err.message());
}

#[test]
fn status_codes_round_trip() {
    for code in 1..=23 {
        let status = Status::from_code(code);
        assert_ne!(status, Status::Unknown(code), "code {code} has no Status");
        assert_eq!(status.code(), code);
        assert!(status.description().starts_with("ZYFA_STATUS_"), "{}", status.description());
    }
    assert_eq!(Status::from_code(999), Status::Unknown(999));
}

#[test]
fn the_loaded_library_matches_the_header() {
    assert_eq!(zyfa::library_version(), zyfa::HEADER_VERSION);
}
