package zyfa

import (
	"math"
	"math/rand"
	"os"
	"strconv"
	"testing"
	"time"
)

// poisonBF16 is a BF16 NaN written into outputs before a call, so an element it forgets shows up.
const poisonBF16 = 0x7fc0

// freshRand gives new inputs every run and logs the seed; ZYFA_TEST_SEED replays a failure.
func freshRand(t *testing.T) *rand.Rand {
	seed := time.Now().UnixNano()
	if s, err := strconv.ParseInt(os.Getenv("ZYFA_TEST_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("ZYFA_TEST_SEED=%d", seed)
	return rand.New(rand.NewSource(seed))
}

// randomBF16 returns n BF16 values uniform in [-scale, scale).
func randomBF16(r *rand.Rand, n int, scale float32) []uint16 {
	x := make([]uint16, n)
	for i := range x {
		x[i] = BF16FromFloat32((r.Float32()*2 - 1) * scale)
	}
	return x
}

// randomQKV is fresh BF16 q, k and v for a contiguous BSHD shape, values in [-1, 1).
func randomQKV(r *rand.Rand, a *Attention) (q, k, v []uint16) {
	dqk, dv := a.dims()
	q = randomBF16(r, int(a.Batch*a.Seqlen*a.NHeads*dqk), 1)
	k = randomBF16(r, int(a.Batch*a.Seqlen*a.NHeadsK*dqk), 1)
	v = randomBF16(r, int(a.Batch*a.Seqlen*a.NHeadsK*dv), 1)
	return q, k, v
}

func bf16Values(x []uint16) []float64 {
	y := make([]float64, len(x))
	for i, b := range x {
		y[i] = float64(BF16ToFloat32(b))
	}
	return y
}

// decodeFP8 decodes the e4m3 codes of a BSHD tensor with `heads` heads of `dim` values, each (batch,
// head) times descale(b, h): the exact inputs a call sees.
func decodeFP8(a *Attention, codes []uint8, heads, dim int64, descale func(b, h int) float32) []float64 {
	y := make([]float64, len(codes))
	for i, c := range codes {
		row := i / int(dim) // (b * seqlen + s) * heads + h
		b, h := row/int(a.Seqlen*heads), row%int(heads)
		y[i] = float64(E4M3ToFloat32(c)) * float64(descale(b, h))
	}
	return y
}

// attentionFP64 is exact causal attention of decoded BSHD inputs: out (BSHD) and lse (batch, nheads, seqlen).
func attentionFP64(a *Attention, q, k, v []float64, scale float64) (out, lse []float64) {
	B, S, H, Hk := int(a.Batch), int(a.Seqlen), int(a.NHeads), int(a.NHeadsK)
	dqk, dv := a.dims()
	Dqk, Dv := int(dqk), int(dv)
	out = make([]float64, B*S*H*Dv)
	lse = make([]float64, B*H*S)
	scores := make([]float64, S)
	for b := 0; b < B; b++ {
		for h := 0; h < H; h++ {
			hk := h / (H / Hk)
			for i := 0; i < S; i++ {
				qi := q[((b*S+i)*H+h)*Dqk:][:Dqk]
				maxScore := math.Inf(-1)
				for j := 0; j <= i; j++ {
					kj := k[((b*S+j)*Hk+hk)*Dqk:][:Dqk]
					dot := 0.0
					for d := range qi {
						dot += qi[d] * kj[d]
					}
					scores[j] = dot * scale
					maxScore = math.Max(maxScore, scores[j])
				}
				sum := 0.0
				for j := 0; j <= i; j++ {
					scores[j] = math.Exp(scores[j] - maxScore)
					sum += scores[j]
				}
				lse[(b*H+h)*S+i] = maxScore + math.Log(sum)
				oi := out[((b*S+i)*H+h)*Dv:][:Dv]
				for j := 0; j <= i; j++ {
					vj := v[((b*S+j)*Hk+hk)*Dv:][:Dv]
					for d := range oi {
						oi[d] += scores[j] / sum * vj[d]
					}
				}
			}
		}
	}
	return out, lse
}

// relativeRMSError is ||got - want|| / ||want||; it fails the test on a non-finite (unwritten) element.
func relativeRMSError(t *testing.T, got, want []float64) float64 {
	t.Helper()
	var err, norm float64
	for i := range want {
		if math.IsNaN(got[i]) || math.IsInf(got[i], 0) {
			t.Fatalf("element %d is %v: not written", i, got[i])
		}
		err += (got[i] - want[i]) * (got[i] - want[i])
		norm += want[i] * want[i]
	}
	return math.Sqrt(err / norm)
}

func maxAbsError(t *testing.T, got []float32, want []float64) float64 {
	t.Helper()
	worst := 0.0
	for i := range want {
		g := float64(got[i])
		if math.IsNaN(g) || math.IsInf(g, 0) {
			t.Fatalf("element %d is %v: not written", i, g)
		}
		worst = math.Max(worst, math.Abs(g-want[i]))
	}
	return worst
}
