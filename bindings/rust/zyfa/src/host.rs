//! The CPU backend over slices: the GPU kernels' algorithm and numerics on host memory, synchronous.
//! BF16 values are carried as their u16 bit patterns, FP8 e4m3 values as their u8 codes.
use std::ffi::c_void;
use std::ptr;

use zyfa_sys as sys;

use crate::attention::{check_len, check_tensor_len, Attention, Tensor};
use crate::device::DeviceDescale;
use crate::error::{check, Result};

/// One FP8 descale on the host: the factor that maps the tensor's codes back to its range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HostDescale<'a> {
    /// One value for the whole tensor.
    Value(f32),
    /// One value per (batch, kv head), contiguous with shape (batch, nheads_k): flash-attn 3's form.
    PerKvHead(&'a [f32]),
}

/// The three descales of an FP8 call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostDescales<'a> {
    pub q: HostDescale<'a>,
    pub k: HostDescale<'a>,
    pub v: HostDescale<'a>,
}

impl Attention {
    /// BF16 attention on the CPU. `out` receives (.., d_v) BF16 values in this shape's layout, `lse`
    /// (optional) the (batch, nheads, seqlen) natural-log log-sum-exp. Tensors must be 16-byte aligned
    /// (else [`crate::Status::Misaligned`]).
    pub fn forward_host_bf16(
        &self,
        q: &[u16],
        k: &[u16],
        v: &[u16],
        out: &mut [u16],
        lse: Option<&mut [f32]>,
    ) -> Result<()> {
        self.check_host_lengths(q.len(), k.len(), v.len(), out.len(), lse.as_deref())?;
        let desc = self.host_descriptor(sys::ZYFA_DTYPE_BF16, [q.as_ptr().cast(), k.as_ptr().cast(), v.as_ptr().cast()], out, lse);
        // SAFETY: every pointer comes from a live slice at least as long as the call reads or writes
        // (checked above); `out` and `lse` are exclusive borrows, so nothing aliases them.
        check(unsafe { sys::zyfa_attn_fwd_host(&desc) })
    }

    /// FP8 e4m3 attention on the CPU, with one descale per tensor; BF16 output as in
    /// [`Attention::forward_host_bf16`].
    pub fn forward_host_fp8(
        &self,
        q: &[u8],
        k: &[u8],
        v: &[u8],
        descales: &HostDescales<'_>,
        out: &mut [u16],
        lse: Option<&mut [f32]>,
    ) -> Result<()> {
        self.check_host_lengths(q.len(), k.len(), v.len(), out.len(), lse.as_deref())?;
        let mut desc =
            self.host_descriptor(sys::ZYFA_DTYPE_FP8_E4M3, [q.as_ptr().cast(), k.as_ptr().cast(), v.as_ptr().cast()], out, lse);
        desc.q_descale = self.host_descale("q_descale", descales.q)?;
        desc.k_descale = self.host_descale("k_descale", descales.k)?;
        desc.v_descale = self.host_descale("v_descale", descales.v)?;
        // SAFETY: as in forward_host_bf16; per-head descales were checked to hold (batch, nheads_k).
        check(unsafe { sys::zyfa_attn_fwd_host(&desc) })
    }

    fn check_host_lengths(&self, q: usize, k: usize, v: usize, out: usize, lse: Option<&[f32]>) -> Result<()> {
        check_tensor_len(self, Tensor::Q, q)?;
        check_tensor_len(self, Tensor::K, k)?;
        check_tensor_len(self, Tensor::V, v)?;
        check_tensor_len(self, Tensor::Out, out)?;
        match lse {
            Some(lse) => check_len("lse", lse.len(), self.lse_len()),
            None => Ok(()),
        }
    }

    fn host_descriptor(
        &self,
        dtype: sys::zyfa_dtype,
        [q, k, v]: [*const c_void; 3],
        out: &mut [u16],
        lse: Option<&mut [f32]>,
    ) -> sys::zyfa_attn_desc {
        sys::zyfa_attn_desc {
            q,
            k,
            v,
            out: out.as_mut_ptr().cast(),
            lse: lse.map_or(ptr::null_mut(), |l| l.as_mut_ptr()),
            ..self.descriptor(dtype)
        }
    }

    fn host_descale(&self, name: &str, descale: HostDescale<'_>) -> Result<sys::zyfa_descale> {
        // The host backend reads a "device" descale from host memory: the same descriptor form.
        let descale = match descale {
            HostDescale::Value(value) => DeviceDescale::Value(value),
            HostDescale::PerKvHead(values) => {
                check_len(name, values.len(), self.descale_len())?;
                DeviceDescale::Device { ptr: values.as_ptr(), batch_stride: self.nheads_k, head_stride: 1 }
            }
        };
        Ok(descale.into())
    }
}
