//! HForro14, XForro14 and XForro14-Poly1305 (spec §8.2–§8.4), as defined by
//! the libsodium fork at commit 8ce46010 (the only source for them).

use core::fmt;

use poly1305::universal_hash::{KeyInit, UniversalHash};
use poly1305::Poly1305;
use subtle::ConstantTimeEq;
use zeroize::{Zeroize, ZeroizeOnDrop};

use super::{
    check_counter, initial_state, key_words, le_words, scalar, Engine, Forro14, Forro14Backend,
    BLOCK_LEN,
};
use crate::error::CryptoError;
use crate::libcrypto::{self, EvpPoly1305};
use crate::mac;

/// Output words of HForro14, in order: the four constant positions, then the
/// four input positions (fork commit aaf667fb; spec §8.2).
const HFORRO_OUTPUT_WORDS: [usize; 8] = [6, 7, 14, 15, 4, 5, 12, 13];

/// HForro14(key, input) -> 32-byte subkey (spec §8.2): the Forro14 state with
/// `input[0..8]` in words 4, 5 and `input[8..16]` in words 12, 13, 14 rounds,
/// no feed-forward, output words 6, 7, 14, 15, 4, 5, 12, 13.
///
/// The result is secret key material; zeroize it when done.
pub fn hforro14(key: &[u8; 32], input: &[u8; 16]) -> [u8; 32] {
    let mut k = le_words::<8>(key);
    let mut words = hforro14_words(&k, input);
    let mut out = [0u8; 32];
    for (o, w) in out.chunks_exact_mut(4).zip(words) {
        o.copy_from_slice(&w.to_le_bytes());
    }
    words.zeroize();
    k.zeroize();
    out
}

/// [`hforro14`] on key words, giving the subkey as words (the layout a
/// Forro14 state takes them in). Secret; zeroize it when done.
pub(crate) fn hforro14_words(key: &[u32; 8], input: &[u8; 16]) -> [u32; 8] {
    let [i0, i1, i2, i3] = le_words::<4>(input);
    let mut x = initial_state(key, i0, i1, i2, i3);
    scalar::rounds(&mut x);
    let out = HFORRO_OUTPUT_WORDS.map(|i| x[i]);
    x.zeroize();
    out
}

/// XForro14 (spec §8.3): a 24-byte nonce; `HForro14(key, nonce[0..16])` is
/// the key of an original Forro14 with nonce `nonce[16..24]` and a 64-bit
/// counter.
#[derive(Clone)]
pub struct XForro14 {
    key: [u8; 32],
    engine: Engine,
}

impl XForro14 {
    /// Nonce length in bytes.
    pub const NONCE_LEN: usize = 24;

    /// A cipher for `key` using the fastest available backend.
    pub fn new(key: &[u8; 32]) -> Self {
        Self {
            key: *key,
            engine: Engine::auto(),
        }
    }

    /// A cipher for `key` that always uses `backend`.
    ///
    /// # Errors
    /// [`CryptoError::BackendUnavailable`] if this CPU cannot run `backend`.
    pub fn with_backend(key: &[u8; 32], backend: Forro14Backend) -> Result<Self, CryptoError> {
        Ok(Self {
            key: *key,
            engine: Engine::forced(backend)?,
        })
    }

    /// XORs the keystream for (`nonce`, `counter`, ...) into `buf`.
    ///
    /// # Errors
    /// [`CryptoError::MessageTooLong`] if the 64-bit counter would wrap.
    pub fn apply_keystream(
        &self,
        nonce: &[u8; 24],
        counter: u64,
        buf: &mut [u8],
    ) -> Result<(), CryptoError> {
        check_counter(counter, buf.len(), 1u128 << 64)?;
        let (prefix, tail) = split_nonce(nonce);
        let mut subkey = hforro14(&self.key, &prefix);
        let inner = Forro14 {
            key: key_words(&subkey),
            engine: self.engine,
        };
        subkey.zeroize();
        inner.apply_keystream(&tail, counter, buf)
    }
}

impl fmt::Debug for XForro14 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("XForro14")
            .field("backend", &self.engine.backend())
            .finish_non_exhaustive()
    }
}

impl Drop for XForro14 {
    fn drop(&mut self) {
        self.key.zeroize();
    }
}

impl ZeroizeOnDrop for XForro14 {}

