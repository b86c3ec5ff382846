// 32x32-bit multiply-accumulate with 32-bit integers only (adapters without SHADER_INT64).
//
// mac(a, b, c, d) = a*b + c + d as (low word, high word), from four 16x16-bit products.
// The sum never exceeds 2^64 - 1, so the high word never overflows. The same signature as
// wide_int64.wgsl's, so the field code above it is the same text on both paths.
fn mac(a: u32, b: u32, c: u32, d: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    // The middle products may sum past 2^32: their carry is worth 2^48, i.e. 2^16 in the high word.
    let mid = p01 + p10;
    let mid_carry = select(0u, 0x10000u, mid < p01);
    let lo0 = p00 + (mid << 16u);
    var hi = p11 + (mid >> 16u) + mid_carry + select(0u, 1u, lo0 < p00);
    let lo1 = lo0 + c;
    hi += select(0u, 1u, lo1 < lo0);
    let lo2 = lo1 + d;
    hi += select(0u, 1u, lo2 < lo1);
    return vec2<u32>(lo2, hi);
}
