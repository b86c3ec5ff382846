// A prime field in Montgomery form, as NLIMBS little-endian 32-bit limbs: the template every
// field (Fr, Fq) is instantiated from. The host substitutes FIELD (the prefix), NLIMBS, and the
// constants; arkworks keeps the same representation (R = 2^(32N)), so buffers are copied
// to and from the device as they are.
//
// Needs `mac` (wide_int64.wgsl or wide_u32.wgsl). Both primes leave the top limb's top bit
// clear, so sums of two reduced elements never carry out of NLIMBS limbs.

alias FIELD = array<u32, NLIMBS>;

const FIELD_P = FIELD(MODULUS);
// Montgomery one, R mod p.
const FIELD_R = FIELD(MONT_ONE);
// -p^-1 mod 2^32.
const FIELD_INV: u32 = INV_WORD;

fn FIELD_zero() -> FIELD {
    return FIELD();
}

fn FIELD_one() -> FIELD {
    return FIELD_R;
}

fn FIELD_is_zero(a: FIELD) -> bool {
    var x = a;
    var acc = 0u;
    for (var i = 0u; i < NLIMBS; i++) {
        acc |= x[i];
    }
    return acc == 0u;
}

fn FIELD_eq(a: FIELD, b: FIELD) -> bool {
    var x = a;
    var y = b;
    var acc = 0u;
    for (var i = 0u; i < NLIMBS; i++) {
        acc |= x[i] ^ y[i];
    }
    return acc == 0u;
}

// x - p if x >= p, else x (x < 2p).
fn FIELD_reduce_once(a: FIELD) -> FIELD {
    var x = a;
    var p = FIELD_P;
    var d: FIELD;
    var borrow = 0u;
    for (var i = 0u; i < NLIMBS; i++) {
        let t = x[i] - p[i];
        let b1 = select(0u, 1u, x[i] < p[i]);
        d[i] = t - borrow;
        borrow = b1 | select(0u, 1u, t < borrow);
    }
    if (borrow == 0u) {
        return d;
    }
    return x;
}

fn FIELD_add(a: FIELD, b: FIELD) -> FIELD {
    var x = a;
    var y = b;
    var s: FIELD;
    var carry = 0u;
    for (var i = 0u; i < NLIMBS; i++) {
        let t = x[i] + y[i];
        let c1 = select(0u, 1u, t < x[i]);
        s[i] = t + carry;
        carry = c1 | select(0u, 1u, s[i] < t);
    }
    return FIELD_reduce_once(s);
}

fn FIELD_double(a: FIELD) -> FIELD {
    return FIELD_add(a, a);
}

fn FIELD_sub(a: FIELD, b: FIELD) -> FIELD {
    var x = a;
    var y = b;
    var d: FIELD;
    var borrow = 0u;
    for (var i = 0u; i < NLIMBS; i++) {
        let t = x[i] - y[i];
        let b1 = select(0u, 1u, x[i] < y[i]);
        d[i] = t - borrow;
        borrow = b1 | select(0u, 1u, t < borrow);
    }
    if (borrow == 0u) {
        return d;
    }
    // Went below zero: add p back (the carry out cancels the borrow).
    var p = FIELD_P;
    var carry = 0u;
    for (var i = 0u; i < NLIMBS; i++) {
        let t = d[i] + p[i];
        let c1 = select(0u, 1u, t < d[i]);
        d[i] = t + carry;
        carry = c1 | select(0u, 1u, d[i] < t);
    }
    return d;
}

fn FIELD_neg(a: FIELD) -> FIELD {
    if (FIELD_is_zero(a)) {
        return a;
    }
    return FIELD_sub(FIELD_zero(), a);
}

// Montgomery product a*b*R^-1 mod p (CIOS: one multiply row, then one reduction row, per limb).
fn FIELD_mul(a: FIELD, b: FIELD) -> FIELD {
    var x = a;
    var y = b;
    var p = FIELD_P;
    // t has two extra limbs for the row carries.
    var t: array<u32, NLIMBS_PLUS_2>;
    for (var i = 0u; i < NLIMBS; i++) {
        let yi = y[i];
        var c = 0u;
        for (var j = 0u; j < NLIMBS; j++) {
            let r = mac(x[j], yi, t[j], c);
            t[j] = r.x;
            c = r.y;
        }
        let s = t[NLIMBS] + c;
        t[NLIMBS + 1u] = select(0u, 1u, s < c);
        t[NLIMBS] = s;
        // m makes the lowest limb vanish: t + m*p is divisible by 2^32.
        let m = t[0] * FIELD_INV;
        var r0 = mac(m, p[0], t[0], 0u);
        c = r0.y;
        for (var j = 1u; j < NLIMBS; j++) {
            let r = mac(m, p[j], t[j], c);
            t[j - 1u] = r.x;
            c = r.y;
        }
        let s2 = t[NLIMBS] + c;
        t[NLIMBS - 1u] = s2;
        t[NLIMBS] = t[NLIMBS + 1u] + select(0u, 1u, s2 < c);
    }
    var out: FIELD;
    for (var i = 0u; i < NLIMBS; i++) {
        out[i] = t[i];
    }
    // The result is below 2p; t[NLIMBS] is 0 for these primes (top limb below 2^31), kept for safety.
    if (t[NLIMBS] != 0u) {
        var borrow = 0u;
        for (var i = 0u; i < NLIMBS; i++) {
            let d = out[i] - p[i];
            let b1 = select(0u, 1u, out[i] < p[i]);
            out[i] = d - borrow;
            borrow = b1 | select(0u, 1u, d < borrow);
        }
        return out;
    }
    return FIELD_reduce_once(out);
}

fn FIELD_sqr(a: FIELD) -> FIELD {
    return FIELD_mul(a, a);
}
