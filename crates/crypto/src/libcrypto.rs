//! OpenSSL's libcrypto, loaded at run time, for long messages.
//!
//! OpenSSL 3 has AVX-512 ChaCha20 and AVX-512/IFMA Poly1305 code; ring (and
//! the `poly1305` crate) stop at AVX2. Through OpenSSL's public EVP API each
//! message costs a few hundred nanoseconds of set-up (nonce, associated data,
//! tag), so it only pays off for long messages: from [`LARGE`] bytes on,
//! `chacha20-poly1305` and `xchacha20-poly1305` seal and open through
//! OpenSSL's ChaCha20-Poly1305; shorter messages stay
//! on ring, which is faster there (`docs/ciphers.md`). `xforro14-poly1305`
//! uses OpenSSL's Poly1305 from 4 KiB on a CPU without AVX-512 IFMA (below
//! that, and on IFMA CPUs, this crate's own Poly1305 is faster). Outputs
//! are byte-identical either way (tests check it), so two forwarders
//! interoperate whether or not either has OpenSSL.
//!
//! The library is opened with `dlopen` the first time a suite is built
//! (`libcrypto.so.3`, then `libcrypto.so`), so building needs no OpenSSL
//! headers and a machine without OpenSSL simply keeps the Rust paths. Setting
//! `NAMEWAY_OPENSSL=off` in the environment keeps them too. Every OpenSSL
//! context sits behind a mutex that is only ever tried: a call that finds it
//! busy (another thread sealing with the same key) takes the Rust path.
//!
//! This module and `arch` are the only places with `unsafe`; every block
//! says why it is sound.

#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr::{null, null_mut};
use std::sync::{Mutex, OnceLock};

/// Messages of at least this many bytes use OpenSSL when it is loaded. Where
/// ring's ChaCha20-Poly1305 and OpenSSL's per-message EVP path cross here
/// (1.03x at 2048 bytes, 0.88x at 3072); for XForro14-Poly1305's tag
/// OpenSSL's Poly1305 is already ahead at 2048 bytes (docs/ciphers.md).
pub const LARGE: usize = 2048;

/// `EVP_CTRL_AEAD_GET_TAG` / `SET_TAG` (include/openssl/evp.h).
const EVP_CTRL_AEAD_GET_TAG: c_int = 0x10;
const EVP_CTRL_AEAD_SET_TAG: c_int = 0x11;
/// `EVP_CTRL_AEAD_TLS1_AAD` (include/openssl/evp.h).
const EVP_CTRL_AEAD_TLS1_AAD: c_int = 0x16;
/// `OPENSSL_VERSION` for `OpenSSL_version` (include/openssl/crypto.h).
const OPENSSL_VERSION: c_int = 0;
/// The shared objects tried, in order.
const LIBRARIES: [&CStr; 2] = [c"libcrypto.so.3", c"libcrypto.so"];
/// The environment variable that turns the OpenSSL paths off.
pub const DISABLE_VAR: &str = "NAMEWAY_OPENSSL";

type CipherFn = unsafe extern "C" fn() -> *const c_void;
type CtxNewFn = unsafe extern "C" fn() -> *mut c_void;
type CtxFreeFn = unsafe extern "C" fn(*mut c_void);
type InitFn =
    unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void, *const u8, *const u8) -> c_int;
type UpdateFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_int, *const u8, c_int) -> c_int;
type FinalFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_int) -> c_int;
type CtrlFn = unsafe extern "C" fn(*mut c_void, c_int, c_int, *mut c_void) -> c_int;
type CipherCallFn = unsafe extern "C" fn(*mut c_void, *mut u8, *const u8, u32) -> c_int;
type VersionFn = unsafe extern "C" fn(c_int) -> *const c_char;
type MacFetchFn = unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char) -> *mut c_void;
type MacCtxNewFn = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type MacInitFn = unsafe extern "C" fn(*mut c_void, *const u8, usize, *const c_void) -> c_int;
type MacUpdateFn = unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int;
type MacFinalFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize) -> c_int;

