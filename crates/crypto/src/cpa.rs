//! CPA, the content-permutation algorithm (`docs/cpa.md`).
//!
//! # This is not encryption
//!
//! CPA reorders fixed-size codewords under a key. It exists here only as a
//! baseline, to compare against the published P4/NDN scheme of Liu et al.
//! Its weaknesses (docs/cpa.md §3):
//!
//! * **It hides no value.** Every codeword appears in the output unchanged;
//!   the byte histogram (for 8-bit codewords) leaks exactly, and an all-zero
//!   or constant payload comes out unchanged under every key.
//! * **Tiny, structured key space.** Every output is the prefix of the input
//!   in order, merged with the reversed suffix; the first output codeword is
//!   always the first or the last input codeword.
//! * **One known plaintext reveals the key** in a single linear pass, and
//!   the same key protects every packet.
//! * **Deterministic**: no nonce, so equal payloads give equal outputs.
//! * **No integrity**: codewords can be flipped or swapped undetected.
//!
//! Use Forro14 or ChaCha20 (preferably an AEAD) for confidentiality. Every
//! constructor here carries the `danger_` prefix.
//!
//! # Definition (docs/cpa.md §1, with its \[choice\] rules)
//!
//! * Key bits `x_1..x_K` are read most-significant bit first from the key
//!   bytes; codewords of `w` bits are cut from the payload MSB first.
//! * For a block of `n` codewords, step `i = 1..n-1` with `x_i = 1` rotates
//!   the suffix `a[i..n]` right by one (the codeword *currently* last moves
//!   to position `i`). Decryption undoes the steps in reverse order.
//!   Closed form: positions with `x_i = 1` receive the last codewords in
//!   reverse order, the other positions the first codewords in order; this
//!   is what the code computes, in one pass per block.
//! * `n = floor(8 * len / w)`; trailing bits that do not fill a codeword stay
//!   in place, so the output is as long as the input.
//! * Block mode: the codewords are split into blocks of `K + 1`; each block,
//!   and a shorter last block of `n'` codewords (using `x_1..x_(n'-1)`), is
//!   permuted with the same key.
//! * `K = 0` and an all-zero key (the identity) are refused.

use core::fmt;

use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::error::CryptoError;
use crate::provider::{PayloadCipher, Tag};
use crate::suite::{expect_empty_tag, Suite};

/// The parameters of the paper's experiment (docs/cpa.md §0, example 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpaParams {
    /// Key length `K` in bits.
    pub key_bits: usize,
    /// Codeword size `w` in bits.
    pub codeword_bits: u32,
    /// Payload length the parameters were chosen for, in bytes (informative;
    /// any length is accepted).
    pub payload_len: usize,
}

impl CpaParams {
    /// Liu et al.: 1024-bit (128-byte) payload, 8-bit codewords, 128-bit key.
    pub const PAPER: CpaParams = CpaParams {
        key_bits: 128,
        codeword_bits: 8,
        payload_len: 128,
    };
}

/// Largest supported codeword size in bits.
const MAX_CODEWORD_BITS: u32 = 64;

/// Blocks up to this many bytes are permuted through a stack buffer.
const STACK_SCRATCH: usize = 512;

/// A CPA key with its codeword size. **Not encryption**; see the [module
/// documentation](self). The key bits are zeroized on drop and `Debug` never
/// prints them.
pub struct Cpa {
    /// `x_1..x_K`, one bit per byte (0 or 1).
    bits: Vec<u8>,
    /// For a full block of `K + 1` codewords: `map[p]` is the input position
    /// encryption moves to output position `p` (docs/cpa.md §4's precomputed map).
    map: Vec<u32>,
    codeword_bits: u32,
}

impl Cpa {
    /// A CPA permutation with `key_bits` bits taken MSB first from `key` and
    /// `codeword_bits`-bit codewords. The name says it: this is a dangerous,
    /// insecure transform for experiments only.
    ///
    /// # Errors
    /// [`CryptoError::WeakKey`] if `key_bits` is 0 or all used bits are zero;
    /// [`CryptoError::InvalidParameter`] if `key` has fewer than `key_bits`
    /// bits or `codeword_bits` is not in `1..=64`.
    pub fn danger_new(
        key: &[u8],
        key_bits: usize,
        codeword_bits: u32,
    ) -> Result<Self, CryptoError> {
        if key_bits == 0 {
            return Err(CryptoError::WeakKey);
        }
        if key_bits > 8 * key.len() {
            return Err(CryptoError::InvalidParameter(
                "key has fewer bits than key_bits",
            ));
        }
        if !(1..=MAX_CODEWORD_BITS).contains(&codeword_bits) {
            return Err(CryptoError::InvalidParameter(
                "codeword_bits must be 1..=64",
            ));
        }
        let bits: Vec<u8> = (0..key_bits).map(|i| bit_msb_first(key, i)).collect();
        let mut map = vec![0u32; key_bits + 1];
        for_each_move(&bits, key_bits + 1, |p, s| map[p] = s as u32);
        let cpa = Self {
            bits,
            map,
            codeword_bits,
        };
        if cpa.hamming_weight() == 0 {
            return Err(CryptoError::WeakKey);
        }
        Ok(cpa)
    }

