//! Traffic keys of one direction of a secure link: key epochs (a one-way HKDF ratchet from the
//! handshake's split key), per-level cipher keys, nonces from packet counters, and the replay
//! window.

use std::sync::Arc;

use nameway_crypto::{PayloadCipher, Suite};
use nameway_wire::lp::SecurityLevel;
use ring::hkdf;
use zeroize::Zeroizing;

/// Info string of the epoch ratchet: `base(e+1) = HKDF-Expand(base(e), RATCHET_INFO)`.
const RATCHET_INFO: &[u8] = b"nameway link rekey v1";
/// Prefix of the info string of a level's key: `HKDF-Expand(base(e), LEVEL_INFO || level)`.
const LEVEL_INFO: &[u8] = b"nameway link key v1 ";

/// The cipher suite of a level (`None` for `none`).
pub(crate) fn suite_of(level: SecurityLevel) -> Option<Suite> {
    Some(match level {
        SecurityLevel::Cpa => Suite::Cpa,
        SecurityLevel::ChaCha20 => Suite::ChaCha20,
        SecurityLevel::Forro14 => Suite::Forro14,
        SecurityLevel::ChaCha20Poly1305 => Suite::ChaCha20Poly1305,
        SecurityLevel::XForro14Poly1305 => Suite::XForro14Poly1305,
        SecurityLevel::Aes256Gcm => Suite::Aes256Gcm,
        _ => return None,
    })
}

struct Len(usize);

impl hkdf::KeyType for Len {
    fn len(&self) -> usize {
        self.0
    }
}

/// HKDF-Expand(SHA-256) of `prk` with `info` into `out`.
pub(super) fn expand(prk: &[u8; 32], info: &[&[u8]], out: &mut [u8]) -> bool {
    let prk = hkdf::Prk::new_less_safe(hkdf::HKDF_SHA256, prk);
    prk.expand(info, Len(out.len()))
        .and_then(|okm| okm.fill(out))
        .is_ok()
}

/// The keys of one epoch of one direction: the epoch's base secret and the ciphers built
/// from it so far (one per level, made on first use).
pub(crate) struct EpochKeys {
    pub(crate) epoch: u16,
    base: Zeroizing<[u8; 32]>,
    ciphers: [Option<Arc<dyn PayloadCipher>>; 7],
}

impl core::fmt::Debug for EpochKeys {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("EpochKeys")
            .field("epoch", &self.epoch)
            .finish_non_exhaustive()
    }
}

impl EpochKeys {
    /// Epoch 0 of a direction, from the handshake's split key.
    pub(crate) fn first(split: &[u8; 32]) -> Self {
        Self {
            epoch: 0,
            base: Zeroizing::new(*split),
            ciphers: Default::default(),
        }
    }

    /// The keys of the next epoch (the ratchet is one-way: this epoch's keys cannot be
    /// computed from the next one's).
    pub(crate) fn next(&self) -> Option<Self> {
        let mut base = Zeroizing::new([0u8; 32]);
        expand(&self.base, &[RATCHET_INFO], &mut base[..]).then(|| Self {
            epoch: self.epoch.wrapping_add(1),
            base,
            ciphers: Default::default(),
        })
    }

    /// The keys `steps` epochs ahead.
    pub(crate) fn ahead(&self, steps: u16) -> Option<Self> {
        let mut keys = self.next()?;
        for _ in 1..steps {
            keys = keys.next()?;
        }
        Some(keys)
    }

    /// The cipher of `level` in this epoch (built on first use).
    pub(crate) fn cipher(&mut self, level: SecurityLevel) -> Option<Arc<dyn PayloadCipher>> {
        let slot = self.ciphers.get_mut(usize::from(level.code()))?;
        if let Some(c) = slot {
            return Some(c.clone());
        }
        let suite = suite_of(level)?;
        let mut key = Zeroizing::new(vec![0u8; suite.key_len()]);
        if !expand(&self.base, &[LEVEL_INFO, level.name().as_bytes()], &mut key) {
            return None;
        }
        let cipher: Arc<dyn PayloadCipher> = Arc::from(suite.danger_new_cipher(&key).ok()?);
        *slot = Some(cipher.clone());
        Some(cipher)
    }

    /// Every secret of this epoch: the base key and the key of each encrypting level (for the
    /// test that nothing prints them).
    #[cfg(test)]
    pub(crate) fn secrets(&self) -> Vec<Vec<u8>> {
        let mut all = vec![self.base.to_vec()];
        for level in SecurityLevel::ALL.into_iter().filter(|l| l.encrypts()) {
            if let Some(suite) = suite_of(level) {
                let mut key = vec![0u8; suite.key_len()];
                if expand(&self.base, &[LEVEL_INFO, level.name().as_bytes()], &mut key) {
                    all.push(key);
                }
            }
        }
        all
    }

    /// The handshake confirmation tag: HMAC-SHA256(epoch-0 key, "nameway confirm" || id).
    pub(crate) fn confirm_tag(&self, id: u32) -> [u8; 16] {
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &self.base[..]);
        let mut ctx = ring::hmac::Context::with_key(&key);
        ctx.update(b"nameway confirm v1");
        ctx.update(&id.to_be_bytes());
        let full = ctx.sign();
        let mut tag = [0u8; 16];
        tag.copy_from_slice(full.as_ref().get(..16).unwrap_or(&[0u8; 16]));
        tag
    }
}

