//! Payload ciphers for Nameway's hop-by-hop Data encryption.
//!
//! This crate is the cipher layer of Nameway: it turns a key, a nonce and a
//! buffer into ciphertext and back. It does no I/O, reads no clock (except in
//! [`bench`](mod@bench)), spawns no thread and never panics on bad input; every fallible
//! call returns a [`CryptoError`].
//!
//! # Suites
//!
//! Every suite is reached through one provider trait, [`PayloadCipher`], and
//! selected by name through the [`Suite`] registry:
//!
//! | name | kind | key | nonce | tag | authenticates |
//! |---|---|---|---|---|---|
//! | `cpa` | codeword permutation, **not encryption** | 16 | 0 | 0 | no |
//! | `chacha20` | stream cipher (RFC 8439, IETF nonce) | 32 | 12 | 0 | no |
//! | `forro14` | stream cipher (Forro14, 64-bit counter) | 32 | 8 | 0 | no |
//! | `chacha20-poly1305` | AEAD (RFC 8439) | 32 | 12 | 16 | yes |
//! | `xchacha20-poly1305` | AEAD (draft-irtf-cfrg-xchacha) | 32 | 24 | 16 | yes |
//! | `xforro14-poly1305` | AEAD (SBSeg 2023, libsodium fork) | 32 | 24 | 16 | yes |
//! | `aes-128-gcm` | AEAD | 16 | 12 | 16 | yes |
//! | `aes-256-gcm` | AEAD | 32 | 12 | 16 | yes |
//!
//! Forro14 and its extensions are written here from the project's spec, with
//! portable, AVX2 and AVX-512 backends ([`forro14`]). ChaCha20-Poly1305 and
//! AES-GCM are `ring`'s (BoringSSL's assembly); XChaCha20-Poly1305 is
//! HChaCha20 (RustCrypto `chacha20`) in front of `ring`'s ChaCha20-Poly1305;
//! bare ChaCha20 and XForro14-Poly1305's Poly1305 are RustCrypto's `chacha20`
//! and `poly1305`.
//!
//! # CPA is not encryption
//!
//! [`cpa`] implements the content-permutation algorithm only as a baseline for
//! comparison with published work. It reorders codewords and hides none of
//! their values, one known plaintext reveals the key, equal payloads give
//! equal outputs, and nothing is authenticated. It can only be built through
//! `danger_` constructors ([`Suite::danger_new_cipher`],
//! [`cpa::Cpa::danger_new`]); [`Suite::new_cipher`] refuses it.
//!
//! # Guarantees
//!
//! * Key bytes this crate holds (the stream ciphers', XChaCha20-Poly1305's
//!   and XForro14-Poly1305's keys, every derived subkey and one-time key) are
//!   zeroized when they are dropped, and no `Debug` output contains key bytes.
//! * **Not zeroized: `ring`'s key schedules.** The ring-backed suites
//!   (`chacha20-poly1305`, `aes-128-gcm`, `aes-256-gcm`, and the per-message
//!   ChaCha20-Poly1305 key of `xchacha20-poly1305`) keep the key, the AES
//!   round keys and the GHASH key powers inside `ring` types that do not
//!   zeroize on drop; those bytes stay in freed heap or stack memory until it
//!   is reused. This is the price of ring's speed (about 7x RustCrypto's
//!   ChaCha20-Poly1305 for 64-byte payloads here); an attacker who can read
//!   the forwarder's memory can read live keys anyway. Likewise not zeroized:
//!   words the compiler spills inside the SIMD kernels, and HChaCha20's
//!   internal state in the `chacha20` crate.
//! * Tags are compared in constant time (`subtle` for XForro14-Poly1305,
//!   `ring`'s own comparison otherwise). If a tag does not match, the buffer
//!   is overwritten with zeros ([`CryptoError::AuthenticationFailed`]): ring
//!   decrypts while it authenticates, so no AEAD here hands back unverified
//!   plaintext, and XForro14-Poly1305 checks before it decrypts.
//! * A message that would wrap a block counter (and so reuse keystream) is
//!   refused before anything is written.
//! * `unsafe` appears only in the private `arch` module (SIMD kernels and the
//!   time-stamp counter) and in [`libcrypto`] (OpenSSL, loaded at run time
//!   for messages of [`libcrypto::LARGE`] bytes or more); everything else is
//!   `#![deny(unsafe_code)]`.
//!
//! ```
//! use nameway_crypto::Suite;
//!
//! let suite: Suite = "xforro14-poly1305".parse()?;
//! let cipher = suite.new_cipher(&[0x42; 32])?;
//! let nonce = [7u8; 24];
//! let mut payload = b"/example/data payload".to_vec();
//! cipher.seal_in_place_append(&nonce, b"/example/data", &mut payload)?;
//! let plain = cipher.open_in_place_appended(&nonce, b"/example/data", &mut payload)?;
//! assert_eq!(plain, b"/example/data payload");
//! # Ok::<(), nameway_crypto::CryptoError>(())
//! ```
#![deny(unsafe_code)]

/// Expands `$qr!(prefix; a, b, c, d, e)` for the eight quarter-rounds of one
/// Forro double round, in the order of spec §6 (column round, then diagonal
/// round). Shared by every backend so the order is written down once.
macro_rules! forro_double_round {
    ($qr:ident $(; $($prefix:tt)*)?) => {
        $qr!($($($prefix)* ;)? 0, 4, 8, 12, 3);
        $qr!($($($prefix)* ;)? 1, 5, 9, 13, 0);
        $qr!($($($prefix)* ;)? 2, 6, 10, 14, 1);
        $qr!($($($prefix)* ;)? 3, 7, 11, 15, 2);
        $qr!($($($prefix)* ;)? 0, 5, 10, 15, 3);
        $qr!($($($prefix)* ;)? 1, 6, 11, 12, 0);
        $qr!($($($prefix)* ;)? 2, 7, 8, 13, 1);
        $qr!($($($prefix)* ;)? 3, 4, 9, 14, 2);
    };
}

mod arch;
pub mod bench;
pub mod cpa;
mod error;
pub mod forro14;
mod key;
pub mod libcrypto;
mod mac;
#[cfg(feature = "noise")]
pub mod noise;
mod provider;
mod suite;

pub use error::CryptoError;

/// Why this CPU cannot run this build, or `None` if it can. The workspace compiles x86-64
/// code for x86-64-v3 (AVX2; see `.cargo/config.toml`); on an older CPU every binary would
/// stop with SIGILL at its first AVX2 instruction, so `namewayd` and `nameway` ask this
/// first and print a clear message instead. Always `None` for a build without AVX2 enabled
/// (`RUSTFLAGS= cargo build`) and on other architectures.
#[must_use]
pub fn cpu_unsupported() -> Option<&'static str> {
    arch::cpu_unsupported()
}
pub use key::SecretKey;
pub use provider::{PayloadCipher, Tag};
pub use suite::Suite;
