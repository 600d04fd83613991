//! [`SqliteStore`]: the registry in an SQLite file (WAL, migrations, online backup).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use nameway_wire::Name;
use rusqlite::{params, Connection, OptionalExtension as _};

use crate::checkpoint::Checkpointer;
use crate::error::StoreError;
use crate::schema::{APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION};
use crate::store::{
    LinkRecord, NodeRecord, Registration, RegistrationKey, RegistryOp, RegistryStore,
};

/// The first 16 bytes of every SQLite 3 file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// How hard a connection's commits are made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=NORMAL` in WAL mode: a commit survives the process crashing; the last
    /// commits before a power cut can be lost (registrations: soft state, renewed anyway).
    /// The WAL is checkpointed by a thread of its own, off the commit path.
    Normal,
    /// `synchronous=FULL`: every commit is fsync'd before it returns (keys, tokens, trust).
    Full,
}

/// The registry, nodes, links, keys and audit log in one SQLite file.
#[derive(Debug)]
pub struct SqliteStore {
    // Declared first: dropped (stopped) before the connection closes.
    checkpointer: Option<Checkpointer>,
    conn: Connection,
    path: String,
}

impl SqliteStore {
    /// Opens (creating when absent) the database at `path`, migrating its schema to
    /// [`SCHEMA_VERSION`].
    ///
    /// # Errors
    /// [`StoreError::NotADatabase`], [`StoreError::Foreign`], [`StoreError::TooNew`],
    /// [`StoreError::Corrupt`], or the file cannot be opened.
    pub fn open(path: &Path, durability: Durability) -> Result<Self, StoreError> {
        let shown = path.display().to_string();
        check_header(path, &shown)?;
        Self::open_checked(path, durability)
    }

    /// Another connection to this store's file, for a second user in the same process (the
    /// service's CA and registry). It skips the header check of [`SqliteStore::open`]: that
    /// check opens and closes the file outside SQLite, and closing any descriptor of a file
    /// drops every POSIX lock the process holds on it, including those of the connections
    /// already open. Without their shared lock another process (`namewayctl token`) that
    /// closes its connection believes it is the last one, checkpoints and deletes the WAL,
    /// and this process goes on reading and writing a WAL nobody else sees.
    ///
    /// # Errors
    /// As [`SqliteStore::open`].
    pub fn open_another(&self, durability: Durability) -> Result<Self, StoreError> {
        Self::open_checked(Path::new(&self.path), durability)
    }

    fn open_checked(path: &Path, durability: Durability) -> Result<Self, StoreError> {
        let shown = path.display().to_string();
        let conn = Connection::open(path).map_err(|e| StoreError::sqlite(&shown, e))?;
        let mut store = Self {
            checkpointer: None,
            conn,
            path: shown,
        };
        store.configure(durability)?;
        store.check_owner()?;
        store.migrate()?;
        if durability == Durability::Normal {
            store.checkpointer = Checkpointer::start(path);
            if store.checkpointer.is_some() {
                store
                    .conn
                    .execute_batch("PRAGMA wal_autocheckpoint = 0;")
                    .map_err(|e| StoreError::sqlite(&store.path, e))?;
            }
        }
        Ok(store)
    }

    /// The file's path as shown in errors.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The underlying connection, for the other tables (CA, configuration versions).
    pub(crate) fn conn(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Maps an SQLite error on this file.
    pub(crate) fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::sqlite(&self.path, e)
    }

    /// Runs SQLite's full `integrity_check`.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] with SQLite's first finding.
    pub fn integrity_check(&mut self) -> Result<(), StoreError> {
        let first: String = self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if first == "ok" {
            Ok(())
        } else {
            Err(StoreError::Corrupt {
                path: self.path.clone(),
                detail: first,
            })
        }
    }

    /// The schema version stored in the file.
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn schema_version(&mut self) -> Result<i64, StoreError> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// A value from the `meta` table (`domain`, ...).
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn meta(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Sets a value in the `meta` table.
    ///
    /// # Errors
    /// The write is refused.
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                [key, value],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    fn configure(&mut self, durability: Durability) -> Result<(), StoreError> {
        let sync = match durability {
            Durability::Normal => "NORMAL",
            Durability::Full => "FULL",
        };
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Corrupt {
                path: self.path.clone(),
                detail: format!("cannot switch to WAL (journal_mode {mode})"),
            });
        }
        self.conn
            .execute_batch(&format!(
                "PRAGMA synchronous = {sync}; PRAGMA busy_timeout = 5000; \
                 PRAGMA cache_size = -65536;"
            ))
            .map_err(|e| self.err(e))
    }

    /// Refuses a file that some other application made.
    fn check_owner(&mut self) -> Result<(), StoreError> {
        let app: i32 = self
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let tables: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        if app == APPLICATION_ID || (app == 0 && tables == 0) {
            Ok(())
        } else {
            Err(StoreError::Foreign {
                path: self.path.clone(),
                found: app,
                tables,
            })
        }
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let found = self.schema_version()?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: self.path.clone(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
            let tx = self
                .conn
                .transaction()
                .map_err(|e| StoreError::sqlite(&self.path, e))?;
            tx.execute_batch(sql)
                .and_then(|()| {
                    tx.execute_batch(&format!(
                        "PRAGMA user_version = {}; PRAGMA application_id = {APPLICATION_ID};",
                        i + 1
                    ))
                })
                .and_then(|()| tx.commit())
                .map_err(|e| StoreError::sqlite(&self.path, e))?;
        }
        Ok(())
    }

    fn corrupt(&self, detail: impl Into<String>) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            detail: detail.into(),
        }
    }
}

