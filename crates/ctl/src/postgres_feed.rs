//! The change feed of a PostgreSQL registry (schema version 2): what lets several
//! controllers on one database route each other's registrations and links live.
//!
//! - One sequence, `nameway_change`, numbers every change: a registration or a link row
//!   takes a new number when it is inserted and when a routing field of it changes (a
//!   renewal, which moves `expires` or `updated` only, keeps its number, so renewals cost
//!   the readers nothing); a deleted row leaves a tombstone numbered the same way
//!   (`registrations_gone`, `links_gone`), kept [`GONE_KEPT_MS`].
//! - Every writer of those tables takes one transaction-scoped advisory lock
//!   ([`FEED_LOCK`]) first, so numbers are handed out in commit order: a reader that saw
//!   every committed change up to `n` will never see a later commit with a number `<= n`.
//!   (Without the lock a transaction that took 7 could commit after one that took 8, and a
//!   reader at 8 would miss it.)
//! - A reader keeps the highest number it applied (its cursor) and reads, in one snapshot,
//!   the rows and tombstones numbered above it ([`PostgresStore::changes_since`]). A cursor
//!   older than the tombstones forgotten is told so (`behind`): it reloads everything.
//!
//! - A writer that numbered a change `NOTIFY`s [`CHANNEL`] before it commits
//!   ([`Writing::notify`]; delivered at the commit, folded per transaction); a renewal
//!   numbers nothing and wakes nobody. A feed `LISTEN`s on a connection of its own
//!   ([`Listener`]: the synchronous client waits for notifications only there, blocking)
//!   and reads at once; it still polls, every second while it listens and every 200 ms
//!   when it cannot (a pooler in transaction mode refuses `LISTEN`), which also renews and
//!   expires the links (soft state) and catches the links that expired without a write.

use std::collections::HashMap;

use postgres::Transaction;

use crate::error::StoreError;
use crate::postgres::{pg, to_i64, PostgresStore, LINK_COLUMNS};
use crate::store::{LinkRecord, RegistryOp};

/// The advisory lock every writer of `registrations` and `links` holds ("NWFD").
pub(crate) const FEED_LOCK: i64 = 0x4E57_4644;

/// How long tombstones are kept (a reader away longer reloads everything).
pub(crate) const GONE_KEPT_MS: u64 = 10 * 60 * 1000;

/// Migration 2: the change sequence, its columns, triggers and tombstones.
pub(crate) const V2: &str = "
CREATE SEQUENCE nameway_change;
ALTER TABLE registrations ADD COLUMN change BIGINT NOT NULL DEFAULT nextval('nameway_change');
ALTER TABLE links ADD COLUMN change BIGINT NOT NULL DEFAULT nextval('nameway_change');
CREATE INDEX registrations_change ON registrations (change);
CREATE INDEX links_change ON links (change);
CREATE TABLE registrations_gone (
    change BIGINT PRIMARY KEY DEFAULT nextval('nameway_change'),
    prefix BYTEA NOT NULL,
    node   TEXT NOT NULL,
    face   BIGINT NOT NULL,
    at     BIGINT NOT NULL
);
CREATE TABLE links_gone (
    change BIGINT PRIMARY KEY DEFAULT nextval('nameway_change'),
    a      TEXT NOT NULL,
    b      TEXT NOT NULL,
    at     BIGINT NOT NULL
);
CREATE FUNCTION nameway_registration_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (NEW.origin, NEW.cost, NEW.flags, NEW.owner_key, NEW.announcement)
        IS DISTINCT FROM (OLD.origin, OLD.cost, OLD.flags, OLD.owner_key, OLD.announcement) THEN
        NEW.change := nextval('nameway_change');
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER registrations_changed BEFORE UPDATE ON registrations
    FOR EACH ROW EXECUTE FUNCTION nameway_registration_changed();
