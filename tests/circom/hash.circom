pragma circom 2.0.0;

// circomlib: a Poseidon hash of two private inputs, and a comparator (a < bound, 8 bits).
include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/comparators.circom";

template HashBelow() {
    signal input a;
    signal input b;
    signal input bound;
    signal output hash;
    component h = Poseidon(2);
    h.inputs[0] <== a;
    h.inputs[1] <== b;
    hash <== h.out;
    component lt = LessThan(8);
    lt.in[0] <== a;
    lt.in[1] <== bound;
    lt.out === 1;
}

component main {public [bound]} = HashBelow();
