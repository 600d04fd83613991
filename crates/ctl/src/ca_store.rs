//! The CA's records behind one trait, [`CaStore`]: enrolment tokens, the deny list, group
//! keys and `meta` (the routers' records and certificates are [`RegistryStore`]'s `nodes`).
//!
//! The anchor's private key is never here: each controller is given it as a file (`--ca`).
//! What is here is what the controllers of one domain must agree on: on the SQLite file of a
//! lone controller, or on the PostgreSQL database several share ([`crate::PostgresStore`]),
//! where a token consumed at one controller is consumed for all (one conditional `UPDATE`),
//! a router denied at one is denied at all, and a group key made at one is sealed to members
//! connected anywhere.

use rusqlite::{params, OptionalExtension as _};

use crate::ca_carry::{sql, CarriedOver, CarriedRows};
use crate::error::StoreError;
use crate::sqlite::SqliteStore;
use crate::store::RegistryStore;

/// What consuming a token found ([`CaStore::consume_token`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenUse {
    /// It was valid and is now used (by this call, and no other).
    Consumed,
    /// No such token.
    Unknown,
    /// Already used.
    Used,
    /// Its lifetime is over.
    Expired,
    /// It was issued for this other router.
    WrongRouter(String),
}

/// One stored group key: its id, prefix, validity and the key sealed to each member
/// (`crate::group_keys` reads and writes the blob).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupKeyRow {
    /// `<prefix>#<16 hex digits>`.
    pub key_id: String,
    /// The prefix it protects.
    pub scope: String,
    /// Valid from, ms since the epoch.
    pub not_before_ms: u64,
    /// Valid until, ms since the epoch.
    pub not_after_ms: u64,
    /// The prefix's security level (a level name, e.g. `chacha20-poly1305`).
    pub level: String,
    /// Per member: name length (2 bytes), name, sealed key.
    pub sealed_per_node: Vec<u8>,
}

/// The CA's records (see the module documentation).
pub trait CaStore: RegistryStore {
    /// Stores a new token by its SHA-256, issued for `router`, valid until `expires_ms`.
    ///
    /// # Errors
    /// The write is refused.
    fn put_token(&mut self, hash: &[u8], router: &str, expires_ms: u64) -> Result<(), StoreError>;

    /// Consumes the token `hash` for `router` at `now_ms`, atomically: of several callers
    /// (on one database) at most one gets [`TokenUse::Consumed`].
    ///
    /// # Errors
    /// The database failed.
    fn consume_token(
        &mut self,
        hash: &[u8],
        router: &str,
        now_ms: u64,
    ) -> Result<TokenUse, StoreError>;

    /// Adds (or replaces) a deny list entry.
    ///
    /// # Errors
    /// The write is refused.
    fn put_deny(&mut self, name: &str, added_ms: u64, reason: &str) -> Result<(), StoreError>;

    /// The deny list's names, sorted.
    ///
    /// # Errors
    /// The database cannot be read.
    fn deny_names(&mut self) -> Result<Vec<String>, StoreError>;

    /// Stores a new group key.
    ///
    /// # Errors
    /// The write is refused (an id already stored included).
    fn put_group_key(&mut self, row: &GroupKeyRow) -> Result<(), StoreError>;

    /// Every group key, by `not_before` then id.
    ///
    /// # Errors
    /// The database cannot be read.
    fn group_key_rows(&mut self) -> Result<Vec<GroupKeyRow>, StoreError>;

    /// Ends at `until_ms` every other key of `scope` valid later (a rotation's overlap);
    /// how many.
    ///
    /// # Errors
    /// The write is refused.
    fn retire_group_keys(
        &mut self,
        scope: &str,
        keep: &str,
        until_ms: u64,
    ) -> Result<usize, StoreError>;

    /// A value of the `meta` table.
    ///
    /// # Errors
    /// The database cannot be read.
    fn meta_value(&mut self, key: &str) -> Result<Option<String>, StoreError>;

