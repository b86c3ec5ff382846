//! The prime fields' WGSL, per field from its modulus: the template shaders/field/fp.wgsl
//! instantiated with the field's prefix and constants, followed by the functions that touch
//! every limb (`is_zero`, `eq`, `reduce_once`, `add`, `sub`, `mul`) as straight-line code,
//! one named scalar per limb and the modulus limbs as immediates.
//!
//! Why generated and not loops over `array<u32, N>` (as the rest of fp.wgsl): a loop that
//! indexes an array by its counter keeps the array in addressable memory unless the driver
//! unrolls it completely, and then every multiply-add of a product waits on a load and a
//! store; written out, every limb is an SSA value a compiler keeps in a register. On the H200
//! the change made the MSM almost 4× faster (docs/perf/wgpu.md, "Straight-line field code").
//! It lives beside the composition rather than under formulas/ because it is WGSL text for
//! every module, not a program the interpreter runs.

use ark_ff::{BigInteger, PrimeField};

/// `fp.wgsl` instantiated for `F` under `prefix`, with its straight-line functions.
pub(crate) fn source<F: PrimeField + MontgomeryRepr>(prefix: &str) -> String {
    let modulus = limbs32(&F::MODULUS);
    let limbs = modulus.len();
    let one = limbs32(&F::ONE.into_bigint_montgomery());
    let neg_inv = neg_inv(modulus[0]);
    let src = include_str!("../../../shaders/field/fp.wgsl")
        .replace("NLIMBS", &format!("{limbs}u"))
        .replace("MONT_ONE", &wgsl_u32_list(&one))
        .replace("MODULUS", &wgsl_u32_list(&modulus))
        .replace("INV_WORD", &format!("0x{neg_inv:08x}u"));
    let mut out = replace_word(&src.replace("FIELD_", &format!("{prefix}_")), "FIELD", prefix);
    out.push_str(&straight_line(prefix, &modulus, neg_inv));
    out
}

/// 32-bit little-endian limbs of a big integer.
fn limbs32<B: BigInteger>(b: &B) -> Vec<u32> {
    b.as_ref().iter().flat_map(|w| [*w as u32, (*w >> 32) as u32]).collect()
}

fn wgsl_u32_list(v: &[u32]) -> String {
    v.iter().map(|w| format!("0x{w:08x}u")).collect::<Vec<_>>().join(", ")
}

/// -p^-1 mod 2^32 by Newton's iteration (p is odd).
fn neg_inv(p0: u32) -> u32 {
    let mut inv = 1u32;
    for _ in 0..5 {
        inv = inv.wrapping_mul(2u32.wrapping_sub(p0.wrapping_mul(inv)));
    }
    inv.wrapping_neg()
}

/// The Montgomery form of a field element (arkworks keeps it internally).
pub(crate) trait MontgomeryRepr: PrimeField {
    fn into_bigint_montgomery(self) -> Self::BigInt;
}

impl<P: ark_ff::FpConfig<N>, const N: usize> MontgomeryRepr for ark_ff::Fp<P, N> {
    fn into_bigint_montgomery(self) -> Self::BigInt {
        self.0
    }
}

/// Replaces whole-word occurrences of `word` (identifier boundaries).
pub(crate) fn replace_word(src: &str, word: &str, with: &str) -> String {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(pos) = rest.find(word) {
        let before = rest[..pos].chars().next_back();
        let after = rest[pos + word.len()..].chars().next();
        out.push_str(&rest[..pos]);
        if before.is_some_and(is_ident) || after.is_some_and(is_ident) {
            out.push_str(word);
        } else {
            out.push_str(with);
        }
        rest = &rest[pos + word.len()..];
    }
    out.push_str(rest);
    out
}

