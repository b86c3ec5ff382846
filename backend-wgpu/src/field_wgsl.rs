//! The field functions that touch every limb (`is_zero`, `eq`, `reduce_once`, `add`, `sub`,
//! `mul`) as straight-line WGSL, one named scalar per limb, generated for each field from its
//! modulus.
//!
//! Why not loops over `array<u32, N>` (as the rest of field.wgsl): a loop that indexes an
//! array by its counter keeps the array in addressable memory unless the driver unrolls it
//! completely. The H200's numbers with the loops pointed there (NVIDIA's Vulkan compiler,
//! driver 580): an NTT pass of 2^19 butterflies took ~1 ms (CUDA's whole 2^20 NTT: 0.5 ms),
//! and the MSM's window reduction spent ~0.3 ms per XYZZ addition per thread — about what 288
//! dependent multiply-adds cost when each waits on a local-memory load and store. Written out,
//! every limb is an SSA value a compiler keeps in a register, and the modulus limbs are
//! immediates; NOTES.md has the measurement of the change.

/// WGSL for `{prefix}_is_zero`, `_eq`, `_reduce_once`, `_add`, `_sub` and `_mul` over a
/// field of `modulus.len()` 32-bit limbs (top bit of the top limb clear, so sums of two
/// reduced elements fit the limbs), `neg_inv` = −p⁻¹ mod 2³². Needs `mac` (wide_*.wgsl).
pub fn straight_line(prefix: &str, modulus: &[u32], neg_inv: u32) -> String {
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

    if modulus[n - 1] < 0x7fff_ffff {
        s.push_str(&mul_no_carry(prefix, modulus, neg_inv));
        return s;
    }
    // Montgomery product a·b·R⁻¹ mod p, CIOS: per limb of b, one multiply row into t, then
    // one reduction row that makes t's lowest limb vanish and shifts t down a limb. t has
    // n + 2 limbs (t{n}, t{n+1}: the row carries).
    s.push_str(&format!("fn {prefix}_mul(a: {prefix}, b: {prefix}) -> {prefix} {{\n"));
    unpack(&mut s, "a", "a");
    for i in 0..n + 2 {
        s.push_str(&format!("    var t{i} = 0u;\n"));
    }
    s.push_str("    var c = 0u;\n    var r: vec2<u32>;\n    var m = 0u;\n    var hi = 0u;\n");
    for i in 0..n {
        s.push_str(&format!("    // row {i}\n    let b{i} = b[{i}];\n    c = 0u;\n"));
        for j in 0..n {
            s.push_str(&format!("    r = mac(a{j}, b{i}, t{j}, c);\n    t{j} = r.x;\n    c = r.y;\n"));
        }
        s.push_str(&format!("    hi = t{n} + c;\n    t{n1} = select(0u, 1u, hi < c);\n    t{n} = hi;\n", n1 = n + 1));
        s.push_str(&format!(
            "    m = t0 * 0x{neg_inv:08x}u;\n    r = mac(m, 0x{:08x}u, t0, 0u);\n    c = r.y;\n",
            modulus[0]
        ));
        for (j, p) in modulus.iter().enumerate().skip(1) {
            s.push_str(&format!("    r = mac(m, 0x{p:08x}u, t{j}, c);\n    t{} = r.x;\n    c = r.y;\n", j - 1));
        }
        s.push_str(&format!(
            "    hi = t{n} + c;\n    t{} = hi;\n    t{n} = t{n1} + select(0u, 1u, hi < c);\n",
            n - 1,
            n1 = n + 1
        ));
    }
    // The result is below 2p. t{n} is 0 for these primes (top limb below 2^31); kept so the
    // product is right for any odd modulus below 2^(32n).
    let t_list = list("t");
    s.push_str(&format!("    let out = {prefix}({t_list});\n"));
    s.push_str(&format!("    if (t{n} != 0u) {{\n"));
    s.push_str("        var borrow = 0u;\n");
    for (i, p) in modulus.iter().enumerate() {
        s.push_str(&format!(
            "        let w{i}t = t{i} - 0x{p:08x}u;\n        let w{i} = w{i}t - borrow;\n        borrow = select(0u, 1u, t{i} < 0x{p:08x}u) | select(0u, 1u, w{i}t < borrow);\n"
        ));
    }
    s.push_str(&format!("        return {prefix}({});\n    }}\n", list("w")));
    s.push_str(&format!("    return {prefix}_reduce_once(out);\n}}\n"));
    s
}

