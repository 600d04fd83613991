//! OpenSSL sealing one message at a time, in process, as the baseline of
//! `nameway bench ciphers --openssl`.
//!
//! `openssl speed -evp chacha20-poly1305` (OpenSSL 3.0, with or without
//! `-aead`) runs only `EVP_EncryptUpdate` over one continuing stream: no
//! nonce is set and no tag is computed per "message" (`perf` of the command
//! shows `EVP_EncryptUpdate` and the ChaCha20/Poly1305 assembly, never
//! `EVP_EncryptInit_ex` or `EVP_EncryptFinal_ex`; for AES-GCM it does call
//! them). Every packet a secure link seals pays for a nonce, associated data
//! and a tag, so the fair comparison for a suite is OpenSSL doing that same
//! work per message through its public API:
//! `EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce)` (the key schedule
//! kept), `EVP_EncryptUpdate` of the associated data, `EVP_EncryptUpdate` of
//! the payload in place, `EVP_EncryptFinal_ex` and
//! `EVP_CIPHER_CTX_ctrl(EVP_CTRL_AEAD_GET_TAG)`: the loop `openssl speed
//! -aead` documents. The library is the one `nameway_crypto::libcrypto`
//! loads at run time; every baseline is checked against this crate's own
//! suite before anything is timed.
//!
//! A third reference is OpenSSL's TLS-record path for ChaCha20-Poly1305
//! (`EVP_CTRL_AEAD_TLS1_AAD` and one `EVP_Cipher` call per record, the
//! stitched assembly TLS uses). It only takes the TLS nonce (fixed IV XOR
//! sequence number) and 13 bytes of TLS-format associated data, so a
//! forwarder authenticating names and link headers could not use it; it is
//! measured to show what OpenSSL's best per-record code does.

use anyhow::{anyhow, bail, Result};
use nameway_crypto::bench::{Baseline, AAD};
use nameway_crypto::libcrypto::{
    self, EvpAead, EvpCipher, EvpStream, EvpTlsRecord, Libcrypto, Outcome,
};
use nameway_crypto::Suite;

/// The loaded libcrypto.
///
/// # Errors
/// If none can be loaded (or `NAMEWAY_OPENSSL=off`), with the reason.
pub(crate) fn load() -> Result<&'static Libcrypto> {
    libcrypto::load().map_err(|why| {
        anyhow!("--openssl measures OpenSSL per message through its libcrypto (3.x): {why}")
    })
}

/// One OpenSSL AEAD key sealing a message per call.
pub(crate) struct EvpSealer {
    aead: EvpAead,
    name: String,
}

/// A per-message sealer for `suite` (`chacha20-poly1305` or `aes-256-gcm`),
/// checked against this crate's implementation of the suite first.
///
/// # Errors
/// If OpenSSL refuses the cipher or its output differs from ours.
pub(crate) fn sealer(lib: &'static Libcrypto, suite: Suite) -> Result<EvpSealer> {
    let cipher = match suite {
        Suite::ChaCha20Poly1305 => EvpCipher::ChaCha20Poly1305,
        Suite::Aes256Gcm => EvpCipher::Aes256Gcm,
        other => bail!("no OpenSSL baseline for {}", other.name()),
    };
    let key: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(7) ^ 0x3c);
    let aead = EvpAead::new(lib, cipher, &key)
        .ok_or_else(|| anyhow!("OpenSSL refused to set up {}", suite.name()))?;
    let mut sealer = EvpSealer {
        aead,
        name: format!("openssl-evp {}", suite.name()),
    };
    check_against_ours(&mut sealer, suite, &key)?;
    Ok(sealer)
}

impl EvpSealer {
    fn seal_tag(&mut self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> Option<[u8; 16]> {
        let nonce: &[u8; 12] = nonce.try_into().ok()?;
        match self.aead.seal(None, nonce, aad, buf) {
            Outcome::Done(tag) => Some(tag),
            _ => None,
        }
    }
}

impl Baseline for EvpSealer {
    fn name(&self) -> &str {
        &self.name
    }

    fn nonce_len(&self) -> usize {
        12
    }

