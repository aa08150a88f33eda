//! The random choices of Python's `random.Random(seed)`, bit for bit.
//!
//! The fleet's churn replay picks which member leaves with `random.Random(seed).choice(...)`; the
//! core replays the same events, so it needs the same generator: MT19937 (Matsumoto & Nishimura,
//! 1998) seeded the way CPython's `random_seed` seeds it from a non-negative int (the int's 32-bit
//! words, least significant first, through `init_by_array`; 0 is the one-word key `[0]`), and
//! `choice(seq)` = `seq[_randbelow(len(seq))]` where `_randbelow(n)` draws `getrandbits(k)` with
//! `k = n.bit_length()` until the draw is below `n`, and `getrandbits(k <= 32)` is the next 32-bit
//! output shifted right by `32 - k` (CPython `Modules/_randommodule.c`, `Lib/random.py`).

const N: usize = 624;
const M: usize = 397;

pub struct PyRandom {
    mt: [u32; N],
    index: usize,
}

impl PyRandom {
    /// `random.Random(seed)` for a non-negative integer seed.
    pub fn new(seed: u64) -> PyRandom {
        let mut key: Vec<u32> = Vec::with_capacity(2);
        let mut n = seed;
        if n == 0 {
            key.push(0);
        }
        while n > 0 {
            key.push(n as u32);
            n >>= 32;
        }
        let mut r = PyRandom { mt: [0; N], index: N };
        r.init_by_array(&key);
        r
    }

    fn init_genrand(&mut self, s: u32) {
        self.mt[0] = s;
        for i in 1..N {
            let prev = self.mt[i - 1];
            self.mt[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        self.index = N;
    }

    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19_650_218);
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let prev = self.mt[i - 1];
            self.mt[i] = (self.mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                self.mt[0] = self.mt[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let prev = self.mt[i - 1];
            self.mt[i] = (self.mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                self.mt[0] = self.mt[N - 1];
                i = 1;
            }
        }
        self.mt[0] = 0x8000_0000;
    }

    fn next_u32(&mut self) -> u32 {
        const MAG01: [u32; 2] = [0, 0x9908_b0df];
        if self.index >= N {
            for k in 0..N {
                let y = (self.mt[k] & 0x8000_0000) | (self.mt[(k + 1) % N] & 0x7fff_ffff);
                self.mt[k] = self.mt[(k + M) % N] ^ (y >> 1) ^ MAG01[(y & 1) as usize];
            }
            self.index = 0;
        }
        let mut y = self.mt[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `getrandbits(k)` for `1 <= k <= 32`.
    fn getrandbits(&mut self, k: u32) -> u32 {
        debug_assert!((1..=32).contains(&k));
        self.next_u32() >> (32 - k)
    }

    /// `_randbelow(n)`: uniform in `0..n` (`n >= 1`, below 2^32).
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n >= 1 && n <= u32::MAX as usize, "randbelow: n out of range");
        let k = usize::BITS - n.leading_zeros();
        loop {
            let r = self.getrandbits(k) as usize;
            if r < n {
                return r;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by CPython 3.11:
    /// `r = random.Random(seed); [r.choice(range(n)) for n in NS], r.getrandbits(32)`.
    #[test]
    fn matches_cpython() {
        const NS: [usize; 10] = [1, 2, 3, 7, 10, 100, 1000, 5, 64, 65];
        let cases: [(u64, [usize; 10], u32); 5] = [
            (0, [0, 1, 0, 2, 8, 62, 414, 2, 61, 45], 2505606783),
            (1, [0, 0, 1, 0, 7, 97, 460, 3, 48, 26], 403123852),
            (12345, [0, 0, 1, 6, 5, 24, 276, 4, 55, 20], 1602297017),
            (4294967295, [0, 0, 2, 4, 4, 77, 348, 3, 35, 45], 3854456112),
            (3735928559, [0, 1, 1, 4, 6, 78, 386, 3, 42, 50], 1566590341),
        ];
        for (seed, want, bits) in cases {
            let mut r = PyRandom::new(seed);
            let got: Vec<usize> = NS.iter().map(|&n| r.below(n)).collect();
            assert_eq!(got, want, "seed {seed}");
            assert_eq!(r.getrandbits(32), bits, "seed {seed}");
        }
    }
}
