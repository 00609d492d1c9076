package zyfa

import (
	"math"
	"math/rand"
	"testing"

	"zyfa/internal/cudatest"
)

// The device path with real numbers: ForwardDevice and Quantize.Device on GPU memory, checked against
// fp64 and against the host path. Without a GPU these skip (ZYFA_REQUIRE_DEVICE=1 makes that a failure).

func dev(b cudatest.Buffer) DevicePtr { return DevicePtr(b.Ptr) }

// deviceOutputs is out and lse in device memory, poisoned (BF16 NaN, float NaN) so an element the call
// forgets shows.
func deviceOutputs(t *testing.T, a *Attention) (out, lse cudatest.Buffer) {
	hostOut, hostLSE := newOutputs(a)
	return cudatest.Upload(t, hostOut), cudatest.Upload(t, hostLSE)
}

func downloadOutputs(t *testing.T, a *Attention, out, lse cudatest.Buffer) ([]uint16, []float32) {
	hostOut, hostLSE := newOutputs(a)
	cudatest.Download(t, out, hostOut)
	cudatest.Download(t, lse, hostLSE)
	return hostOut, hostLSE
}

func TestDeviceBF16GQAWithPartialTileMatchesFP64(t *testing.T) {
	cudatest.RequireGPU(t)
	r := freshRand(t)
	a := &Attention{Batch: 2, Seqlen: 197, NHeads: 4, NHeadsK: 2}
	q, k, v := randomQKV(r, a)
	out, lse := deviceOutputs(t, a)
	tensors := DeviceTensors{Q: dev(cudatest.Upload(t, q)), K: dev(cudatest.Upload(t, k)),
		V: dev(cudatest.Upload(t, v)), Out: dev(out), LSE: dev(lse)}
	if err := a.ForwardDevice(tensors, 0); err != nil {
		t.Fatal(err)
	}
	gotOut, gotLSE := downloadOutputs(t, a, out, lse)
	wantOut, wantLSE := attentionFP64(a, bf16Values(q), bf16Values(k), bf16Values(v), 1/math.Sqrt(128))
	checkAgainst(t, gotOut, gotLSE, wantOut, wantLSE, bf16OutTolerance, bf16LSETolerance)
}

// Each descale form once, with different values per tensor and per (batch, kv head), so a descale read
// from the wrong tensor or the wrong element shows: q's one float in device memory, k's expanded to
// (batch, nheads_k) in device memory, v's a host value.
func TestDeviceFP8DescaleFormsMatchFP64(t *testing.T) {
	cudatest.RequireGPU(t)
	r := freshRand(t)
	a := &Attention{Batch: 2, Seqlen: 150, NHeads: 4, NHeadsK: 2}
	const d = 128
	q8, qs := quantizeHost(t, randomBF16(r, int(a.Batch*a.Seqlen*a.NHeads*d), 1), d)
	k8, ks := quantizeHost(t, randomBF16(r, int(a.Batch*a.Seqlen*a.NHeadsK*d), 1), d)
	v8, vs := quantizeHost(t, randomBF16(r, int(a.Batch*a.Seqlen*a.NHeadsK*d), 0.5), d)
	// k's descales, stored head-major (element hk * batch + b) so the strides are not the contiguous ones.
	// No factor of 1, and q's descale 3x its quantizer's: no two descales the kernel could confuse are equal
	// (the quantizer gives q and k the same power of two on these inputs).
	kFactors := []float32{1.5, 2, 0.5, 0.75} // (b, hk) = (0, 0), (0, 1), (1, 0), (1, 1)
	qs *= 3
	kStored := make([]float32, a.Batch*a.NHeadsK)
	for b := 0; b < int(a.Batch); b++ {
		for hk := 0; hk < int(a.NHeadsK); hk++ {
			kStored[hk*int(a.Batch)+b] = ks * kFactors[b*int(a.NHeadsK)+hk]
		}
	}
	out, lse := deviceOutputs(t, a)
	tensors := DeviceTensors{Q: dev(cudatest.Upload(t, q8)), K: dev(cudatest.Upload(t, k8)),
		V: dev(cudatest.Upload(t, v8)), Out: dev(out), LSE: dev(lse), FP8: true,
		QDescale: DeviceDescale{Ptr: dev(cudatest.Upload(t, []float32{qs}))},
		KDescale: DeviceDescale{Ptr: dev(cudatest.Upload(t, kStored)), BatchStride: 1, HeadStride: a.Batch},
		VDescale: DeviceDescale{Value: vs}}
	if err := a.ForwardDevice(tensors, 0); err != nil {
		t.Fatal(err)
	}
	gotOut, gotLSE := downloadOutputs(t, a, out, lse)
	uniform := func(x float32) func(b, h int) float32 { return func(int, int) float32 { return x } }
	kDescale := func(b, hk int) float32 { return ks * kFactors[b*int(a.NHeadsK)+hk] }
	wantOut, wantLSE := attentionFP64(a, decodeFP8(a, q8, a.NHeads, d, uniform(qs)),
		decodeFP8(a, k8, a.NHeadsK, d, kDescale), decodeFP8(a, v8, a.NHeadsK, d, uniform(vs)), 1/math.Sqrt(d))
	checkAgainst(t, gotOut, gotLSE, wantOut, wantLSE, fp8OutTolerance, fp8LSETolerance)
}