/// Messages up to this length get their keystream from the same kernel call
/// as block 0 (the one-time Poly1305 key) when sealed: block 0 and at most 7
/// message blocks fill one 8-block batch.
const HEAD_MSG_MAX: usize = 7 * BLOCK_LEN;
/// The head a seal stages: block 0 and a short message's keystream. Longer messages are
/// XORed in place in the pass that makes block 0 ([`Engine::head_and_xor_keystream`]).
const SEAL_HEAD: usize = BLOCK_LEN + HEAD_MSG_MAX;
/// The head an open stages: block 0 and the keystream of a message of up to 31 blocks
/// (1,984 bytes: one Ethernet-MTU packet), all from one 32-block kernel call, because the
/// tag must be checked over the ciphertext before anything is decrypted.
const OPEN_HEAD: usize = 32 * BLOCK_LEN;

/// XForro14-Poly1305 (spec §8.4), the AEAD of the SBSeg 2023 paper: RFC 8439's
/// construction with HForro14 for the nonce extension and Forro14 for
/// ChaCha20. 32-byte key, 24-byte nonce (random nonces are safe), 16-byte tag.
///
/// A message may be at most `(2^32 - 1) * 64` bytes.
///
/// The tag is computed by this crate's Poly1305 (AVX-512 IFMA or AVX2 code for
/// long messages where the CPU has it); on a CPU without IFMA, messages from
/// 4 KiB on use OpenSSL's Poly1305 when OpenSSL is loaded
/// ([`crate::libcrypto`]). The tag is the same either way.
pub struct XForro14Poly1305 {
    key: [u32; 8],
    /// HForro14 of the key with an all-zero nonce prefix, computed once: a sender that puts a
    /// counter in the last 8 nonce bytes (as Nameway's secure links do) never pays the
    /// nonce extension per message.
    zero_prefix_subkey: [u32; 8],
    engine: Engine,
    /// OpenSSL's Poly1305, for longer messages, if OpenSSL is loaded.
    mac: Option<EvpPoly1305>,
}

impl Clone for XForro14Poly1305 {
    fn clone(&self) -> Self {
        Self {
            key: self.key,
            zero_prefix_subkey: self.zero_prefix_subkey,
            engine: self.engine,
            // A context of its own, so clones on other threads never wait.
            mac: self.mac.as_ref().and_then(|_| large_mac()),
        }
    }
}

/// OpenSSL's Poly1305, if OpenSSL is loaded.
fn large_mac() -> Option<EvpPoly1305> {
    EvpPoly1305::new(libcrypto::get()?)
}

impl XForro14Poly1305 {
    /// Key length in bytes.
    pub const KEY_LEN: usize = 32;
    /// Nonce length in bytes.
    pub const NONCE_LEN: usize = 24;
    /// Tag length in bytes.
    pub const TAG_LEN: usize = 16;

    /// An AEAD for `key` using the fastest available Forro14 backend.
    pub fn new(key: &[u8; 32]) -> Self {
        let key = key_words(key);
        Self {
            zero_prefix_subkey: hforro14_words(&key, &[0u8; 16]),
            key,
            engine: Engine::auto(),
            mac: large_mac(),
        }
    }

    /// An AEAD for `key` that always uses `backend`.
    ///
    /// # Errors
    /// [`CryptoError::BackendUnavailable`] if this CPU cannot run `backend`.
    pub fn with_backend(key: &[u8; 32], backend: Forro14Backend) -> Result<Self, CryptoError> {
        let key = key_words(key);
        Ok(Self {
            zero_prefix_subkey: hforro14_words(&key, &[0u8; 16]),
            key,
            engine: Engine::forced(backend)?,
            mac: large_mac(),
        })
    }

    /// Encrypts `buf` in place and returns the tag over `aad` and the
    /// ciphertext.
    ///
    /// # Errors
    /// [`CryptoError::MessageTooLong`] if `buf` needs more than 2^32 - 1
    /// blocks; `buf` is then unchanged.
    pub fn seal_in_place_detached(
        &self,
        nonce: &[u8; 24],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; 16], CryptoError> {
        let mut run = self.start::<SEAL_HEAD>(nonce, buf.len())?;
        if buf.len() <= HEAD_MSG_MAX {
            run.head_keystream();
            run.xor(buf);
        } else {
            // Block 0 (the one-time key) comes from the message's first keystream pass.
            run.head_and_xor(buf);
        }
        Ok(run.tag(self.mac.as_ref(), aad, buf))
    }

