// A prime field in Montgomery form, as NLIMBS little-endian 32-bit limbs: the template every
// field (Fr, Fq) is instantiated from. The host substitutes FIELD (the prefix), NLIMBS, and the
// constants; arkworks keeps the same representation (R = 2^(32N)), so buffers are copied
// to and from the device as they are.
//
// FIELD_is_zero, FIELD_eq, FIELD_reduce_once, FIELD_add, FIELD_sub and FIELD_mul are generated as
// straight-line code with one scalar per limb (the wgpu backend's field composer says why), and
// need `mac` (wide_int64.wgsl or wide_u32.wgsl). Both primes leave the top limb's top bit
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

fn FIELD_double(a: FIELD) -> FIELD {
    return FIELD_add(a, a);
}

fn FIELD_neg(a: FIELD) -> FIELD {
    if (FIELD_is_zero(a)) {
        return a;
    }
    return FIELD_sub(FIELD_zero(), a);
}

fn FIELD_sqr(a: FIELD) -> FIELD {
    return FIELD_mul(a, a);
}
