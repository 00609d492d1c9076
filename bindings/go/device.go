package zyfa

// #include "cgo_helpers.h"
import "C"

// DevicePtr is an address in GPU memory (from cudaMalloc or a framework's tensor), never Go memory.
type DevicePtr uintptr

// Stream is a cudaStream_t; 0 is the default stream.
type Stream uintptr

// DeviceDescale is one FP8 descale for a GPU call: Value when Ptr is 0, else float32 in device memory,
// read by the kernel: one element (both strides 0) or expanded to (batch, nheads_k) with these strides
// in elements. Device values are not checked: each must be a positive normal float.
type DeviceDescale struct {
	Value                   float32
	Ptr                     DevicePtr
	BatchStride, HeadStride int64
}

// DeviceTensors are the device addresses of one call in the shape's layout; LSE may be 0. For FP8 set
// FP8 and the three descales; a descale set without FP8 is refused (ErrFP8FieldWithBF16). Workspace
// (optional) is device scratch of WorkspaceBytes, at least WorkspaceSize, 256-byte aligned, that makes long
// FP8 calls faster: the call writes V transposed into it and its kernel copies that instead of transposing
// every V block (the same output bits).
type DeviceTensors struct {
	Q, K, V, Out, LSE DevicePtr
	FP8               bool
	QDescale          DeviceDescale
	KDescale          DeviceDescale
	VDescale          DeviceDescale
	Workspace         DevicePtr
	WorkspaceBytes    uint64
}

// ForwardDevice launches one causal attention on the current CUDA device, asynchronous on stream. The
// current device belongs to the OS thread, and goroutines move between threads: with several GPUs, lock the
// goroutine to its thread (runtime.LockOSThread) and set the device there (cudaSetDevice) before calling.
// Nothing here can check device memory, so the caller guarantees: every address spans the shape in its
// layout on the current device and stays allocated until the launch completes; nothing writes the
// inputs or reads out and lse until then; out and lse overlap nothing; stream is 0 or a live stream.
func (a *Attention) ForwardDevice(t DeviceTensors, stream Stream) error {
	desc := a.deviceDescriptor(&t)
	return call(func() C.zyfa_status {
		return C.zyfa_go_attn_fwd(&desc, C.uintptr_t(t.Q), C.uintptr_t(t.K), C.uintptr_t(t.V), C.uintptr_t(t.Out),
			C.uintptr_t(t.LSE), C.uintptr_t(t.QDescale.Ptr), C.uintptr_t(t.KDescale.Ptr), C.uintptr_t(t.VDescale.Ptr),
			C.uintptr_t(t.Workspace), C.uintptr_t(stream))
	})
}

// WorkspaceSize is the workspace bytes a ForwardDevice of this shape can use with t's precision (its FP8
// flag and descale kinds): 0 where none makes it faster (BF16, FP8 where (NHeads / NHeadsK) * Seqlen is
// below 4K, split P, exact P at DQK = 128, q/k/v strides that TMA cannot map). It touches no device.
func (a *Attention) WorkspaceSize(t DeviceTensors) (uint64, error) {
	desc := a.deviceDescriptor(&t)
	var bytes C.size_t
	err := call(func() C.zyfa_status { return C.zyfa_attn_workspace_size(&desc, &bytes) })
	return uint64(bytes), err
}

// Prepare builds this shape's plan on the current device, so that a later ForwardDevice can be captured
// in a CUDA graph. Only t's FP8 flag, descale kinds and WorkspaceBytes matter here.
func (a *Attention) Prepare(t DeviceTensors, stream Stream) error {
	desc := a.deviceDescriptor(&t)
	return call(func() C.zyfa_status { return C.zyfa_go_attn_prepare(&desc, C.uintptr_t(stream)) })
}

// deviceDescriptor passes every field of t through, also descales and a workspace size given with FP8 left
// false, so that the library refuses what does not fit the precision (ErrFP8FieldWithBF16) instead of the
// call reading FP8 buffers as BF16 ones.
func (a *Attention) deviceDescriptor(t *DeviceTensors) C.zyfa_attn_desc {
	dtype := C.zyfa_dtype(C.ZYFA_DTYPE_BF16)
	if t.FP8 {
		dtype = C.ZYFA_DTYPE_FP8_E4M3
	}
	desc := a.descriptor(dtype)
	desc.workspace_bytes = C.size_t(t.WorkspaceBytes)
	desc.q_descale = deviceDescale(t.QDescale)
	desc.k_descale = deviceDescale(t.KDescale)
	desc.v_descale = deviceDescale(t.VDescale)
	return desc
}

// deviceDescale leaves ptr NULL: the helper attaches the address, which is not a Go pointer. The zero
// DeviceDescale is no descale (ZYFA_DESCALE_NONE): BF16's, and a missing one for FP8.
func deviceDescale(d DeviceDescale) C.zyfa_descale {
	switch {
	case d.Ptr != 0:
		return C.zyfa_descale{kind: C.ZYFA_DESCALE_DEVICE, batch_stride: C.int64_t(d.BatchStride), head_stride: C.int64_t(d.HeadStride)}
	case d.Value != 0:
		return C.zyfa_descale{kind: C.ZYFA_DESCALE_HOST, value: C.float(d.Value)}
	default:
		return C.zyfa_descale{kind: C.ZYFA_DESCALE_NONE}
	}
}