    /// The paper's preset ([`CpaParams::PAPER`]): 128-bit key, 8-bit
    /// codewords. Insecure; for baseline experiments only.
    ///
    /// # Errors
    /// [`CryptoError::WeakKey`] for the all-zero key.
    pub fn danger_paper(key: &[u8; 16]) -> Result<Self, CryptoError> {
        let p = CpaParams::PAPER;
        Self::danger_new(key, p.key_bits, p.codeword_bits)
    }

    /// Key length `K` in bits.
    pub fn key_bits(&self) -> usize {
        self.bits.len()
    }

    /// Codeword size `w` in bits.
    pub fn codeword_bits(&self) -> u32 {
        self.codeword_bits
    }

    /// Number of key bits set: the number of codewords a full block moves.
    pub fn hamming_weight(&self) -> usize {
        self.bits.iter().map(|&b| usize::from(b)).sum()
    }

    /// Whether fewer than a quarter of the key bits are set (our threshold
    /// for docs/cpa.md §1.3 rule 4's "low Hamming weight" warning): such a key
    /// leaves most codewords in place. The caller decides how to warn.
    pub fn is_low_weight(&self) -> bool {
        4 * self.hamming_weight() < self.key_bits()
    }

    /// Permutes the codewords of `buf` in place.
    pub fn encrypt(&self, buf: &mut [u8]) {
        self.apply(buf, Direction::Encrypt);
    }

    /// Undoes [`Cpa::encrypt`] in place.
    pub fn decrypt(&self, buf: &mut [u8]) {
        self.apply(buf, Direction::Decrypt);
    }

    fn apply(&self, buf: &mut [u8], dir: Direction) {
        if self.codeword_bits.is_multiple_of(8) {
            self.apply_bytes(buf, (self.codeword_bits / 8) as usize, dir);
        } else {
            self.apply_bits(buf, dir);
        }
    }

    /// Byte-aligned codewords of `cw` bytes: permute whole byte runs.
    fn apply_bytes(&self, buf: &mut [u8], cw: usize, dir: Direction) {
        let n = buf.len() / cw;
        let m = self.key_bits() + 1;
        let body = &mut buf[..n * cw];
        let block_bytes = (m * cw).min(body.len());
        let mut stack = [0u8; STACK_SCRATCH];
        let mut heap = Vec::new();
        let scratch: &mut [u8] = if block_bytes <= STACK_SCRATCH {
            &mut stack[..block_bytes]
        } else {
            heap.resize(block_bytes, 0);
            &mut heap
        };
        for block in body.chunks_mut(m * cw) {
            let len = block.len();
            let tmp = &mut scratch[..len];
            tmp.copy_from_slice(block);
            let n_block = len / cw;
            if cw == 1 && n_block == m {
                // A full block of bytes: apply the precomputed map.
                match dir {
                    Direction::Encrypt => {
                        for (o, &s) in block.iter_mut().zip(&self.map) {
                            *o = tmp[s as usize];
                        }
                    }
                    Direction::Decrypt => {
                        for (&t, &s) in tmp.iter().zip(&self.map) {
                            block[s as usize] = t;
                        }
                    }
                }
            } else if cw == 1 {
                for_each_move(&self.bits, n_block, |p, s| match dir {
                    Direction::Encrypt => block[p] = tmp[s],
                    Direction::Decrypt => block[s] = tmp[p],
                });
            } else {
                for_each_move(&self.bits, n_block, |p, s| {
                    let (dst, src) = match dir {
                        Direction::Encrypt => (p, s),
                        Direction::Decrypt => (s, p),
                    };
                    block[dst * cw..(dst + 1) * cw].copy_from_slice(&tmp[src * cw..(src + 1) * cw]);
                });
            }
        }
        // The scratch held plaintext codewords.
        scratch.zeroize();
    }

    /// Codewords that are not whole bytes: unpack, permute, repack.
    fn apply_bits(&self, buf: &mut [u8], dir: Direction) {
        let w = self.codeword_bits as usize;
        let n = buf.len() * 8 / w;
        let mut words: Vec<u64> = (0..n).map(|i| read_bits(buf, i * w, w)).collect();
        let m = self.key_bits() + 1;
        let mut tmp = vec![0u64; m.min(n)];
        for block in words.chunks_mut(m) {
            let t = &mut tmp[..block.len()];
            t.copy_from_slice(block);
            for_each_move(&self.bits, block.len(), |p, s| match dir {
                Direction::Encrypt => block[p] = t[s],
                Direction::Decrypt => block[s] = t[p],
            });
        }
        for (i, v) in words.iter().enumerate() {
            write_bits(buf, i * w, w, *v);
        }
        words.zeroize();
        tmp.zeroize();
    }
}

