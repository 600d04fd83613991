//! The database schema and its migrations (`PRAGMA user_version`).
//!
//! Every migration moves the schema from version `i` to `i + 1` in one transaction; a file
//! at a version newer than [`SCHEMA_VERSION`] is refused. Prefixes are stored twice: the Name
//! TLV-VALUE (`prefix`, the key, exact) and its URI (`uri`, for an operator's `sqlite3`).
//!
//! `registrations` is a rowid table (rows appended in arrival order) with a unique index on
//! `(prefix, node, face)`: a renewal updates its row in place, and a batch of new names
//! dirties the index's small pages rather than scattering 500-byte rows across the table
//! (a `WITHOUT ROWID` table keyed by prefix loaded 8-12k names/s here, this layout more).

/// `PRAGMA application_id` of a controller database: "NWCT".
pub const APPLICATION_ID: i32 = 0x4E57_4354;

/// The newest schema version.
pub const SCHEMA_VERSION: i64 = 3;

/// Migration `i` takes the schema from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[V1, V2, V3];

/// Version 2 is PostgreSQL's change feed (`crate::postgres_feed`), for several controllers
/// on one database; an SQLite file has one controller, so nothing changes here (the
/// version moves so that both stores number their schemas alike).
const V2: &str = "-- no change on SQLite\n";

/// Version 3 is the CA on the store (`crate::ca_store`): a group key's security level is a
/// column of `keys` (it was a `meta` row per key), so that one row says all a controller
/// sharing the database needs. The same statements run on PostgreSQL
/// (`crate::postgres`). A build older than version 3 refuses the database: it would keep
/// its CA apart from the other controllers'.
pub(crate) const V3: &str = "
ALTER TABLE keys ADD COLUMN level TEXT NOT NULL DEFAULT 'chacha20-poly1305';
UPDATE keys SET level = (SELECT value FROM meta WHERE meta.key = 'key_level ' || keys.key_id)
    WHERE EXISTS (SELECT 1 FROM meta WHERE meta.key = 'key_level ' || keys.key_id);
DELETE FROM meta WHERE substr(key, 1, 10) = 'key_level ';
";

const V1: &str = "
CREATE TABLE nodes (
    name       TEXT PRIMARY KEY,
    pubkey     BLOB NOT NULL,
    kem_pubkey BLOB,
    cert       BLOB,
    enrolled   INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL
);
CREATE TABLE links (
    a       TEXT NOT NULL,
    b       TEXT NOT NULL,
    face_a  INTEGER NOT NULL,
    face_b  INTEGER NOT NULL,
    cost    INTEGER NOT NULL,
    rtt_us  INTEGER NOT NULL,
    state   TEXT NOT NULL CHECK (state IN ('up', 'down')),
    updated INTEGER NOT NULL,
    PRIMARY KEY (a, b)
);
CREATE TABLE registrations (
    id           INTEGER PRIMARY KEY,
    prefix       BLOB NOT NULL,
    uri          TEXT NOT NULL,
    node         TEXT NOT NULL,
    face         INTEGER NOT NULL,
    origin       INTEGER NOT NULL,
    cost         INTEGER NOT NULL,
    flags        INTEGER NOT NULL,
    expires      INTEGER NOT NULL,
    owner_key    BLOB,
    announcement BLOB,
    UNIQUE (prefix, node, face)
);
CREATE INDEX registrations_node ON registrations (node);
CREATE INDEX registrations_expires ON registrations (expires);
CREATE TABLE policies (
    prefix         TEXT PRIMARY KEY,
    security_level TEXT NOT NULL,
    cs_admit       INTEGER NOT NULL,
    cs_priority    INTEGER NOT NULL
);
CREATE TABLE keys (
    key_id          TEXT PRIMARY KEY,
    scope           TEXT NOT NULL,
    not_before      INTEGER NOT NULL,
    not_after       INTEGER NOT NULL,
    sealed_per_node BLOB NOT NULL
);
CREATE TABLE tokens (
    hash     BLOB PRIMARY KEY,
    router   TEXT NOT NULL,
    expires  INTEGER NOT NULL,
    used     INTEGER
);
CREATE TABLE deny (
    name    TEXT PRIMARY KEY,
    added   INTEGER NOT NULL,
    reason  TEXT NOT NULL
);
CREATE TABLE config_versions (
    node       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    version    INTEGER NOT NULL,
    digest     BLOB NOT NULL,
    applied_at INTEGER,
    PRIMARY KEY (node, kind, version)
);
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE audit (
    ts     INTEGER NOT NULL,
    actor  TEXT NOT NULL,
    action TEXT NOT NULL,
    detail TEXT NOT NULL
);
";