CREATE FUNCTION nameway_registration_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO registrations_gone (prefix, node, face, at)
        VALUES (OLD.prefix, OLD.node, OLD.face,
                (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
    RETURN OLD;
END $$;
CREATE TRIGGER registrations_gone AFTER DELETE ON registrations
    FOR EACH ROW EXECUTE FUNCTION nameway_registration_gone();
CREATE FUNCTION nameway_link_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (NEW.face_a, NEW.face_b, NEW.cost, NEW.state)
        IS DISTINCT FROM (OLD.face_a, OLD.face_b, OLD.cost, OLD.state) THEN
        NEW.change := nextval('nameway_change');
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER links_changed BEFORE UPDATE ON links
    FOR EACH ROW EXECUTE FUNCTION nameway_link_changed();
CREATE FUNCTION nameway_link_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO links_gone (a, b, at)
        VALUES (OLD.a, OLD.b, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
    RETURN OLD;
END $$;
CREATE TRIGGER links_gone AFTER DELETE ON links
    FOR EACH ROW EXECUTE FUNCTION nameway_link_gone();
";

/// The channel the writers `NOTIFY` when they numbered a change, and the feeds `LISTEN` on.
pub(crate) const CHANNEL: &str = "nameway_change";

/// Where the change sequence stood when a writer took the lock ([`lock_writers`]); given
/// back to [`Writing::notify`] before the commit.
#[must_use = "call notify before the commit, or the other controllers learn of it at their next poll"]
pub(crate) struct Writing(i64);

/// The sequence's last number handed out (0 before the first).
const SEQUENCE_AT: &str =
    "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM nameway_change";

/// Takes the writers' lock for the rest of `tx` (see the module documentation).
pub(crate) fn lock_writers(tx: &mut Transaction<'_>) -> Result<Writing, postgres::Error> {
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&FEED_LOCK])?;
    Ok(Writing(tx.query_one(SEQUENCE_AT, &[])?.get(0)))
}

impl Writing {
    /// Notifies the feeds ([`CHANNEL`], delivered at commit) when this transaction numbered
    /// a change: a row or tombstone numbered above where the sequence stood at the lock. Only
    /// this transaction can have numbered one (every writer holds the lock); the sequence
    /// itself is no guide, as an upsert that renews takes a number for the row it would have
    /// inserted and throws it away. A renewal, which numbers no row, wakes nobody.
    pub(crate) fn notify(self, tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
        tx.execute(
            &format!(
                "SELECT pg_notify('{CHANNEL}', '') WHERE \
                 EXISTS (SELECT 1 FROM registrations WHERE change > $1) OR \
                 EXISTS (SELECT 1 FROM registrations_gone WHERE change > $1) OR \
                 EXISTS (SELECT 1 FROM links WHERE change > $1) OR \
                 EXISTS (SELECT 1 FROM links_gone WHERE change > $1)"
            ),
            &[&self.0],
        )
        .map(drop)
    }
}

/// Deletes the tombstones older than [`GONE_KEPT_MS`] by the server's clock (the one that
/// stamped them), recording in `meta` the highest number forgotten (`feed_forgotten`).
pub(crate) fn forget_removals(tx: &mut Transaction<'_>) -> Result<(), postgres::Error> {
    let kept = to_i64(GONE_KEPT_MS);
    for table in ["registrations_gone", "links_gone"] {
        tx.execute(
            &format!(
                "WITH d AS (DELETE FROM {table} WHERE at < \
                 (extract(epoch FROM clock_timestamp()) * 1000)::bigint - $1 RETURNING change) \
                 INSERT INTO meta (key, value) SELECT 'feed_forgotten', max(change)::text FROM d \
                 HAVING count(*) > 0 ON CONFLICT (key) DO UPDATE SET \
                 value = greatest(meta.value::bigint, excluded.value::bigint)::text"
            ),
            &[&kept],
        )?;
    }
    Ok(())
}

/// Inserts or updates link reports (one row per reporting end).
pub(crate) fn upsert_links(
    tx: &mut Transaction<'_>,
    links: &[LinkRecord],
) -> Result<(), postgres::Error> {
    for l in links {
        tx.execute(
            "INSERT INTO links (a, b, face_a, face_b, cost, rtt_us, state, updated) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (a, b) DO UPDATE SET \
             face_a = excluded.face_a, face_b = excluded.face_b, cost = excluded.cost, \
             rtt_us = excluded.rtt_us, state = excluded.state, updated = excluded.updated",
            &[
                &l.a,
                &l.b,
                &to_i64(l.face_a),
                &to_i64(l.face_b),
                &i64::from(l.cost),
                &to_i64(l.rtt_us),
                &if l.up { "up" } else { "down" },
                &to_i64(l.updated_ms),
            ],
        )?;
    }
    Ok(())
}

/// What changed since a cursor ([`PostgresStore::changes_since`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// The highest number seen (the next cursor).
    pub cursor: i64,
    /// The registrations inserted, changed or deleted, in the order of their numbers.
    pub registrations: Vec<RegistryOp>,
    /// Whether a link row was inserted, changed or deleted.
    pub links_changed: bool,
    /// The cursor was older than the tombstones kept: `registrations` holds every
    /// registration (as puts); the reader replaces what it had.
    pub behind: bool,
}

