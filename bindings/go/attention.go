package zyfa

// #include "cgo_helpers.h"
import "C"

// Layout says how q, k, v and out are laid out in memory.
type Layout int

const (
	// BSHD is (batch, seqlen, heads, dim), contiguous: flash-attn's layout.
	BSHD Layout = C.ZYFA_LAYOUT_BSHD
	// BHSD is (batch, heads, seqlen, dim), contiguous.
	BHSD Layout = C.ZYFA_LAYOUT_BHSD
	// Strided uses Attention.Strides, in elements.
	Strided Layout = C.ZYFA_LAYOUT_STRIDED
)

// Strides of one (batch, seqlen, heads, dim) tensor in elements; the dim is always contiguous.
type Strides struct {
	Batch, Seq, Head int64
}

// TensorStrides holds the strides of each tensor for the Strided layout.
type TensorStrides struct {
	Q, K, V, Out Strides
}

// PRounding says how FP8 attention rounds the softmax probabilities P to e4m3 (zyfa_p_rounding).
type PRounding int

const (
	// PRoundingDefault is the library's choice per head dim: lean P at DQK = 128, exact P at DQK = 192.
	PRoundingDefault PRounding = C.ZYFA_P_ROUNDING_DEFAULT
	// PRoundingLean takes P's e4m3 code from one FFMA per score (it overestimates 2^x by up to 6% inside a
	// binade): fewer instructions, 1.15-1.2x the error of exact P on std-1 Gaussians (CPU backend). At either head dim.
	PRoundingLean PRounding = C.ZYFA_P_ROUNDING_LEAN
	// PRoundingExact computes exp2 and rounds it correctly to e4m3, at either head dim.
	PRoundingExact PRounding = C.ZYFA_P_ROUNDING_EXACT
	// PRoundingSplit, at either head dim, rounds P to P_hi + P_lo: P_hi is exact P and P_lo the e4m3 of its
	// residual, summed by a second P V product into the same accumulator. P's rounding error falls about 42x
	// below exact P's, for the cost of that second product (output error 0.09-0.095x exact P's on the H200
	// on Gaussian inputs, 0.27-0.70x on outlier and structured ones, at 0.82-0.93x its speed). On the GPU
	// it needs q, k and v that TMA can map (16-byte aligned, strides above 0 and below 2^40 bytes) and
	// Seqlen <= 2^31 - 513; otherwise ErrBadArgument naming p_rounding and the field.
	PRoundingSplit PRounding = C.ZYFA_P_ROUNDING_SPLIT
)

// Attention is one causal attention shape. The library validates it at each call. SoftmaxScale 0 means
// 1/sqrt(DQK); a DQK or DV of 0 means 128 (ZYFA_ATTN_DESC_INIT's default), each on its own. PRounding
// applies to FP8 calls; BF16 calls must leave it PRoundingDefault (else ErrFP8FieldWithBF16).
type Attention struct {
	Batch, Seqlen   int64
	NHeads, NHeadsK int64
	DQK, DV         int64
	Layout          Layout
	Strides         TensorStrides
	SoftmaxScale    float32
	PRounding       PRounding
}

type tensor int

const (
	tensorQ tensor = iota
	tensorK
	tensorV
	tensorOut
)

var tensorNames = [...]string{"q", "k", "v", "out"}

// descriptor is this shape with no tensors attached.
func (a *Attention) descriptor(dtype C.zyfa_dtype) C.zyfa_attn_desc {
	desc := C.zyfa_go_attn_desc_init()
	desc.dtype = dtype
	desc.layout = C.zyfa_layout(a.Layout)
	desc.batch = C.int64_t(a.Batch)
	desc.seqlen = C.int64_t(a.Seqlen)
	desc.nheads = C.int64_t(a.NHeads)
	desc.nheads_k = C.int64_t(a.NHeadsK)
	dqk, dv := a.dims()
	desc.d_qk = C.int64_t(dqk)
	desc.d_v = C.int64_t(dv)
	desc.softmax_scale = C.float(a.SoftmaxScale)
	desc.p_rounding = C.zyfa_p_rounding(a.PRounding)
	if a.Layout == Strided {
		desc.q_strides = cStrides(a.Strides.Q)
		desc.k_strides = cStrides(a.Strides.K)
		desc.v_strides = cStrides(a.Strides.V)
		desc.out_strides = cStrides(a.Strides.Out)
	}
	return desc
}

func cStrides(s Strides) C.zyfa_strides {
	return C.zyfa_strides{batch: C.int64_t(s.Batch), seq: C.int64_t(s.Seq), head: C.int64_t(s.Head)}
}

// dims is (DQK, DV) with each 0 replaced by ZYFA_ATTN_DESC_INIT's default, so that DQK: 192 alone is the
// (192, 128) shape.
func (a *Attention) dims() (dqk, dv int64) {
	desc := C.zyfa_go_attn_desc_init()
	dqk, dv = a.DQK, a.DV
	if dqk == 0 {
		dqk = int64(desc.d_qk)
	}
	if dv == 0 {
		dv = int64(desc.d_v)
	}
	return dqk, dv
}

// span is the number of elements tensor t covers from its first element to its last; ok is false where
// the shape or strides are ones the library refuses anyway (it then reads nothing).
func (a *Attention) span(t tensor) (n int64, ok bool) {
	dqk, dv := a.dims()
	heads, dim := a.NHeads, dqk
	if t == tensorK || t == tensorV {
		heads = a.NHeadsK
	}
	if t == tensorV || t == tensorOut {
		dim = dv
	}
	counts := [3]int64{a.Batch, a.Seqlen, heads}
	for _, c := range append(counts[:], dim) {
		if c < 1 {
			return 0, false
		}
	}
	if a.Layout != Strided {
		return mulChecked(a.Batch, a.Seqlen, heads, dim)
	}
	s := [...]Strides{a.Strides.Q, a.Strides.K, a.Strides.V, a.Strides.Out}[t]
	n = dim
	for i, stride := range [3]int64{s.Batch, s.Seq, s.Head} {
		if stride < 0 {
			return 0, false
		}
		step, ok := mulChecked(counts[i]-1, stride)
		if !ok || n > maxInt64-step {
			return 0, false
		}
		n += step
	}
	return n, true
}

const maxInt64 = int64(^uint64(0) >> 1)

// mulChecked multiplies non-negative factors; ok is false on overflow.
func mulChecked(factors ...int64) (int64, bool) {
	product := int64(1)
	for _, f := range factors {
		if f != 0 && product > maxInt64/f {
			return 0, false
		}
		product *= f
	}
	return product, true
}

// checkLen refuses a slice shorter than what the call would read or write: the guarantee that makes the
// slice-based calls memory safe.
func checkLen(name string, have int, need int64, ok bool) error {
	if ok && int64(have) < need {
		return bindingError(ErrBadArgument, "%s: the slice holds %d elements, the shape needs %d", name, have, need)
	}
	return nil
}

func (a *Attention) checkTensor(t tensor, have int) error {
	need, ok := a.span(t)
	return checkLen(tensorNames[t], have, need, ok)
}
