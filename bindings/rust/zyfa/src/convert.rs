//! Conversions between f32 and the bit patterns that the host calls take: BF16 as u16, e4m3 as u8.
//! Both round to nearest even, as the library does.

/// The BF16 bit pattern nearest to `x` (ties to even); NaN stays NaN.
pub fn bf16_from_f32(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return ((bits >> 16) | 0x40) as u16;
    }
    let round = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(round) >> 16) as u16
}

pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// The value of an e4m3 code (OCP "fn": 0x7f and 0xff are NaN, no infinities, max 448).
pub fn e4m3_to_f32(code: u8) -> f32 {
    const EXPONENT_BIAS: i32 = 7;
    const MANTISSA_BITS: i32 = 3;
    let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((code >> 3) & 0xf);
    let mantissa = f32::from(code & 7);
    if exponent == 15 && code & 7 == 7 {
        return f32::NAN;
    }
    let magnitude = if exponent == 0 {
        mantissa * 2f32.powi(1 - EXPONENT_BIAS - MANTISSA_BITS)
    } else {
        (8.0 + mantissa) * 2f32.powi(exponent - EXPONENT_BIAS - MANTISSA_BITS)
    };
    sign * magnitude
}