// fp8DeviceInputs quantizes fresh q, k and v (d = 128, values in [-1, 1)) on the host and uploads the codes:
// the device tensors with their host descales (no outputs yet), and the values the codes stand for.
func fp8DeviceInputs(t *testing.T, r *rand.Rand, a *Attention) (DeviceTensors, [3][]float64) {
	const d = 128
	q8, qs := quantizeHost(t, randomBF16(r, int(a.Batch*a.Seqlen*a.NHeads*d), 1), d)
	k8, ks := quantizeHost(t, randomBF16(r, int(a.Batch*a.Seqlen*a.NHeadsK*d), 1), d)
	v8, vs := quantizeHost(t, randomBF16(r, int(a.Batch*a.Seqlen*a.NHeadsK*d), 1), d)
	tensors := DeviceTensors{Q: dev(cudatest.Upload(t, q8)), K: dev(cudatest.Upload(t, k8)),
		V: dev(cudatest.Upload(t, v8)), FP8: true,
		QDescale: DeviceDescale{Value: qs}, KDescale: DeviceDescale{Value: ks}, VDescale: DeviceDescale{Value: vs}}
	uniform := func(x float32) func(b, h int) float32 { return func(int, int) float32 { return x } }
	values := [3][]float64{decodeFP8(a, q8, a.NHeads, d, uniform(qs)), decodeFP8(a, k8, a.NHeadsK, d, uniform(ks)),
		decodeFP8(a, v8, a.NHeadsK, d, uniform(vs))}
	return tensors, values
}

// A workspace changes where V^T comes from, not the output: the same bits with and without one.
func TestDeviceFP8WorkspaceGivesTheSameBits(t *testing.T) {
	cudatest.RequireGPU(t)
	r := freshRand(t)
	a := &Attention{Batch: 1, Seqlen: 1100, NHeads: 8, NHeadsK: 1} // (8 / 1) * 1100 keys: enough for one
	const d = 128
	tensors, _ := fp8DeviceInputs(t, r, a)
	bytes, err := a.WorkspaceSize(tensors)
	if err != nil || bytes == 0 {
		t.Fatalf("WorkspaceSize = %d, %v: this shape should use a workspace", bytes, err)
	}
	run := func(workspace cudatest.Buffer) ([]uint16, []float32) {
		out, lse := deviceOutputs(t, a)
		call := tensors
		call.Out, call.LSE = dev(out), dev(lse)
		if workspace.Bytes > 0 {
			call.Workspace, call.WorkspaceBytes = dev(workspace), uint64(workspace.Bytes)
		}
		if err := a.ForwardDevice(call, 0); err != nil {
			t.Fatal(err)
		}
		return downloadOutputs(t, a, out, lse)
	}
	without, withoutLSE := run(cudatest.Buffer{})
	// The workspace starts as e4m3 NaN codes (0x7f), which no quantized input holds: a kernel that read
	// bytes the call did not write would give NaN outputs, and a call that ignored the workspace would
	// leave it as it was. cuMemAlloc's memory is 256-byte aligned.
	const e4m3NaN = 0x7f
	poison := make([]uint8, bytes)
	for i := range poison {
		poison[i] = e4m3NaN
	}
	workspace := cudatest.Upload(t, poison)
	with, withLSE := run(workspace)
	written := make([]uint8, bytes)
	cudatest.Download(t, workspace, written)
	overwritten := 0
	for _, b := range written {
		if b != e4m3NaN {
			overwritten++
		}
	}
	if want := int(a.Seqlen * a.NHeadsK * d); overwritten < want {
		t.Fatalf("the call wrote %d workspace bytes; V^T alone is %d", overwritten, want)
	}
	for i := range without {
		if with[i] != without[i] || math.IsNaN(float64(BF16ToFloat32(with[i]))) {
			t.Fatalf("output %d: %#x with the workspace, %#x without", i, with[i], without[i])
		}
	}
	for i := range withoutLSE {
		if math.Float32bits(withLSE[i]) != math.Float32bits(withoutLSE[i]) || math.IsNaN(float64(withLSE[i])) {
			t.Fatalf("lse %d: %v with the workspace, %v without", i, withLSE[i], withoutLSE[i])
		}
	}
}

