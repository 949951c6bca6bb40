//! A stable 64-bit FNV-1a hash (std's hasher may change between Rust releases; this one is
//! stored in result files and must not).

/// FNV-1a, 64 bits.
pub struct Fnv(u64);

impl Fnv {
    /// A fresh hash.
    pub fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    /// Adds bytes, followed by a separator so that `("ab", "c")` and `("a", "bc")` differ.
    pub fn add(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().chain(&[0xff]) {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The hash value.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

impl Default for Fnv {
    fn default() -> Self {
        Fnv::new()
    }
}

/// Hash of one string.
pub fn of(s: &str) -> u64 {
    let mut h = Fnv::new();
    h.add(s.as_bytes());
    h.finish()
}