/// A file that exists and is not empty must start with SQLite's magic string.
fn check_header(path: &Path, shown: &str) -> Result<(), StoreError> {
    let Ok(mut f) = std::fs::File::open(path) else {
        return Ok(()); // absent: SQLite creates it (or reports why it cannot)
    };
    let mut head = [0u8; 16];
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(_) => break,
        }
    }
    if got == 0 || &head == SQLITE_MAGIC {
        Ok(())
    } else {
        Err(StoreError::NotADatabase {
            path: shown.to_owned(),
        })
    }
}

/// The unique key of the row an operation touches, as stored.
fn op_key(op: &RegistryOp) -> (&[u8], &str, u64) {
    match op {
        RegistryOp::Put(r) => (r.prefix.value_bytes(), r.node.as_str(), r.face),
        RegistryOp::Remove(k) => (k.prefix.value_bytes(), k.node.as_str(), k.face),
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl RegistryStore for SqliteStore {
    fn apply(&mut self, ops: &[RegistryOp]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let run = |conn: &mut Connection| -> rusqlite::Result<()> {
            let tx = conn.transaction()?;
            {
                let mut put = tx.prepare_cached(
                    "INSERT INTO registrations (prefix, uri, node, face, origin, cost, flags, \
                     expires, owner_key, announcement) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
                     ON CONFLICT (prefix, node, face) DO UPDATE SET origin = excluded.origin, \
                     cost = excluded.cost, flags = excluded.flags, expires = excluded.expires, \
                     owner_key = excluded.owner_key, announcement = excluded.announcement",
                )?;
                let mut del = tx.prepare_cached(
                    "DELETE FROM registrations WHERE prefix = ?1 AND node = ?2 AND face = ?3",
                )?;
                // In key order (stable: operations on one key keep their order), so that
                // neighbouring inserts land on the same pages of the unique index.
                let mut sorted: Vec<&RegistryOp> = ops.iter().collect();
                sorted.sort_by(|x, y| op_key(x).cmp(&op_key(y)));
                for op in sorted {
                    match op {
                        RegistryOp::Put(r) => {
                            put.execute(params![
                                r.prefix.value_bytes(),
                                r.prefix.to_string(),
                                r.node,
                                to_i64(r.face),
                                r.origin,
                                r.cost,
                                r.flags,
                                to_i64(r.expires_ms),
                                r.owner_key,
                                r.announcement,
                            ])?;
                        }
                        RegistryOp::Remove(k) => {
                            del.execute(params![k.prefix.value_bytes(), k.node, to_i64(k.face)])?;
                        }
                    }
                }
            }
            tx.commit()
        };
        run(&mut self.conn).map_err(|e| StoreError::sqlite(&path, e))
    }

    fn load_registrations(&mut self) -> Result<Vec<Registration>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT prefix, node, face, origin, cost, flags, expires, owner_key, announcement \
                 FROM registrations",
            )
            .map_err(|e| StoreError::sqlite(&self.path, e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, Vec<u8>>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, u32>(3)?,
                    r.get::<_, u32>(4)?,
                    r.get::<_, u32>(5)?,
                    r.get::<_, i64>(6)?,
                    r.get::<_, Option<Vec<u8>>>(7)?,
                    r.get::<_, Option<Vec<u8>>>(8)?,
                ))
            })
            .map_err(|e| StoreError::sqlite(&self.path, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (prefix, node, face, origin, cost, flags, expires, owner_key, announcement) =
                row.map_err(|e| StoreError::sqlite(&self.path, e))?;
            let prefix = Name::from_value(Bytes::from(prefix), 0)
                .map_err(|e| self.corrupt(format!("registration prefix does not decode: {e}")))?;
            let (Ok(face), Ok(expires_ms)) = (u64::try_from(face), u64::try_from(expires)) else {
                return Err(self.corrupt(format!("negative face or expiry for {prefix}")));
            };
            out.push(Registration {
                prefix,
                node,
                face,
                origin,
                cost,
                flags,
                expires_ms,
                owner_key,
                announcement,
            });
        }
        Ok(out)
    }

    fn sweep_expired(&mut self, now_ms: u64) -> Result<Vec<RegistrationKey>, StoreError> {
        let now = to_i64(now_ms);
        let run = |conn: &mut Connection| -> rusqlite::Result<Vec<(Vec<u8>, String, i64)>> {
            let tx = conn.transaction()?;
            let keys = {
                let mut q = tx.prepare_cached(
                    "SELECT prefix, node, face FROM registrations WHERE expires <= ?1",
                )?;
                let rows = q.query_map([now], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                rows.collect::<rusqlite::Result<Vec<_>>>()?
            };
            tx.execute("DELETE FROM registrations WHERE expires <= ?1", [now])?;
            tx.commit()?;
            Ok(keys)
        };
        let rows = run(&mut self.conn).map_err(|e| StoreError::sqlite(&self.path, e))?;
        rows.into_iter()
            .map(|(p, node, face)| {
                let prefix = Name::from_value(Bytes::from(p), 0)
                    .map_err(|e| self.corrupt(format!("registration prefix: {e}")))?;
                Ok(RegistrationKey {
                    prefix,
                    node,
                    face: u64::try_from(face).unwrap_or(0),
                })
            })
            .collect()
    }

    fn put_node(&mut self, n: &NodeRecord) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO nodes (name, pubkey, kem_pubkey, cert, enrolled, last_seen) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    n.name,
                    n.pubkey,
                    n.kem_pubkey,
                    n.cert,
                    to_i64(n.enrolled_ms),
                    to_i64(n.last_seen_ms)
                ],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    fn nodes(&mut self) -> Result<Vec<NodeRecord>, StoreError> {
        let path = self.path.clone();
        let run = |conn: &Connection| -> rusqlite::Result<Vec<NodeRecord>> {
            let mut q = conn.prepare("SELECT name, pubkey, kem_pubkey, cert, enrolled, last_seen FROM nodes ORDER BY name",
            )?;
            let rows = q.query_map([], |r| {
                Ok(NodeRecord {
                    name: r.get(0)?,
                    pubkey: r.get(1)?,
                    kem_pubkey: r.get(2)?,
                    cert: r.get(3)?,
                    enrolled_ms: r.get::<_, i64>(4)?.max(0).unsigned_abs(),
                    last_seen_ms: r.get::<_, i64>(5)?.max(0).unsigned_abs(),
                })
            })?;
            rows.collect()
        };
        run(&self.conn).map_err(|e| StoreError::sqlite(&path, e))
    }

    fn put_link(&mut self, l: &LinkRecord) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO links (a, b, face_a, face_b, cost, rtt_us, state, updated) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    l.a,
                    l.b,
                    to_i64(l.face_a),
                    to_i64(l.face_b),
                    l.cost,
                    to_i64(l.rtt_us),
                    if l.up { "up" } else { "down" },
                    to_i64(l.updated_ms)
                ],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    fn links(&mut self) -> Result<Vec<LinkRecord>, StoreError> {
        let path = self.path.clone();
        let run = |conn: &Connection| -> rusqlite::Result<Vec<LinkRecord>> {
            let mut q = conn.prepare(
                "SELECT a, b, face_a, face_b, cost, rtt_us, state, updated FROM links ORDER BY a, b",
            )?;
            let rows = q.query_map([], |r| {
                Ok(LinkRecord {
                    a: r.get(0)?,
                    b: r.get(1)?,
                    face_a: r.get::<_, i64>(2)?.max(0).unsigned_abs(),
                    face_b: r.get::<_, i64>(3)?.max(0).unsigned_abs(),
                    cost: r.get(4)?,
                    rtt_us: r.get::<_, i64>(5)?.max(0).unsigned_abs(),
                    up: r.get::<_, String>(6)? == "up",
                    updated_ms: r.get::<_, i64>(7)?.max(0).unsigned_abs(),
                })
            })?;
            rows.collect()
        };
        run(&self.conn).map_err(|e| StoreError::sqlite(&path, e))
    }

    fn audit(
        &mut self,
        ts_ms: u64,
        actor: &str,
        action: &str,
        detail: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO audit (ts, actor, action, detail) VALUES (?1, ?2, ?3, ?4)",
                params![to_i64(ts_ms), actor, action, detail],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    fn backup(&mut self, dest: &Path) -> Result<(), StoreError> {
        let dest: PathBuf = dest.to_path_buf();
        let Some(d) = dest.to_str() else {
            return Err(StoreError::Sqlite {
                path: dest.display().to_string(),
                source: rusqlite::Error::InvalidPath(dest.clone()),
            });
        };
        self.conn
            .execute("VACUUM INTO ?1", [d])
            .map(drop)
            .map_err(|e| StoreError::sqlite(d, e))
    }
}
