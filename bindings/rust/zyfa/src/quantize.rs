//! BF16 to FP8 e4m3 with one power-of-two scale per tensor, optionally through the Hadamard rotation of
//! q and k (use one seed for both, and leave v unrotated).
use std::ffi::c_void;

use zyfa_sys as sys;

use crate::attention::check_len;
use crate::device::Stream;
use crate::error::{check, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rotation {
    None,
    /// Random-sign Hadamard (dim 128), or 3-point DCT x 64-point Hadamard (dim 192); `seed` picks the signs.
    Hadamard { seed: u64 },
}

/// A quantization of `n_rows` rows of `dim` BF16 values, rows `row_stride` elements apart (0: dim).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantize {
    pub n_rows: i64,
    pub dim: i64,
    pub row_stride: i64,
    pub rotation: Rotation,
}

impl Quantize {
    /// Contiguous rows, no rotation.
    pub fn new(n_rows: i64, dim: i64) -> Quantize {
        Quantize { n_rows, dim, row_stride: 0, rotation: Rotation::None }
    }

    pub fn rotation(self, rotation: Rotation) -> Quantize {
        Quantize { rotation, ..self }
    }

    /// Quantizes on the CPU, bit-identical to the GPU; returns the descale (dst * descale ~ src).
    pub fn host(&self, src: &[u16], dst: &mut [u8]) -> Result<f32> {
        check_len("src", src.len(), self.src_span())?;
        check_len("dst", dst.len(), self.dst_len())?;
        let mut descale = 0.0f32;
        let desc = self.descriptor(src.as_ptr().cast(), dst.as_mut_ptr().cast(), &mut descale);
        // SAFETY: src and dst are live slices at least as long as the call reads and writes; descale is a local.
        check(unsafe { sys::zyfa_quantize_fp8_host(&desc) })?;
        Ok(descale)
    }

    /// Quantizes on the GPU, asynchronous on `stream`; the descale goes to device memory so that an
    /// attention call reads it without waiting for the host.
    ///
    /// # Safety
    /// src (BF16, the rows), dst (n_rows * dim bytes) and descale (one float32) are device memory of the
    /// current device that stays allocated, and dst and descale unread, until the launch completes;
    /// `stream` is null or a live `cudaStream_t`.
    pub unsafe fn device(&self, src: *const c_void, dst: *mut c_void, descale: *mut f32, stream: Stream) -> Result<()> {
        check(sys::zyfa_quantize_fp8(&self.descriptor(src, dst, descale), stream))
    }

    fn descriptor(&self, src: *const c_void, dst: *mut c_void, descale: *mut f32) -> sys::zyfa_quantize_desc {
        let (rotation, rotation_seed) = match self.rotation {
            Rotation::None => (sys::ZYFA_ROTATION_NONE, 0),
            Rotation::Hadamard { seed } => (sys::ZYFA_ROTATION_HADAMARD, seed),
        };
        sys::zyfa_quantize_desc {
            src,
            dst,
            descale,
            n_rows: self.n_rows,
            dim: self.dim,
            row_stride: self.row_stride,
            rotation,
            rotation_seed,
            ..Default::default()
        }
    }

    /// None where the library refuses the sizes anyway.
    fn src_span(&self) -> Option<usize> {
        let stride = if self.row_stride == 0 { self.dim } else { self.row_stride };
        if self.n_rows < 1 || self.dim < 1 || stride < 0 {
            return None;
        }
        usize::try_from((self.n_rows - 1).checked_mul(stride)?.checked_add(self.dim)?).ok()
    }

    fn dst_len(&self) -> Option<usize> {
        if self.n_rows < 1 || self.dim < 1 {
            return None;
        }
        usize::try_from(self.n_rows.checked_mul(self.dim)?).ok()
    }
}