    /// Checks `tag` over `aad` and the ciphertext in `buf` in constant time,
    /// and only then decrypts `buf` in place.
    ///
    /// # Errors
    /// [`CryptoError::AuthenticationFailed`] if the tag does not match (`buf`
    /// is then overwritten with zeros, as by every AEAD suite of this crate);
    /// [`CryptoError::MessageTooLong`] as for sealing.
    pub fn open_in_place_detached(
        &self,
        nonce: &[u8; 24],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; 16],
    ) -> Result<(), CryptoError> {
        // The tag is over the ciphertext, so the keystream cannot be XORed in while block 0
        // is made; up to 31 blocks of it are staged instead, from the same kernel call.
        let mut run = self.start::<OPEN_HEAD>(nonce, buf.len())?;
        run.head_keystream();
        let expected = run.tag(self.mac.as_ref(), aad, buf);
        if !bool::from(expected.ct_eq(tag)) {
            buf.fill(0);
            return Err(CryptoError::AuthenticationFailed);
        }
        run.xor(buf);
        Ok(())
    }

    /// Derives the subkey state for one message of `len` bytes.
    fn start<const HEAD: usize>(
        &self,
        nonce: &[u8; 24],
        len: usize,
    ) -> Result<Run<HEAD>, CryptoError> {
        // Counter 0 is the Poly1305 key; the message uses counters 1 ..= 2^32 - 1.
        check_counter(1, len, 1u128 << 32)?;
        let (prefix, tail) = split_nonce(nonce);
        let mut subkey = if prefix == [0u8; 16] {
            self.zero_prefix_subkey
        } else {
            hforro14_words(&self.key, &prefix)
        };
        let [n0, n1] = le_words::<2>(&tail);
        // IETF layout with n12 = 00000000 || nonce[16..24]: word 5 = 0.
        let state = initial_state(&subkey, 0, 0, n0, n1);
        subkey.zeroize();
        Ok(Run {
            state,
            head: [0u8; HEAD],
            head_msg: if BLOCK_LEN + len <= HEAD { len } else { 0 },
            engine: self.engine,
        })
    }
}

impl fmt::Debug for XForro14Poly1305 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("XForro14Poly1305")
            .field("backend", &self.engine.backend())
            .finish_non_exhaustive()
    }
}

impl Drop for XForro14Poly1305 {
    fn drop(&mut self) {
        self.key.zeroize();
        self.zero_prefix_subkey.zeroize();
    }
}

impl ZeroizeOnDrop for XForro14Poly1305 {}

/// One seal or open: the subkey state, block 0 in `head[..64]` (its first 32
/// bytes are the one-time Poly1305 key) and, for a message that fits in the
/// rest of `HEAD` bytes, its whole keystream in `head[64..64 + head_msg]`.
/// The used part of `head` and the state are zeroized on drop.
struct Run<const HEAD: usize> {
    state: [u32; 16],
    head: [u8; HEAD],
    head_msg: usize,
    engine: Engine,
}

impl<const HEAD: usize> Run<HEAD> {
    /// Block 0 into `head[..64]` and, for a short message, its whole keystream after it,
    /// from one kernel call (from 8 blocks on, one that may make block 0 apart from the
    /// message's batches: [`Engine::head_and_xor_keystream`]).
    fn head_keystream(&mut self) {
        let ks = self
            .head
            .get_mut(..BLOCK_LEN + self.head_msg)
            .unwrap_or_default();
        match ks.split_first_chunk_mut::<BLOCK_LEN>() {
            // The staged keystream is all zeros until here: XORing it in writes it.
            Some((block0, rest)) if rest.len() > HEAD_MSG_MAX => {
                self.engine
                    .head_and_xor_keystream(&self.state, 0, block0, rest);
            }
            _ => self.engine.xor_keystream(&self.state, 0, ks),
        }
    }

    /// Block 0 into `head[..64]` and the message keystream (counter 1 onwards) XORed into
    /// `buf`, in one pass where the backend can.
    fn head_and_xor(&mut self, buf: &mut [u8]) {
        if let Some((block0, _)) = self.head.split_first_chunk_mut::<BLOCK_LEN>() {
            self.engine
                .head_and_xor_keystream(&self.state, 0, block0, buf);
        }
    }

