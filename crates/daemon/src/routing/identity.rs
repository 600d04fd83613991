//! The router's routing key (`routing.identity`): an Ed25519 key whose hash is the router's
//! name `/32=sc/<hR>`. Created on first start, as `[security] identity` is.

use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

use anyhow::Context as _;
use nameway_routing::NameKey;

/// Loads the key at `path` (PKCS#8, PEM or DER), or creates an Ed25519 key there (mode
/// 0600, its directory created). Returns the key and whether it was created.
///
/// # Errors
/// The file cannot be read or written, is readable by others, or holds no usable key.
pub fn load_or_create(path: &Path) -> anyhow::Result<(NameKey, bool)> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let mode = std::fs::metadata(path)
                .with_context(|| format!("{}", path.display()))?
                .permissions()
                .mode();
            if mode & 0o077 != 0 {
                anyhow::bail!(
                    "routing.identity {}: mode {:o} lets others read the key; chmod 600 it",
                    path.display(),
                    mode & 0o777
                );
            }
            let key = NameKey::from_file_bytes(&bytes)
                .with_context(|| format!("routing.identity {}", path.display()))?;
            Ok((key, false))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = NameKey::generate().context("cannot generate the routing key")?;
            let der = key
                .to_pkcs8_der()
                .context("cannot export the routing key")?;
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            f.write_all(&der)
                .and_then(|()| f.sync_all())
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok((key, true))
        }
        Err(e) => Err(anyhow::Error::new(e).context(format!("cannot read {}", path.display()))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn created_once_then_loaded_with_the_same_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/routing.key");
        let (a, created) = load_or_create(&path).unwrap();
        assert!(created);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let (b, created) = load_or_create(&path).unwrap();
        assert!(!created);
        assert_eq!(a.hash(), b.hash());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(load_or_create(&path)
            .unwrap_err()
            .to_string()
            .contains("chmod 600"));
        std::fs::write(dir.path().join("junk"), b"junk").unwrap();
        std::fs::set_permissions(
            dir.path().join("junk"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        assert!(load_or_create(&dir.path().join("junk")).is_err());
    }
}