/// The Montgomery product for a modulus whose top limb is below 2^31 − 1 (both of BLS12-381's
/// fields): CIOS with the multiply and reduction rows interleaved, and no carry limbs above
/// t{n−1} (the "no-carry" CIOS of gnark-crypto: with that much room at the top, the two row
/// carries add up without overflowing a limb, so t never needs limbs n and n + 1). Per row
/// that saves the carry limbs' sums and compares (~8 operations of ~600) and the final
/// check of a carry limb, and it keeps n + 2 fewer values live. The result is below 2p.
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

/// WGSL for the lazy Fq2 product's pieces (`G16_WGPU_FQ2_LAZY`, formulas.rs): a field element
/// of n limbs, `{prefix}_wide` a double-width value of 2n limbs.
///
/// - `{prefix}_add_raw(a, b)`: a + b without reduction (< 2p for reduced inputs: fits the
///   limbs, the top bit of p's top limb being clear); only ever an operand of `mul_wide`.
/// - `{prefix}_mul_wide(a, b)`: the whole product a·b (schoolbook, 2n limbs, no reduction);
///   exact for any a, b below 2^(32n).
/// - `{prefix}_wide_add(a, b)`: a + b, for a sum below 2^(64n).
/// - `{prefix}_wide_sub(a, b)`: a − b, for a ≥ b (the borrow out is dropped).
/// - `{prefix}_wide_sub_mod(a, b)`: a − b, plus p·2^(32n) where it went below zero: for
///   a, b < p·2^(32n) the result is in [0, p·2^(32n)) and congruent to a − b mod p.
/// - `{prefix}_redc(t)`: Montgomery reduction t·R⁻¹ mod p, fully reduced, for t < p·R
///   (R = 2^(32n)): 12 rows of (one m, n multiply-adds), the row's carry kept in one word.
pub fn lazy_wide(prefix: &str, modulus: &[u32], neg_inv: u32) -> String {
    let n = modulus.len();
    // p < 2^(32n − 2): unreduced sums (< 2p) fit the limbs, and a product of two of them
    // (< 4p²) stays below p·R, what `redc` needs (BLS12-381's p < 2^381).
    assert!(modulus[n - 1] < 0x4000_0000, "the lazy product needs p < 2^(32n - 2)");
    let w = 2 * n;
    let mut s = format!("alias {prefix}_wide = array<u32, {w}>;\n\n");
    let list =
        |name: &str, range: std::ops::Range<usize>| range.map(|i| format!("{name}{i}")).collect::<Vec<_>>().join(", ");

    s.push_str(&format!("fn {prefix}_add_raw(a: {prefix}, b: {prefix}) -> {prefix} {{\n    var carry = 0u;\n"));
    for i in 0..n {
        s.push_str(&format!(
            "    let t{i} = a[{i}] + b[{i}];\n    let s{i} = t{i} + carry;\n    carry = select(0u, 1u, t{i} < a[{i}]) | select(0u, 1u, s{i} < t{i});\n"
        ));
    }
    s.push_str(&format!("    return {prefix}({});\n}}\n\n", list("s", 0..n)));

    s.push_str(&format!("fn {prefix}_mul_wide(a: {prefix}, b: {prefix}) -> {prefix}_wide {{\n"));
    for i in 0..n {
        s.push_str(&format!("    let a{i} = a[{i}];\n"));
    }
    for i in 0..w {
        s.push_str(&format!("    var t{i} = 0u;\n"));
    }
    s.push_str("    var r: vec2<u32>;\n    var c = 0u;\n");
    for i in 0..n {
        s.push_str(&format!("    // row {i}\n    let b{i} = b[{i}];\n    c = 0u;\n"));
        for j in 0..n {
            let acc = if i == 0 { "0u".to_string() } else { format!("t{}", i + j) };
            s.push_str(&format!("    r = mac(a{j}, b{i}, {acc}, c);\n    t{} = r.x;\n    c = r.y;\n", i + j));
        }
        s.push_str(&format!("    t{} = c;\n", i + n));
    }
    s.push_str(&format!("    return {prefix}_wide({});\n}}\n\n", list("t", 0..w)));

    // Both subtractions: d = a − b with borrows.
    let sub = |s: &mut String| {
        s.push_str("    var borrow = 0u;\n");
        for i in 0..w {
            s.push_str(&format!(
                "    let x{i} = a[{i}];\n    let y{i} = b[{i}];\n    let t{i} = x{i} - y{i};\n    let d{i} = t{i} - borrow;\n    borrow = select(0u, 1u, x{i} < y{i}) | select(0u, 1u, t{i} < borrow);\n"
            ));
        }
    };
    // a + b, for a sum below 2^(64n) (the carry out is dropped).
    s.push_str(&format!("fn {prefix}_wide_add(a: {prefix}_wide, b: {prefix}_wide) -> {prefix}_wide {{\n"));
    s.push_str("    var carry = 0u;\n");
    for i in 0..w {
        s.push_str(&format!(
            "    let x{i} = a[{i}];\n    let t{i} = x{i} + b[{i}];\n    let s{i} = t{i} + carry;\n    carry = select(0u, 1u, t{i} < x{i}) | select(0u, 1u, s{i} < t{i});\n"
        ));
    }
    s.push_str(&format!("    return {prefix}_wide({});\n}}\n\n", list("s", 0..w)));

    s.push_str(&format!("fn {prefix}_wide_sub(a: {prefix}_wide, b: {prefix}_wide) -> {prefix}_wide {{\n"));
    sub(&mut s);
    s.push_str(&format!("    return {prefix}_wide({});\n}}\n\n", list("d", 0..w)));

    s.push_str(&format!("fn {prefix}_wide_sub_mod(a: {prefix}_wide, b: {prefix}_wide) -> {prefix}_wide {{\n"));
    sub(&mut s);
    s.push_str(&format!("    if (borrow == 0u) {{\n        return {prefix}_wide({});\n    }}\n", list("d", 0..w)));
    // Adding p·2^(32n) touches the upper half only; its carry out cancels the borrow.
    s.push_str("    var carry = 0u;\n");
    for (i, p) in modulus.iter().enumerate() {
        let k = n + i;
        s.push_str(&format!(
            "    let u{k} = d{k} + 0x{p:08x}u;\n    let e{k} = u{k} + carry;\n    carry = select(0u, 1u, u{k} < d{k}) | select(0u, 1u, e{k} < u{k});\n"
        ));
    }
    s.push_str(&format!("    return {prefix}_wide({}, {});\n}}\n\n", list("d", 0..n), list("e", n..w)));

    // REDC: row i makes limb i vanish by adding m·p·2^(32i); the row's carry goes into limb
    // i + n together with the previous row's carry out of that limb (`hi`, at most 1).
    s.push_str(&format!("fn {prefix}_redc(x: {prefix}_wide) -> {prefix} {{\n"));
    for i in 0..w {
        s.push_str(&format!("    var t{i} = x[{i}];\n"));
    }
    s.push_str(
        "    var r: vec2<u32>;\n    var c = 0u;\n    var m = 0u;\n    var hi = 0u;\n    var u = 0u;\n    var v = 0u;\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "    // row {i}\n    m = t{i} * 0x{neg_inv:08x}u;\n    r = mac(m, 0x{:08x}u, t{i}, 0u);\n    c = r.y;\n",
            modulus[0]
        ));
        for (j, p) in modulus.iter().enumerate().skip(1) {
            s.push_str(&format!("    r = mac(m, 0x{p:08x}u, t{k}, c);\n    t{k} = r.x;\n    c = r.y;\n", k = i + j));
        }
        let k = i + n;
        s.push_str(&format!(
            "    u = t{k} + c;\n    v = u + hi;\n    hi = select(0u, 1u, u < c) | select(0u, 1u, v < u);\n    t{k} = v;\n"
        ));
    }
    // t < p·R: the result (t + Σ m·p·2^(32i)) / R is below 2p, so `hi` is 0 here.
    s.push_str(&format!("    return {prefix}_reduce_once({prefix}({}));\n}}\n", list("t", n..w)));
    s
}
