//! Signing and verification keys for published objects.
//!
//! The primitives are `nameway-wire`'s (RustCrypto and dalek crates); this module picks one by
//! name, loads it from a file and writes new ones. Private keys are PKCS#8 (PEM or DER, RSA
//! also PKCS#1), public keys X.509 SubjectPublicKeyInfo (PEM or DER), as ndn-cxx, python-ndn
//! and OpenSSL exchange them. An HMAC key file holds the secret bytes themselves.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use bytes::Bytes;
use nameway_wire::security::{
    DigestSha256, EcdsaP256Signer, EcdsaP256Verifier, Ed25519Signer, Ed25519Verifier, HmacSha256,
    KeyError, RsaSha256Signer, RsaSha256Verifier,
};
use nameway_wire::signature::{signature_type, KeyLocator};
use nameway_wire::{Name, Signer, Verifier};
use sha2::{Digest as _, Sha256};

/// RSA modulus size of keys made by [`SigningKey::generate`].
pub const RSA_BITS: usize = 2048;

/// A signature algorithm, as the user names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SignatureKind {
    /// DigestSha256: integrity against accidents only, no key (the default).
    Digest,
    /// SignatureEd25519.
    Ed25519,
    /// SignatureSha256WithEcdsa on P-256.
    EcdsaP256,
    /// SignatureSha256WithRsa (PKCS#1 v1.5).
    Rsa,
    /// SignatureHmacWithSha256 (a shared secret).
    Hmac,
}

impl SignatureKind {
    /// Every kind, in the order tools list them.
    pub const ALL: [Self; 5] = [
        Self::Digest,
        Self::Ed25519,
        Self::EcdsaP256,
        Self::Rsa,
        Self::Hmac,
    ];

    /// The NDN SignatureType.
    pub const fn signature_type(self) -> u64 {
        match self {
            Self::Digest => signature_type::DIGEST_SHA256,
            Self::Ed25519 => signature_type::ED25519,
            Self::EcdsaP256 => signature_type::SHA256_WITH_ECDSA,
            Self::Rsa => signature_type::SHA256_WITH_RSA,
            Self::Hmac => signature_type::HMAC_WITH_SHA256,
        }
    }

    /// The name tools print and accept.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Digest => "digest",
            Self::Ed25519 => "ed25519",
            Self::EcdsaP256 => "ecdsa",
            Self::Rsa => "rsa",
            Self::Hmac => "hmac",
        }
    }
}

impl fmt::Display for SignatureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SignatureKind {
    type Err = KeyFileError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "digest" | "sha256" | "digestsha256" => Self::Digest,
            "ed25519" => Self::Ed25519,
            "ecdsa" | "ecdsa-p256" | "p256" => Self::EcdsaP256,
            "rsa" => Self::Rsa,
            "hmac" | "hmac-sha256" => Self::Hmac,
            _ => return Err(KeyFileError::UnknownKind(s.to_owned())),
        })
    }
}

/// Why a key could not be read, parsed or written.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// Not one of [`SignatureKind::ALL`].
    #[error("unknown signature kind {0:?}: use digest, ed25519, ecdsa, rsa or hmac")]
    UnknownKind(String),
    /// The file cannot be read or written.
    #[error("key file {path}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file holds no key of a supported kind.
    #[error("key file {path}")]
    Key {
        /// The file.
        path: String,
        /// Why.
        source: KeyError,
    },
    /// A keyed kind was asked for without a key.
    #[error("signature kind {0} needs a key file")]
    NeedsKey(SignatureKind),
}

/// A producer's signing key.
#[derive(Clone)]
pub enum SigningKey {
    /// DigestSha256 (no key).
    Digest,
    /// Ed25519.
    Ed25519(Ed25519Signer),
    /// ECDSA P-256.
    EcdsaP256(EcdsaP256Signer),
    /// RSA.
    Rsa(RsaSha256Signer),
    /// HMAC-SHA256.
    Hmac(HmacSha256),
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SigningKey({})", self.kind())
    }
}

impl SigningKey {
    /// The algorithm.
    pub fn kind(&self) -> SignatureKind {
        match self {
            Self::Digest => SignatureKind::Digest,
            Self::Ed25519(_) => SignatureKind::Ed25519,
            Self::EcdsaP256(_) => SignatureKind::EcdsaP256,
            Self::Rsa(_) => SignatureKind::Rsa,
            Self::Hmac(_) => SignatureKind::Hmac,
        }
    }

