//! zyfa: FP8 and BF16 causal prefill attention on NVIDIA Hopper, from Rust.
//!
//! Describe a shape once with [`Attention::builder`], then call it on host slices (the CPU backend, which
//! runs the GPU kernels' algorithm) or, `unsafe`, on device pointers. Every failure is an [`Error`] with
//! the library's [`Status`] and its message naming the field at fault.
//!
//! ```no_run
//! use zyfa::{Attention, convert::bf16_from_f32};
//! let attn = Attention::builder().shape(1, 256).heads(8, 2).build();
//! let (q, k, v) = (vec![bf16_from_f32(0.1); 256 * 8 * 128], vec![0u16; 256 * 2 * 128], vec![0u16; 256 * 2 * 128]);
//! let mut out = vec![0u16; 256 * 8 * 128];
//! attn.forward_host_bf16(&q, &k, &v, &mut out, None)?;
//! # Ok::<(), zyfa::Error>(())
//! ```
mod attention;
pub mod convert;
mod device;
mod error;
mod host;
pub mod plan_cache;
mod quantize;

use zyfa_sys as sys;

pub use attention::{Attention, AttentionBuilder, Layout, PRounding, Strides};
pub use device::{DeviceDescale, DevicePrecision, DeviceTensors, DeviceWorkspace, Stream};
pub use error::{Error, Result, Status};
pub use host::{HostDescale, HostDescales};
pub use quantize::{Quantize, Rotation};

/// The ZYFA_VERSION that these bindings were written against.
pub const HEADER_VERSION: i32 = sys::ZYFA_VERSION;

/// ZYFA_VERSION of the loaded libzyfa; differs from [`HEADER_VERSION`] when a mismatched .so is loaded.
pub fn library_version() -> i32 {
    // SAFETY: no arguments, no state.
    unsafe { sys::zyfa_version() }
}