    /// XORs the message keystream (counter 1 onwards) into `buf`.
    fn xor(&self, buf: &mut [u8]) {
        if self.head_msg == buf.len() {
            let ks = self.head.get(BLOCK_LEN..).unwrap_or_default();
            for (b, k) in buf.iter_mut().zip(ks) {
                *b ^= k;
            }
        } else {
            self.engine.xor_keystream(&self.state, 1, buf);
        }
    }

    /// Poly1305 over `aad || pad16 || ct || pad16 || le64(|aad|) || le64(|ct|)`, by the
    /// fastest Poly1305 at hand for its length ([`tag_plan`]).
    fn tag(&self, mac: Option<&EvpPoly1305>, aad: &[u8], ct: &[u8]) -> [u8; 16] {
        let ours = tag_plan(mac.is_some()).ours(aad.len() + ct.len());
        self.tag_by(ours, mac, aad, ct)
    }

    /// [`Run::tag`] by this crate's Poly1305 (`ours`) or else by OpenSSL's if `mac` is
    /// given (and not busy), else by the `poly1305` crate.
    fn tag_by(&self, ours: bool, mac: Option<&EvpPoly1305>, aad: &[u8], ct: &[u8]) -> [u8; 16] {
        let mut lengths = [0u8; 16];
        lengths[..8].copy_from_slice(&(aad.len() as u64).to_le_bytes());
        lengths[8..].copy_from_slice(&(ct.len() as u64).to_le_bytes());
        let mut otk = [0u8; 32];
        otk.copy_from_slice(self.head.get(..32).unwrap_or_default());
        let tag = if ours {
            let mut p = mac::Poly1305::new(&otk);
            p.update_padded(aad);
            p.update_padded(ct);
            p.update_block(aad.len() as u64, ct.len() as u64);
            p.finalize()
        } else {
            mac.and_then(|mac| openssl_tag(mac, &otk, &lengths, aad, ct))
                .unwrap_or_else(|| {
                    let mut key = poly1305::Key::from(otk);
                    let mut mac = Poly1305::new(&key);
                    key.zeroize();
                    mac.update_padded(aad);
                    mac.update_padded(ct);
                    mac.update(&[poly1305::Block::from(lengths)]);
                    mac.finalize().into()
                })
        };
        otk.zeroize();
        tag
    }
}

/// Bytes of associated data and ciphertext from which OpenSSL's Poly1305 (its AVX2 code,
/// through EVP_MAC, about 130 ns of set-up) computes the tag on a CPU without AVX-512 IFMA.
/// Measured per tag on a Zen 3, ours (scalar / AVX2) against OpenSSL's: 195 / 190 / 217 ns at
/// 640 bytes, 464 / 343 / 365 at 1500, 617 / 425 / 439 at 2048, 1227 / 753 / 751 at 4096,
/// 2622 / 1518 / 1447 at 8800. So with this crate's AVX2 kernel OpenSSL takes over at 4 KiB;
/// with the scalar code alone (a build without AVX2) at 640 bytes.
fn openssl_tag_min() -> usize {
    if crate::arch::poly1305_vector_available() {
        4096
    } else {
        640
    }
}

/// Which Poly1305 computes XForro14-Poly1305's tags on this CPU, by the length of associated
/// data and ciphertext: this crate's unless one of the bounds says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TagPlan {
    /// OpenSSL's Poly1305 from this many bytes on.
    openssl_from: Option<usize>,
    /// The `poly1305` crate above this many bytes.
    crate_above: Option<usize>,
}

impl TagPlan {
    /// Whether this crate's Poly1305 tags a message of `len` bytes.
    fn ours(self, len: usize) -> bool {
        self.openssl_from.is_none_or(|min| len < min)
            && self.crate_above.is_none_or(|max| len <= max)
    }
}

/// The plan on this CPU (`openssl`: whether OpenSSL is loaded): this crate's kernel at any
/// length with AVX-512 IFMA; else, with OpenSSL, this crate's (AVX2 or scalar) below
/// [`openssl_tag_min`] bytes and OpenSSL's from there; without OpenSSL this crate's, except
/// that without a vector kernel messages over [`mac::SCALAR_MAX`] go to the `poly1305` crate.
fn tag_plan(openssl: bool) -> TagPlan {
    let none = TagPlan {
        openssl_from: None,
        crate_above: None,
    };
    if crate::arch::poly1305_ifma_available() {
        none
    } else if openssl {
        TagPlan {
            openssl_from: Some(openssl_tag_min()),
            ..none
        }
    } else if crate::arch::poly1305_vector_available() {
        none
    } else {
        TagPlan {
            crate_above: Some(mac::SCALAR_MAX),
            ..none
        }
    }
}

