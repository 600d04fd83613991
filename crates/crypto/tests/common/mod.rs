//! Helpers shared by the integration tests.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests and benches may panic

use serde_json::Value;

pub(crate) fn forro14_vectors() -> Value {
    serde_json::from_str(include_str!("../vectors/forro14.json")).unwrap()
}

pub(crate) fn chacha20_vectors() -> Value {
    serde_json::from_str(include_str!("../vectors/chacha20.json")).unwrap()
}

/// Decodes the hex string at `v[field]`.
pub(crate) fn hx(v: &Value, field: &str) -> Vec<u8> {
    let s = v[field]
        .as_str()
        .unwrap_or_else(|| panic!("field {field} missing or not a string"));
    hex::decode(s).unwrap()
}

/// Decodes the hex string at `v[field]` into a fixed-size array.
pub(crate) fn arr<const N: usize>(v: &Value, field: &str) -> [u8; N] {
    hx(v, field).try_into().unwrap()
}

pub(crate) fn list<'a>(v: &'a Value, path: &[&str]) -> &'a Vec<Value> {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    cur.as_array()
        .unwrap_or_else(|| panic!("{path:?} is not a list"))
}

/// Deterministic xorshift64* generator, so failures are reproducible.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub(crate) fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.next_u64() as u8;
        }
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        self.fill(&mut v);
        v
    }
}
