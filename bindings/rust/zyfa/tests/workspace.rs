//! The workspace of GPU calls, on any machine: the bytes each precision gets, and a workspace that is too
//! small refused with a typed error before any device is touched (validation comes first).
use std::ffi::c_void;

use zyfa::{Attention, DeviceDescale, DevicePrecision, DeviceTensors, DeviceWorkspace, Status};

const SEQLEN: i64 = 8192;
const NHEADS: i64 = 4;
const NHEADS_K: i64 = 2;
const D: i64 = 128;

fn attention() -> Attention {
    Attention::builder().shape(1, SEQLEN).heads(NHEADS, NHEADS_K).head_dims(D, D).build()
}

fn fp8() -> DevicePrecision {
    let one = DeviceDescale::Value(1.0);
    DevicePrecision::Fp8 { q_descale: one, k_descale: one, v_descale: one }
}

#[test]
fn fp8_gets_v_transposed_bf16_gets_none() {
    // One V^T per kv head: 128 rows of the keys rounded up to whole 128-key blocks.
    assert_eq!(attention().workspace_size(fp8()).expect("workspace_size"), (NHEADS_K * D * SEQLEN) as usize);
    assert_eq!(attention().workspace_size(DevicePrecision::Bf16).expect("workspace_size"), 0);
}

#[test]
fn a_workspace_below_the_size_is_a_typed_error_naming_workspace_bytes() {
    let attn = attention();
    let needed = attn.workspace_size(fp8()).expect("workspace_size");
    // Host buffers stand in for device memory: validation refuses the call before it reaches a device.
    let q = vec![0u8; (SEQLEN * NHEADS * D) as usize];
    let kv = vec![0u8; (SEQLEN * NHEADS_K * D) as usize];
    let v = kv.clone();
    let mut out = vec![0u16; (SEQLEN * NHEADS * D) as usize];
    let mut scratch = vec![0u8; needed + 256];
    let aligned = scratch.as_mut_ptr().wrapping_add(scratch.as_ptr().align_offset(256));
    let tensors = DeviceTensors {
        q: q.as_ptr() as *const c_void,
        k: kv.as_ptr() as *const c_void,
        v: v.as_ptr() as *const c_void,
        out: out.as_mut_ptr() as *mut c_void,
        lse: std::ptr::null_mut(),
    };
    let workspace = DeviceWorkspace { ptr: aligned as *mut c_void, bytes: needed - 1 };
    // SAFETY: the call is refused by validation, which reads the descriptor only.
    let err = unsafe { attn.forward_device_with_workspace(fp8(), &tensors, workspace, std::ptr::null_mut()) }
        .expect_err("a workspace one byte short must be refused");
    assert_eq!(err.status(), Status::BadArgument, "{err}");
    assert!(err.message().contains("workspace_bytes"), "{err}");
    assert!(out.iter().all(|x| *x == 0), "nothing is written");
}

/// A service keeps the device types in shared state and across `.await`s: they must be Send and Sync.
#[test]
fn device_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<DeviceDescale>();
    send_sync::<DevicePrecision>();
    send_sync::<DeviceTensors>();
    send_sync::<DeviceWorkspace>();
}