/// The nonce of packet `counter` for a suite with `len`-byte nonces: zeros, then the counter
/// big-endian in the last 8 bytes (all of it for Forro14's 8-byte nonce). Keys are per
/// direction and per epoch, so a counter is never used twice under one key.
pub(crate) fn nonce(counter: u64, len: usize, out: &mut [u8; 24]) -> &[u8] {
    out.fill(0);
    let len = len.min(24);
    let c = counter.to_be_bytes();
    if len >= 8 {
        out[len - 8..len].copy_from_slice(&c);
    }
    &out[..len]
}

/// Width of the replay window, in packets.
pub(crate) const REPLAY_WINDOW: u64 = 4096;
/// One word more than the window, so that the oldest word in the window never shares its slot
/// with the newest.
const WORDS: usize = (REPLAY_WINDOW / 64) as usize + 1;

/// A sliding replay window (RFC 6479 style): counters more than [`REPLAY_WINDOW`] behind the
/// highest seen are refused, and each counter inside it is accepted once.
#[derive(Clone, Debug)]
pub(crate) struct ReplayWindow {
    /// Highest counter accepted + 1 (0: nothing yet).
    top: u64,
    bits: [u64; WORDS],
}

impl Default for ReplayWindow {
    fn default() -> Self {
        Self {
            top: 0,
            bits: [0; WORDS],
        }
    }
}

impl ReplayWindow {
    /// Whether `n` would be accepted (not yet seen, not too old).
    pub(crate) fn check(&self, n: u64) -> bool {
        if n >= self.top {
            return true;
        }
        if self.top - n > REPLAY_WINDOW {
            return false;
        }
        let (w, b) = Self::pos(n);
        self.bits[w] & (1 << b) == 0
    }

    /// Marks `n` seen; false if it was already seen or is too old.
    pub(crate) fn mark(&mut self, n: u64) -> bool {
        if !self.check(n) {
            return false;
        }
        if n >= self.top {
            // Clear the words the window slides over (nothing was set before the first mark).
            if self.top > 0 {
                let old_word = (self.top - 1) / 64;
                let new_word = n / 64;
                let steps = (new_word - old_word).min(WORDS as u64);
                for i in 1..=steps {
                    let (w, _) = Self::pos((old_word + i) * 64);
                    self.bits[w] = 0;
                }
            }
            self.top = n + 1;
        }
        let (w, b) = Self::pos(n);
        self.bits[w] |= 1 << b;
        true
    }

    fn pos(n: u64) -> (usize, u64) {
        (((n / 64) % WORDS as u64) as usize, n % 64)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn replay_window_accepts_each_counter_once_and_forgets_old_ones() {
        let mut w = ReplayWindow::default();
        assert!(w.mark(0));
        assert!(!w.mark(0));
        assert!(w.mark(5));
        assert!(w.mark(3), "reordered but new");
        assert!(!w.mark(3));
        assert!(w.mark(10_000));
        assert!(!w.check(5), "too old now");
        assert!(w.mark(10_000 - 100));
        assert!(!w.mark(10_000 - 100));
        assert!(!w.mark(10_000 - REPLAY_WINDOW - 1));
        // A jump of many windows clears everything it slides over.
        assert!(w.mark(1_000_000));
        for n in 1_000_000 - 200..1_000_000 {
            assert!(w.check(n), "{n}");
        }
    }

    #[test]
    fn replay_window_matches_a_set_model() {
        use std::collections::BTreeSet;
        let mut w = ReplayWindow::default();
        let mut seen = BTreeSet::new();
        let mut top = 0u64;
        let mut x = 12345u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = top.saturating_sub(x % 5000) + (x >> 60);
            let expect = !seen.contains(&n) && (n >= top || top - n <= REPLAY_WINDOW);
            assert_eq!(w.mark(n), expect, "n={n} top={top}");
            if expect {
                seen.insert(n);
                top = top.max(n + 1);
            }
        }
    }

    #[test]
    fn epochs_ratchet_and_levels_get_distinct_keys() {
        let e0 = EpochKeys::first(&[1; 32]);
        let e1 = e0.next().unwrap();
        assert_eq!(e1.epoch, 1);
        assert_ne!(*e0.base, *e1.base);
        assert_eq!(
            *e0.ahead(3).unwrap().base,
            *e1.next().unwrap().next().unwrap().base
        );
        let mut e = EpochKeys::first(&[1; 32]);
        let a = e.cipher(SecurityLevel::ChaCha20Poly1305).unwrap();
        let b = e.cipher(SecurityLevel::ChaCha20).unwrap();
        let mut buf1 = [0u8; 32];
        let mut buf2 = [0u8; 32];
        let mut n = [0u8; 24];
        a.seal_in_place_detached(nonce(1, 12, &mut n), b"", &mut buf1)
            .unwrap();
        b.seal_in_place_detached(nonce(1, 12, &mut n), b"", &mut buf2)
            .unwrap();
        assert_ne!(buf1, buf2, "the same key under two levels");
        assert!(e.cipher(SecurityLevel::None).is_none());
        assert!(e.cipher(SecurityLevel::Cpa).is_some());
    }
}
