package zyfa_test

import (
	"errors"
	"fmt"

	"zyfa"
)

// One BF16 causal attention on the CPU backend. Every value of v is 0.5, so every output is 0.5: a
// weighted average whose weights sum to one.
func Example() {
	a := &zyfa.Attention{Batch: 1, Seqlen: 64, NHeads: 4, NHeadsK: 1}
	q := make([]uint16, 64*4*128)
	k := make([]uint16, 64*1*128)
	v := make([]uint16, 64*1*128)
	for i := range q {
		q[i] = zyfa.BF16FromFloat32(float32(i%7) * 0.1)
	}
	for i := range k {
		k[i] = zyfa.BF16FromFloat32(float32(i%5) * 0.1)
		v[i] = zyfa.BF16FromFloat32(0.5)
	}
	out := make([]uint16, len(q))
	if err := a.ForwardHostBF16(q, k, v, out, nil); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("out[0] =", zyfa.BF16ToFloat32(out[0]), "out[last] =", zyfa.BF16ToFloat32(out[len(out)-1]))

	bad := &zyfa.Attention{Batch: 1, Seqlen: 64, NHeads: 4, NHeadsK: 1, SoftmaxScale: -1}
	err := bad.ForwardHostBF16(q, k, v, out, nil)
	fmt.Println(errors.Is(err, zyfa.ErrBadSoftmaxScale))
	// Output:
	// out[0] = 0.5 out[last] = 0.5
	// true
}
