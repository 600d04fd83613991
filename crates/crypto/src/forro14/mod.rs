//! Forro14 (Forró with 14 rounds), HForro14, XForro14 and XForro14-Poly1305,
//! written from `docs/forro14.md`.
//!
//! * [`Forro14`]: the original cipher of the reference code: 256-bit key,
//!   64-bit nonce, 64-bit block counter (low word in state word 4, high word
//!   in word 5).
//! * [`Forro14Ietf`]: the libsodium-fork layout with a 96-bit nonce and a
//!   32-bit counter (spec §8.1).
//! * [`hforro14`], [`XForro14`], [`XForro14Poly1305`]: spec §8.2–§8.4.
//!
//! One call is one message (spec §7, model (a)): a call starts at the given
//! counter and a partial last block consumes a whole counter value. A call
//! that would wrap the counter is refused with
//! [`CryptoError::MessageTooLong`] before anything is written.
//!
//! Several backends compute the same keystream: [`Forro14Backend::Scalar`]
//! (portable), [`Forro14Backend::Avx2`] (8 blocks per vector, up to four batches
//! interleaved) and [`Forro14Backend::Avx512`] (16 blocks per vector, two
//! batches interleaved). [`Forro14Backend::detect`] picks the fastest one the
//! CPU supports; [`Forro14::with_backend`] forces one.

use core::fmt;

use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::error::CryptoError;

pub(crate) mod scalar;
pub(crate) mod xforro;

pub use xforro::{hforro14, XForro14, XForro14Poly1305};

/// Bytes in one Forro14 block.
pub(crate) const BLOCK_LEN: usize = 64;
/// 14 rounds = 7 (column round, diagonal round) pairs.
pub(crate) const DOUBLE_ROUNDS: usize = 7;
/// Messages up to this length use the scalar code even when a SIMD backend is
/// available (unless the backend was forced).
const SCALAR_MAX: usize = 2 * BLOCK_LEN;
/// `"voltadaasabranca"` as four little-endian words (spec §3).
pub(crate) const CONSTANTS: [u32; 4] = [0x746c_6f76, 0x6161_6461, 0x7262_6173, 0x6163_6e61];

/// An implementation of the Forro14 block function.
///
/// Every backend produces identical output for every key, nonce, counter and
/// length; the test suite checks each available one against `Scalar`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Forro14Backend {
    /// Portable Rust, two blocks at a time (their quarter-rounds
    /// interleaved). Always available.
    Scalar,
    /// x86-64 AVX2: one block per 32-bit lane, 8 blocks per vector, two
    /// independent 8-block batches interleaved.
    Avx2,
    /// x86-64 AVX-512F + AVX-512VL: one block per lane, 16 blocks per zmm,
    /// two independent 16-block batches per pass (32 blocks); tails use
    /// 8-block ymm batches where that is cheaper.
    Avx512,
}

impl Forro14Backend {
    /// Every backend, slowest first.
    pub const ALL: [Forro14Backend; 3] = [Self::Scalar, Self::Avx2, Self::Avx512];

    /// The fastest backend this CPU supports (runtime detection with
    /// `is_x86_feature_detected!`, cached by the standard library).
    pub fn detect() -> Self {
        Self::ALL
            .into_iter()
            .rev()
            .find(|b| b.is_available())
            .unwrap_or(Self::Scalar)
    }

    /// Whether this CPU can run the backend.
    pub fn is_available(self) -> bool {
        match self {
            Self::Scalar => true,
            Self::Avx2 | Self::Avx512 => crate::arch::forro14_available(self),
        }
    }

    /// Short lower-case name: `scalar`, `avx2` or `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Scalar => "scalar",
            Self::Avx2 => "avx2",
            Self::Avx512 => "avx512",
        }
    }
}

/// The original Forro14 stream cipher: 32-byte key, 8-byte nonce, 64-bit
/// block counter.
///
/// The key words are zeroized on drop and never printed by `Debug`.
///
/// ```
/// use nameway_crypto::forro14::Forro14;
/// let cipher = Forro14::new(&[7u8; 32]);
/// let mut msg = *b"hello, named data";
/// cipher.apply_keystream(&[1u8; 8], 0, &mut msg)?;
/// cipher.apply_keystream(&[1u8; 8], 0, &mut msg)?;
/// assert_eq!(&msg, b"hello, named data");
/// # Ok::<(), nameway_crypto::CryptoError>(())
/// ```
#[derive(Clone)]
pub struct Forro14 {
    key: [u32; 8],
    engine: Engine,
}

impl Forro14 {
    /// Key length in bytes.
    pub const KEY_LEN: usize = 32;
    /// Nonce length in bytes.
    pub const NONCE_LEN: usize = 8;

    /// A cipher for `key` using the fastest available backend.
    pub fn new(key: &[u8; 32]) -> Self {
        Self {
            key: key_words(key),
            engine: Engine::auto(),
        }
    }

