//! How a GPU backend splits an NTT of 2^L into passes: the rule both GPU backends share. A pass
//! runs its stages in on-chip memory (CUDA's shared memory, WGSL's workgroup memory) between
//! one read and one write of the array, so the array's traffic is one read and one write a
//! pass; each backend says how many stages its blocks hold.

/// The stages of each pass of an NTT of 2^log_n: all in one pass when log_n ≤ `one_pass` (the
/// whole transform fits one block), else the fewest passes of at most `most` stages (at least
/// one), balanced so that they differ by one at most (`most` = 8: 2^24 in 8, 8, 8; 2^22 in 8,
/// 7, 7).
pub fn balanced_passes(log_n: u32, one_pass: u32, most: u32) -> Vec<u32> {
    if log_n <= one_pass {
        return vec![log_n];
    }
    let count = log_n.div_ceil(most.max(1));
    (0..count).map(|i| log_n / count + u32::from(i < log_n % count)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_are_the_fewest_and_balanced() {
        assert_eq!(balanced_passes(24, 10, 8), vec![8, 8, 8]);
        assert_eq!(balanced_passes(22, 10, 8), vec![8, 7, 7]);
        assert_eq!(balanced_passes(10, 10, 8), vec![10]);
        assert_eq!(balanced_passes(3, 2, 0), vec![1, 1, 1]);
        for most in 1..=9 {
            for log_n in 1..=31 {
                let passes = balanced_passes(log_n, 0, most);
                assert_eq!(passes.iter().sum::<u32>(), log_n);
                assert_eq!(passes.len() as u32, log_n.div_ceil(most));
                assert!(passes.iter().max().unwrap() - passes.iter().min().unwrap() <= 1, "{passes:?}");
            }
        }
    }
}
