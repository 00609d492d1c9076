package zyfa

// #include "cgo_helpers.h"
import "C"

import "unsafe"

// HostDescale is one FP8 descale for the CPU backend: Value for the whole tensor, or PerKVHead, a
// contiguous (batch, nheads_k) array (flash-attn 3's form), when PerKVHead is not nil.
type HostDescale struct {
	Value     float32
	PerKVHead []float32
}

// HostDescales are the descales of q, k and v.
type HostDescales struct {
	Q, K, V HostDescale
}

// ForwardHostBF16 runs BF16 attention on the CPU. q, k, v and out hold BF16 bit patterns in the shape's
// layout; lse (may be nil) receives the (batch, nheads, seqlen) natural-log log-sum-exp. Buffers must be
// 16-byte aligned (else ErrMisaligned); Go's allocator aligns slices of 32 bytes or more (its 24-byte size
// class and its tiny allocations are only 8-byte aligned).
func (a *Attention) ForwardHostBF16(q, k, v, out []uint16, lse []float32) error {
	if err := a.checkHostLengths(len(q), len(k), len(v), len(out), lse); err != nil {
		return err
	}
	desc := a.descriptor(C.ZYFA_DTYPE_BF16)
	return call(func() C.zyfa_status {
		return C.zyfa_go_attn_fwd_host(&desc, first(q), first(k), first(v), first(out), (*C.float)(first(lse)), nil, nil, nil)
	})
}

// ForwardHostFP8 runs FP8 e4m3 attention on the CPU: q, k, v hold e4m3 codes, out receives BF16.
func (a *Attention) ForwardHostFP8(q, k, v []uint8, descales HostDescales, out []uint16, lse []float32) error {
	if err := a.checkHostLengths(len(q), len(k), len(v), len(out), lse); err != nil {
		return err
	}
	desc := a.descriptor(C.ZYFA_DTYPE_FP8_E4M3)
	var values [3]*C.float
	for i, d := range [3]HostDescale{descales.Q, descales.K, descales.V} {
		target := [3]*C.zyfa_descale{&desc.q_descale, &desc.k_descale, &desc.v_descale}[i]
		if d.PerKVHead == nil {
			*target = C.zyfa_descale{kind: C.ZYFA_DESCALE_HOST, value: C.float(d.Value)}
			continue
		}
		need, ok := mulChecked(a.Batch, a.NHeadsK)
		name := [3]string{"q_descale", "k_descale", "v_descale"}[i]
		if err := checkLen(name, len(d.PerKVHead), need, ok && a.Batch >= 1 && a.NHeadsK >= 1); err != nil {
			return err
		}
		// The host backend reads a "device" descale from host memory; the helper attaches the pointer.
		*target = C.zyfa_descale{kind: C.ZYFA_DESCALE_DEVICE, batch_stride: C.int64_t(a.NHeadsK), head_stride: 1}
		values[i] = (*C.float)(first(d.PerKVHead))
	}
	return call(func() C.zyfa_status {
		return C.zyfa_go_attn_fwd_host(&desc, first(q), first(k), first(v), first(out), (*C.float)(first(lse)),
			values[0], values[1], values[2])
	})
}

func (a *Attention) checkHostLengths(q, k, v, out int, lse []float32) error {
	for t, have := range [...]int{q, k, v, out} {
		if err := a.checkTensor(tensor(t), have); err != nil {
			return err
		}
	}
	if lse == nil {
		return nil
	}
	need, ok := mulChecked(a.Batch, a.NHeads, a.Seqlen)
	return checkLen("lse", len(lse), need, ok && a.Batch >= 1 && a.NHeads >= 1 && a.Seqlen >= 1)
}

// first is the address of a slice's first element, or nil for an empty slice.
func first[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}