    /// The signer to hand to [`nameway_wire::Data::sign`].
    pub fn signer(&self) -> &dyn Signer {
        match self {
            Self::Digest => &DigestSha256,
            Self::Ed25519(k) => k,
            Self::EcdsaP256(k) => k,
            Self::Rsa(k) => k,
            Self::Hmac(k) => k,
        }
    }

    /// A new random key of `kind` (RSA: [`RSA_BITS`] bits; HMAC: 32 bytes).
    ///
    /// # Errors
    /// The system random generator failed.
    pub fn generate(kind: SignatureKind) -> Result<Self, KeyError> {
        let key = match kind {
            SignatureKind::Digest => Self::Digest,
            SignatureKind::Ed25519 => Self::Ed25519(Ed25519Signer::generate()?),
            SignatureKind::EcdsaP256 => Self::EcdsaP256(EcdsaP256Signer::generate()?),
            SignatureKind::Rsa => Self::Rsa(RsaSha256Signer::generate(RSA_BITS)?),
            SignatureKind::Hmac => Self::Hmac(HmacSha256::generate()?),
        };
        Ok(key.with_key_digest_locator())
    }

    /// Reads a key of `kind` from `path` (PKCS#8 PEM or DER; RSA also PKCS#1 DER; HMAC: the
    /// file's bytes are the secret). `Digest` needs no file.
    ///
    /// # Errors
    /// The file cannot be read or holds no key of that kind.
    pub fn load(kind: SignatureKind, path: &Path) -> Result<Self, KeyFileError> {
        let bytes = read(path)?;
        let bad = |source| KeyFileError::Key {
            path: path.display().to_string(),
            source,
        };
        let pem = std::str::from_utf8(&bytes)
            .ok()
            .filter(|s| s.contains("-----BEGIN"));
        let key = match kind {
            SignatureKind::Digest => Self::Digest,
            SignatureKind::Ed25519 => Self::Ed25519(
                match pem {
                    Some(p) => Ed25519Signer::from_pkcs8_pem(p),
                    None => Ed25519Signer::from_pkcs8_der(&bytes),
                }
                .map_err(bad)?,
            ),
            SignatureKind::EcdsaP256 => Self::EcdsaP256(
                match pem {
                    Some(p) => EcdsaP256Signer::from_pkcs8_pem(p),
                    None => EcdsaP256Signer::from_pkcs8_der(&bytes),
                }
                .map_err(bad)?,
            ),
            SignatureKind::Rsa => Self::Rsa(
                match pem {
                    Some(p) => RsaSha256Signer::from_pkcs8_pem(p),
                    None => RsaSha256Signer::from_pkcs8_der(&bytes)
                        .or_else(|_| RsaSha256Signer::from_pkcs1_der(&bytes)),
                }
                .map_err(bad)?,
            ),
            SignatureKind::Hmac => Self::Hmac(HmacSha256::new(&bytes).map_err(bad)?),
        };
        Ok(key.with_key_digest_locator())
    }

    /// Puts KeyLocator = KeyDigest (SHA-256 of the public key's SubjectPublicKeyInfo) in
    /// what this key signs, so a consumer holding several keys can tell which one applies.
    /// HMAC keys get none: a digest of the secret would help an attacker check guesses.
    /// Puts KeyLocator = Name (`name`: a key or certificate name, see [`crate::cert`]) in
    /// what this key signs. HMAC and DigestSha256 keys are returned unchanged.
    #[must_use]
    pub fn with_name_locator(self, name: Name) -> Self {
        let locator = KeyLocator::Name(name);
        match self {
            Self::Ed25519(k) => Self::Ed25519(k.with_key_locator(locator)),
            Self::EcdsaP256(k) => Self::EcdsaP256(k.with_key_locator(locator)),
            Self::Rsa(k) => Self::Rsa(k.with_key_locator(locator)),
            other => other,
        }
    }

    /// Signs with KeyLocator = `cert`'s name, after checking that `cert` holds this key.
    ///
    /// # Errors
    /// [`crate::cert::CertError::KeyMismatch`].
    pub fn with_certificate(
        self,
        cert: &crate::cert::Certificate,
    ) -> Result<Self, crate::cert::CertError> {
        if self.public_der().as_deref() != Some(cert.key_der()) {
            return Err(crate::cert::CertError::KeyMismatch(cert.name().to_string()));
        }
        Ok(self.with_name_locator(cert.name().clone()))
    }

