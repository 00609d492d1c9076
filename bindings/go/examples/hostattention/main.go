// Command hostattention runs one FP8 causal attention on zyfa's CPU backend and compares it with BF16:
//
//	CGO_LDFLAGS=-L<dir of libzyfa.so> LD_LIBRARY_PATH=<same> go run ./examples/hostattention
package main

import (
	"errors"
	"fmt"
	"math"
	"os"

	"zyfa"
)

func main() {
	a := &zyfa.Attention{Batch: 1, Seqlen: 256, NHeads: 8, NHeadsK: 2}
	sines := func(n int, phase float64) []uint16 {
		x := make([]uint16, n)
		for i := range x {
			x[i] = zyfa.BF16FromFloat32(float32(math.Sin(float64(i)*0.37 + phase)))
		}
		return x
	}
	q, k, v := sines(256*8*128, 0), sines(256*2*128, 1), sines(256*2*128, 2)
	outBF16 := make([]uint16, len(q))
	if err := a.ForwardHostBF16(q, k, v, outBF16, nil); err != nil {
		fail(err)
	}

	quantize := func(x []uint16) ([]uint8, zyfa.HostDescale) {
		codes := make([]uint8, len(x))
		qz := zyfa.Quantize{NRows: int64(len(x) / 128), Dim: 128}
		descale, err := qz.Host(x, codes)
		if err != nil {
			fail(err)
		}
		return codes, zyfa.HostDescale{Value: descale}
	}
	q8, qd := quantize(q)
	k8, kd := quantize(k)
	v8, vd := quantize(v)
	outFP8 := make([]uint16, len(q))
	if err := a.ForwardHostFP8(q8, k8, v8, zyfa.HostDescales{Q: qd, K: kd, V: vd}, outFP8, nil); err != nil {
		fail(err)
	}
	var diff, norm float64
	for i := range outBF16 {
		x, y := float64(zyfa.BF16ToFloat32(outBF16[i])), float64(zyfa.BF16ToFloat32(outFP8[i]))
		diff += (x - y) * (x - y)
		norm += x * x
	}
	fmt.Printf("zyfa %d: FP8 against BF16, relative RMS difference %.2e\n", zyfa.LibraryVersion(), math.Sqrt(diff/norm))

	err := (&zyfa.Attention{Batch: 1, Seqlen: 16, NHeads: 8, NHeadsK: 2, DQK: 96, DV: 96}).ForwardHostBF16(q, k, v, outBF16, nil)
	fmt.Println("d = 96 is refused:", errors.Is(err, zyfa.ErrUnsupportedHeadDim), "-", err)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
