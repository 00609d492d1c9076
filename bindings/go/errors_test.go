package zyfa

import (
	"errors"
	"strings"
	"testing"
)

func TestUnsupportedHeadDimIsATypedErrorWithTheLibrarysMessage(t *testing.T) {
	a := &Attention{Batch: 1, Seqlen: 16, NHeads: 2, NHeadsK: 1, DQK: 64, DV: 64}
	q, k, v := make([]uint16, 16*2*64), make([]uint16, 16*64), make([]uint16, 16*64)
	out, _ := newOutputs(a)
	err := a.ForwardHostBF16(q, k, v, out, nil)
	if !errors.Is(err, ErrUnsupportedHeadDim) {
		t.Fatalf("got %v, want ErrUnsupportedHeadDim", err)
	}
	if errors.Is(err, ErrBadShape) {
		t.Fatal("errors.Is matched a different status")
	}
	var zerr *Error
	if !errors.As(err, &zerr) || !strings.Contains(zerr.Message, "d_qk") || !strings.Contains(zerr.Message, "64") {
		t.Fatalf("the message does not name d_qk = 64: %v", err)
	}
	if !strings.Contains(err.Error(), "ZYFA_STATUS_UNSUPPORTED_HEAD_DIM") {
		t.Fatalf("Error() lacks the status: %q", err.Error())
	}
	for i, x := range out {
		if x != poisonBF16 {
			t.Fatalf("a refused call wrote out[%d]", i)
		}
	}
}

func TestShapeErrors(t *testing.T) {
	cases := []struct {
		name  string
		attn  Attention
		want  Status
		field string
	}{
		{"head ratio", Attention{Batch: 1, Seqlen: 8, NHeads: 3, NHeadsK: 2}, ErrBadHeadRatio, "nheads"},
		{"empty batch", Attention{Batch: 0, Seqlen: 8, NHeads: 2, NHeadsK: 1}, ErrBadShape, "batch"},
		{"negative scale", Attention{Batch: 1, Seqlen: 8, NHeads: 1, NHeadsK: 1, SoftmaxScale: -1}, ErrBadSoftmaxScale, "softmax_scale"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buf := make([]uint16, 8*3*128)
			err := c.attn.ForwardHostBF16(buf, buf[:8*2*128], buf[:8*2*128], make([]uint16, 8*3*128), nil)
			var zerr *Error
			if !errors.Is(err, c.want) || !errors.As(err, &zerr) || !strings.Contains(zerr.Message, c.field) {
				t.Fatalf("got %v, want %v naming %s", err, c.want, c.field)
			}
		})
	}
}

func TestShortSliceIsRefusedBeforeTheCall(t *testing.T) {
	a := &Attention{Batch: 1, Seqlen: 16, NHeads: 1, NHeadsK: 1}
	buf := make([]uint16, 16*128)
	err := a.ForwardHostBF16(buf[:16*128-1], buf, buf, make([]uint16, 16*128), nil)
	var zerr *Error
	if !errors.Is(err, ErrBadArgument) || !errors.As(err, &zerr) || !strings.HasPrefix(zerr.Message, "q:") {
		t.Fatalf("got %v, want ErrBadArgument about q", err)
	}
}

func TestNonPositiveDescaleIsRefused(t *testing.T) {
	a := &Attention{Batch: 1, Seqlen: 16, NHeads: 1, NHeadsK: 1}
	codes := make([]uint8, 16*128)
	descales := HostDescales{Q: HostDescale{Value: 1}, K: HostDescale{Value: 1}, V: HostDescale{Value: 0}}
	err := a.ForwardHostFP8(codes, codes, codes, descales, make([]uint16, 16*128), nil)
	var zerr *Error
	if !errors.Is(err, ErrBadDescale) || !errors.As(err, &zerr) || !strings.Contains(zerr.Message, "v_descale") {
		t.Fatalf("got %v, want ErrBadDescale naming v_descale", err)
	}
}

func TestStatusIsAnError(t *testing.T) {
	var status Status
	err := error(&Error{Status: ErrMisaligned, Message: "q"})
	if !errors.As(err, &status) || status != ErrMisaligned {
		t.Fatalf("errors.As to Status gave %v", status)
	}
	if !strings.HasPrefix(ErrNotCausal.Error(), "ZYFA_STATUS_NOT_CAUSAL") {
		t.Fatalf("Status.Error() = %q", ErrNotCausal.Error())
	}
}