/// The entry points used, resolved once.
struct Api {
    chacha20: CipherFn,
    chacha20_poly1305: CipherFn,
    aes_256_gcm: CipherFn,
    ctx_new: CtxNewFn,
    ctx_free: CtxFreeFn,
    encrypt_init: InitFn,
    encrypt_update: UpdateFn,
    encrypt_final: FinalFn,
    decrypt_init: InitFn,
    decrypt_update: UpdateFn,
    decrypt_final: FinalFn,
    ctrl: CtrlFn,
    cipher: CipherCallFn,
    version: VersionFn,
    mac_ctx_new: MacCtxNewFn,
    mac_ctx_free: CtxFreeFn,
    mac_init: MacInitFn,
    mac_update: MacUpdateFn,
    mac_final: MacFinalFn,
    /// `EVP_MAC_fetch(NULL, "POLY1305", NULL)`, fetched once and never freed.
    poly1305: *mut c_void,
}

// SAFETY: `Api` holds function pointers and one EVP_MAC pointer. An EVP_MAC
// is an immutable, reference-counted method object that OpenSSL documents
// as usable from any thread; the functions are thread-safe for distinct
// contexts, and every context here is used under a mutex.
unsafe impl Send for Api {}
// SAFETY: as above: nothing in `Api` is mutated after it is built.
unsafe impl Sync for Api {}

/// OpenSSL's libcrypto, loaded and resolved. It stays loaded for the life of
/// the process.
pub struct Libcrypto {
    api: Api,
}

impl std::fmt::Debug for Libcrypto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Libcrypto")
            .field("version", &self.version())
            .finish()
    }
}

static LOADED: OnceLock<Result<Libcrypto, String>> = OnceLock::new();

/// The loaded library, loading it on first use; the reason if it cannot be
/// loaded or `NAMEWAY_OPENSSL=off` is set.
///
/// # Errors
/// A one-line reason: turned off, no library found, or a function missing.
pub fn load() -> Result<&'static Libcrypto, String> {
    LOADED
        .get_or_init(|| {
            if std::env::var(DISABLE_VAR).is_ok_and(|v| v == "off" || v == "0") {
                return Err(format!("turned off by {DISABLE_VAR}=off"));
            }
            open()
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The loaded library, or `None` (see [`load`]).
pub fn get() -> Option<&'static Libcrypto> {
    load().ok()
}

fn open() -> Result<Libcrypto, String> {
    let mut reasons = Vec::new();
    for name in LIBRARIES {
        // SAFETY: `name` is NUL-terminated; dlopen has no other precondition.
        // Loading libcrypto runs its initialisers, which are meant to run in
        // any process that links it.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            reasons.push(format!("{}: {}", name.to_string_lossy(), dl_error()));
            continue;
        }
        return resolve(handle).map(|api| Libcrypto { api });
    }
    Err(format!(
        "no OpenSSL 3 libcrypto could be loaded ({})",
        reasons.join("; ")
    ))
}