// Split P on the GPU, after a Prepare: against fp64 it errs under half what exact P errs on the same
// inputs (a call that ran exact or lean P fails), and a second call gives the same bits.
func TestDeviceFP8SplitPAfterPrepareIsTheMostAccurate(t *testing.T) {
	cudatest.RequireGPU(t)
	r := freshRand(t)
	split := &Attention{Batch: 1, Seqlen: 300, NHeads: 4, NHeadsK: 2, PRounding: PRoundingSplit}
	exact := *split
	exact.PRounding = PRoundingExact
	const d = 128
	tensors, want := fp8DeviceInputs(t, r, split)
	if err := split.Prepare(tensors, 0); err != nil {
		t.Fatal(err)
	}
	run := func(a *Attention) ([]uint16, []float32) {
		out, lse := deviceOutputs(t, a)
		call := tensors
		call.Out, call.LSE = dev(out), dev(lse)
		if err := a.ForwardDevice(call, 0); err != nil {
			t.Fatal(err)
		}
		return downloadOutputs(t, a, out, lse)
	}
	gotOut, gotLSE := run(split)
	wantOut, wantLSE := attentionFP64(split, want[0], want[1], want[2], 1/math.Sqrt(d))
	checkAgainst(t, gotOut, gotLSE, wantOut, wantLSE, fp8OutTolerance, fp8LSETolerance)
	exactOut, _ := run(&exact)
	splitError := relativeRMSError(t, bf16Values(gotOut), wantOut)
	exactError := relativeRMSError(t, bf16Values(exactOut), wantOut)
	if !(splitError < 0.5*exactError) {
		t.Fatalf("split P errs %.3e, exact P %.3e", splitError, exactError)
	}
	againOut, againLSE := run(split)
	for i := range gotOut {
		if againOut[i] != gotOut[i] {
			t.Fatalf("output %d: %#x, then %#x", i, gotOut[i], againOut[i])
		}
	}
	for i := range gotLSE {
		if math.Float32bits(againLSE[i]) != math.Float32bits(gotLSE[i]) {
			t.Fatalf("lse %d: %v, then %v", i, gotLSE[i], againLSE[i])
		}
	}
}

// Quantize.Device is bit-identical to Quantize.Host, here with a row stride and the rotation; its descale
// lands in device memory.
func TestDeviceQuantizeMatchesHostBits(t *testing.T) {
	cudatest.RequireGPU(t)
	r := freshRand(t)
	for _, qz := range []Quantize{
		{NRows: 300, Dim: 128, RowStride: 160},
		{NRows: 77, Dim: 192, RowStride: 200, Hadamard: true, Seed: r.Uint64()},
	} {
		src := randomBF16(r, int((qz.NRows-1)*qz.RowStride+qz.Dim), 3)
		want := make([]uint8, qz.NRows*qz.Dim)
		wantDescale, err := qz.Host(src, want)
		if err != nil {
			t.Fatal(err)
		}
		dst := cudatest.Upload(t, make([]uint8, len(want)))
		descale := cudatest.Upload(t, []float32{float32(math.NaN())})
		if err := qz.Device(dev(cudatest.Upload(t, src)), dev(dst), dev(descale), 0); err != nil {
			t.Fatal(err)
		}
		got, gotDescale := make([]uint8, len(want)), []float32{0}
		cudatest.Download(t, dst, got)
		cudatest.Download(t, descale, gotDescale)
		if gotDescale[0] != wantDescale {
			t.Fatalf("%+v: descale %v on the device, %v on the host", qz, gotDescale[0], wantDescale)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%+v: code %d is %#x on the device, %#x on the host", qz, i, got[i], want[i])
			}
		}
	}
}
