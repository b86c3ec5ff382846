//! A PoRep partition's witness with its challenges synthesized in parallel.
//!
//! storage-proofs' `StackedCircuit` (19.1.0) synthesizes a partition's challenges one after
//! another on one thread: a prologue (the replica id and its bits, comm_d, comm_r, comm_r_last,
//! comm_c, and the check comm_r = H(comm_c, comm_r_last)), then each challenge's proofs in turn.
//! The values of one challenge depend on the prologue's values and its own vanilla proof, never
//! on another challenge's, and every challenge's part has the same shape (the blank circuit is
//! the prologue and `num_challenges_per_partition` copies of one challenge). So the circuit of
//! challenge k alone — what `circuit()` makes from a one-proof slice — synthesizes the prologue
//! and challenge k; running those on every core and keeping the prologue once gives the
//! sequential run's witness, value for value.
//!
//! The prologue's size is not published; it follows from the whole circuit's counts: with n
//! challenges of c values each, a one-challenge run holds P + c and the whole circuit P + n·c.
//! What comes out is held to those counts and its prologues to agree; the caller then compares
//! the public inputs with filecoin-proofs' and the engine checks every constraint on the device.

use g16::Fr;
use g16_bellperson::Scalar;
use rayon::prelude::*;

use crate::FilecoinError;

/// The inputs (ONE first) and aux of one synthesis.
pub(crate) type Parts = (Vec<Scalar>, Vec<Scalar>);

/// z = [1, inputs…, aux…] of a circuit with `inputs` inputs (ONE included) and `variables` in
/// all, from `challenges` runs of `synthesize(k)`: the prologue and challenge k alone.
pub(crate) fn by_challenge(
    partition: usize,
    challenges: usize,
    (inputs, variables): (usize, usize),
    synthesize: impl Fn(usize) -> Result<Parts, FilecoinError> + Sync,
) -> Result<Vec<Fr>, FilecoinError> {
    let parts = (0..challenges).into_par_iter().map(&synthesize).collect::<Result<Vec<_>, _>>()?;
    let (inputs, aux) = assemble(partition, parts, inputs, variables.saturating_sub(inputs))?;
    Ok(g16_bellperson::assignment(inputs, aux))
}

/// The whole circuit's inputs and aux from the one-challenge runs' `parts`, in challenge order:
/// challenge 0's run grows into the whole, the others' parts past their prologue appended.
fn assemble(partition: usize, parts: Vec<Parts>, inputs: usize, aux: usize) -> Result<Parts, FilecoinError> {
    let refuse = |detail: String| FilecoinError::Synthesis { partition, detail };
    let n = parts.len();
    let mut runs = parts.into_iter();
    let Some((mut all_inputs, mut all_aux)) = runs.next() else {
        return Err(refuse("a partition without challenges".into()));
    };
    if n == 1 {
        if (all_inputs.len(), all_aux.len()) != (inputs, aux) {
            return Err(refuse(format!(
                "its one challenge's run holds {} inputs and {} aux values, the circuit {inputs} and {aux}",
                all_inputs.len(),
                all_aux.len()
            )));
        }
        return Ok((all_inputs, all_aux));
    }
    let (inputs_prologue, inputs_each) = split(n, all_inputs.len(), inputs).ok_or_else(|| {
        refuse(format!("its challenges' inputs ({} a run) do not add up to the circuit's {inputs}", all_inputs.len()))
    })?;
    let (aux_prologue, aux_each) = split(n, all_aux.len(), aux).ok_or_else(|| {
        refuse(format!("its challenges' aux values ({} a run) do not add up to the circuit's {aux}", all_aux.len()))
    })?;
    all_inputs.reserve_exact(inputs - all_inputs.len());
    all_aux.reserve_exact(aux - all_aux.len());
    for (k, (run_inputs, run_aux)) in runs.enumerate() {
        let challenge = k + 1;
        if run_inputs.len() != inputs_prologue + inputs_each || run_aux.len() != aux_prologue + aux_each {
            return Err(refuse(format!(
                "challenge {challenge} synthesized a part of another shape than challenge 0's"
            )));
        }
        if run_inputs[..inputs_prologue] != all_inputs[..inputs_prologue]
            || run_aux[..aux_prologue] != all_aux[..aux_prologue]
        {
            return Err(refuse(format!("challenge {challenge}'s run computed another prologue than challenge 0's")));
        }
        all_inputs.extend_from_slice(&run_inputs[inputs_prologue..]);
        all_aux.extend_from_slice(&run_aux[aux_prologue..]);
    }
    Ok((all_inputs, all_aux))
}