/// Resolves every entry point in `handle`.
fn resolve(handle: *mut c_void) -> Result<Api, String> {
    let sym = |name: &CStr| -> Result<*mut c_void, String> {
        // SAFETY: handle is a live dlopen handle; name is NUL-terminated.
        let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
        if p.is_null() {
            Err(format!(
                "libcrypto has no {} (OpenSSL 3 is needed)",
                name.to_string_lossy()
            ))
        } else {
            Ok(p)
        }
    };
    macro_rules! func {
        ($name:literal as $ty:ty) => {{
            let p = sym($name)?;
            // SAFETY: the symbol is the OpenSSL 3 function of that name,
            // whose C prototype `$ty` spells out (include/openssl/evp.h,
            // crypto.h); function and data pointers have the same size on
            // every platform dlsym works on.
            unsafe { std::mem::transmute::<*mut c_void, $ty>(p) }
        }};
    }
    let mac_fetch = func!(c"EVP_MAC_fetch" as MacFetchFn);
    // SAFETY: EVP_MAC_fetch(NULL libctx, name, NULL properties) returns a new
    // reference to the default provider's POLY1305 or NULL (checked).
    let poly1305 = unsafe { mac_fetch(null_mut(), c"POLY1305".as_ptr(), null()) };
    if poly1305.is_null() {
        return Err("libcrypto has no POLY1305 MAC".into());
    }
    Ok(Api {
        chacha20: func!(c"EVP_chacha20" as CipherFn),
        chacha20_poly1305: func!(c"EVP_chacha20_poly1305" as CipherFn),
        aes_256_gcm: func!(c"EVP_aes_256_gcm" as CipherFn),
        ctx_new: func!(c"EVP_CIPHER_CTX_new" as CtxNewFn),
        ctx_free: func!(c"EVP_CIPHER_CTX_free" as CtxFreeFn),
        encrypt_init: func!(c"EVP_EncryptInit_ex" as InitFn),
        encrypt_update: func!(c"EVP_EncryptUpdate" as UpdateFn),
        encrypt_final: func!(c"EVP_EncryptFinal_ex" as FinalFn),
        decrypt_init: func!(c"EVP_DecryptInit_ex" as InitFn),
        decrypt_update: func!(c"EVP_DecryptUpdate" as UpdateFn),
        decrypt_final: func!(c"EVP_DecryptFinal_ex" as FinalFn),
        ctrl: func!(c"EVP_CIPHER_CTX_ctrl" as CtrlFn),
        cipher: func!(c"EVP_Cipher" as CipherCallFn),
        version: func!(c"OpenSSL_version" as VersionFn),
        mac_ctx_new: func!(c"EVP_MAC_CTX_new" as MacCtxNewFn),
        mac_ctx_free: func!(c"EVP_MAC_CTX_free" as CtxFreeFn),
        mac_init: func!(c"EVP_MAC_init" as MacInitFn),
        mac_update: func!(c"EVP_MAC_update" as MacUpdateFn),
        mac_final: func!(c"EVP_MAC_final" as MacFinalFn),
        poly1305,
    })
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

impl Libcrypto {
    /// `OpenSSL_version(OPENSSL_VERSION)`, e.g. `OpenSSL 3.0.19 27 Jan 2026`.
    pub fn version(&self) -> String {
        // SAFETY: OpenSSL_version returns a pointer to a static NUL-terminated
        // string (or NULL, checked).
        let p = unsafe { (self.api.version)(OPENSSL_VERSION) };
        if p.is_null() {
            return "OpenSSL (unknown version)".into();
        }
        // SAFETY: non-null, NUL-terminated, static (above).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// An OpenSSL AEAD with 32-byte keys and 12-byte nonces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvpCipher {
    /// RFC 8439 ChaCha20-Poly1305.
    ChaCha20Poly1305,
    /// AES-256-GCM (only as a benchmark baseline: ring is faster here).
    Aes256Gcm,
}

/// An owned `EVP_CIPHER_CTX` or `EVP_MAC_CTX`, freed on drop.
struct Ctx {
    ptr: *mut c_void,
    free: CtxFreeFn,
}

// SAFETY: an OpenSSL context may be used from any thread as long as one
// thread at a time does; every `Ctx` lives in a `Mutex`.
unsafe impl Send for Ctx {}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: ptr came from the matching *_new function and is freed once;
        // the free functions cleanse the key material they hold.
        unsafe { (self.free)(self.ptr) }
    }
}

/// A new `EVP_CIPHER_CTX` for `cipher` in one direction, keyed with `key` (and `iv`, or
/// none until the first message), or `None` if OpenSSL refuses.
fn cipher_ctx(
    lib: &'static Libcrypto,
    cipher: EvpCipher,
    encrypt: bool,
    key: &[u8; 32],
    iv: Option<&[u8; 12]>,
) -> Option<Ctx> {
    let getter = match cipher {
        EvpCipher::ChaCha20Poly1305 => lib.api.chacha20_poly1305,
        EvpCipher::Aes256Gcm => lib.api.aes_256_gcm,
    };
    let init = if encrypt {
        lib.api.encrypt_init
    } else {
        lib.api.decrypt_init
    };
    // 12 bytes: the default IV length of both ciphers.
    new_ctx(lib, getter, init, key, iv.map(|iv| iv.as_slice()))
}

/// A cipher context set up by `init` for the cipher `getter` returns, with `key` and `iv`
/// (`None`: NULL, set later), or `None` if OpenSSL refuses. The caller passes the key length
/// (32 bytes) and IV length the cipher takes: this is the one place a context is made.
fn new_ctx(
    lib: &'static Libcrypto,
    getter: CipherFn,
    init: InitFn,
    key: &[u8; 32],
    iv: Option<&[u8]>,
) -> Option<Ctx> {
    // SAFETY: EVP_CIPHER_CTX_new takes nothing and returns an owned context or NULL
    // (checked).
    let ptr = unsafe { (lib.api.ctx_new)() };
    if ptr.is_null() {
        return None;
    }
    let ctx = Ctx {
        ptr,
        free: lib.api.ctx_free,
    };
    let iv_ptr = iv.map_or(null(), <[u8]>::as_ptr);
    // SAFETY: the getter returns a static EVP_CIPHER (checked non-NULL); ctx is live; the
    // key is 32 bytes, the key length of every cipher used here; the IV is as long as the
    // cipher's (the callers' contract) or NULL, which init allows.
    let ok = unsafe {
        let c = getter();
        !c.is_null() && init(ctx.ptr, c, null_mut(), key.as_ptr(), iv_ptr) == 1
    };
    ok.then_some(ctx)
}