/// [`tag_plan`] as text for reports (`openssl`: whether OpenSSL is loaded).
pub(crate) fn tag_paths(openssl: bool) -> String {
    let kernel = if crate::arch::poly1305_ifma_available() {
        "AVX-512 IFMA"
    } else {
        "AVX2"
    };
    let mut text = match crate::arch::poly1305_vector_min() {
        Some(min) => format!("ours, {kernel} from {min} B"),
        None => "ours, scalar".to_owned(),
    };
    let plan = tag_plan(openssl);
    if let Some(min) = plan.openssl_from {
        text.push_str(&format!(", OpenSSL's from {min} B"));
    }
    if let Some(max) = plan.crate_above {
        text.push_str(&format!(", the poly1305 crate over {max} B"));
    }
    text
}

/// The tag by OpenSSL's Poly1305 (`None` if OpenSSL's context is busy or fails).
fn openssl_tag(
    mac: &EvpPoly1305,
    otk: &[u8; 32],
    lengths: &[u8; 16],
    aad: &[u8],
    ct: &[u8],
) -> Option<[u8; 16]> {
    let zeros = [0u8; 16];
    let pad = |n: usize| zeros.get(..(16 - n % 16) % 16).unwrap_or_default();
    mac.tag(otk, &[aad, pad(aad.len()), ct, pad(ct.len()), lengths])
}

impl<const HEAD: usize> Drop for Run<HEAD> {
    fn drop(&mut self) {
        self.state.zeroize();
        // Only the part the kernel wrote holds keystream; the rest is zero.
        if let Some(used) = self.head.get_mut(..BLOCK_LEN + self.head_msg) {
            crate::arch::wipe(used);
        }
    }
}

/// `nonce[0..16]` (HForro14 input) and `nonce[16..24]` (Forro14 nonce).
fn split_nonce(nonce: &[u8; 24]) -> ([u8; 16], [u8; 8]) {
    let mut prefix = [0u8; 16];
    let mut tail = [0u8; 8];
    prefix.copy_from_slice(&nonce[..16]);
    tail.copy_from_slice(&nonce[16..]);
    (prefix, tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tag_plan_bounds_are_where_the_other_poly1305_takes_over() {
        let openssl = TagPlan {
            openssl_from: Some(4096),
            crate_above: None,
        };
        assert!(openssl.ours(0) && openssl.ours(4095));
        assert!(!openssl.ours(4096) && !openssl.ours(1 << 20));
        let crate_above = TagPlan {
            openssl_from: None,
            crate_above: Some(2560),
        };
        assert!(crate_above.ours(2560) && !crate_above.ours(2561));
        // What the bench header reports is the plan the tags follow.
        for loaded in [false, true] {
            let plan = tag_plan(loaded);
            let text = tag_paths(loaded);
            assert_eq!(
                text.contains("OpenSSL"),
                plan.openssl_from.is_some(),
                "{text}"
            );
            assert_eq!(
                text.contains("poly1305 crate"),
                plan.crate_above.is_some(),
                "{text}"
            );
            assert!(!loaded || plan.crate_above.is_none(), "{plan:?}");
            assert!(loaded || plan.openssl_from.is_none(), "{plan:?}");
        }
    }

    /// Both Poly1305 paths give the same tag at every length class: this CPU takes one of
    /// them for long messages, so the other is checked here against it (and the tests in
    /// `mac` check ours against the `poly1305` crate).
    #[test]
    fn both_poly1305_paths_give_the_same_tag() {
        let aead = XForro14Poly1305::new(&[0x3c; 32]);
        let mut run = aead.start::<SEAL_HEAD>(&[9; 24], 0).unwrap();
        run.head_keystream();
        let data: Vec<u8> = (0..9000u32).map(|i| (i * 29 + 7) as u8).collect();
        for len in (0..300)
            .chain((300..9000).step_by(97))
            .chain([1024, 1025, 2048, 8999])
        {
            let aad = &data[..len % 40];
            let ct = &data[..len];
            let with_openssl = run.tag_by(false, aead.mac.as_ref(), aad, ct);
            let crate_only = run.tag_by(false, None, aad, ct);
            let ours = run.tag_by(true, None, aad, ct);
            assert_eq!(ours, crate_only, "len {len}");
            assert_eq!(ours, with_openssl, "len {len}");
        }
    }
}
