//! The CA's rows of a `--ca` file carried over to the shared store, once.
//!
//! Before schema version 3 a controller on PostgreSQL kept its CA in the SQLite file given
//! with `--ca` (tokens, routers' records and certificates, deny list, group keys, each key's
//! level a `meta` row `key_level <id>`), and copied only the routers' records to PostgreSQL.
//! Since version 3 the CA is on the store (`crate::ca_store`) and the file keeps only the
//! anchor beside it; rows left in the file would not be read, so an operator upgrading would
//! lose the deny list (a denied router admitted again), the routers enrolled through the
//! file and the tokens not yet used. [`carry_over`] reads them from the file (opening it
//! migrates it to version 3, which moves the levels into `keys`) and merges them into the
//! store, then marks the file ([`CARRIED_META`]) so that it happens once.
//!
//! Merged, never overwriting what is newer in the store: a deny row or a router's record
//! replaces the store's only when the file's is later (`added`, `enrolled`); a token is
//! added when it is not there yet and still valid, or marks the store's used when the file
//! says used (never the reverse); a group key still valid is added by its id.

use std::path::Path;

use crate::ca_store::{CaStore, GroupKeyRow};
use crate::error::StoreError;
use crate::sqlite::{Durability, SqliteStore};
use crate::store::{NodeRecord, RegistryStore as _};

/// The `meta` key of the `--ca` file once its CA rows are carried over (the value: when,
/// ms since the epoch).
pub const CARRIED_META: &str = "ca_carried_over";

/// One token row of the old file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRow {
    /// The token's SHA-256.
    pub hash: Vec<u8>,
    /// The router it was issued for.
    pub router: String,
    /// Valid until, ms since the epoch.
    pub expires_ms: u64,
    /// When it was used, if it was.
    pub used_ms: Option<u64>,
}

/// One deny list row of the old file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DenyRow {
    /// The name denied (a router, or a prefix of routers).
    pub name: String,
    /// When, ms since the epoch.
    pub added_ms: u64,
    /// Why.
    pub reason: String,
}

/// The CA's rows read from an old `--ca` file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CarriedRows {
    /// Tokens still valid or used (an expired, unused token is useless).
    pub tokens: Vec<TokenRow>,
    /// Routers' records and certificates.
    pub nodes: Vec<NodeRecord>,
    /// The deny list.
    pub deny: Vec<DenyRow>,
    /// Group keys still valid.
    pub keys: Vec<GroupKeyRow>,
}

impl CarriedRows {
    /// How many rows.
    pub fn len(&self) -> u64 {
        [
            self.tokens.len(),
            self.nodes.len(),
            self.deny.len(),
            self.keys.len(),
        ]
        .into_iter()
        .map(|n| u64::try_from(n).unwrap_or(u64::MAX))
        .sum()
    }

    /// Whether there is nothing to carry.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
            && self.nodes.is_empty()
            && self.deny.is_empty()
            && self.keys.is_empty()
    }
}

/// What a carry-over wrote to the store: rows added or replaced, per table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CarriedOver {
    /// Tokens added, or marked used.
    pub tokens: u64,
    /// Routers' records added or replaced by a later enrolment.
    pub routers: u64,
    /// Deny rows added or replaced by a later one.
    pub denied: u64,
    /// Group keys added.
    pub group_keys: u64,
    /// The rows found in the file worth carrying (what the counts above are of).
    pub found: u64,
}

impl std::fmt::Display for CarriedOver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} tokens, {} routers, {} denied, {} group keys written of {} rows found",
            self.tokens, self.routers, self.denied, self.group_keys, self.found
        )
    }
}