    /// Sets a value of the `meta` table.
    ///
    /// # Errors
    /// The write is refused.
    fn put_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError>;

    /// Merges the CA rows of an old `--ca` file in one transaction, never overwriting what
    /// is newer here (`crate::ca_carry`); what it wrote.
    ///
    /// # Errors
    /// The write is refused; nothing of it is stored.
    fn merge_carried(&mut self, rows: &CarriedRows) -> Result<CarriedOver, StoreError>;
}

/// A CA store chosen at run time.
pub type BoxedCaStore = Box<dyn CaStore + Send>;

fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl CaStore for SqliteStore {
    fn put_token(&mut self, hash: &[u8], router: &str, expires_ms: u64) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "INSERT INTO tokens (hash, router, expires, used) VALUES (?1, ?2, ?3, NULL)",
                params![hash, router, i(expires_ms)],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    fn consume_token(
        &mut self,
        hash: &[u8],
        router: &str,
        now_ms: u64,
    ) -> Result<TokenUse, StoreError> {
        let now = i(now_ms);
        let conn = self.conn();
        let run = || -> rusqlite::Result<TokenUse> {
            // IMMEDIATE: the write lock first, so two processes on the file cannot both read
            // the token unused.
            let tx = rusqlite::Transaction::new_unchecked(
                conn,
                rusqlite::TransactionBehavior::Immediate,
            )?;
            let row: Option<(String, i64, Option<i64>)> = tx
                .query_row(
                    "SELECT router, expires, used FROM tokens WHERE hash = ?1",
                    [hash],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()?;
            let verdict = token_verdict(row, router, now);
            if verdict == TokenUse::Consumed {
                tx.execute(
                    "UPDATE tokens SET used = ?1 WHERE hash = ?2",
                    params![now, hash],
                )?;
            }
            tx.commit()?;
            Ok(verdict)
        };
        run().map_err(|e| self.err(e))
    }

    fn put_deny(&mut self, name: &str, added_ms: u64, reason: &str) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "INSERT OR REPLACE INTO deny (name, added, reason) VALUES (?1, ?2, ?3)",
                params![name, i(added_ms), reason],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    fn deny_names(&mut self) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let run = || -> rusqlite::Result<Vec<String>> {
            let mut q = conn.prepare("SELECT name FROM deny ORDER BY name")?;
            let rows = q.query_map([], |r| r.get(0))?;
            rows.collect()
        };
        run().map_err(|e| self.err(e))
    }

    fn put_group_key(&mut self, row: &GroupKeyRow) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "INSERT INTO keys (key_id, scope, not_before, not_after, sealed_per_node, level) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    row.key_id,
                    row.scope,
                    i(row.not_before_ms),
                    i(row.not_after_ms),
                    row.sealed_per_node,
                    row.level
                ],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    fn group_key_rows(&mut self) -> Result<Vec<GroupKeyRow>, StoreError> {
        let conn = self.conn();
        let run = || -> rusqlite::Result<Vec<GroupKeyRow>> {
            let mut q = conn.prepare(
                "SELECT key_id, scope, not_before, not_after, sealed_per_node, level FROM keys \
                 ORDER BY not_before, key_id",
            )?;
            let rows = q.query_map([], |r| {
                Ok(GroupKeyRow {
                    key_id: r.get(0)?,
                    scope: r.get(1)?,
                    not_before_ms: u64::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
                    not_after_ms: u64::try_from(r.get::<_, i64>(3)?).unwrap_or(0),
                    sealed_per_node: r.get(4)?,
                    level: r.get(5)?,
                })
            })?;
            rows.collect()
        };
        run().map_err(|e| self.err(e))
    }

    fn retire_group_keys(
        &mut self,
        scope: &str,
        keep: &str,
        until_ms: u64,
    ) -> Result<usize, StoreError> {
        self.conn()
            .execute(
                "UPDATE keys SET not_after = ?1 WHERE scope = ?2 AND key_id != ?3 \
                 AND not_after > ?1",
                params![i(until_ms), scope, keep],
            )
            .map_err(|e| self.err(e))
    }

    fn meta_value(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        self.meta(key)
    }

    fn put_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        self.set_meta(key, value)
    }

    fn merge_carried(&mut self, rows: &CarriedRows) -> Result<CarriedOver, StoreError> {
        // The statements are PostgreSQL's; SQLite numbers its parameters `?n`.
        let q = |s: &str| s.replace('$', "?");
        let conn = self.conn();
        let mut run = || -> rusqlite::Result<CarriedOver> {
            let tx = conn.transaction()?;
            let mut done = CarriedOver::default();
            let n = |v: usize| u64::try_from(v).unwrap_or(u64::MAX);
            for t in &rows.tokens {
                done.tokens += n(tx.execute(
                    &q(sql::TOKEN),
                    params![t.hash, t.router, i(t.expires_ms), t.used_ms.map(i)],
                )?);
            }
            for r in &rows.nodes {
                done.routers += n(tx.execute(
                    &q(sql::NODE),
                    params![
                        r.name,
                        r.pubkey,
                        r.kem_pubkey,
                        r.cert,
                        i(r.enrolled_ms),
                        i(r.last_seen_ms)
                    ],
                )?);
            }
            for d in &rows.deny {
                done.denied +=
                    n(tx.execute(&q(sql::DENY), params![d.name, i(d.added_ms), d.reason])?);
            }
            for k in &rows.keys {
                done.group_keys += n(tx.execute(
                    &q(sql::KEY),
                    params![
                        k.key_id,
                        k.scope,
                        i(k.not_before_ms),
                        i(k.not_after_ms),
                        k.sealed_per_node,
                        k.level
                    ],
                )?);
            }
            tx.commit()?;
            Ok(done)
        };
        run().map_err(|e| self.err(e))
    }
}

