package zyfa

import (
	"math"
	"testing"
)

// Bounds on the relative RMS error of out and the largest LSE error (nats) against fp64, about 2.5x what
// the Rust binding's identical inputs measured (bindings/rust/zyfa/tests/host_attention.rs says why).
const (
	bf16OutTolerance = 5e-3
	bf16LSETolerance = 5e-3
	fp8OutTolerance  = 7e-2
	fp8LSETolerance  = 0.16
)

func newOutputs(a *Attention) ([]uint16, []float32) {
	_, dv := a.dims()
	out := make([]uint16, a.Batch*a.Seqlen*a.NHeads*dv)
	for i := range out {
		out[i] = poisonBF16
	}
	lse := make([]float32, a.Batch*a.NHeads*a.Seqlen)
	for i := range lse {
		lse[i] = float32(math.NaN())
	}
	return out, lse
}

func checkAgainst(t *testing.T, out []uint16, lse []float32, wantOut, wantLSE []float64, outTol, lseTol float64) {
	t.Helper()
	outErr := relativeRMSError(t, bf16Values(out), wantOut)
	lseErr := maxAbsError(t, lse, wantLSE)
	t.Logf("relative RMS error of out %.3e, max LSE error %.3e", outErr, lseErr)
	if outErr >= outTol || lseErr >= lseTol {
		t.Fatalf("out error %.3e (bound %.1e), LSE error %.3e (bound %.1e)", outErr, outTol, lseErr, lseTol)
	}
}

func TestBF16GQAWithPartialTileMatchesFP64(t *testing.T) {
	r := freshRand(t)
	a := &Attention{Batch: 2, Seqlen: 133, NHeads: 4, NHeadsK: 2}
	q, k, v := randomQKV(r, a)
	out, lse := newOutputs(a)
	if err := a.ForwardHostBF16(q, k, v, out, lse); err != nil {
		t.Fatal(err)
	}
	wantOut, wantLSE := attentionFP64(a, bf16Values(q), bf16Values(k), bf16Values(v), 1/math.Sqrt(128))
	checkAgainst(t, out, lse, wantOut, wantLSE, bf16OutTolerance, bf16LSETolerance)
}

func TestBF16D192WithExplicitScaleMatchesFP64(t *testing.T) {
	r := freshRand(t)
	a := &Attention{Batch: 1, Seqlen: 70, NHeads: 2, NHeadsK: 1, DQK: 192, DV: 128, SoftmaxScale: 0.05}
	q, k, v := randomQKV(r, a)
	out, lse := newOutputs(a)
	if err := a.ForwardHostBF16(q, k, v, out, lse); err != nil {
		t.Fatal(err)
	}
	wantOut, wantLSE := attentionFP64(a, bf16Values(q), bf16Values(k), bf16Values(v), 0.05)
	checkAgainst(t, out, lse, wantOut, wantLSE, bf16OutTolerance, bf16LSETolerance)
}

// A DV of 0 means 128 on its own: DQK: 192 alone is the (192, 128) shape, bit for bit.
func TestZeroDVAloneMeansTheDefault(t *testing.T) {
	r := freshRand(t)
	full := &Attention{Batch: 1, Seqlen: 40, NHeads: 2, NHeadsK: 1, DQK: 192, DV: 128}
	short := &Attention{Batch: 1, Seqlen: 40, NHeads: 2, NHeadsK: 1, DQK: 192}
	q, k, v := randomQKV(r, full)
	want, wantLSE := newOutputs(full)
	if err := full.ForwardHostBF16(q, k, v, want, wantLSE); err != nil {
		t.Fatal(err)
	}
	got, gotLSE := newOutputs(short)
	if err := short.ForwardHostBF16(q, k, v, got, gotLSE); err != nil {
		t.Fatalf("DQK 192 with DV 0: %v", err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("output %d: %#x with DV 0, %#x with DV 128", i, got[i], want[i])
		}
	}
}

// quantizeHost quantizes contiguous rows of dim through the library.
func quantizeHost(t *testing.T, src []uint16, dim int64) ([]uint8, float32) {
	t.Helper()
	codes := make([]uint8, len(src))
	qz := Quantize{NRows: int64(len(src)) / dim, Dim: dim}
	descale, err := qz.Host(src, codes)
	if err != nil {
		t.Fatal(err)
	}
	return codes, descale
}

// runFP8 quantizes fresh inputs through the library, runs FP8 attention and checks it against fp64 of
// the decoded codes. factors (one per (batch, kv head)) scale each descale, so a descale read from the
// wrong place shows; nil passes each descale as one value.
func runFP8(t *testing.T, a *Attention, factors []float32) {
	r := freshRand(t)
	n := int(a.Batch * a.Seqlen * a.NHeads * 128)
	if a.NHeads != a.NHeadsK {
		t.Fatal("q's descale is per kv head here, so q has nheads_k heads")
	}
	q8, qs := quantizeHost(t, randomBF16(r, n, 1), 128)
	k8, ks := quantizeHost(t, randomBF16(r, n, 1), 128)
	v8, vs := quantizeHost(t, randomBF16(r, n, 0.5), 128)
	expand := func(d float32) ([]float32, HostDescale) {
		values := make([]float32, a.Batch*a.NHeadsK)
		for i := range values {
			values[i] = d
			if factors != nil {
				values[i] *= factors[i]
			}
		}
		if factors == nil {
			return values, HostDescale{Value: d}
		}
		return values, HostDescale{PerKVHead: values}
	}
	qd, qDescale := expand(qs)
	kd, kDescale := expand(ks)
	vd, vDescale := expand(vs)
	decode := func(codes []uint8, descales []float32) []float64 {
		return decodeFP8(a, codes, a.NHeadsK, 128, func(b, hk int) float32 { return descales[b*int(a.NHeadsK)+hk] })
	}
	out, lse := newOutputs(a)
	if err := a.ForwardHostFP8(q8, k8, v8, HostDescales{Q: qDescale, K: kDescale, V: vDescale}, out, lse); err != nil {
		t.Fatal(err)
	}
	wantOut, wantLSE := attentionFP64(a, decode(q8, qd), decode(k8, kd), decode(v8, vd), 1/math.Sqrt(128))
	checkAgainst(t, out, lse, wantOut, wantLSE, fp8OutTolerance, fp8LSETolerance)
}

func TestFP8LeanPMatchesFP64(t *testing.T) {
	runFP8(t, &Attention{Batch: 2, Seqlen: 140, NHeads: 2, NHeadsK: 2}, nil)
}

func TestFP8PerKVHeadDescalesMatchFP64(t *testing.T) {
	runFP8(t, &Attention{Batch: 2, Seqlen: 48, NHeads: 2, NHeadsK: 2}, []float32{1, 2, 0.5, 1.5})
}

func TestLoadedLibraryMatchesHeader(t *testing.T) {
	if LibraryVersion() != HeaderVersion {
		t.Fatalf("libzyfa is version %d, the header %d", LibraryVersion(), HeaderVersion)
	}
}
