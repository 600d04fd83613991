//! The crate's error types.

/// Why the registry database could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The file exists but is not an SQLite database (or its header is destroyed).
    #[error(
        "{path}: not a Nameway controller database (not an SQLite file, or its header is damaged)"
    )]
    NotADatabase {
        /// The file.
        path: String,
    },
    /// The file is an SQLite database made by another application.
    #[error("{path}: an SQLite database of another application (application_id {found:#010x}, tables {tables}); refusing to use it")]
    Foreign {
        /// The file.
        path: String,
        /// Its `application_id`.
        found: i32,
        /// How many tables it holds.
        tables: i64,
    },
    /// The schema is newer than this build knows.
    #[error("{path}: schema version {found} is newer than this namewayctl supports ({supported}); upgrade namewayctl")]
    TooNew {
        /// The file.
        path: String,
        /// Its `user_version`.
        found: i64,
        /// The newest version this build migrates to.
        supported: i64,
    },
    /// SQLite found damaged pages, or a stored row does not decode.
    #[error("{path}: database is corrupt ({detail}); restore a backup (namewayctl backup) or move the file away")]
    Corrupt {
        /// The file.
        path: String,
        /// What was found.
        detail: String,
    },
    /// Any other SQLite failure (locked, disk full, I/O).
    #[cfg(feature = "server")]
    #[error("{path}: {source}")]
    Sqlite {
        /// The file.
        path: String,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The PostgreSQL database holds tables but not Nameway's `nameway_schema`: another
    /// application's.
    #[error("{target}: the database holds tables that are not Nameway's ({tables}); refusing to use it (give namewayctl a database of its own)")]
    ForeignDatabase {
        /// The database (`postgres://user@host:port/db`).
        target: String,
        /// The first few of its tables.
        tables: String,
    },
    /// Any PostgreSQL failure: a bad conninfo, the server unreachable or gone, a refused
    /// statement.
    #[cfg(feature = "postgres")]
    #[error("{target}: {}", postgres_detail(error))]
    Postgres {
        /// The database (`postgres://user@host:port/db`, no password).
        target: String,
        /// The client's error (its own source, shown in the message, is the server's
        /// message or the I/O error).
        error: postgres::Error,
    },
    /// A backup file could not be created or written.
    #[error("backup {path}: {source}")]
    Backup {
        /// The backup file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The group-commit writer thread has stopped (the registry is closing or it failed).
    #[error("the registry writer has stopped")]
    WriterGone,
    /// The group-commit writer failed to commit the batch holding this request.
    #[error("commit failed: {0}")]
    CommitFailed(String),
    /// The CA's store was closed (the service is stopping).
    #[error("the CA's store is closed")]
    Closed,
}

/// A PostgreSQL client error with its cause on one line (the client's `Display` gives only
/// the kind: "db error").
#[cfg(feature = "postgres")]
fn postgres_detail(e: &postgres::Error) -> String {
    use std::error::Error as _;
    match e.source() {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

#[cfg(feature = "server")]
impl StoreError {
    /// Classifies a SQLite error seen on `path`: damaged files become [`StoreError::Corrupt`]
    /// or [`StoreError::NotADatabase`].
    pub(crate) fn sqlite(path: &str, e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode;
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseCorrupt) => Self::Corrupt {
                path: path.to_owned(),
                detail: e.to_string(),
            },
            Some(ErrorCode::NotADatabase) => Self::NotADatabase {
                path: path.to_owned(),
            },
            _ => Self::Sqlite {
                path: path.to_owned(),
                source: e,
            },
        }
    }
}