impl PostgresStore {
    /// The changes numbered above `cursor` (0: everything), read in one snapshot.
    ///
    /// # Errors
    /// The database cannot be read, or a row does not decode.
    pub fn changes_since(&mut self, cursor: i64) -> Result<Changes, StoreError> {
        let target = self.target.clone();
        let mut tx = self
            .client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(|e| pg(&target, e))?;
        let forgotten: i64 = tx
            .query_opt(
                "SELECT value::bigint FROM meta WHERE key = 'feed_forgotten'",
                &[],
            )
            .map_err(|e| pg(&target, e))?
            .map_or(0, |r| r.get(0));
        let behind = cursor > 0 && cursor < forgotten;
        let from = if behind { 0 } else { cursor };
        let puts = tx
            .query(
                "SELECT prefix, node, face, origin, cost, flags, expires, owner_key, \
                 announcement, change FROM registrations WHERE change > $1 ORDER BY change",
                &[&from],
            )
            .map_err(|e| pg(&target, e))?;
        let gone = if from == 0 {
            Vec::new()
        } else {
            tx.query(
                "SELECT prefix, node, face, change FROM registrations_gone WHERE change > $1 \
                 ORDER BY change",
                &[&from],
            )
            .map_err(|e| pg(&target, e))?
        };
        let link_max: i64 = tx
            .query_one(
                "SELECT greatest((SELECT coalesce(max(change), 0) FROM links), \
                 (SELECT coalesce(max(change), 0) FROM links_gone))",
                &[],
            )
            .map_err(|e| pg(&target, e))?
            .get(0);
        tx.commit().map_err(|e| pg(&target, e))?;
        let mut numbered: Vec<(i64, RegistryOp)> = Vec::with_capacity(puts.len() + gone.len());
        for row in &puts {
            let change: i64 = row.try_get(9).map_err(|e| self.err(e))?;
            numbered.push((change, RegistryOp::Put(self.registration(row)?)));
        }
        for row in &gone {
            let change: i64 = row.try_get(3).map_err(|e| self.err(e))?;
            numbered.push((change, RegistryOp::Remove(self.registration_key(row)?)));
        }
        numbered.sort_by_key(|(c, _)| *c);
        let top = numbered.last().map_or(from, |(c, _)| *c);
        Ok(Changes {
            cursor: top.max(link_max).max(from),
            registrations: numbered.into_iter().map(|(_, op)| op).collect(),
            links_changed: link_max > from,
            behind,
        })
    }

    /// The link reports renewed at or after `since_ms`.
    ///
    /// # Errors
    /// The database cannot be read.
    pub fn live_links(&mut self, since_ms: u64) -> Result<Vec<LinkRecord>, StoreError> {
        let rows = self
            .client
            .query(
                &format!("SELECT {LINK_COLUMNS} FROM links WHERE updated >= $1 ORDER BY a, b"),
                &[&to_i64(since_ms)],
            )
            .map_err(|e| self.err(e))?;
        self.link_records(&rows)
    }

    /// Every router's secure-link key as the controllers recorded it (`nodes.kem_pubkey`):
    /// name → key.
    ///
    /// # Errors
    /// The database cannot be read.
    pub fn link_keys(&mut self) -> Result<HashMap<String, Vec<u8>>, StoreError> {
        let rows = self
            .client
            .query(
                "SELECT name, kem_pubkey FROM nodes WHERE kem_pubkey IS NOT NULL",
                &[],
            )
            .map_err(|e| self.err(e))?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect::<Result<_, postgres::Error>>()
            .map_err(|e| self.err(e))
    }

    /// Makes `links` the whole of `router`'s link reports (its other rows deleted).
    ///
    /// # Errors
    /// The database refused the transaction; nothing of it is stored.
    pub fn replace_links(&mut self, router: &str, links: &[LinkRecord]) -> Result<(), StoreError> {
        let target = self.target.clone();
        let mut tx = self.client.transaction().map_err(|e| pg(&target, e))?;
        let writing = lock_writers(&mut tx).map_err(|e| pg(&target, e))?;
        let keep: Vec<&str> = links.iter().map(|l| l.b.as_str()).collect();
        tx.execute(
            "DELETE FROM links WHERE a = $1 AND NOT (b = ANY($2))",
            &[&router, &keep],
        )
        .map_err(|e| pg(&target, e))?;
        upsert_links(&mut tx, links).map_err(|e| pg(&target, e))?;
        writing.notify(&mut tx).map_err(|e| pg(&target, e))?;
        tx.commit().map_err(|e| pg(&target, e))
    }