    /// A cipher for `key` that uses `backend` for every length (the default
    /// uses the scalar code for messages of two blocks or less, where it is
    /// faster than any SIMD pass).
    ///
    /// # Errors
    /// [`CryptoError::BackendUnavailable`] if this CPU cannot run `backend`.
    pub fn with_backend(key: &[u8; 32], backend: Forro14Backend) -> Result<Self, CryptoError> {
        Ok(Self {
            key: key_words(key),
            engine: Engine::forced(backend)?,
        })
    }

    /// The backend this cipher runs on (for messages longer than two blocks).
    pub fn backend(&self) -> Forro14Backend {
        self.engine.backend
    }

    /// XORs the keystream for (`nonce`, `counter`, `counter + 1`, ...) into
    /// `buf`. Encryption and decryption are the same operation.
    ///
    /// # Errors
    /// [`CryptoError::MessageTooLong`] if the message would need a counter
    /// value above `u64::MAX`; `buf` is then unchanged.
    pub fn apply_keystream(
        &self,
        nonce: &[u8; 8],
        counter: u64,
        buf: &mut [u8],
    ) -> Result<(), CryptoError> {
        check_counter(counter, buf.len(), 1u128 << 64)?;
        let [n0, n1] = le_words::<2>(nonce);
        let mut state = initial_state(&self.key, 0, 0, n0, n1);
        self.engine.xor_keystream(&state, counter, buf);
        state.zeroize();
        Ok(())
    }

    /// One 64-byte keystream block (spec §7 `block(key, nonce, ctr)`).
    pub fn keystream_block(&self, nonce: &[u8; 8], counter: u64) -> [u8; BLOCK_LEN] {
        let [n0, n1] = le_words::<2>(nonce);
        let mut state = initial_state(&self.key, counter as u32, (counter >> 32) as u32, n0, n1);
        let mut words = scalar::block_words(&state);
        let out = scalar::serialize(&words);
        state.zeroize();
        words.zeroize();
        out
    }
}

impl fmt::Debug for Forro14 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Forro14")
            .field("backend", &self.engine.backend)
            .finish_non_exhaustive()
    }
}

impl Drop for Forro14 {
    fn drop(&mut self) {
        self.key.zeroize();
    }
}

impl ZeroizeOnDrop for Forro14 {}

/// Forro14 with the libsodium fork's IETF layout (spec §8.1): 96-bit nonce
/// in words 5, 12 and 13, and a 32-bit block counter in word 4.
///
/// A message may use at most `2^32 - counter` blocks; the counter never
/// carries into the nonce word.
#[derive(Clone, Debug)]
pub struct Forro14Ietf {
    inner: Forro14,
}

impl Forro14Ietf {
    /// Nonce length in bytes.
    pub const NONCE_LEN: usize = 12;

    /// A cipher for `key` using the fastest available backend.
    pub fn new(key: &[u8; 32]) -> Self {
        Self {
            inner: Forro14::new(key),
        }
    }

    /// A cipher for `key` that always uses `backend`.
    ///
    /// # Errors
    /// [`CryptoError::BackendUnavailable`] if this CPU cannot run `backend`.
    pub fn with_backend(key: &[u8; 32], backend: Forro14Backend) -> Result<Self, CryptoError> {
        Ok(Self {
            inner: Forro14::with_backend(key, backend)?,
        })
    }

    /// XORs the keystream for (`nonce`, `counter`, `counter + 1`, ...) into
    /// `buf`.
    ///
    /// # Errors
    /// [`CryptoError::MessageTooLong`] if the message would need a counter
    /// value above `u32::MAX`; `buf` is then unchanged.
    pub fn apply_keystream(
        &self,
        nonce: &[u8; 12],
        counter: u32,
        buf: &mut [u8],
    ) -> Result<(), CryptoError> {
        check_counter(u64::from(counter), buf.len(), 1u128 << 32)?;
        let [n0, n1, n2] = le_words::<3>(nonce);
        let mut state = initial_state(&self.inner.key, 0, n0, n1, n2);
        // Word 5 holds nonce[0..4]; the 64-bit counter never carries into it
        // because the check above keeps the low word from wrapping.
        let ctr = (u64::from(n0) << 32) | u64::from(counter);
        self.inner.engine.xor_keystream(&state, ctr, buf);
        state.zeroize();
        Ok(())
    }
}

/// Refuses a message that would need a block counter value at or above
/// `limit` (2^64 for the 64-bit counter, 2^32 for the IETF layout).
pub(crate) fn check_counter(counter: u64, len: usize, limit: u128) -> Result<(), CryptoError> {
    let blocks = (len as u128).div_ceil(BLOCK_LEN as u128);
    if u128::from(counter) + blocks > limit {
        return Err(CryptoError::MessageTooLong);
    }
    Ok(())
}

