//! OpenSSL sealing one message at a time, in process, as the baseline of
//! `nameway bench ciphers --openssl`.
//!
//! `openssl speed -evp chacha20-poly1305` (OpenSSL 3.0, with or without
//! `-aead`) runs only `EVP_EncryptUpdate` over one continuing stream: no
//! nonce is set, no tag is computed, per "message" (`perf` of the command
//! shows `EVP_EncryptUpdate` and the ChaCha20/Poly1305 assembly, never
//! `EVP_EncryptInit_ex` or `EVP_EncryptFinal_ex`; for AES-GCM it does call
//! them). Every packet a secure link seals pays for a nonce, associated data
//! and a tag, so the fair comparison for a suite is OpenSSL doing that same
//! work per message through its public API:
//! `EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce)` (the key schedule
//! kept), `EVP_EncryptUpdate` of the associated data, `EVP_EncryptUpdate` of
//! the payload in place, `EVP_EncryptFinal_ex` and
//! `EVP_CIPHER_CTX_ctrl(EVP_CTRL_AEAD_GET_TAG)`: the loop `openssl speed
//! -aead` documents.
//!
//! The system's `libcrypto.so.3` is loaded at run time (`dlopen`), so
//! building Nameway needs no OpenSSL headers; every result is checked against
//! this crate's own suites before anything is timed.

#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr::{null, null_mut};

use anyhow::{bail, Result};
use nameway_crypto::bench::Baseline;
use nameway_crypto::Suite;

/// `EVP_CTRL_AEAD_GET_TAG` (include/openssl/evp.h).
const EVP_CTRL_AEAD_GET_TAG: c_int = 0x10;
/// `OPENSSL_VERSION` for `OpenSSL_version` (include/openssl/crypto.h).
const OPENSSL_VERSION: c_int = 0;
/// The shared objects tried, in order.
const LIBRARIES: [&CStr; 2] = [c"libcrypto.so.3", c"libcrypto.so"];

type CipherFn = unsafe extern "C" fn() -> *const c_void;
type CtxNewFn = unsafe extern "C" fn() -> *mut c_void;
type CtxFreeFn = unsafe extern "C" fn(*mut c_void);
type InitFn =
    unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void, *const u8, *const u8) -> c_int;
type UpdateFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_int, *const u8, c_int) -> c_int;
type FinalFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_int) -> c_int;
type CtrlFn = unsafe extern "C" fn(*mut c_void, c_int, c_int, *mut c_void) -> c_int;
type VersionFn = unsafe extern "C" fn(c_int) -> *const c_char;

/// The entry points of libcrypto used here.
#[derive(Clone, Copy)]
struct Api {
    chacha20_poly1305: CipherFn,
    aes_256_gcm: CipherFn,
    ctx_new: CtxNewFn,
    ctx_free: CtxFreeFn,
    encrypt_init: InitFn,
    encrypt_update: UpdateFn,
    encrypt_final: FinalFn,
    ctrl: CtrlFn,
    version: VersionFn,
}

/// The loaded library. It stays loaded for the life of the process.
pub(crate) struct Libcrypto {
    api: Api,
}

impl Libcrypto {
    /// Loads the system's libcrypto.
    ///
    /// # Errors
    /// If no OpenSSL 3 libcrypto can be loaded or a function is missing.
    pub(crate) fn load() -> Result<Self> {
        let mut reasons = Vec::new();
        for name in LIBRARIES {
            // SAFETY: `name` is a NUL-terminated string; dlopen has no other
            // precondition. Loading libcrypto runs its initialisers, which
            // are meant to run in any process that links it.
            let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if handle.is_null() {
                reasons.push(format!("{}: {}", name.to_string_lossy(), dl_error()));
                continue;
            }
            return Ok(Self {
                api: resolve(handle)?,
            });
        }
        bail!(
            "--openssl needs OpenSSL's libcrypto (3.x) to measure it per message, and none could be loaded ({})",
            reasons.join("; ")
        )
    }

