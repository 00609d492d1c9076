package zyfa

import (
	"errors"
	"strings"
	"testing"
	"unsafe"
)

// The workspace of GPU calls, on any machine: the bytes each precision gets, and a workspace that is too
// small refused with a typed error naming workspace_bytes before any device is touched.
func TestWorkspaceSizeAndAShortWorkspaceIsRefused(t *testing.T) {
	const seqlen, nheads, nheadsK, d = 8192, 4, 2, 128
	a := &Attention{Batch: 1, Seqlen: seqlen, NHeads: nheads, NHeadsK: nheadsK}
	fp8 := DeviceTensors{FP8: true, QDescale: DeviceDescale{Value: 1}, KDescale: DeviceDescale{Value: 1},
		VDescale: DeviceDescale{Value: 1}}
	bytes, err := a.WorkspaceSize(fp8)
	if err != nil || bytes != nheadsK*d*seqlen { // one V^T per kv head: 128 rows of whole 128-key blocks
		t.Fatalf("FP8 workspace size %d, %v; want %d", bytes, err, nheadsK*d*seqlen)
	}
	if bf16, err := a.WorkspaceSize(DeviceTensors{}); err != nil || bf16 != 0 {
		t.Fatalf("BF16 workspace size %d, %v; want 0", bf16, err)
	}
	// Host buffers stand in for device memory: validation refuses the call before it reaches a device.
	q, kv := make([]uint8, seqlen*nheads*d), make([]uint8, seqlen*nheadsK*d)
	out := make([]uint16, seqlen*nheads*d)
	scratch := make([]uint8, bytes+256)
	addr := func(p unsafe.Pointer) DevicePtr { return DevicePtr(uintptr(p)) }
	fp8.Q, fp8.K, fp8.V, fp8.Out = addr(unsafe.Pointer(&q[0])), addr(unsafe.Pointer(&kv[0])),
		addr(unsafe.Pointer(&kv[0])), addr(unsafe.Pointer(&out[0]))
	fp8.Workspace = (addr(unsafe.Pointer(&scratch[0])) + 255) &^ 255
	fp8.WorkspaceBytes = bytes - 1
	expectRefused(t, a.ForwardDevice(fp8, 0), ErrBadArgument, "workspace_bytes", out)
}

// Descales given with FP8 left false reach the library, which refuses them before any device is touched:
// the call must not read FP8 buffers as BF16 ones (twice their bytes).
func TestDescalesWithoutFP8AreRefused(t *testing.T) {
	const seqlen, nheads, nheadsK, d = 64, 4, 2, 128
	a := &Attention{Batch: 1, Seqlen: seqlen, NHeads: nheads, NHeadsK: nheadsK}
	q, kv := make([]uint16, seqlen*nheads*d), make([]uint16, seqlen*nheadsK*d)
	out := make([]uint16, seqlen*nheads*d)
	addr := func(p unsafe.Pointer) DevicePtr { return DevicePtr(uintptr(p)) }
	tensors := DeviceTensors{Q: addr(unsafe.Pointer(&q[0])), K: addr(unsafe.Pointer(&kv[0])),
		V: addr(unsafe.Pointer(&kv[0])), Out: addr(unsafe.Pointer(&out[0])),
		QDescale: DeviceDescale{Value: 1}, KDescale: DeviceDescale{Value: 1}, VDescale: DeviceDescale{Value: 1}}
	expectRefused(t, a.ForwardDevice(tensors, 0), ErrFP8FieldWithBF16, "q_descale", out)
}

// expectRefused fails unless err is the typed error `want` whose message names `field`, and out (zeroed
// before the call) is still all zeros: a refused call writes nothing.
func expectRefused(t *testing.T, err error, want Status, field string, out []uint16) {
	t.Helper()
	var zerr *Error
	if !errors.Is(err, want) || !errors.As(err, &zerr) || !strings.Contains(zerr.Message, field) {
		t.Fatalf("got %v, want %v naming %s", err, want, field)
	}
	for i, x := range out {
		if x != 0 {
			t.Fatalf("a refused call wrote out[%d]", i)
		}
	}
}