/// One OpenSSL AEAD key, with a context per direction (key schedule kept).
pub struct EvpAead {
    lib: &'static Libcrypto,
    seal_ctx: Mutex<Ctx>,
    open_ctx: Mutex<Ctx>,
}

impl std::fmt::Debug for EvpAead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvpAead").finish_non_exhaustive()
    }
}

/// The outcome of one OpenSSL AEAD call.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome<T> {
    /// Done.
    Done(T),
    /// The tag did not match; the buffer has been zeroed.
    BadTag,
    /// Not done, buffer unchanged: the context was busy on another thread,
    /// or OpenSSL failed before touching the buffer. Use the Rust path.
    NotDone,
    /// OpenSSL failed after changing the buffer, which has been zeroed.
    Lost,
}

impl EvpAead {
    /// Contexts for `cipher` under `key`, or `None` if OpenSSL refuses.
    pub fn new(lib: &'static Libcrypto, cipher: EvpCipher, key: &[u8; 32]) -> Option<Self> {
        Some(Self {
            lib,
            seal_ctx: Mutex::new(cipher_ctx(lib, cipher, true, key, None)?),
            open_ctx: Mutex::new(cipher_ctx(lib, cipher, false, key, None)?),
        })
    }

    /// Encrypts `buf` in place and returns the tag. With `key`, that key
    /// replaces the context's for this message and the ones after it.
    pub fn seal(
        &self,
        key: Option<&[u8; 32]>,
        nonce: &[u8; 12],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Outcome<[u8; 16]> {
        let Ok(ctx) = self.seal_ctx.try_lock() else {
            return Outcome::NotDone;
        };
        let api = &self.lib.api;
        let Some((aad_len, len, key_ptr)) = c_args(aad, buf, key) else {
            return Outcome::NotDone;
        };
        let mut outl: c_int = 0;
        // SAFETY: ctx is a live context with its cipher set (`new`); nonce is
        // 12 bytes, the default IV length; key_ptr is NULL or 32 bytes; the
        // AAD pointer comes with its length and a NULL output.
        let ready = unsafe {
            (api.encrypt_init)(ctx.ptr, null(), null_mut(), key_ptr, nonce.as_ptr()) == 1
                && (api.encrypt_update)(ctx.ptr, null_mut(), &mut outl, aad.as_ptr(), aad_len) == 1
        };
        if !ready {
            return Outcome::NotDone;
        }
        let mut tail = [0u8; 32];
        let mut tag = [0u8; 16];
        // SAFETY: buf is encrypted in place (input and output are the same
        // pointer, which OpenSSL allows); both ciphers are stream modes, so
        // Update writes exactly len bytes and Final none (tail has room for a
        // block anyway); GET_TAG writes 16 bytes into tag.
        let done = unsafe {
            (api.encrypt_update)(ctx.ptr, buf.as_mut_ptr(), &mut outl, buf.as_ptr(), len) == 1
                && outl == len
                && (api.encrypt_final)(ctx.ptr, tail.as_mut_ptr(), &mut outl) == 1
                && (api.ctrl)(
                    ctx.ptr,
                    EVP_CTRL_AEAD_GET_TAG,
                    16,
                    tag.as_mut_ptr().cast::<c_void>(),
                ) == 1
        };
        if done {
            return Outcome::Done(tag);
        }
        // The payload may be (partly) encrypted: applying the same keystream
        // again restores it, so the caller can seal it another way.
        // SAFETY: as above.
        let restored = unsafe {
            (api.encrypt_init)(ctx.ptr, null(), null_mut(), null(), nonce.as_ptr()) == 1
                && (api.encrypt_update)(ctx.ptr, null_mut(), &mut outl, aad.as_ptr(), aad_len) == 1
                && (api.encrypt_update)(ctx.ptr, buf.as_mut_ptr(), &mut outl, buf.as_ptr(), len)
                    == 1
        };
        if restored {
            Outcome::NotDone
        } else {
            buf.fill(0);
            Outcome::Lost
        }
    }

    /// Checks `tag` and decrypts `buf` in place; on a mismatch `buf` is
    /// zeroed. With `key`, as for [`seal`](Self::seal).
    pub fn open(
        &self,
        key: Option<&[u8; 32]>,
        nonce: &[u8; 12],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; 16],
    ) -> Outcome<()> {
        let Ok(ctx) = self.open_ctx.try_lock() else {
            return Outcome::NotDone;
        };
        let api = &self.lib.api;
        let Some((aad_len, len, key_ptr)) = c_args(aad, buf, key) else {
            return Outcome::NotDone;
        };
        let mut outl: c_int = 0;
        let mut expected = *tag;
        // SAFETY: as in `seal`; SET_TAG reads 16 bytes from `expected`.
        let ready = unsafe {
            (api.decrypt_init)(ctx.ptr, null(), null_mut(), key_ptr, nonce.as_ptr()) == 1
                && (api.ctrl)(
                    ctx.ptr,
                    EVP_CTRL_AEAD_SET_TAG,
                    16,
                    expected.as_mut_ptr().cast::<c_void>(),
                ) == 1
                && (api.decrypt_update)(ctx.ptr, null_mut(), &mut outl, aad.as_ptr(), aad_len) == 1
        };
        if !ready {
            return Outcome::NotDone;
        }
        let mut tail = [0u8; 32];
        // SAFETY: in-place decryption of a stream mode, as in `seal`; Final
        // compares the tag (in constant time) and writes nothing.
        let ok = unsafe {
            (api.decrypt_update)(ctx.ptr, buf.as_mut_ptr(), &mut outl, buf.as_ptr(), len) == 1
                && outl == len
                && (api.decrypt_final)(ctx.ptr, tail.as_mut_ptr(), &mut outl) == 1
        };
        if ok {
            Outcome::Done(())
        } else {
            // OpenSSL decrypted before it checked: hand back no unverified
            // plaintext.
            buf.fill(0);
            Outcome::BadTag
        }
    }
}

