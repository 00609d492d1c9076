package zyfa

import (
	"errors"
	"reflect"
	"testing"
)

// toBHSD copies a contiguous BSHD tensor into BHSD order.
func toBHSD(x []uint16, batch, seqlen, heads, dim int) []uint16 {
	y := make([]uint16, len(x))
	for b := 0; b < batch; b++ {
		for s := 0; s < seqlen; s++ {
			for h := 0; h < heads; h++ {
				copy(y[((b*heads+h)*seqlen+s)*dim:][:dim], x[((b*seqlen+s)*heads+h)*dim:][:dim])
			}
		}
	}
	return y
}

// padded copies a contiguous BSHD tensor into rows of rowStride elements (seq stride), leaving a gap after
// each token's heads, and returns the buffer and its strides.
func padded(x []uint16, batch, seqlen, heads, dim, rowStride int) ([]uint16, Strides) {
	y := make([]uint16, batch*seqlen*rowStride)
	for b := 0; b < batch; b++ {
		for s := 0; s < seqlen; s++ {
			copy(y[(b*seqlen+s)*rowStride:][:heads*dim], x[((b*seqlen+s)*heads)*dim:][:heads*dim])
		}
	}
	return y, Strides{Batch: int64(seqlen * rowStride), Seq: int64(rowStride), Head: int64(dim)}
}

// The same problem in BSHD, BHSD and strided (padded rows) layouts gives the same output bits, and a slice
// one element short of a strided shape's span is refused before the call.
func TestLayoutsGiveTheSameBitsAndStridedSpansAreChecked(t *testing.T) {
	const batch, seqlen, nheads, nheadsK, d = 2, 37, 4, 2, 128
	r := freshRand(t)
	bshd := &Attention{Batch: batch, Seqlen: seqlen, NHeads: nheads, NHeadsK: nheadsK}
	q, k, v := randomQKV(r, bshd)
	want, wantLSE := newOutputs(bshd)
	if err := bshd.ForwardHostBF16(q, k, v, want, wantLSE); err != nil {
		t.Fatal(err)
	}

	bhsd := *bshd
	bhsd.Layout = BHSD
	out, lse := newOutputs(&bhsd)
	if err := bhsd.ForwardHostBF16(toBHSD(q, batch, seqlen, nheads, d), toBHSD(k, batch, seqlen, nheadsK, d),
		toBHSD(v, batch, seqlen, nheadsK, d), out, lse); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, toBHSD(want, batch, seqlen, nheads, d)) || !reflect.DeepEqual(lse, wantLSE) {
		t.Fatal("BHSD differs from BSHD")
	}

	strided := *bshd
	strided.Layout = Strided
	const pad = 8 // 16 bytes: strides stay 16-byte granular
	qs, qStrides := padded(q, batch, seqlen, nheads, d, nheads*d+pad)
	ks, kStrides := padded(k, batch, seqlen, nheadsK, d, nheadsK*d+pad)
	vs, vStrides := padded(v, batch, seqlen, nheadsK, d, nheadsK*d+2*pad)
	outs, outStrides := padded(make([]uint16, len(want)), batch, seqlen, nheads, d, nheads*d+pad)
	strided.Strides = TensorStrides{Q: qStrides, K: kStrides, V: vStrides, Out: outStrides}
	_, lse = newOutputs(&strided)
	if err := strided.ForwardHostBF16(qs, ks, vs, outs, lse); err != nil {
		t.Fatal(err)
	}
	got := make([]uint16, len(want))
	for i := 0; i < batch*seqlen; i++ {
		copy(got[i*nheads*d:][:nheads*d], outs[i*int(outStrides.Seq):][:nheads*d])
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(lse, wantLSE) {
		t.Fatal("strided differs from BSHD")
	}

	// The span of a strided tensor ends at its last element, not at batch * seq stride: one short fails.
	span := (batch-1)*int(vStrides.Batch) + (seqlen-1)*int(vStrides.Seq) + (nheadsK-1)*d + d
	if err := strided.ForwardHostBF16(qs, ks, vs[:span-1], outs, lse); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("v one element short of its span: got %v, want ErrBadArgument", err)
	}
	if err := strided.ForwardHostBF16(qs, ks, vs[:span], outs, lse); err != nil {
		t.Fatalf("v exactly its span: %v", err)
	}
}
