//! The shape of one attention call, built once and reused for every call of that shape.
use zyfa_sys as sys;

use crate::error::{Error, Result, Status};

/// Strides in elements of a (batch, seqlen, heads, dim) tensor; the dim is always contiguous.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Strides {
    pub batch: i64,
    pub seq: i64,
    pub head: i64,
}

/// How q, k, v and out are laid out in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// (batch, seqlen, heads, dim), contiguous: flash-attn's layout.
    Bshd,
    /// (batch, heads, seqlen, dim), contiguous.
    Bhsd,
    /// Explicit strides per tensor, in elements.
    Strided { q: Strides, k: Strides, v: Strides, out: Strides },
}

/// How FP8 attention rounds the softmax probabilities P to e4m3 before the P·V product
/// (`zyfa_p_rounding`). BF16 calls must leave it [`PRounding::Default`] (else
/// [`crate::Status::Fp8FieldWithBf16`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PRounding {
    /// The library's choice per head dim: lean P at d_qk = 128, exact P at d_qk = 192.
    #[default]
    Default,
    /// One FFMA per score gives the e4m3 code of P (it overestimates 2^x by up to 6% inside a binade):
    /// fewer instructions, about 1.15-1.2x the error of exact P (zyfa.h). At either head dim.
    Lean,
    /// exp2, correctly rounded to e4m3, at either head dim.
    Exact,
    /// Split P at either head dim: P = P_hi + P_lo, P_hi exact P and P_lo the e4m3 of its residual, summed
    /// by a second P V product into the same accumulator (P's rounding error 42x below exact P's; output
    /// error 0.09-0.095x exact P's on the H200 on Gaussian inputs, 0.27-0.70x on outlier and structured
    /// ones, at 0.82-0.93x its speed). On the GPU it needs q, k
    /// and v that TMA can map (16-byte aligned, strides above 0 and below 2^40 bytes) and seqlen <= 2^31 -
    /// 513; otherwise `Status::BadArgument` naming p_rounding and the field.
    Split,
}

impl PRounding {
    /// The C enum value.
    pub(crate) fn code(self) -> sys::zyfa_p_rounding {
        match self {
            PRounding::Default => sys::ZYFA_P_ROUNDING_DEFAULT,
            PRounding::Lean => sys::ZYFA_P_ROUNDING_LEAN,
            PRounding::Exact => sys::ZYFA_P_ROUNDING_EXACT,
            PRounding::Split => sys::ZYFA_P_ROUNDING_SPLIT,
        }
    }
}

/// One causal attention shape: batch, sequence length, heads, head dims, layout, softmax scale and (FP8)
/// P rounding. The library validates it at each call; build it with [`Attention::builder`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attention {
    pub(crate) batch: i64,
    pub(crate) seqlen: i64,
    pub(crate) nheads: i64,
    pub(crate) nheads_k: i64,
    pub(crate) d_qk: i64,
    pub(crate) d_v: i64,
    pub(crate) layout: Layout,
    pub(crate) softmax_scale: f32,
    pub(crate) p_rounding: PRounding,
}

/// Builder of [`Attention`]; defaults follow ZYFA_ATTN_DESC_INIT (d = 128, BSHD, scale 1/sqrt(d_qk)).
#[derive(Clone, Copy, Debug)]
pub struct AttentionBuilder(Attention);

impl Attention {
    pub fn builder() -> AttentionBuilder {
        let init = sys::zyfa_attn_desc::default();
        AttentionBuilder(Attention {
            batch: 0,
            seqlen: 0,
            nheads: 0,
            nheads_k: 0,
            d_qk: init.d_qk,
            d_v: init.d_v,
            layout: Layout::Bshd,
            softmax_scale: init.softmax_scale,
            p_rounding: PRounding::Default,
        })
    }

    pub fn batch(&self) -> i64 {
        self.batch
    }
    pub fn seqlen(&self) -> i64 {
        self.seqlen
    }
    pub fn nheads(&self) -> i64 {
        self.nheads
    }
    pub fn nheads_k(&self) -> i64 {
        self.nheads_k
    }
    pub fn d_qk(&self) -> i64 {
        self.d_qk
    }
    pub fn d_v(&self) -> i64 {
        self.d_v
    }
    pub fn layout(&self) -> Layout {
        self.layout
    }
    pub fn p_rounding(&self) -> PRounding {
        self.p_rounding
    }

    /// The descriptor of this shape with no tensors attached.
    pub(crate) fn descriptor(&self, dtype: sys::zyfa_dtype) -> sys::zyfa_attn_desc {
        let mut desc = sys::zyfa_attn_desc {
            dtype,
            batch: self.batch,
            seqlen: self.seqlen,
            nheads: self.nheads,
            nheads_k: self.nheads_k,
            d_qk: self.d_qk,
            d_v: self.d_v,
            softmax_scale: self.softmax_scale,
            p_rounding: self.p_rounding.code(),
            ..Default::default()
        };
        match self.layout {
            Layout::Bshd => desc.layout = sys::ZYFA_LAYOUT_BSHD,
            Layout::Bhsd => desc.layout = sys::ZYFA_LAYOUT_BHSD,
            Layout::Strided { q, k, v, out } => {
                desc.layout = sys::ZYFA_LAYOUT_STRIDED;
                desc.q_strides = q.into();
                desc.k_strides = k.into();
                desc.v_strides = v.into();
                desc.out_strides = out.into();
            }
        }
        desc
    }