/// OpenSSL's ChaCha20-Poly1305 in its TLS-record mode, the one-call path
/// TLS uses: `EVP_CTRL_AEAD_TLS1_AAD` with the record's 13-byte associated
/// data (8-byte sequence number, type, version, length), then one
/// `EVP_Cipher` over payload and tag room. The nonce is the fixed IV XOR the
/// sequence number, and the associated data must be in that format, so it
/// cannot seal arbitrary messages; it is here only as a benchmark reference.
pub struct EvpTlsRecord {
    lib: &'static Libcrypto,
    ctx: Ctx,
}

impl std::fmt::Debug for EvpTlsRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvpTlsRecord").finish_non_exhaustive()
    }
}

impl EvpTlsRecord {
    /// A sealing context for `key` and the record layer's fixed `iv`.
    pub fn new(lib: &'static Libcrypto, key: &[u8; 32], iv: &[u8; 12]) -> Option<Self> {
        let ctx = cipher_ctx(lib, EvpCipher::ChaCha20Poly1305, true, key, Some(iv))?;
        Some(Self { lib, ctx })
    }

    /// Seals one record: `buf` holds the payload followed by 16 bytes of room,
    /// which receive the tag; `aad` is the record's associated data, whose
    /// last two bytes must be the payload length (big-endian).
    pub fn seal_record(&mut self, aad: &[u8; 13], buf: &mut [u8]) -> bool {
        let Ok(len) = u32::try_from(buf.len()) else {
            return false;
        };
        if buf.len() < 16 || usize::from(u16::from_be_bytes([aad[11], aad[12]])) != buf.len() - 16 {
            return false;
        }
        let mut aad = *aad;
        let api = &self.lib.api;
        // SAFETY: ctx is a live encryption context (`new`); TLS1_AAD reads 13
        // bytes (and may rewrite the length field of our copy); EVP_Cipher
        // encrypts len - 16 bytes in place and writes the tag into the last
        // 16 bytes of buf, all within buf's len bytes.
        unsafe {
            (api.ctrl)(
                self.ctx.ptr,
                EVP_CTRL_AEAD_TLS1_AAD,
                13,
                aad.as_mut_ptr().cast::<c_void>(),
            ) == 16
                && (api.cipher)(self.ctx.ptr, buf.as_mut_ptr(), buf.as_ptr(), len) > 0
        }
    }
}