/// (prologue, each challenge's) of `whole` values over `n` ≥ 2 challenges whose one-challenge
/// runs hold `one` each: one = P + c and whole = P + n·c.
fn split(n: usize, one: usize, whole: usize) -> Option<(usize, usize)> {
    let extra = whole.checked_sub(one)?;
    let each = (extra % (n - 1) == 0).then_some(extra / (n - 1))?;
    Some((one.checked_sub(each)?, each))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(range: std::ops::Range<u64>) -> Vec<Scalar> {
        range.map(Scalar::from).collect()
    }

    /// Runs shaped as the stacked circuit's: ONE, a prologue, then the challenge's own values.
    fn run(k: u64) -> Parts {
        let mut inputs = vec![Scalar::from(1u64)];
        inputs.extend(values(10..13)); // the prologue's inputs
        inputs.extend(values(100 * (k + 1)..100 * (k + 1) + 4));
        let mut aux = values(1000..1005); // the prologue's aux
        aux.extend(values(10_000 * (k + 1)..10_000 * (k + 1) + 7));
        (inputs, aux)
    }

    #[test]
    fn the_prologue_is_kept_once_and_the_challenges_follow_in_order() {
        let parts: Vec<Parts> = (0..3).map(run).collect();
        let (inputs, aux) = assemble(0, parts, 1 + 3 + 3 * 4, 5 + 3 * 7).unwrap();
        let mut want_inputs = run(0).0;
        want_inputs.extend(values(200..204));
        want_inputs.extend(values(300..304));
        let mut want_aux = run(0).1;
        want_aux.extend(values(20_000..20_007));
        want_aux.extend(values(30_000..30_007));
        assert_eq!((inputs, aux), (want_inputs, want_aux));
    }

    #[test]
    fn parts_that_do_not_add_up_or_disagree_are_refused() {
        let parts: Vec<Parts> = (0..3).map(run).collect();
        // Counts no split explains.
        assert!(assemble(0, parts.clone(), 1 + 3 + 3 * 4 + 1, 5 + 3 * 7).is_err());
        assert!(assemble(0, parts.clone(), 1 + 3 + 3 * 4, 5 + 3 * 7 - 1).is_err());
        // A run of another shape.
        let mut odd = parts.clone();
        odd[2].1.pop();
        assert!(assemble(0, odd, 1 + 3 + 3 * 4, 5 + 3 * 7).is_err());
        // A run whose prologue differs.
        let mut other = parts.clone();
        other[1].1[0] = Scalar::from(7u64);
        let err = assemble(4, other, 1 + 3 + 3 * 4, 5 + 3 * 7).unwrap_err().to_string();
        assert!(err.contains("partition 4") && err.contains("challenge 1"), "{err}");
        // None at all.
        assert!(assemble(0, vec![], 1, 1).is_err());
    }

    #[test]
    fn one_challenge_is_its_own_witness() {
        let parts = vec![run(0)];
        assert_eq!(assemble(0, parts, 8, 12).unwrap(), run(0));
        // A run that does not hold the circuit's counts is refused, as with several.
        assert!(assemble(0, vec![run(0)], 8, 13).is_err());
        assert!(assemble(0, vec![run(0)], 9, 12).is_err());
    }

    #[test]
    fn split_finds_the_prologue_and_each_part() {
        assert_eq!(split(3, 7, 15), Some((3, 4)));
        assert_eq!(split(2, 7, 7), Some((7, 0)));
        assert_eq!(split(3, 7, 16), None);
        assert_eq!(split(3, 7, 6), None);
        assert_eq!(split(3, 2, 12), None, "each part (5) larger than a run (2)");
    }
}
