//! GPU calls. Device memory is not something Rust can borrow-check, so these take raw pointers and are
//! `unsafe`; each function states what the caller guarantees.
use std::ffi::c_void;

use zyfa_sys as sys;

use crate::attention::Attention;
use crate::error::{check, Result};

/// A `cudaStream_t`; null is the default stream.
pub type Stream = *mut c_void;

/// One FP8 descale for a GPU call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeviceDescale {
    /// A host value, passed by value in the call.
    Value(f32),
    /// float32 in device memory, read by the kernel: one element (both strides 0) or expanded to
    /// (batch, nheads_k) with these strides in elements. Not checked by the library: each value read must
    /// be a positive normal float.
    Device { ptr: *const f32, batch_stride: i64, head_stride: i64 },
}

impl From<DeviceDescale> for sys::zyfa_descale {
    fn from(d: DeviceDescale) -> Self {
        match d {
            DeviceDescale::Value(value) => sys::zyfa_descale { kind: sys::ZYFA_DESCALE_HOST, value, ..Default::default() },
            DeviceDescale::Device { ptr, batch_stride, head_stride } => {
                sys::zyfa_descale { kind: sys::ZYFA_DESCALE_DEVICE, ptr, batch_stride, head_stride, ..Default::default() }
            }
        }
    }
}

/// The input precision of a GPU call: BF16, or FP8 e4m3 with its three descales.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DevicePrecision {
    Bf16,
    Fp8 { q_descale: DeviceDescale, k_descale: DeviceDescale, v_descale: DeviceDescale },
}

/// Device pointers of one call, in the shape's layout. `lse` may be null.
#[derive(Clone, Copy, Debug)]
pub struct DeviceTensors {
    pub q: *const c_void,
    pub k: *const c_void,
    pub v: *const c_void,
    pub out: *mut c_void,
    pub lse: *mut f32,
}

/// Device scratch that makes long FP8 calls faster: at least [`Attention::workspace_size`] bytes of device
/// memory, 256-byte aligned. The call writes V transposed into it first, and its kernel copies that instead of
/// transposing every V block; the output bits are the same as without one.
#[derive(Clone, Copy, Debug)]
pub struct DeviceWorkspace {
    pub ptr: *mut c_void,
    pub bytes: usize,
}

impl DeviceWorkspace {
    /// No workspace: the call transposes V in its kernel.
    pub const NONE: DeviceWorkspace = DeviceWorkspace { ptr: std::ptr::null_mut(), bytes: 0 };
}

// SAFETY: these types hold device addresses as plain values: nothing here dereferences them on the host, and
// every call that hands them to the GPU is `unsafe` with the caller's guarantees (memory live, no races)
// stated there. Moving or sharing the addresses between threads adds no access of its own, so a service may
// keep them in shared state or across an `.await`. (`Stream` is a type alias of a raw pointer; wrap it in
// your own type to send it.)
unsafe impl Send for DeviceDescale {}
unsafe impl Sync for DeviceDescale {}
unsafe impl Send for DevicePrecision {}
unsafe impl Sync for DevicePrecision {}
unsafe impl Send for DeviceTensors {}
unsafe impl Sync for DeviceTensors {}
unsafe impl Send for DeviceWorkspace {}
unsafe impl Sync for DeviceWorkspace {}

impl Attention {
    /// The workspace bytes a GPU call of this shape and precision can use: 0 where none makes it faster
    /// (BF16, FP8 where (nheads / nheads_k) * seqlen is below 4096, split P, exact P at d = 128, q/k/v strides
    /// that TMA cannot map). Touches no device.
    pub fn workspace_size(&self, precision: DevicePrecision) -> Result<usize> {
        let desc = self.precision_descriptor(precision);
        let mut bytes = 0usize;
        // SAFETY: both pointers are to live locals; the library reads the descriptor and writes `bytes`.
        check(unsafe { sys::zyfa_attn_workspace_size(&desc, &mut bytes) })?;
        Ok(bytes)
    }

    /// Launches one causal attention on the current CUDA device, asynchronous on `stream`.
    ///
    /// # Safety
    /// - q, k, v, out (and lse when not null) point to device memory of the current device that spans
    ///   the shape in its layout (BF16 or e4m3 elements for q, k, v; BF16 for out; float32 for lse), and
    ///   stays allocated until the launch completes on `stream`;
    /// - nothing writes q, k, v or a device descale, and nothing reads out or lse, until then;
    /// - out and lse do not overlap each other or any input (the library refuses overlaps it can see);
    /// - `stream` is null or a live `cudaStream_t` of the current device.
    pub unsafe fn forward_device(&self, precision: DevicePrecision, tensors: &DeviceTensors, stream: Stream) -> Result<()> {
        self.forward_device_with_workspace(precision, tensors, DeviceWorkspace::NONE, stream)
    }

    /// [`Attention::forward_device`] with a workspace ([`DeviceWorkspace::NONE`] for none). A workspace
    /// smaller than [`Attention::workspace_size`] is `Status::BadArgument`.
    ///
    /// # Safety
    /// As [`Attention::forward_device`], and: the workspace (when its bytes are above 0) is device memory of
    /// the current device that nothing else reads or writes until the launch completes on `stream`, and
    /// that overlaps no tensor.
    pub unsafe fn forward_device_with_workspace(
        &self,
        precision: DevicePrecision,
        tensors: &DeviceTensors,
        workspace: DeviceWorkspace,
        stream: Stream,
    ) -> Result<()> {
        let desc = sys::zyfa_attn_desc {
            q: tensors.q,
            k: tensors.k,
            v: tensors.v,
            out: tensors.out,
            lse: tensors.lse,
            workspace: workspace.ptr,
            workspace_bytes: workspace.bytes,
            ..self.precision_descriptor(precision)
        };
        check(sys::zyfa_attn_fwd(&desc, stream))
    }

    /// Builds the plan of this shape on the current device, so that a later call can be captured in a
    /// CUDA graph (a capture cannot record the plan's upload).
    ///
    /// # Safety
    /// `stream` is null or a live `cudaStream_t` of the current device.
    pub unsafe fn prepare(&self, precision: DevicePrecision, stream: Stream) -> Result<()> {
        self.prepare_with_workspace_bytes(precision, 0, stream)
    }

    /// [`Attention::prepare`] for calls that will pass a workspace of `workspace_bytes`: the workspace picks
    /// the kernel, so a call to be captured needs its prepare to know it.
    ///
    /// # Safety
    /// `stream` is null or a live `cudaStream_t` of the current device.
    pub unsafe fn prepare_with_workspace_bytes(&self, precision: DevicePrecision, workspace_bytes: usize, stream: Stream) -> Result<()> {
        let desc = sys::zyfa_attn_desc { workspace_bytes, ..self.precision_descriptor(precision) };
        check(sys::zyfa_attn_prepare(&desc, stream))
    }

    fn precision_descriptor(&self, precision: DevicePrecision) -> sys::zyfa_attn_desc {
        match precision {
            DevicePrecision::Bf16 => self.descriptor(sys::ZYFA_DTYPE_BF16),
            DevicePrecision::Fp8 { q_descale, k_descale, v_descale } => sys::zyfa_attn_desc {
                q_descale: q_descale.into(),
                k_descale: k_descale.into(),
                v_descale: v_descale.into(),
                ..self.descriptor(sys::ZYFA_DTYPE_FP8_E4M3)
            },
        }
    }
}
