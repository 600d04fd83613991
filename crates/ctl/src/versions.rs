//! The `config_versions` table: which configuration object versions were published to each
//! router, and which one it acknowledged (the base of the next diff).

use rusqlite::{params, OptionalExtension as _};

use crate::error::StoreError;
use crate::objects::ConfigKind;
use crate::sqlite::SqliteStore;

fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl SqliteStore {
    /// Records that `version` of `node`'s `kind` object was published, with the SHA-256
    /// `digest` of its wire encoding.
    ///
    /// # Errors
    /// The write is refused (for instance the version was recorded already).
    pub fn record_config_version(
        &mut self,
        node: &str,
        kind: ConfigKind,
        version: u64,
        digest: &[u8],
    ) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "INSERT INTO config_versions (node, kind, version, digest, applied_at) \
                 VALUES (?1, ?2, ?3, ?4, NULL)",
                params![node, kind.as_str(), i(version), digest],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Records `node`'s acknowledgement of `version`; whether that version was published.
    ///
    /// # Errors
    /// The write is refused.
    pub fn ack_config_version(
        &mut self,
        node: &str,
        kind: ConfigKind,
        version: u64,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        self.conn()
            .execute(
                "UPDATE config_versions SET applied_at = ?4 \
                 WHERE node = ?1 AND kind = ?2 AND version = ?3",
                params![node, kind.as_str(), i(version), i(now_ms)],
            )
            .map(|n| n == 1)
            .map_err(|e| self.err(e))
    }

    /// The newest version of `node`'s `kind` object that it acknowledged.
    ///
    /// # Errors
    /// The read fails.
    pub fn last_acked_version(
        &mut self,
        node: &str,
        kind: ConfigKind,
    ) -> Result<Option<u64>, StoreError> {
        let v: Option<Option<i64>> = self
            .conn()
            .query_row(
                "SELECT max(version) FROM config_versions \
                 WHERE node = ?1 AND kind = ?2 AND applied_at IS NOT NULL",
                params![node, kind.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(v.flatten().and_then(|v| u64::try_from(v).ok()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sqlite::Durability;

    #[test]
    fn acknowledgements_survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.db");
        let mut s = SqliteStore::open(&path, Durability::Full).unwrap();
        for v in 1..=3 {
            s.record_config_version("/ex/r1", ConfigKind::Fib, v, &[v as u8; 32])
                .unwrap();
        }
        assert!(s
            .record_config_version("/ex/r1", ConfigKind::Fib, 2, &[0; 32])
            .is_err());
        assert_eq!(
            s.last_acked_version("/ex/r1", ConfigKind::Fib).unwrap(),
            None
        );
        assert!(s
            .ack_config_version("/ex/r1", ConfigKind::Fib, 2, 10)
            .unwrap());
        assert!(!s
            .ack_config_version("/ex/r1", ConfigKind::Fib, 9, 10)
            .unwrap());
        drop(s);
        let mut s = SqliteStore::open(&path, Durability::Full).unwrap();
        assert_eq!(
            s.last_acked_version("/ex/r1", ConfigKind::Fib).unwrap(),
            Some(2)
        );
        assert_eq!(
            s.last_acked_version("/ex/r1", ConfigKind::Cs).unwrap(),
            None
        );
    }
}
