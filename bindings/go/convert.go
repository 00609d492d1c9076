package zyfa

import "math"

// BF16FromFloat32 is the BF16 bit pattern nearest to x (ties to even), as the library rounds.
func BF16FromFloat32(x float32) uint16 {
	bits := math.Float32bits(x)
	if x != x { // NaN stays NaN
		return uint16(bits>>16) | 0x40
	}
	return uint16((bits + 0x7fff + (bits>>16)&1) >> 16)
}

// BF16ToFloat32 is the value of a BF16 bit pattern.
func BF16ToFloat32(b uint16) float32 {
	return math.Float32frombits(uint32(b) << 16)
}

// E4M3ToFloat32 is the value of an e4m3 code (OCP "fn": 0x7f and 0xff are NaN, no infinities, max 448).
func E4M3ToFloat32(code uint8) float32 {
	const exponentBias, mantissaBits = 7, 3
	exponent, mantissa := int(code>>3)&15, float64(code&7)
	if exponent == 15 && code&7 == 7 {
		return float32(math.NaN())
	}
	var v float64
	if exponent == 0 {
		v = math.Ldexp(mantissa, 1-exponentBias-mantissaBits)
	} else {
		v = math.Ldexp(8+mantissa, exponent-exponentBias-mantissaBits)
	}
	if code&0x80 != 0 {
		v = -v
	}
	return float32(v)
}
