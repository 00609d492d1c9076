package zyfa

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// fp8Inputs quantizes small random q, k and v of a's shape through the library.
func fp8Inputs(t *testing.T, a *Attention) (q, k, v []uint8, descales HostDescales) {
	t.Helper()
	r := freshRand(t)
	dqk, dv := a.dims()
	q, qs := quantizeHost(t, randomBF16(r, int(a.Batch*a.Seqlen*a.NHeads*dqk), 1), dqk)
	k, ks := quantizeHost(t, randomBF16(r, int(a.Batch*a.Seqlen*a.NHeadsK*dqk), 1), dqk)
	v, vs := quantizeHost(t, randomBF16(r, int(a.Batch*a.Seqlen*a.NHeadsK*dv), 0.5), dv)
	return q, k, v, HostDescales{Q: HostDescale{Value: qs}, K: HostDescale{Value: ks}, V: HostDescale{Value: vs}}
}

// forwardFP8 runs a on the CPU backend with the given P rounding and returns its output.
func forwardFP8(t *testing.T, a Attention, p PRounding, q, k, v []uint8, descales HostDescales) ([]uint16, error) {
	t.Helper()
	a.PRounding = p
	out, _ := newOutputs(&a)
	if err := a.ForwardHostFP8(q, k, v, descales, out, nil); err != nil {
		return nil, err
	}
	for i, x := range out {
		if x == poisonBF16 {
			t.Fatalf("P rounding %d: out[%d] was not written", p, i)
		}
	}
	return out, nil
}

// DEFAULT is lean P at DQK = 128 and exact P at DQK = 192, bit for bit; the other rounding differs at each.
func TestDefaultIsLeanAtD128AndExactAtD192(t *testing.T) {
	for _, c := range []struct {
		dqk                 int64
		rule, other         PRounding
		ruleName, otherName string
	}{{128, PRoundingLean, PRoundingExact, "LEAN", "EXACT"}, {192, PRoundingExact, PRoundingLean, "EXACT", "LEAN"}} {
		a := Attention{Batch: 1, Seqlen: 24, NHeads: 2, NHeadsK: 1, DQK: c.dqk, DV: 128}
		q, k, v, descales := fp8Inputs(t, &a)
		outs := map[PRounding][]uint16{}
		for _, p := range []PRounding{PRoundingDefault, c.rule, c.other} {
			out, err := forwardFP8(t, a, p, q, k, v, descales)
			if err != nil {
				t.Fatalf("DQK %d, P rounding %d: %v", c.dqk, p, err)
			}
			outs[p] = out
		}
		if !reflect.DeepEqual(outs[PRoundingDefault], outs[c.rule]) {
			t.Fatalf("DEFAULT differs from %s at DQK = %d, where DEFAULT is %s", c.ruleName, c.dqk, c.ruleName)
		}
		if reflect.DeepEqual(outs[PRoundingDefault], outs[c.other]) {
			t.Fatalf("%s gave DEFAULT's output bit for bit at DQK = %d", c.otherName, c.dqk)
		}
	}
}

func TestSplitPDiffersFromExactPAtBothHeadDims(t *testing.T) {
	for _, dqk := range []int64{128, 192} {
		a := Attention{Batch: 1, Seqlen: 24, NHeads: 2, NHeadsK: 1, DQK: dqk, DV: 128}
		q, k, v, descales := fp8Inputs(t, &a)
		split, err := forwardFP8(t, a, PRoundingSplit, q, k, v, descales)
		if err != nil {
			t.Fatalf("DQK %d: SPLIT: %v", dqk, err)
		}
		exact, err := forwardFP8(t, a, PRoundingExact, q, k, v, descales)
		if err != nil {
			t.Fatalf("DQK %d: EXACT: %v", dqk, err)
		}
		if reflect.DeepEqual(split, exact) {
			t.Fatalf("DQK %d: SPLIT gave EXACT's output bit for bit", dqk)
		}
	}
}

func TestPRoundingWithBF16IsRefused(t *testing.T) {
	a := &Attention{Batch: 1, Seqlen: 16, NHeads: 1, NHeadsK: 1, PRounding: PRoundingExact}
	buf := make([]uint16, 16*128)
	err := a.ForwardHostBF16(buf, buf, buf, make([]uint16, 16*128), nil)
	var zerr *Error
	if !errors.Is(err, ErrFP8FieldWithBF16) || !errors.As(err, &zerr) || !strings.Contains(zerr.Message, "p_rounding") {
		t.Fatalf("got %v, want ErrFP8FieldWithBF16 naming p_rounding", err)
	}
}
