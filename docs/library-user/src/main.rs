use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError, Variable};
use ark_relations::lc;
use g16::backend::{Backend, BackendKind};
use g16::backends;
use g16::prover::{verify, CheckedKey, Prover, Randomness};
use g16::settings::Settings;
use g16::timeline::{Report, Timeline};
use g16::Fr;
use rand::rngs::OsRng;

/// Knows x with x³ + x + 5 = y; y is public.
#[derive(Clone)]
struct Cubic {
    x: Fr,
}

impl ConstraintSynthesizer<Fr> for Cubic {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let y_value = self.x * self.x * self.x + self.x + Fr::from(5u64);
        let y = cs.new_input_variable(|| Ok(y_value))?;
        let x = cs.new_witness_variable(|| Ok(self.x))?;
        let x2 = cs.new_witness_variable(|| Ok(self.x * self.x))?;
        let x3 = cs.new_witness_variable(|| Ok(self.x * self.x * self.x))?;
        cs.enforce_r1cs_constraint(|| lc!() + x, || lc!() + x, || lc!() + x2)?;
        cs.enforce_r1cs_constraint(|| lc!() + x2, || lc!() + x, || lc!() + x3)?;
        cs.enforce_r1cs_constraint(
            || lc!() + x3 + x + (Fr::from(5u64), Variable::One),
            || lc!() + Variable::One,
            || lc!() + y,
        )?;
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let circuit = Cubic { x: Fr::from(3u64) };

    // 1. A key. `CheckedKey` is the only key a prover accepts: `generate` runs arkworks' setup with
    //    toxic waste from the RNG given (a one-party setup: a real key comes from a ceremony),
    //    `load`/`read`/`new` check a key from elsewhere — every point on the curve and in the
    //    subgroup, none of α, β, γ, δ the identity, sizes consistent — and say which point is
    //    wrong if one is.
    let key = CheckedKey::generate(circuit.clone(), &mut OsRng)?;

    // 2. A backend. `Auto` takes CUDA, then a hardware wgpu adapter, then the CPU; `Settings`
    //    are the typed options (`Settings::from_env()` reads the variables docs/tuning.md lists).
    let backend = backends::open(BackendKind::Auto, &Settings::default())?;
    println!("proving on {}", backend.info().device);

    // 3. Prepare the key once per backend (its bases go to the device and stay there; a GPU
    //    backend first checks the key's memory plan against the device and refuses one that
    //    cannot fit with `ProveError::DoesNotFit`, then runs one proof's device work there, so
    //    the first proof costs what the others do), then prove as often as needed. Each proof
    //    draws its randomness (r, s) from the RNG given: two proofs of one statement differ, and
    //    neither reveals the witness.
    let prover = Prover::new(&backend);
    let prepared = prover.prepare(&key)?;
    let proof = prover.prove(&prepared, circuit.clone(), &mut OsRng, &Timeline::disabled())?;

    // 4. Verify with arkworks' verifier (the public inputs without the constant 1).
    let y = Fr::from(3u64 * 3 * 3 + 3 + 5);
    assert!(verify(&prepared, &proof, &[y])?);

    // For tests only: a fixed (r, s) gives arkworks' own proof for the same pair, bit for bit.
    // A proof whose (r, s) is known or reused is not zero-knowledge; never ship one.
    let (r, s) = (Fr::from(11u64), Fr::from(13u64));
    let fixed = prover.prove_with(&prepared, circuit.clone(), Randomness::fixed_for_tests(r, s), &Timeline::disabled())?;
    let theirs =
        ark_groth16::Groth16::<g16::Curve>::create_proof_with_reduction(circuit.clone(), key.proving_key(), r, s)?;
    assert_eq!(fixed, theirs);

    // 5. Where the time went: prove with a recording timeline and print its report.
    let timeline = Timeline::new();
    prover.prove(&prepared, circuit, &mut OsRng, &timeline)?;
    println!("{}", Report::from_events(&timeline.events()).render(0.10));
    Ok(())
}
