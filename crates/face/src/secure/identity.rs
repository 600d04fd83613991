//! A forwarder's long-term identity: an X25519 key pair, the static key of the Noise XX
//! handshake. The secret lives in a file of mode 0600 created on first start; the public key
//! is what peers put in their trust lists.

use core::fmt;
use core::str::FromStr;
use std::io::Write;
use std::path::{Path, PathBuf};

use curve25519_dalek::montgomery::MontgomeryPoint;
use zeroize::{Zeroize, Zeroizing};

/// First line of an identity file.
const FILE_HEADER: &str = "nameway-identity-v1 x25519";

/// A peer's public key (X25519, 32 bytes). Printed and parsed as 64 hexadecimal digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PublicKey(pub [u8; 32]);

impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({self})")
    }
}

/// A public key that is not 64 hexadecimal digits.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a public key (64 hexadecimal digits expected): {0:?}")]
pub struct BadPublicKey(pub String);

impl FromStr for PublicKey {
    type Err = BadPublicKey;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let mut key = [0u8; 32];
        hex::decode_to_slice(s, &mut key).map_err(|_| BadPublicKey(s.to_owned()))?;
        Ok(Self(key))
    }
}

/// Why an identity could not be loaded or created.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// The file could not be read or written.
    #[error("identity file {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file is not an identity file.
    #[error("identity file {path} is not a Nameway identity ({why})")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: &'static str,
    },
    /// The file can be read by others than its owner.
    #[error("identity file {path} has mode {mode:o}: it must not be readable by group or others (chmod 600)")]
    Permissions {
        /// The file.
        path: PathBuf,
        /// Its mode bits.
        mode: u32,
    },
    /// The system's random generator failed.
    #[error("no randomness for a new identity key")]
    Random,
}

/// This forwarder's long-term key pair. The secret is zeroized on drop and never printed.
#[derive(Clone)]
pub struct Identity {
    secret: Zeroizing<[u8; 32]>,
    public: PublicKey,
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

impl Identity {
    /// A fresh key pair from the operating system's generator.
    ///
    /// # Errors
    /// [`IdentityError::Random`] if the generator fails.
    pub fn generate() -> Result<Self, IdentityError> {
        let mut secret = Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut secret[..]).map_err(|_| IdentityError::Random)?;
        Ok(Self::from_secret(*secret))
    }

    /// The key pair of a secret scalar (clamped as X25519 does).
    pub fn from_secret(mut secret: [u8; 32]) -> Self {
        let public = PublicKey(MontgomeryPoint::mul_base_clamped(secret).to_bytes());
        let id = Self {
            secret: Zeroizing::new(secret),
            public,
        };
        secret.zeroize();
        id
    }

    /// The public key, to give to peers.
    pub fn public_key(&self) -> PublicKey {
        self.public
    }

    /// A copy of the secret scalar, to open what was sealed to this identity's public key
    /// (the controller's group keys, HPKE); zeroized on drop. Never log or store it.
    pub fn secret_copy(&self) -> Zeroizing<[u8; 32]> {
        Zeroizing::new(*self.secret)
    }

    /// The secret, for the handshake only.
    pub(crate) fn secret(&self) -> &[u8; 32] {
        &self.secret
    }

    /// Loads the identity at `path`, or creates it (mode 0600, parent directories as needed)
    /// if the file does not exist. Returns the identity and whether it was created.
    ///
    /// # Errors
    /// An unreadable or malformed file, one readable by group or others, or a failure to
    /// write a new one.
    pub fn load_or_create(path: &Path) -> Result<(Self, bool), IdentityError> {
        let io = |source| IdentityError::Io {
            path: path.to_owned(),
            source,
        };
        match std::fs::read_to_string(path) {
            Ok(text) => {
                check_mode(path)?;
                let text = Zeroizing::new(text);
                Self::parse(path, &text).map(|id| (id, false))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let id = Self::generate()?;
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(io)?;
                }
                let mut file = open_private(path).map_err(io)?;
                let body =
                    Zeroizing::new(format!("{FILE_HEADER}\n{}\n", hex::encode(&id.secret[..])));
                file.write_all(body.as_bytes()).map_err(io)?;
                file.sync_all().map_err(io)?;
                Ok((id, true))
            }
            Err(e) => Err(io(e)),
        }
    }

    fn parse(path: &Path, text: &str) -> Result<Self, IdentityError> {
        let format = |why| IdentityError::Format {
            path: path.to_owned(),
            why,
        };
        let mut lines = text.lines();
        if lines.next().map(str::trim) != Some(FILE_HEADER) {
            return Err(format("first line is not the identity header"));
        }
        let hex_secret = lines.next().map(str::trim).unwrap_or_default();
        let mut secret = Zeroizing::new([0u8; 32]);
        hex::decode_to_slice(hex_secret, &mut secret[..])
            .map_err(|_| format("second line is not 64 hexadecimal digits"))?;
        Ok(Self::from_secret(*secret))
    }
}

#[cfg(unix)]
fn open_private(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn open_private(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

#[cfg(unix)]
fn check_mode(path: &Path) -> Result<(), IdentityError> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|source| IdentityError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(IdentityError::Permissions {
            path: path.to_owned(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_mode(_: &Path) -> Result<(), IdentityError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn created_once_with_mode_0600_then_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys/identity.key");
        let (a, created) = Identity::load_or_create(&path).unwrap();
        assert!(created);
        let (b, created) = Identity::load_or_create(&path).unwrap();
        assert!(!created);
        assert_eq!(a.public_key(), b.public_key());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let err = Identity::load_or_create(&path).unwrap_err();
            assert!(err.to_string().contains("chmod 600"), "{err}");
        }
        // Debug output shows the public key only.
        let shown = format!("{a:?}");
        assert!(!shown.contains(&hex::encode(&a.secret[..])));
    }

    #[test]
    fn public_keys_parse_and_print_as_hex() {
        let id = Identity::from_secret([9; 32]);
        let text = id.public_key().to_string();
        assert_eq!(text.len(), 64);
        assert_eq!(text.parse::<PublicKey>().unwrap(), id.public_key());
        assert!("abc".parse::<PublicKey>().is_err());
    }

    #[test]
    fn a_malformed_file_is_refused_with_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.key");
        std::fs::write(&path, "hello\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let err = Identity::load_or_create(&path).unwrap_err();
        assert!(err.to_string().contains("not a Nameway identity"), "{err}");
    }
}