    fn with_key_digest_locator(self) -> Self {
        let Some(der) = self.public_der() else {
            return self;
        };
        let locator = KeyLocator::KeyDigest(Bytes::copy_from_slice(&Sha256::digest(&der)));
        match self {
            Self::Ed25519(k) => Self::Ed25519(k.with_key_locator(locator)),
            Self::EcdsaP256(k) => Self::EcdsaP256(k.with_key_locator(locator)),
            Self::Rsa(k) => Self::Rsa(k.with_key_locator(locator)),
            other => other,
        }
    }

    /// The public key, SubjectPublicKeyInfo DER (`None` for DigestSha256 and HMAC).
    pub fn public_der(&self) -> Option<Vec<u8>> {
        match self {
            Self::Ed25519(k) => k.verifier().to_public_key_der().ok(),
            Self::EcdsaP256(k) => k.verifier().to_public_key_der().ok(),
            Self::Rsa(k) => k.verifier().to_public_key_der().ok(),
            Self::Digest | Self::Hmac(_) => None,
        }
    }

    /// The key a consumer verifies with (for HMAC, the same secret).
    pub fn verify_key(&self) -> Option<VerifyKey> {
        Some(match self {
            Self::Digest => return None,
            Self::Ed25519(k) => VerifyKey::Ed25519(k.verifier()),
            Self::EcdsaP256(k) => VerifyKey::EcdsaP256(k.verifier()),
            Self::Rsa(k) => VerifyKey::Rsa(k.verifier()),
            Self::Hmac(k) => VerifyKey::Hmac(k.clone()),
        })
    }

    /// Writes the private key to `path` (PKCS#8 PEM, file mode 0600; HMAC: the raw secret)
    /// and, for public-key kinds, the public key to `<path>.pub` (SubjectPublicKeyInfo PEM).
    /// Returns the public key file written, if any.
    ///
    /// # Errors
    /// The files cannot be written.
    pub fn save(&self, path: &Path) -> Result<Option<std::path::PathBuf>, KeyFileError> {
        let io = |p: &Path, source| KeyFileError::Io {
            path: p.display().to_string(),
            source,
        };
        let key = |source| KeyFileError::Key {
            path: path.display().to_string(),
            source,
        };
        let private: Vec<u8> = match self {
            Self::Digest => return Err(KeyFileError::NeedsKey(SignatureKind::Digest)),
            Self::Hmac(k) => k.expose_secret().to_vec(),
            Self::Ed25519(k) => pem("PRIVATE KEY", &k.to_pkcs8_der().map_err(key)?),
            Self::EcdsaP256(k) => pem("PRIVATE KEY", &k.to_pkcs8_der().map_err(key)?),
            Self::Rsa(k) => pem("PRIVATE KEY", &k.to_pkcs8_der().map_err(key)?),
        };
        write_private(path, &private).map_err(|e| io(path, e))?;
        let Some(der) = self.public_der() else {
            return Ok(None);
        };
        let mut public = path.as_os_str().to_owned();
        public.push(".pub");
        let public = std::path::PathBuf::from(public);
        replace_file(&public, &pem("PUBLIC KEY", &der), false).map_err(|e| io(&public, e))?;
        Ok(Some(public))
    }
}

/// A consumer's trust anchor: the producer's public key (or HMAC secret).
#[derive(Clone)]
pub enum VerifyKey {
    /// Ed25519.
    Ed25519(Ed25519Verifier),
    /// ECDSA P-256.
    EcdsaP256(EcdsaP256Verifier),
    /// RSA.
    Rsa(RsaSha256Verifier),
    /// HMAC-SHA256.
    Hmac(HmacSha256),
}

impl fmt::Debug for VerifyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VerifyKey({})", self.kind())
    }
}

impl VerifyKey {
    /// The algorithm.
    pub fn kind(&self) -> SignatureKind {
        match self {
            Self::Ed25519(_) => SignatureKind::Ed25519,
            Self::EcdsaP256(_) => SignatureKind::EcdsaP256,
            Self::Rsa(_) => SignatureKind::Rsa,
            Self::Hmac(_) => SignatureKind::Hmac,
        }
    }

    /// The verifier to hand to [`nameway_wire::security::verify_data_wire`].
    pub fn verifier(&self) -> &dyn Verifier {
        match self {
            Self::Ed25519(k) => k,
            Self::EcdsaP256(k) => k,
            Self::Rsa(k) => k,
            Self::Hmac(k) => k,
        }
    }

    /// A public key from SubjectPublicKeyInfo DER (the algorithm found from the key itself).
    pub fn from_public_der(der: &[u8]) -> Option<Self> {
        Ed25519Verifier::from_public_key_der(der)
            .map(Self::Ed25519)
            .or_else(|_| EcdsaP256Verifier::from_public_key_der(der).map(Self::EcdsaP256))
            .or_else(|_| RsaSha256Verifier::from_public_key_der(der).map(Self::Rsa))
            .ok()
    }