/// The verdict on a token row (router, expires, used) presented by `router` at `now`.
pub(crate) fn token_verdict(
    row: Option<(String, i64, Option<i64>)>,
    router: &str,
    now: i64,
) -> TokenUse {
    match row {
        None => TokenUse::Unknown,
        Some((_, _, Some(_))) => TokenUse::Used,
        Some((_, expires, None)) if expires <= now => TokenUse::Expired,
        Some((issued_for, _, None)) if issued_for != router => TokenUse::WrongRouter(issued_for),
        Some(_) => TokenUse::Consumed,
    }
}

/// A boxed CA store is a CA store.
impl<T: CaStore + ?Sized> CaStore for Box<T> {
    fn put_token(&mut self, hash: &[u8], router: &str, expires_ms: u64) -> Result<(), StoreError> {
        (**self).put_token(hash, router, expires_ms)
    }
    fn consume_token(
        &mut self,
        hash: &[u8],
        router: &str,
        now_ms: u64,
    ) -> Result<TokenUse, StoreError> {
        (**self).consume_token(hash, router, now_ms)
    }
    fn put_deny(&mut self, name: &str, added_ms: u64, reason: &str) -> Result<(), StoreError> {
        (**self).put_deny(name, added_ms, reason)
    }
    fn deny_names(&mut self) -> Result<Vec<String>, StoreError> {
        (**self).deny_names()
    }
    fn put_group_key(&mut self, row: &GroupKeyRow) -> Result<(), StoreError> {
        (**self).put_group_key(row)
    }
    fn group_key_rows(&mut self) -> Result<Vec<GroupKeyRow>, StoreError> {
        (**self).group_key_rows()
    }
    fn retire_group_keys(
        &mut self,
        scope: &str,
        keep: &str,
        until_ms: u64,
    ) -> Result<usize, StoreError> {
        (**self).retire_group_keys(scope, keep, until_ms)
    }
    fn meta_value(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        (**self).meta_value(key)
    }
    fn put_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        (**self).put_meta(key, value)
    }
    fn merge_carried(&mut self, rows: &CarriedRows) -> Result<CarriedOver, StoreError> {
        (**self).merge_carried(rows)
    }
}