    fn seal(&mut self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> bool {
        std::hint::black_box(self.seal_tag(nonce, aad, buf)).is_some()
    }
}

/// OpenSSL's TLS-record ChaCha20-Poly1305 as a baseline: each call seals
/// the next record (sequence number counting up) of the payload's length.
pub(crate) struct TlsRecordSealer {
    record: EvpTlsRecord,
    seq: u64,
}

/// The fixed IV of the TLS-record baseline.
const TLS_IV: [u8; 12] = [0x5c; 12];

/// The TLS-record baseline, checked against our `chacha20-poly1305` with
/// the nonce and associated data TLS derives.
///
/// # Errors
/// If OpenSSL refuses, or its records differ from ours.
pub(crate) fn tls_record_sealer(lib: &'static Libcrypto) -> Result<TlsRecordSealer> {
    let key: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(5) ^ 0x71);
    let record = EvpTlsRecord::new(lib, &key, &TLS_IV)
        .ok_or_else(|| anyhow!("OpenSSL refused to set up its TLS-record ChaCha20-Poly1305"))?;
    let mut sealer = TlsRecordSealer { record, seq: 0 };
    let ours = Suite::ChaCha20Poly1305.new_cipher(&key)?;
    for len in [0usize, 1, 64, 1500, 8800] {
        let plain: Vec<u8> = (0..len).map(|b| (b * 13) as u8).collect();
        let (aad, nonce) = sealer.next_record(len);
        let mut theirs = plain.clone();
        theirs.extend([0u8; 16]);
        if !sealer.record.seal_record(&aad, &mut theirs) {
            bail!("OpenSSL failed to seal a {len}-byte TLS record");
        }
        let mut mine = plain;
        let tag = ours.seal_in_place_detached(&nonce, &aad, &mut mine)?;
        mine.extend_from_slice(tag.as_bytes());
        if theirs != mine {
            bail!("OpenSSL's TLS-record ChaCha20-Poly1305 disagrees with ours at {len} bytes");
        }
    }
    Ok(sealer)
}

impl TlsRecordSealer {
    /// The next record's associated data and the nonce TLS derives for it.
    fn next_record(&mut self, len: usize) -> ([u8; 13], [u8; 12]) {
        let seq = self.seq;
        self.seq += 1;
        let mut aad = [0u8; 13];
        aad[..8].copy_from_slice(&seq.to_be_bytes());
        aad[8] = 23; // application data
        aad[9..11].copy_from_slice(&[3, 3]);
        aad[11..].copy_from_slice(&u16::try_from(len).unwrap_or(u16::MAX).to_be_bytes());
        let mut nonce = TLS_IV;
        for (n, s) in nonce[4..].iter_mut().zip(seq.to_be_bytes()) {
            *n ^= s;
        }
        (aad, nonce)
    }
}

impl Baseline for TlsRecordSealer {
    fn name(&self) -> &str {
        "openssl-tls chacha20-poly1305"
    }

    fn nonce_len(&self) -> usize {
        12
    }

    fn tail_room(&self) -> usize {
        16
    }

    /// Ignores `nonce` and `aad`: the record layer derives both.
    fn seal(&mut self, _nonce: &[u8], _aad: &[u8], buf: &mut [u8]) -> bool {
        let (aad, _) = self.next_record(buf.len().saturating_sub(16));
        self.record.seal_record(&aad, buf)
    }
}

/// OpenSSL's bare ChaCha20 as one continuing keystream, the work `openssl speed -evp
/// chacha20` times, measured in the same rounds as the stream suites (a separate `openssl
/// speed` run sees another moment's load on a shared machine).
pub(crate) struct StreamBaseline {
    stream: EvpStream,
}

/// The streaming ChaCha20 baseline, checked against our `chacha20` suite first (its first
/// bytes are RFC 8439 ChaCha20 from counter 0).
///
/// # Errors
/// If OpenSSL refuses, or its keystream differs from ours.
pub(crate) fn stream_baseline(lib: &'static Libcrypto) -> Result<StreamBaseline> {
    let key: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(3) ^ 0x2d);
    let nonce = [0x61u8; 12];
    let mut stream = EvpStream::new(lib, &key, 0, &nonce)
        .ok_or_else(|| anyhow!("OpenSSL refused to set up its ChaCha20"))?;
    let plain: Vec<u8> = (0..1500usize).map(|b| (b * 7) as u8).collect();
    let mut theirs = plain.clone();
    if !stream.apply(&mut theirs) {
        bail!("OpenSSL failed to encrypt with ChaCha20");
    }
    let mut mine = plain;
    Suite::ChaCha20
        .new_cipher(&key)?
        .seal_in_place_detached(&nonce, &[], &mut mine)?;
    if theirs != mine {
        bail!("OpenSSL's ChaCha20 disagrees with ours; not comparing");
    }
    Ok(StreamBaseline { stream })
}