impl fmt::Debug for Cpa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cpa")
            .field("key_bits", &self.key_bits())
            .field("codeword_bits", &self.codeword_bits)
            .finish_non_exhaustive()
    }
}

impl Drop for Cpa {
    fn drop(&mut self) {
        self.bits.zeroize();
        self.map.zeroize();
    }
}

impl ZeroizeOnDrop for Cpa {}

/// The registry's `cpa` suite: no nonce, no tag, `aad` ignored.
impl PayloadCipher for Cpa {
    fn suite(&self) -> Suite {
        Suite::Cpa
    }

    fn seal_in_place_detached(
        &self,
        nonce: &[u8],
        _aad: &[u8],
        buf: &mut [u8],
    ) -> Result<Tag, CryptoError> {
        expect_empty_nonce(nonce)?;
        self.encrypt(buf);
        Ok(Tag::EMPTY)
    }

    fn open_in_place_detached(
        &self,
        nonce: &[u8],
        _aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError> {
        expect_empty_nonce(nonce)?;
        expect_empty_tag(tag)?;
        self.decrypt(buf);
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Direction {
    Encrypt,
    Decrypt,
}

/// The closed form of docs/cpa.md §1.2 for one block of `n` codewords: calls
/// `f(p, s)` for every output position `p`, where `s` is the input position
/// whose codeword encryption puts at `p`. Positions `p < n - 1` with key bit
/// `x_(p+1) = 1` take the suffix from the end backwards; all others take the
/// prefix in order.
#[inline]
fn for_each_move(bits: &[u8], n: usize, mut f: impl FnMut(usize, usize)) {
    let Some(last) = n.checked_sub(1) else {
        return;
    };
    let mut ones = 0;
    let mut zeros = 0;
    for (p, &bit) in bits.iter().take(last).enumerate() {
        let take_suffix = bit != 0;
        let s = if take_suffix { last - ones } else { zeros };
        ones += usize::from(take_suffix);
        zeros += usize::from(!take_suffix);
        f(p, s);
    }
    // The last position never has a key bit: it takes the next prefix codeword.
    f(last, zeros);
}

/// Key bit `i` (0-based), most significant bit of each byte first.
fn bit_msb_first(bytes: &[u8], i: usize) -> u8 {
    (bytes[i / 8] >> (7 - i % 8)) & 1
}

/// Reads `w <= 64` bits starting at bit `off` (MSB first).
fn read_bits(buf: &[u8], off: usize, w: usize) -> u64 {
    (off..off + w).fold(0, |v, i| (v << 1) | u64::from(bit_msb_first(buf, i)))
}

/// Writes the low `w <= 64` bits of `v` starting at bit `off` (MSB first).
fn write_bits(buf: &mut [u8], off: usize, w: usize, v: u64) {
    for k in 0..w {
        let i = off + k;
        let bit = ((v >> (w - 1 - k)) & 1) as u8;
        let shift = 7 - i % 8;
        buf[i / 8] = (buf[i / 8] & !(1 << shift)) | (bit << shift);
    }
}

fn expect_empty_nonce(nonce: &[u8]) -> Result<(), CryptoError> {
    if nonce.is_empty() {
        Ok(())
    } else {
        Err(CryptoError::NonceLength {
            expected: 0,
            actual: nonce.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The step-by-step definition of docs/cpa.md §1.2, used to check the closed form.
    fn stepwise(bits: &[u8], a: &mut [u8]) {
        let n = a.len();
        for i in 0..n.saturating_sub(1) {
            if bits[i] == 1 {
                a[i..].rotate_right(1);
            }
        }
    }

    #[test]
    fn closed_form_matches_stepwise_for_all_keys_up_to_n_10() {
        for n in 0..=10usize {
            for key in 0u32..(1 << n.saturating_sub(1)) {
                let bits: Vec<u8> = (0..n.saturating_sub(1))
                    .map(|i| ((key >> i) & 1) as u8)
                    .collect();
                let input: Vec<u8> = (0..n as u8).collect();
                let mut expected = input.clone();
                stepwise(&bits, &mut expected);
                let mut got = vec![0u8; n];
                for_each_move(&bits, n, |p, s| got[p] = input[s]);
                assert_eq!(got, expected, "n={n} key={key:b}");
            }
        }
    }

    #[test]
    fn bit_io_round_trips() {
        let mut buf = [0u8; 9];
        write_bits(&mut buf, 3, 12, 0xabc);
        assert_eq!(read_bits(&buf, 3, 12), 0xabc);
        write_bits(&mut buf, 7, 64, u64::MAX - 5);
        assert_eq!(read_bits(&buf, 7, 64), u64::MAX - 5);
        assert_eq!(read_bits(&buf, 3, 4), 0xa);
    }
}