/// Carries the CA rows of the `--ca` file `ca_file` over to `store`, unless the file says
/// it was done; `None` when it was, else what was found and written (all zero for a file
/// that held no CA rows, as one `namewayctl init` made since version 3). The file is marked only once the
/// store committed the merge (a failure in between carries over again, to the same result).
///
/// # Errors
/// The file cannot be opened (not a controller database, newer schema) or read, or the
/// store refused the merge.
pub fn carry_over<S: CaStore + ?Sized>(
    ca_file: &Path,
    store: &mut S,
    now_ms: u64,
) -> Result<Option<CarriedOver>, StoreError> {
    let mut file = SqliteStore::open(ca_file, Durability::Full)?;
    if file.meta(CARRIED_META)?.is_some() {
        return Ok(None);
    }
    let rows = read_rows(&mut file, now_ms)?;
    let mut done = if rows.is_empty() {
        CarriedOver::default()
    } else {
        store.merge_carried(&rows)?
    };
    done.found = rows.len();
    file.set_meta(CARRIED_META, &now_ms.to_string())?;
    Ok(Some(done))
}

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// The CA rows of an SQLite file worth carrying (migrated to version 3 by its opening).
fn read_rows(file: &mut SqliteStore, now_ms: u64) -> Result<CarriedRows, StoreError> {
    let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
    let nodes = file.nodes()?;
    let conn = file.conn();
    let run = || -> rusqlite::Result<(Vec<TokenRow>, Vec<DenyRow>, Vec<GroupKeyRow>)> {
        let mut q = conn.prepare(
            "SELECT hash, router, expires, used FROM tokens \
             WHERE used IS NOT NULL OR expires > ?1 ORDER BY hash",
        )?;
        let tokens = q
            .query_map([now], |r| {
                Ok(TokenRow {
                    hash: r.get(0)?,
                    router: r.get(1)?,
                    expires_ms: u(r.get(2)?),
                    used_ms: r.get::<_, Option<i64>>(3)?.map(u),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut q = conn.prepare("SELECT name, added, reason FROM deny ORDER BY name")?;
        let deny = q
            .query_map([], |r| {
                Ok(DenyRow {
                    name: r.get(0)?,
                    added_ms: u(r.get(1)?),
                    reason: r.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut q = conn.prepare(
            "SELECT key_id, scope, not_before, not_after, sealed_per_node, level FROM keys \
             WHERE not_after > ?1 ORDER BY not_before, key_id",
        )?;
        let keys = q
            .query_map([now], |r| {
                Ok(GroupKeyRow {
                    key_id: r.get(0)?,
                    scope: r.get(1)?,
                    not_before_ms: u(r.get(2)?),
                    not_after_ms: u(r.get(3)?),
                    sealed_per_node: r.get(4)?,
                    level: r.get(5)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok((tokens, deny, keys))
    };
    let (tokens, deny, keys) = run().map_err(|e| file.err(e))?;
    Ok(CarriedRows {
        tokens,
        nodes,
        deny,
        keys,
    })
}

/// The merge's statements, the same on SQLite and PostgreSQL but for the parameters'
/// spelling (`?n` or `$n`): see the module documentation.
pub(crate) mod sql {
    /// (hash, router, expires, used).
    pub(crate) const TOKEN: &str = "INSERT INTO tokens (hash, router, expires, used) \
        VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO UPDATE SET used = excluded.used \
        WHERE tokens.used IS NULL AND excluded.used IS NOT NULL";
    /// (name, pubkey, kem_pubkey, cert, enrolled, last_seen).
    pub(crate) const NODE: &str = "INSERT INTO nodes \
        (name, pubkey, kem_pubkey, cert, enrolled, last_seen) \
        VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO UPDATE SET \
        pubkey = excluded.pubkey, kem_pubkey = excluded.kem_pubkey, cert = excluded.cert, \
        enrolled = excluded.enrolled, last_seen = excluded.last_seen \
        WHERE excluded.enrolled > nodes.enrolled";
    /// (name, added, reason).
    pub(crate) const DENY: &str = "INSERT INTO deny (name, added, reason) VALUES ($1, $2, $3) \
        ON CONFLICT (name) DO UPDATE SET added = excluded.added, reason = excluded.reason \
        WHERE excluded.added > deny.added";
    /// (key_id, scope, not_before, not_after, sealed_per_node, level).
    pub(crate) const KEY: &str = "INSERT INTO keys \
        (key_id, scope, not_before, not_after, sealed_per_node, level) \
        VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (key_id) DO NOTHING";
}