    /// Renews the link reports of `routers` (`updated` = `now_ms`): soft state kept alive.
    ///
    /// # Errors
    /// The database refused the update.
    pub fn renew_links(&mut self, routers: &[String], now_ms: u64) -> Result<(), StoreError> {
        self.client
            .execute(
                "UPDATE links SET updated = $2 WHERE a = ANY($1)",
                &[&routers, &to_i64(now_ms)],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    /// Deletes the link reports not renewed since `before_ms` (a controller that died
    /// stopped renewing its routers' links); how many.
    ///
    /// # Errors
    /// The database refused the deletion.
    pub fn expire_links(&mut self, before_ms: u64) -> Result<u64, StoreError> {
        let target = self.target.clone();
        let mut tx = self.client.transaction().map_err(|e| pg(&target, e))?;
        let writing = lock_writers(&mut tx).map_err(|e| pg(&target, e))?;
        let n = tx
            .execute(
                "DELETE FROM links WHERE updated < $1",
                &[&to_i64(before_ms)],
            )
            .map_err(|e| pg(&target, e))?;
        writing.notify(&mut tx).map_err(|e| pg(&target, e))?;
        tx.commit().map_err(|e| pg(&target, e))?;
        Ok(n)
    }
}

/// A connection of its own that `LISTEN`s on the change channel (`nameway_change`): what
/// wakes a change feed at once instead of at its next poll ([`ListenerSource::listener`]).
pub struct Listener {
    client: postgres::Client,
    target: String,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

/// What a [`Listener`] connects with: the store's connection settings, without its client
/// (so it can move to a thread of its own).
#[derive(Clone)]
pub struct ListenerSource {
    config: postgres::Config,
    target: String,
}

impl std::fmt::Debug for ListenerSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenerSource")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// How to open [`Listener`]s on this store's database.
    pub fn listener_source(&self) -> ListenerSource {
        ListenerSource {
            config: self.config.clone(),
            target: self.target.clone(),
        }
    }
}

impl ListenerSource {
    /// Opens one more connection to the database and listens on the change channel and on
    /// the CA's (`nameway_ca`: deny list, group keys, routers' records).
    ///
    /// # Errors
    /// The server cannot be reached or refuses `LISTEN` (e.g. a pooler in transaction mode).
    pub fn listener(&self) -> Result<Listener, StoreError> {
        let mut client = self
            .config
            .connect(postgres::NoTls)
            .map_err(|e| pg(&self.target, e))?;
        client
            .batch_execute(&format!(
                "LISTEN {CHANNEL}; LISTEN {}",
                crate::postgres_ca::CA_CHANNEL
            ))
            .map_err(|e| pg(&self.target, e))?;
        Ok(Listener {
            client,
            target: self.target.clone(),
        })
    }
}

/// What woke a [`Listener`] ([`Listener::wait_any`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Woken {
    /// A registration or link change was numbered (the change feed reads).
    pub changes: bool,
    /// The CA's records changed: the deny list, a group key, a router's record.
    pub ca: bool,
}

impl Woken {
    /// Whether anything came.
    pub fn any(self) -> bool {
        self.changes || self.ca
    }

    fn note(&mut self, channel: &str) {
        if channel == crate::postgres_ca::CA_CHANNEL {
            self.ca = true;
        } else {
            self.changes = true;
        }
    }
}

impl Listener {
    /// Waits up to `timeout` for a notification on either channel; whether one came (all
    /// those already received are taken: several changes wake the feed once).
    ///
    /// # Errors
    /// The connection failed.
    pub fn wait(&mut self, timeout: std::time::Duration) -> Result<bool, StoreError> {
        self.wait_any(timeout).map(Woken::any)
    }

    /// As [`Listener::wait`], saying which channels notified.
    ///
    /// # Errors
    /// The connection failed.
    pub fn wait_any(&mut self, timeout: std::time::Duration) -> Result<Woken, StoreError> {
        use postgres::fallible_iterator::FallibleIterator;
        let target = &self.target;
        let mut notifications = self.client.notifications();
        let mut woken = Woken::default();
        let Some(first) = notifications
            .timeout_iter(timeout)
            .next()
            .map_err(|e| pg(target, e))?
        else {
            return Ok(woken);
        };
        woken.note(first.channel());
        // Folded: what is already buffered is the same wake-up.
        let mut buffered = notifications.iter();
        while let Some(n) = buffered.next().map_err(|e| pg(target, e))? {
            woken.note(n.channel());
        }
        Ok(woken)
    }
}