    /// `OpenSSL_version(OPENSSL_VERSION)`, e.g. `OpenSSL 3.0.19 27 Jan 2026`.
    pub(crate) fn version(&self) -> String {
        // SAFETY: OpenSSL_version returns a pointer to a static NUL-terminated
        // string (or NULL, checked).
        let p = unsafe { (self.api.version)(OPENSSL_VERSION) };
        if p.is_null() {
            return "OpenSSL (unknown version)".into();
        }
        // SAFETY: non-null, NUL-terminated, static (above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// A per-message sealer for `suite` (`chacha20-poly1305` or
    /// `aes-256-gcm`), checked against this crate's implementation of the
    /// suite on a few messages first.
    ///
    /// # Errors
    /// If OpenSSL refuses the cipher or its output differs from ours.
    pub(crate) fn sealer(&self, suite: Suite) -> Result<EvpSealer> {
        let cipher = match suite {
            Suite::ChaCha20Poly1305 => self.api.chacha20_poly1305,
            Suite::Aes256Gcm => self.api.aes_256_gcm,
            other => bail!("no OpenSSL baseline for {}", other.name()),
        };
        let key: Vec<u8> = (0..32u8).map(|i| i.wrapping_mul(7) ^ 0x3c).collect();
        // SAFETY: EVP_CIPHER_CTX_new takes nothing and returns an owned
        // context or NULL (checked).
        let ctx = unsafe { (self.api.ctx_new)() };
        if ctx.is_null() {
            bail!("EVP_CIPHER_CTX_new failed");
        }
        let mut sealer = EvpSealer {
            api: self.api,
            ctx,
            name: format!("openssl-evp {}", suite.name()),
        };
        // SAFETY: the cipher getters return static EVP_CIPHER pointers; ctx
        // is a live context; key is 32 bytes, the key length of both ciphers;
        // a NULL IV is allowed at this step (set per message).
        let ok = unsafe {
            let c = cipher();
            !c.is_null() && (self.api.encrypt_init)(ctx, c, null_mut(), key.as_ptr(), null()) == 1
        };
        if !ok {
            bail!("OpenSSL refused to set up {}", suite.name());
        }
        check_against_ours(&mut sealer, suite, &key)?;
        Ok(sealer)
    }
}

/// Resolves every entry point in `handle`.
fn resolve(handle: *mut c_void) -> Result<Api> {
    fn sym(handle: *mut c_void, name: &CStr) -> Result<*mut c_void> {
        // SAFETY: handle is a live dlopen handle; name is NUL-terminated.
        let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
        if p.is_null() {
            bail!(
                "libcrypto has no {} (OpenSSL 3 is needed)",
                name.to_string_lossy()
            );
        }
        Ok(p)
    }
    // SAFETY (every transmute below): each symbol is the OpenSSL 3 function of
    // that name, whose C prototype the target type spells out
    // (include/openssl/evp.h, crypto.h); a function pointer and a data
    // pointer have the same size on every platform dlsym works on.
    unsafe {
        Ok(Api {
            chacha20_poly1305: std::mem::transmute::<*mut c_void, CipherFn>(sym(
                handle,
                c"EVP_chacha20_poly1305",
            )?),
            aes_256_gcm: std::mem::transmute::<*mut c_void, CipherFn>(sym(
                handle,
                c"EVP_aes_256_gcm",
            )?),
            ctx_new: std::mem::transmute::<*mut c_void, CtxNewFn>(sym(
                handle,
                c"EVP_CIPHER_CTX_new",
            )?),
            ctx_free: std::mem::transmute::<*mut c_void, CtxFreeFn>(sym(
                handle,
                c"EVP_CIPHER_CTX_free",
            )?),
            encrypt_init: std::mem::transmute::<*mut c_void, InitFn>(sym(
                handle,
                c"EVP_EncryptInit_ex",
            )?),
            encrypt_update: std::mem::transmute::<*mut c_void, UpdateFn>(sym(
                handle,
                c"EVP_EncryptUpdate",
            )?),
            encrypt_final: std::mem::transmute::<*mut c_void, FinalFn>(sym(
                handle,
                c"EVP_EncryptFinal_ex",
            )?),
            ctrl: std::mem::transmute::<*mut c_void, CtrlFn>(sym(handle, c"EVP_CIPHER_CTX_ctrl")?),
            version: std::mem::transmute::<*mut c_void, VersionFn>(sym(
                handle,
                c"OpenSSL_version",
            )?),
        })
    }
}

/// The last `dlerror` message.
fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the
    // next dl* call on this thread; it is copied at once.
    let p = unsafe { libc::dlerror() };
    if p.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// One OpenSSL AEAD context with its key set; seals a message per call.
pub(crate) struct EvpSealer {
    api: Api,
    ctx: *mut c_void,
    name: String,
}

impl EvpSealer {
    /// Seals `buf` in place and writes the tag.
    fn seal_into(&mut self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &mut [u8; 16]) -> bool {
        let (Ok(aad_len), Ok(len)) = (c_int::try_from(aad.len()), c_int::try_from(buf.len()))
        else {
            return false;
        };
        if nonce.len() != 12 {
            return false;
        }
        let mut outl: c_int = 0;
        let mut tail = [0u8; 16];
        // SAFETY: ctx is a live context whose cipher and key were set in
        // `Libcrypto::sealer`; nonce is 12 bytes, the default IV length of
        // both ciphers; every buffer pointer comes with its length, and the
        // payload is encrypted in place, which OpenSSL allows for these
        // stream-mode ciphers; Final writes nothing for them (tail has room
        // for a block anyway); GET_TAG writes 16 bytes into tag.
        unsafe {
            (self.api.encrypt_init)(self.ctx, null(), null_mut(), null(), nonce.as_ptr()) == 1
                && (self.api.encrypt_update)(self.ctx, null_mut(), &mut outl, aad.as_ptr(), aad_len)
                    == 1
                && (self.api.encrypt_update)(
                    self.ctx,
                    buf.as_mut_ptr(),
                    &mut outl,
                    buf.as_ptr(),
                    len,
                ) == 1
                && (self.api.encrypt_final)(self.ctx, tail.as_mut_ptr(), &mut outl) == 1
                && (self.api.ctrl)(
                    self.ctx,
                    EVP_CTRL_AEAD_GET_TAG,
                    16,
                    tag.as_mut_ptr().cast::<c_void>(),
                ) == 1
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
        let mut tag = [0u8; 16];
        let ok = self.seal_into(nonce, aad, buf, &mut tag);
        std::hint::black_box(tag);
        ok
    }
}

impl Drop for EvpSealer {
    fn drop(&mut self) {
        // SAFETY: ctx came from EVP_CIPHER_CTX_new and is freed once; the
        // free cleanses the key schedule.
        unsafe { (self.api.ctx_free)(self.ctx) }
    }
}

/// Seals a few messages with OpenSSL and with our `suite` under the same
/// key, nonce and associated data, and fails unless ciphertexts and tags
/// agree: a baseline that skipped work would not.
fn check_against_ours(sealer: &mut EvpSealer, suite: Suite, key: &[u8]) -> Result<()> {
    let ours = suite.new_cipher(key)?;
    for (i, len) in [0usize, 1, 64, 1500, 8800].into_iter().enumerate() {
        let nonce: Vec<u8> = (0..12u8).map(|b| b ^ i as u8).collect();
        let aad = &nameway_crypto::bench::AAD;
        let plain: Vec<u8> = (0..len).map(|b| (b * 31 + i) as u8).collect();
        let mut theirs = plain.clone();
        let mut their_tag = [0u8; 16];
        if !sealer.seal_into(&nonce, aad, &mut theirs, &mut their_tag) {
            bail!(
                "OpenSSL failed to seal a {len}-byte {} message",
                suite.name()
            );
        }
        let mut mine = plain;
        let my_tag = ours.seal_in_place_detached(&nonce, aad, &mut mine)?;
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
        let lib = match Libcrypto::load() {
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
            let mut s = lib.sealer(suite).unwrap();
            let mut buf = vec![7u8; 100];
            assert!(s.seal(&[1; 12], b"aad", &mut buf));
            assert_ne!(buf, vec![7u8; 100], "{}: payload not encrypted", s.name());
            assert!(
                !s.seal(&[1; 8], b"aad", &mut buf),
                "a short nonce must fail"
            );
        }
        assert!(lib.sealer(Suite::Forro14).is_err());
    }
}
