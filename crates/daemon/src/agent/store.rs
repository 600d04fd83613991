//! The agent's files in `state_dir`: its router key (`router.key`, Ed25519, mode 0600), the
//! certificate the controller issued (`router.cert`), and the last FIB it applied
//! (`fib.json`, written atomically) so that a restart without the controller still forwards.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use nameway_ctl::{Fib, NextHop};
use nameway_transport::{Certificate, SignatureKind, SigningKey};
use nameway_wire::Name;
use serde::{Deserialize, Serialize};

/// Why a state file cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// A file cannot be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file's content is not what the agent wrote.
    #[error("{path}: {why}")]
    Format {
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

/// The agent's directory.
#[derive(Clone, Debug)]
pub struct StateDir(PathBuf);

#[derive(Serialize, Deserialize)]
struct FibFile {
    version: u64,
    entries: Vec<(String, Vec<(u64, u64)>)>,
}

impl StateDir {
    /// `dir`, created if missing (mode 0700).
    ///
    /// # Errors
    /// [`StateError::Io`].
    pub fn open(dir: &Path) -> Result<Self, StateError> {
        std::fs::create_dir_all(dir).map_err(|source| StateError::Io {
            path: dir.to_owned(),
            source,
        })?;
        Ok(Self(dir.to_owned()))
    }

    fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }

    /// The path of `file` in the directory.
    pub fn file(&self, file: &str) -> PathBuf {
        self.path(file)
    }

    /// Writes `file` whole: to a temporary file, then renamed over it
    /// ([`nameway_transport::keys::replace_file`]).
    ///
    /// # Errors
    /// [`StateError::Io`].
    pub fn write_atomically(&self, file: &str, bytes: &[u8]) -> Result<(), StateError> {
        let path = self.path(file);
        nameway_transport::keys::replace_file(&path, bytes, false)
            .map_err(|source| StateError::Io { path, source })
    }

    /// The text of `file`, or None when it does not exist.
    ///
    /// # Errors
    /// [`StateError::Io`] other than a missing file.
    pub fn read_optional(&self, file: &str) -> Result<Option<String>, StateError> {
        let path = self.path(file);
        match std::fs::read_to_string(&path) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StateError::Io { path, source }),
        }
    }

    /// The router key, made on first use.
    ///
    /// # Errors
    /// An unreadable key file, or one that cannot be written.
    pub fn router_key(&self) -> Result<SigningKey, StateError> {
        let path = self.path("router.key");
        let fmt = |why: String| StateError::Format {
            path: path.clone(),
            why,
        };
        if path.exists() {
            return SigningKey::load(SignatureKind::Ed25519, &path).map_err(|e| fmt(e.to_string()));
        }
        let key = SigningKey::generate(SignatureKind::Ed25519).map_err(|e| fmt(e.to_string()))?;
        key.save(&path).map_err(|e| fmt(e.to_string()))?;
        Ok(key)
    }

    /// The router certificate, if one was issued.
    ///
    /// # Errors
    /// A file that exists but does not decode.
    pub fn certificate(&self) -> Result<Option<Certificate>, StateError> {
        let path = self.path("router.cert");
        if !path.exists() {
            return Ok(None);
        }
        Certificate::load(&path)
            .map(Some)
            .map_err(|e| StateError::Format {
                path,
                why: e.to_string(),
            })
    }

    /// Keeps the certificate issued at enrolment.
    ///
    /// # Errors
    /// A file that cannot be written, a certificate that does not decode.
    pub fn save_certificate(&self, wire: Bytes) -> Result<(), StateError> {
        let path = self.path("router.cert");
        let fmt = |why: String| StateError::Format {
            path: path.clone(),
            why,
        };
        let cert = Certificate::decode(wire).map_err(|e| fmt(e.to_string()))?;
        cert.save(&path).map_err(|e| fmt(e.to_string()))
    }

    /// Writes the applied FIB (a temporary file renamed over the old one).
    ///
    /// # Errors
    /// [`StateError::Io`].
    pub fn save_fib(&self, version: u64, fib: &Fib) -> Result<(), StateError> {
        let file = FibFile {
            version,
            entries: fib
                .iter()
                .map(|(n, hops)| {
                    (
                        n.to_string(),
                        hops.iter().map(|h| (h.face, h.cost)).collect(),
                    )
                })
                .collect(),
        };
        let text = serde_json::to_vec(&file).map_err(|e| StateError::Io {
            path: self.path("fib.json"),
            source: std::io::Error::other(e),
        })?;
        self.write_atomically("fib.json", &text)
    }

    /// The FIB applied last, if any: version and entries.
    ///
    /// # Errors
    /// A file that exists but does not parse.
    pub fn load_fib(&self) -> Result<Option<(u64, Fib)>, StateError> {
        let path = self.path("fib.json");
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StateError::Io { path, source }),
        };
        let fmt = |why: String| StateError::Format {
            path: path.clone(),
            why,
        };
        let file: FibFile = serde_json::from_slice(&text).map_err(|e| fmt(e.to_string()))?;
        let mut fib = Fib::new();
        for (name, hops) in file.entries {
            let n: Name = name.parse().map_err(|e| fmt(format!("{name:?}: {e}")))?;
            let hops = hops
                .into_iter()
                .map(|(face, cost)| NextHop { face, cost })
                .collect();
            fib.insert(n, hops);
        }
        Ok(Some((file.version, fib)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fib_and_the_key_survive_a_restart_and_a_damaged_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let s = StateDir::open(dir.path()).unwrap();
        assert!(s.load_fib().unwrap().is_none());
        let mut fib = Fib::new();
        fib.insert(
            "/a/b".parse().unwrap(),
            vec![NextHop {
                face: 257,
                cost: 20,
            }],
        );
        s.save_fib(7, &fib).unwrap();
        assert_eq!(s.load_fib().unwrap(), Some((7, fib)));
        let k1 = s.router_key().unwrap().public_der();
        assert_eq!(s.router_key().unwrap().public_der(), k1);
        std::fs::write(dir.path().join("fib.json"), "{").unwrap();
        assert!(matches!(s.load_fib(), Err(StateError::Format { .. })));
    }
}