impl Baseline for StreamBaseline {
    fn name(&self) -> &str {
        "openssl-evp chacha20 stream"
    }

    fn nonce_len(&self) -> usize {
        12
    }

    /// Ignores `nonce` and `aad`: the keystream just continues.
    fn seal(&mut self, _nonce: &[u8], _aad: &[u8], buf: &mut [u8]) -> bool {
        self.stream.apply(buf)
    }
}

/// Seals a few messages with OpenSSL and with our `suite` under the same
/// key, nonce and associated data, and fails unless ciphertexts and tags
/// agree: a baseline that skipped work would not.
fn check_against_ours(sealer: &mut EvpSealer, suite: Suite, key: &[u8]) -> Result<()> {
    let ours = suite.new_cipher(key)?;
    for (i, len) in [0usize, 1, 64, 1500, 8800].into_iter().enumerate() {
        let nonce: Vec<u8> = (0..12u8).map(|b| b ^ i as u8).collect();
        let plain: Vec<u8> = (0..len).map(|b| (b * 31 + i) as u8).collect();
        let mut theirs = plain.clone();
        let Some(their_tag) = sealer.seal_tag(&nonce, &AAD, &mut theirs) else {
            bail!(
                "OpenSSL failed to seal a {len}-byte {} message",
                suite.name()
            );
        };
        let mut mine = plain;
        let my_tag = ours.seal_in_place_detached(&nonce, &AAD, &mut mine)?;
        if theirs != mine || their_tag.as_slice() != my_tag.as_bytes() {
            bail!(
                "OpenSSL's {} disagrees with ours on a {len}-byte message; not comparing",
                suite.name()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where libcrypto 3 is installed (it is wherever the `openssl` tool is),
    /// the per-message baseline loads, agrees with our suites (checked inside
    /// `sealer`), and seals.
    #[test]
    fn openssl_per_message_baseline_agrees_with_our_suites() {
        let lib = match load() {
            Ok(lib) => lib,
            Err(e) => {
                assert!(
                    std::process::Command::new("openssl")
                        .arg("version")
                        .output()
                        .is_err(),
                    "openssl is installed but libcrypto did not load: {e:#}"
                );
                return;
            }
        };
        assert!(lib.version().starts_with("OpenSSL 3"), "{}", lib.version());
        for suite in [Suite::ChaCha20Poly1305, Suite::Aes256Gcm] {
            let mut s = sealer(lib, suite).unwrap();
            let mut buf = vec![7u8; 100];
            assert!(s.seal(&[1; 12], b"aad", &mut buf));
            assert_ne!(buf, vec![7u8; 100], "{}: payload not encrypted", s.name());
            assert!(
                !s.seal(&[1; 8], b"aad", &mut buf),
                "a short nonce must fail"
            );
        }
        assert!(sealer(lib, Suite::Forro14).is_err());
        let mut tls = tls_record_sealer(lib).unwrap();
        let mut buf = vec![7u8; 116];
        assert!(tls.seal(&[], &[], &mut buf));
        assert_ne!(&buf[..100], &[7u8; 100][..]);
        assert!(
            !tls.seal(&[], &[], &mut [0u8; 8]),
            "no room for the tag must fail"
        );
        // The stream baseline agrees with our ChaCha20 (checked inside) and keeps going:
        // two calls give different keystream for the same input.
        let mut stream = stream_baseline(lib).unwrap();
        let (mut a, mut b) = (vec![0u8; 64], vec![0u8; 64]);
        assert!(stream.seal(&[], &[], &mut a));
        assert!(stream.seal(&[], &[], &mut b));
        assert_ne!(a, b, "the keystream must continue, not restart");
    }
}
