//! The churn replay's seeded generator: SplitMix64.
//!
//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA
//! 2014; the constants of Vigna's public-domain `splitmix64.c`, https://prng.di.unimi.it/): the
//! state advances by the golden-ratio increment `0x9E3779B97F4A7C15` and each output is the new
//! state through two xor-shift-multiply rounds. It is small, fast, passes BigCrush, and any `u64`
//! is a valid seed, so the replay's events are a pure function of the seed.
//!
//! [`SplitMix64::below`] draws uniformly from `0..n` without modulo bias: a draw `x` is kept when
//! `x - x % n` leaves room for a whole block of `n` below `2^64`, else it is drawn again.

/// SplitMix64's state.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// The generator seeded with `seed` (any value).
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform draw from `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0, "below(0)");
        let n = n as u64;
        // The largest multiple of n that fits, minus one: draws above it would favour small values.
        let limit = u64::MAX - (u64::MAX - n + 1) % n;
        loop {
            let x = self.next_u64();
            if x <= limit {
                return (x % n) as usize;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_outputs() {
        // splitmix64.c seeded with 1234567: its first five outputs.
        let mut g = SplitMix64::new(1_234_567);
        let got: Vec<u64> = (0..5).map(|_| g.next_u64()).collect();
        assert_eq!(
            got,
            vec![
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423,
                4_593_380_528_125_082_431,
                16_408_922_859_458_223_821,
            ]
        );
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut g = SplitMix64::new(7);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            seen[g.below(7)] += 1;
        }
        // Every value drawn, none far from 1000 (a binomial sd is about 29).
        assert!(seen.iter().all(|&c| (850..1150).contains(&c)), "{seen:?}");
        assert_eq!(SplitMix64::new(3).below(1), 0);
    }

    #[test]
    fn below_rejects_the_biased_tail() {
        // n = 2^63 + 1: the limit is 2^63 (one block), so about half the draws are rejected and
        // every kept one is below n.
        let n = (1usize << 63) + 1;
        let mut g = SplitMix64::new(11);
        for _ in 0..100 {
            assert!(g.below(n) < n);
        }
    }
}