/// OpenSSL's bare ChaCha20 (`EVP_chacha20`, its 16-byte IV being the 32-bit block counter
/// then the 96-bit nonce, little-endian) as one continuing keystream: each call to
/// [`EvpStream::apply`] carries on where the previous one stopped, the work `openssl speed
/// -evp chacha20` times. Only a benchmark reference.
pub struct EvpStream {
    lib: &'static Libcrypto,
    ctx: Ctx,
}

impl std::fmt::Debug for EvpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvpStream").finish_non_exhaustive()
    }
}

impl EvpStream {
    /// A ChaCha20 keystream for `key` starting at block `counter` under `nonce`.
    pub fn new(
        lib: &'static Libcrypto,
        key: &[u8; 32],
        counter: u32,
        nonce: &[u8; 12],
    ) -> Option<Self> {
        let mut iv = [0u8; 16];
        iv[..4].copy_from_slice(&counter.to_le_bytes());
        iv[4..].copy_from_slice(nonce);
        // ChaCha20's IV: 16 bytes.
        let ctx = new_ctx(lib, lib.api.chacha20, lib.api.encrypt_init, key, Some(&iv))?;
        Some(Self { lib, ctx })
    }

    /// XORs the next `buf.len()` bytes of keystream into `buf`; `false` if OpenSSL fails
    /// (or `buf` is longer than a C int).
    pub fn apply(&mut self, buf: &mut [u8]) -> bool {
        let Ok(len) = c_int::try_from(buf.len()) else {
            return false;
        };
        let mut written: c_int = 0;
        // SAFETY: ctx is a live ChaCha20 encryption context; a stream cipher writes exactly
        // `len` bytes, in place over the `len` bytes of buf it reads.
        let ok = unsafe {
            (self.lib.api.encrypt_update)(
                self.ctx.ptr,
                buf.as_mut_ptr(),
                &mut written,
                buf.as_ptr(),
                len,
            )
        };
        ok == 1 && written == len
    }
}

/// The C arguments of one AEAD call: the lengths of `aad` and `buf` as C
/// ints (`None` if either does not fit) and the key pointer (NULL: keep).
fn c_args(aad: &[u8], buf: &[u8], key: Option<&[u8; 32]>) -> Option<(c_int, c_int, *const u8)> {
    Some((
        c_int::try_from(aad.len()).ok()?,
        c_int::try_from(buf.len()).ok()?,
        key.map_or(null(), |k| k.as_ptr()),
    ))
}

/// OpenSSL's Poly1305 (EVP_MAC), for the tag of XForro14-Poly1305.
pub struct EvpPoly1305 {
    lib: &'static Libcrypto,
    ctx: Mutex<Ctx>,
}

impl std::fmt::Debug for EvpPoly1305 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvpPoly1305").finish_non_exhaustive()
    }
}

impl EvpPoly1305 {
    /// A MAC context, or `None` if OpenSSL refuses.
    pub fn new(lib: &'static Libcrypto) -> Option<Self> {
        // SAFETY: poly1305 is a live EVP_MAC (fetched in `resolve`);
        // EVP_MAC_CTX_new returns an owned context or NULL (checked).
        let ptr = unsafe { (lib.api.mac_ctx_new)(lib.api.poly1305) };
        if ptr.is_null() {
            return None;
        }
        Some(Self {
            lib,
            ctx: Mutex::new(Ctx {
                ptr,
                free: lib.api.mac_ctx_free,
            }),
        })
    }

    /// Poly1305 under the one-time key `otk` over the concatenation of `parts`, one update
    /// each (each EVP_MAC call costs tens of nanoseconds, so a short message is best handed
    /// over whole). `None` if the context is busy or OpenSSL fails.
    pub fn tag(&self, otk: &[u8; 32], parts: &[&[u8]]) -> Option<[u8; 16]> {
        let ctx = self.ctx.try_lock().ok()?;
        let api = &self.lib.api;
        let mut tag = [0u8; 16];
        let mut out_len = 0usize;
        // SAFETY: ctx is a live EVP_MAC_CTX for POLY1305; init reads the
        // 32-byte key; every update pointer comes with its length; final
        // writes at most 16 bytes into tag (its size is passed).
        let ok = unsafe {
            (api.mac_init)(ctx.ptr, otk.as_ptr(), 32, null()) == 1
                && parts
                    .iter()
                    .all(|p| (api.mac_update)(ctx.ptr, p.as_ptr(), p.len()) == 1)
                && (api.mac_final)(ctx.ptr, tag.as_mut_ptr(), &mut out_len, 16) == 1
        };
        (ok && out_len == 16).then_some(tag)
    }
}