    /// Elements that tensor `which` spans from its first element to its last, or None where the shape
    /// or strides are ones the library refuses anyway (it then reads nothing).
    pub(crate) fn tensor_span(&self, which: Tensor) -> Option<usize> {
        let (heads, dim) = match which {
            Tensor::Q => (self.nheads, self.d_qk),
            Tensor::K => (self.nheads_k, self.d_qk),
            Tensor::V => (self.nheads_k, self.d_v),
            Tensor::Out => (self.nheads, self.d_v),
        };
        if [self.batch, self.seqlen, heads, dim].iter().any(|n| *n < 1) {
            return None;
        }
        let strides = match self.layout {
            // Contiguous layouts span exactly their element count.
            Layout::Bshd | Layout::Bhsd => {
                let n = self.batch.checked_mul(self.seqlen)?.checked_mul(heads)?.checked_mul(dim)?;
                return usize::try_from(n).ok();
            }
            Layout::Strided { q, k, v, out } => match which {
                Tensor::Q => q,
                Tensor::K => k,
                Tensor::V => v,
                Tensor::Out => out,
            },
        };
        let mut span = dim;
        for (count, stride) in [(self.batch, strides.batch), (self.seqlen, strides.seq), (heads, strides.head)] {
            if stride < 0 {
                return None;
            }
            span = span.checked_add((count - 1).checked_mul(stride)?)?;
        }
        usize::try_from(span).ok()
    }

    /// Elements of the (batch, nheads, seqlen) log-sum-exp.
    pub(crate) fn lse_len(&self) -> Option<usize> {
        let n = self.batch.checked_mul(self.nheads)?.checked_mul(self.seqlen)?;
        usize::try_from(n).ok()
    }

    /// Elements of a descale expanded to (batch, nheads_k).
    pub(crate) fn descale_len(&self) -> Option<usize> {
        usize::try_from(self.batch.checked_mul(self.nheads_k)?).ok()
    }
}

impl From<Strides> for sys::zyfa_strides {
    fn from(s: Strides) -> Self {
        sys::zyfa_strides { batch: s.batch, seq: s.seq, head: s.head }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tensor {
    Q,
    K,
    V,
    Out,
}

impl Tensor {
    fn name(self) -> &'static str {
        match self {
            Tensor::Q => "q",
            Tensor::K => "k",
            Tensor::V => "v",
            Tensor::Out => "out",
        }
    }
}

/// Refuses a slice shorter than what the call would read or write: the guarantee that makes the
/// slice-based calls safe. A shape the library refuses anyway passes here and fails there.
pub(crate) fn check_len(name: &str, have: usize, need: Option<usize>) -> Result<()> {
    match need {
        Some(need) if have < need => Err(Error::binding(
            Status::BadArgument,
            format!("{name}: the slice holds {have} elements, the shape needs {need}"),
        )),
        _ => Ok(()),
    }
}

pub(crate) fn check_tensor_len(attn: &Attention, which: Tensor, have: usize) -> Result<()> {
    check_len(which.name(), have, attn.tensor_span(which))
}

impl AttentionBuilder {
    /// Number of sequences and their common length (seqlen_q = seqlen_k).
    pub fn shape(mut self, batch: i64, seqlen: i64) -> Self {
        self.0.batch = batch;
        self.0.seqlen = seqlen;
        self
    }
    /// Query heads and key/value heads (nheads a multiple of nheads_k: MHA, GQA, MQA).
    pub fn heads(mut self, nheads: i64, nheads_k: i64) -> Self {
        self.0.nheads = nheads;
        self.0.nheads_k = nheads_k;
        self
    }
    /// (128, 128), or (192, 128).
    pub fn head_dims(mut self, d_qk: i64, d_v: i64) -> Self {
        self.0.d_qk = d_qk;
        self.0.d_v = d_v;
        self
    }
    pub fn layout(mut self, layout: Layout) -> Self {
        self.0.layout = layout;
        self
    }
    /// 0 means 1/sqrt(d_qk).
    pub fn softmax_scale(mut self, scale: f32) -> Self {
        self.0.softmax_scale = scale;
        self
    }
    /// FP8 only: how P is rounded to e4m3 (default [`PRounding::Default`]). BF16 calls refuse any other
    /// value (checked at the call).
    pub fn p_rounding(mut self, p_rounding: PRounding) -> Self {
        self.0.p_rounding = p_rounding;
        self
    }
    pub fn build(self) -> Attention {
        self.0
    }
}