/// WGSL for `{prefix}_is_zero`, `_eq`, `_reduce_once`, `_add`, `_sub` and `_mul` over a field
/// of `modulus.len()` 32-bit limbs whose top limb is below 2^31 − 1 (both of BLS12-381's
/// fields: sums of two reduced elements fit the limbs, and the product needs no carry limbs),
/// `neg_inv` = −p⁻¹ mod 2³². Needs `mac` (field/wide_*.wgsl).
fn straight_line(prefix: &str, modulus: &[u32], neg_inv: u32) -> String {
    let n = modulus.len();
    let mut s = String::new();
    let list = |name: &str| (0..n).map(|i| format!("{name}{i}")).collect::<Vec<_>>().join(", ");
    let unpack = |s: &mut String, name: &str, from: &str| {
        for i in 0..n {
            s.push_str(&format!("    let {name}{i} = {from}[{i}];\n"));
        }
    };
    // d = x − p limb by limb with borrows, then d if nothing was borrowed, else x.
    let subtract_p = |s: &mut String, x: &str, d: &str| {
        s.push_str("    var borrow = 0u;\n");
        for (i, p) in modulus.iter().enumerate() {
            s.push_str(&format!(
                "    let {d}{i}t = {x}{i} - 0x{p:08x}u;\n    let {d}{i} = {d}{i}t - borrow;\n    borrow = select(0u, 1u, {x}{i} < 0x{p:08x}u) | select(0u, 1u, {d}{i}t < borrow);\n"
            ));
        }
    };

    let or_all = |f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join(" | ");
    s.push_str(&format!(
        "fn {prefix}_is_zero(a: {prefix}) -> bool {{\n    return ({}) == 0u;\n}}\n\n",
        or_all(&|i| format!("a[{i}]"))
    ));
    s.push_str(&format!(
        "fn {prefix}_eq(a: {prefix}, b: {prefix}) -> bool {{\n    return ({}) == 0u;\n}}\n\n",
        or_all(&|i| format!("(a[{i}] ^ b[{i}])"))
    ));

    // x − p if x ≥ p, else x (x < 2p).
    s.push_str(&format!("fn {prefix}_reduce_once(x: {prefix}) -> {prefix} {{\n"));
    unpack(&mut s, "x", "x");
    subtract_p(&mut s, "x", "d");
    s.push_str(&format!(
        "    if (borrow == 0u) {{\n        return {prefix}({});\n    }}\n    return x;\n}}\n\n",
        list("d")
    ));

    s.push_str(&format!("fn {prefix}_add(a: {prefix}, b: {prefix}) -> {prefix} {{\n"));
    unpack(&mut s, "a", "a");
    unpack(&mut s, "b", "b");
    s.push_str("    var carry = 0u;\n");
    for i in 0..n {
        s.push_str(&format!(
            "    let t{i} = a{i} + b{i};\n    let s{i} = t{i} + carry;\n    carry = select(0u, 1u, t{i} < a{i}) | select(0u, 1u, s{i} < t{i});\n"
        ));
    }
    subtract_p(&mut s, "s", "d");
    s.push_str(&format!(
        "    if (borrow == 0u) {{\n        return {prefix}({});\n    }}\n    return {prefix}({});\n}}\n\n",
        list("d"),
        list("s")
    ));

    // a − b, plus p where it went below zero (the carry out cancels the borrow).
    s.push_str(&format!("fn {prefix}_sub(a: {prefix}, b: {prefix}) -> {prefix} {{\n"));
    unpack(&mut s, "a", "a");
    unpack(&mut s, "b", "b");
    s.push_str("    var borrow = 0u;\n");
    for i in 0..n {
        s.push_str(&format!(
            "    let t{i} = a{i} - b{i};\n    let d{i} = t{i} - borrow;\n    borrow = select(0u, 1u, a{i} < b{i}) | select(0u, 1u, t{i} < borrow);\n"
        ));
    }
    s.push_str(&format!("    if (borrow == 0u) {{\n        return {prefix}({});\n    }}\n", list("d")));
    s.push_str("    var carry = 0u;\n");
    for (i, p) in modulus.iter().enumerate() {
        s.push_str(&format!(
            "    let u{i} = d{i} + 0x{p:08x}u;\n    let e{i} = u{i} + carry;\n    carry = select(0u, 1u, u{i} < d{i}) | select(0u, 1u, e{i} < u{i});\n"
        ));
    }
    s.push_str(&format!("    return {prefix}({});\n}}\n\n", list("e")));

    s.push_str(&mul_no_carry(prefix, modulus, neg_inv));
    s
}

