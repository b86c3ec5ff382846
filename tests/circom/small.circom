pragma circom 2.0.0;

// The parsers' fixtures (fixtures/, made by fixtures.sh): small enough that thousands of
// mutated copies parse in seconds, with coefficients that are not 1 (7, −3, r − 1).
template Small() {
    signal input x;
    signal input y;
    signal output out;
    signal t;
    t <== x * y;
    out <== t * (x + 7) - 3 * y;
}

component main {public [x]} = Small();
