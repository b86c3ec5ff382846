pragma circom 2.0.0;

// Many public signals: 16 public inputs a, 16 public outputs c = a∘b and their sum; b private.
template Many(n) {
    signal input a[n];
    signal input b[n];
    signal output c[n];
    signal output sum;
    var acc = 0;
    for (var i = 0; i < n; i++) {
        c[i] <== a[i] * b[i];
        acc += c[i];
    }
    sum <== acc;
}

component main {public [a]} = Many(16);
