// 32x32-bit multiply-accumulate through the adapter's 64-bit integers (SHADER_INT64).
//
// mac(a, b, c, d) = a*b + c + d as (low word, high word). The sum never exceeds 2^64 - 1:
// (2^32-1)^2 + 2(2^32-1) = 2^64 - 1, so one u64 holds it exactly. Every limb product of the
// field code goes through `mac`, so this file alone makes a module the SHADER_INT64 path.
fn mac(a: u32, b: u32, c: u32, d: u32) -> vec2<u32> {
    let t = u64(a) * u64(b) + u64(c) + u64(d);
    return vec2<u32>(u32(t & 0xfffffffflu), u32(t >> 32u));
}
