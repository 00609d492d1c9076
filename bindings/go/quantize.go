package zyfa

// #include "cgo_helpers.h"
import "C"

// Quantize converts NRows rows of Dim BF16 values (RowStride elements apart; 0 means Dim) to FP8 e4m3
// with one power-of-two descale. With Hadamard set, q and k are rotated first (d = 128, or 192 through a
// 3-point DCT x 64-point Hadamard); use one Seed for q and k and leave v unrotated.
type Quantize struct {
	NRows, Dim, RowStride int64
	Hadamard              bool
	Seed                  uint64
}

func (qz *Quantize) descriptor() C.zyfa_quantize_desc {
	desc := C.zyfa_go_quantize_desc_init()
	desc.n_rows = C.int64_t(qz.NRows)
	desc.dim = C.int64_t(qz.Dim)
	desc.row_stride = C.int64_t(qz.RowStride)
	if qz.Hadamard {
		desc.rotation = C.ZYFA_ROTATION_HADAMARD
		desc.rotation_seed = C.uint64_t(qz.Seed)
	}
	return desc
}

// Host quantizes src (BF16 bits) into dst (e4m3 codes) on the CPU, bit-identical to the GPU, and returns
// the descale: dst's values times it approximate src.
func (qz *Quantize) Host(src []uint16, dst []uint8) (float32, error) {
	stride := qz.RowStride
	if stride == 0 {
		stride = qz.Dim
	}
	valid := qz.NRows >= 1 && qz.Dim >= 1 && stride >= 0
	srcNeed, srcOK := mulChecked(maxI64(qz.NRows-1, 0), maxI64(stride, 0))
	if err := checkLen("src", len(src), srcNeed+qz.Dim, valid && srcOK && srcNeed <= maxInt64-qz.Dim); err != nil {
		return 0, err
	}
	dstNeed, dstOK := mulChecked(maxI64(qz.NRows, 0), maxI64(qz.Dim, 0))
	if err := checkLen("dst", len(dst), dstNeed, valid && dstOK); err != nil {
		return 0, err
	}
	desc := qz.descriptor()
	var descale C.float
	err := call(func() C.zyfa_status { return C.zyfa_go_quantize_fp8_host(&desc, first(src), first(dst), &descale) })
	return float32(descale), err
}

// Device quantizes on the GPU, asynchronous on stream, writing the descale (one float32) to device
// memory so that an attention call reads it without waiting for the host. The caller guarantees what
// ForwardDevice asks of its addresses.
func (qz *Quantize) Device(src, dst, descale DevicePtr, stream Stream) error {
	desc := qz.descriptor()
	return call(func() C.zyfa_status {
		return C.zyfa_go_quantize_fp8(&desc, C.uintptr_t(src), C.uintptr_t(dst), C.uintptr_t(descale), C.uintptr_t(stream))
	})
}

func maxI64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