/// The state of spec §4: key in rows 0 and 2, constants in words 6, 7, 14,
/// 15, and the given words 4, 5, 12, 13.
pub(crate) fn initial_state(key: &[u32; 8], w4: u32, w5: u32, w12: u32, w13: u32) -> [u32; 16] {
    [
        key[0],
        key[1],
        key[2],
        key[3],
        w4,
        w5,
        CONSTANTS[0],
        CONSTANTS[1],
        key[4],
        key[5],
        key[6],
        key[7],
        w12,
        w13,
        CONSTANTS[2],
        CONSTANTS[3],
    ]
}

/// A backend choice: detected (tuned by message length) or forced by the
/// caller (that backend for every length, as the tests need).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Engine {
    backend: Forro14Backend,
    forced: bool,
}

impl Engine {
    /// The fastest backend of this CPU, with the scalar code for up to two
    /// blocks.
    pub(crate) fn auto() -> Self {
        Self {
            backend: Forro14Backend::detect(),
            forced: false,
        }
    }

    /// Exactly `backend`, or an error if the CPU cannot run it.
    pub(crate) fn forced(backend: Forro14Backend) -> Result<Self, CryptoError> {
        if !backend.is_available() {
            return Err(CryptoError::BackendUnavailable(backend));
        }
        Ok(Self {
            backend,
            forced: true,
        })
    }

    /// The selected backend.
    pub(crate) fn backend(self) -> Forro14Backend {
        self.backend
    }

    /// XORs the keystream into `buf`. Words 4 and 5 of `state` are replaced
    /// by the 64-bit counter (low, high) of each block.
    pub(crate) fn xor_keystream(self, state: &[u32; 16], counter: u64, buf: &mut [u8]) {
        // Up to two blocks: the scalar code (two interleaved chains of 672
        // dependent 1-cycle ops) beats a SIMD pass, whose set-up, transpose
        // and 2-cycle rotates cost more than it saves.
        let backend = if !self.forced && buf.len() <= SCALAR_MAX {
            Forro14Backend::Scalar
        } else {
            self.backend
        };
        match backend {
            Forro14Backend::Scalar => scalar::xor_keystream(state, counter, buf),
            Forro14Backend::Avx2 | Forro14Backend::Avx512 => {
                crate::arch::forro14_xor_keystream(backend, state, counter, buf)
            }
        }
    }

    /// Keystream block `counter` into `head` (overwritten) and blocks `counter + 1, ...`
    /// XORed into `buf`: one pass with AVX-512 (no separate pass for an AEAD's key block).
    pub(crate) fn head_and_xor_keystream(
        self,
        state: &[u32; 16],
        counter: u64,
        head: &mut [u8; BLOCK_LEN],
        buf: &mut [u8],
    ) {
        let fused = buf.len() > SCALAR_MAX
            && crate::arch::forro14_head_and_xor_keystream(self.backend, state, counter, head, buf);
        if !fused {
            head.fill(0);
            self.xor_keystream(state, counter, head);
            self.xor_keystream(state, counter.wrapping_add(1), buf);
        }
    }
}

pub(crate) fn key_words(key: &[u8; 32]) -> [u32; 8] {
    le_words::<8>(key)
}

/// `N` little-endian words from the first `4 * N` bytes of `bytes`.
pub(crate) fn le_words<const N: usize>(bytes: &[u8]) -> [u32; N] {
    let mut out = [0u32; N];
    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
        *o = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fused key-block pass gives exactly what two separate calls give, for lengths
    /// through all of its batch shapes, on every backend, and across the carry from word 4
    /// into word 5.
    #[test]
    fn head_and_xor_matches_two_separate_calls() {
        let key: [u32; 8] = core::array::from_fn(|i| 0x9e37_79b9u32.wrapping_mul(i as u32 + 1));
        let state = initial_state(&key, 0, 0, 0x0102_0304, 0x0506_0708);
        for backend in Forro14Backend::ALL.into_iter().filter(|b| b.is_available()) {
            for forced in [false, true] {
                let engine = Engine { backend, forced };
                for counter in [0u64, u64::from(u32::MAX) - 20] {
                    // Every length through the one- to four-batch first passes, then steps
                    // through the later passes and their tails.
                    for len in (0..=2200usize).chain((2201..=9000).step_by(47)) {
                        let msg: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
                        let mut want_head = [0u8; BLOCK_LEN];
                        Engine {
                            backend: Forro14Backend::Scalar,
                            forced: true,
                        }
                        .xor_keystream(&state, counter, &mut want_head);
                        let mut want = msg.clone();
                        Engine {
                            backend: Forro14Backend::Scalar,
                            forced: true,
                        }
                        .xor_keystream(&state, counter + 1, &mut want);
                        let mut head = [0xffu8; BLOCK_LEN];
                        let mut got = msg.clone();
                        engine.head_and_xor_keystream(&state, counter, &mut head, &mut got);
                        assert_eq!(head, want_head, "{backend:?} len {len} counter {counter}");
                        assert_eq!(got, want, "{backend:?} len {len} counter {counter}");
                    }
                }
            }
        }
    }
}