/// The Montgomery product a·b·R⁻¹ mod p: CIOS with the multiply and reduction rows
/// interleaved, and no carry limbs above t{n−1} (the "no-carry" CIOS of gnark-crypto: with a
/// top limb below 2^31 − 1, the two row carries add up without overflowing a limb, so t never
/// needs limbs n and n + 1). Fewer live values than the textbook CIOS, and no final check of a
/// carry limb. The result is below 2p, then reduced once.
fn mul_no_carry(prefix: &str, modulus: &[u32], neg_inv: u32) -> String {
    let n = modulus.len();
    let mut s = format!("fn {prefix}_mul(a: {prefix}, b: {prefix}) -> {prefix} {{\n");
    for i in 0..n {
        s.push_str(&format!("    let a{i} = a[{i}];\n"));
    }
    for i in 0..n {
        s.push_str(&format!("    var t{i} = 0u;\n"));
    }
    s.push_str("    var r: vec2<u32>;\n    var m = 0u;\n    var ca = 0u;\n    var cm = 0u;\n");
    for i in 0..n {
        s.push_str(&format!("    // row {i}\n    let b{i} = b[{i}];\n"));
        s.push_str(&format!("    r = mac(a0, b{i}, t0, 0u);\n    t0 = r.x;\n    ca = r.y;\n"));
        s.push_str(&format!(
            "    m = t0 * 0x{neg_inv:08x}u;\n    r = mac(m, 0x{:08x}u, t0, 0u);\n    cm = r.y;\n",
            modulus[0]
        ));
        for (j, p) in modulus.iter().enumerate().skip(1) {
            s.push_str(&format!(
                "    r = mac(a{j}, b{i}, t{j}, ca);\n    t{j} = r.x;\n    ca = r.y;\n    r = mac(m, 0x{p:08x}u, t{j}, cm);\n    t{} = r.x;\n    cm = r.y;\n",
                j - 1
            ));
        }
        s.push_str(&format!("    t{} = cm + ca;\n", n - 1));
    }
    let list = (0..n).map(|i| format!("t{i}")).collect::<Vec<_>>().join(", ");
    s.push_str(&format!("    return {prefix}_reduce_once({prefix}({list}));\n}}\n"));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The top limb [`straight_line`] needs to stay below: the no-carry product's room.
    const TOP_LIMB_BELOW: u32 = 0x7fff_ffff;

    #[test]
    fn both_fields_have_room_for_the_no_carry_product() {
        for top in [
            *limbs32(&ark_bls12_381::Fr::MODULUS).last().unwrap(),
            *limbs32(&ark_bls12_381::Fq::MODULUS).last().unwrap(),
        ] {
            assert!(top < TOP_LIMB_BELOW, "top limb {top:#x}");
        }
    }

    #[test]
    fn neg_inv_inverts_the_low_limb() {
        for p0 in [limbs32(&ark_bls12_381::Fr::MODULUS)[0], limbs32(&ark_bls12_381::Fq::MODULUS)[0]] {
            assert_eq!(p0.wrapping_mul(neg_inv(p0)), u32::MAX, "p0 · (−p0⁻¹) = −1 mod 2^32");
        }
    }

    #[test]
    fn words_are_replaced_whole() {
        assert_eq!(replace_word("FIELD FIELD_x xFIELD (FIELD)", "FIELD", "fq"), "fq FIELD_x xFIELD (fq)");
    }
}