    /// Reads a public key (SubjectPublicKeyInfo, PEM or DER: the algorithm is found from the
    /// key itself), or with `hmac` set an HMAC secret (the file's bytes).
    ///
    /// # Errors
    /// The file cannot be read or holds no supported public key.
    pub fn load(path: &Path, hmac: bool) -> Result<Self, KeyFileError> {
        let bytes = read(path)?;
        let bad = |source| KeyFileError::Key {
            path: path.display().to_string(),
            source,
        };
        if hmac {
            return Ok(Self::Hmac(HmacSha256::new(&bytes).map_err(bad)?));
        }
        if let Some(p) = std::str::from_utf8(&bytes)
            .ok()
            .filter(|s| s.contains("-----BEGIN"))
        {
            Ed25519Verifier::from_public_key_pem(p)
                .map(Self::Ed25519)
                .or_else(|_| EcdsaP256Verifier::from_public_key_pem(p).map(Self::EcdsaP256))
                .or_else(|_| RsaSha256Verifier::from_public_key_pem(p).map(Self::Rsa))
        } else {
            Ed25519Verifier::from_public_key_der(&bytes)
                .map(Self::Ed25519)
                .or_else(|_| EcdsaP256Verifier::from_public_key_der(&bytes).map(Self::EcdsaP256))
                .or_else(|_| RsaSha256Verifier::from_public_key_der(&bytes).map(Self::Rsa))
        }
        .map_err(|_| bad(KeyError::Malformed("Ed25519, ECDSA P-256 or RSA public")))
    }
}

fn read(path: &Path) -> Result<Vec<u8>, KeyFileError> {
    std::fs::read(path).map_err(|source| KeyFileError::Io {
        path: path.display().to_string(),
        source,
    })
}

fn pem(label: &str, der: &[u8]) -> Vec<u8> {
    pem_rfc7468::encode_string(label, pem_rfc7468::LineEnding::LF, der)
        .map(String::into_bytes)
        .unwrap_or_default()
}

/// Creates `path` readable by its owner only, then writes `bytes`.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_file(path, bytes, true)
}

/// Writes `bytes` to `path` so that a process killed or a machine stopped at any moment
/// leaves either the old file whole or the new one whole: a temporary file beside it,
/// flushed to disk, renamed over it, the directory flushed (best effort). `private` files
/// are created readable by their owner only.
///
/// # Errors
/// The temporary file cannot be written or renamed (it is removed then).
pub fn replace_file(path: &Path, bytes: &[u8], private: bool) -> std::io::Result<()> {
    use std::io::Write as _;
    // A symbolic link (a key kept elsewhere) stays a link: the file it names is replaced.
    let resolved;
    let path = if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        resolved = std::fs::canonicalize(path)?;
        resolved.as_path()
    } else {
        path
    };
    let file_name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path names no file")
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let written = options.open(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_saves_loads_and_verifies() {
        let dir = tempfile::tempdir().unwrap();
        for kind in SignatureKind::ALL {
            assert_eq!(kind.as_str().parse::<SignatureKind>().unwrap(), kind);
            if kind == SignatureKind::Digest {
                continue;
            }
            let key = SigningKey::generate(kind).unwrap();
            let path = dir.path().join(kind.as_str());
            let public = key.save(&path).unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt as _;
                let mode = std::fs::metadata(&path).unwrap().permissions().mode();
                assert_eq!(mode & 0o777, 0o600, "{kind}");
            }
            let loaded = SigningKey::load(kind, &path).unwrap();
            let verify = match public {
                Some(p) => VerifyKey::load(&p, false).unwrap(),
                None => VerifyKey::load(&path, true).unwrap(),
            };
            assert_eq!(verify.kind(), kind);
            let sig = loaded.signer().sign(&[b"segment"]).unwrap();
            verify
                .verifier()
                .verify(kind.signature_type(), &[b"segment"], &sig)
                .unwrap();
            assert!(verify
                .verifier()
                .verify(kind.signature_type(), &[b"segmenT"], &sig)
                .is_err());
        }
        assert!("blake3".parse::<SignatureKind>().is_err());
        let junk = dir.path().join("junk");
        std::fs::write(&junk, b"not a key").unwrap();
        let err = VerifyKey::load(&junk, false).unwrap_err().to_string();
        assert!(err.contains("junk"), "{err}");
    }
}
