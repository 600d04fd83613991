//! [`CaStore`] on PostgreSQL: the CA's records shared by every controller on the database
//! (`crate::ca_store`).
//!
//! A token is consumed by one conditional `UPDATE ... WHERE used IS NULL AND expires > now`:
//! PostgreSQL locks the row, and a second controller's `UPDATE` waiting on that lock checks
//! the condition again on the row as committed, finds it used and updates nothing. So of two
//! controllers presented the same token at once, exactly one enrols the router.
//!
//! Every write that changes what a controller checks for its connected routers (the deny
//! list, a group key made or retired, a router's record enrolled or renewed: `put_node` in
//! `postgres.rs`) `NOTIFY`s [`CA_CHANNEL`] in the same statement or transaction, so it is
//! delivered at the commit and only if it commits. The controllers' feed listener
//! (`postgres_feed::Listener`) wakes the CA check at once; the check's poll stays behind
//! it, slower. Sent by the writers rather than by triggers, as the change feed's
//! notifications are: no schema change, and a renewal that moves only `last_seen` wakes
//! nobody. A row written by hand (`psql`) notifies nobody and is seen at the next poll.

use crate::ca_carry::{sql, CarriedOver, CarriedRows};
use crate::ca_store::{token_verdict, CaStore, GroupKeyRow, TokenUse};
use crate::error::StoreError;
use crate::postgres::{to_i64, to_u64, PostgresStore};

/// The channel the CA's writers `NOTIFY` (deny list, group keys, routers' records), and
/// the controllers' feed listeners `LISTEN` on.
pub(crate) const CA_CHANNEL: &str = "nameway_ca";

/// Runs the write `sql` and notifies [`CA_CHANNEL`] in one transaction when it changed
/// `at_least` rows or more; how many it changed.
fn write_and_notify(
    store: &mut PostgresStore,
    sql: &str,
    params: &[&(dyn postgres::types::ToSql + Sync)],
    at_least: u64,
) -> Result<u64, StoreError> {
    let target = store.target.clone();
    let pg = |e| crate::postgres::pg(&target, e);
    let mut tx = store.client.transaction().map_err(pg)?;
    let n = tx.execute(sql, params).map_err(pg)?;
    if n >= at_least {
        tx.execute(&format!("SELECT pg_notify('{CA_CHANNEL}', '')"), &[])
            .map_err(pg)?;
    }
    tx.commit().map_err(pg)?;
    Ok(n)
}

impl CaStore for PostgresStore {
    fn put_token(&mut self, hash: &[u8], router: &str, expires_ms: u64) -> Result<(), StoreError> {
        self.client
            .execute(
                "INSERT INTO tokens (hash, router, expires, used) VALUES ($1, $2, $3, NULL)",
                &[&hash, &router, &to_i64(expires_ms)],
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
        let now = to_i64(now_ms);
        let taken = self
            .client
            .execute(
                "UPDATE tokens SET used = $3 WHERE hash = $1 AND router = $2 \
                 AND used IS NULL AND expires > $3",
                &[&hash, &router, &now],
            )
            .map_err(|e| self.err(e))?;
        if taken == 1 {
            return Ok(TokenUse::Consumed);
        }
        // Not taken: say why.
        let row = self
            .client
            .query_opt(
                "SELECT router, expires, used FROM tokens WHERE hash = $1",
                &[&hash],
            )
            .map_err(|e| self.err(e))?
            .map(|r| -> Result<_, postgres::Error> {
                Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?))
            })
            .transpose()
            .map_err(|e| self.err(e))?;
        Ok(match token_verdict(row, router, now) {
            // Consumed between the two statements by another controller.
            TokenUse::Consumed => TokenUse::Used,
            other => other,
        })
    }

    fn put_deny(&mut self, name: &str, added_ms: u64, reason: &str) -> Result<(), StoreError> {
        write_and_notify(
            self,
            "INSERT INTO deny (name, added, reason) VALUES ($1, $2, $3) \
             ON CONFLICT (name) DO UPDATE SET added = excluded.added, reason = excluded.reason",
            &[&name, &to_i64(added_ms), &reason],
            0,
        )
        .map(drop)
    }

    fn deny_names(&mut self) -> Result<Vec<String>, StoreError> {
        let rows = self
            .client
            .query("SELECT name FROM deny ORDER BY name", &[])
            .map_err(|e| self.err(e))?;
        rows.iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(|e| self.err(e))
    }

    fn put_group_key(&mut self, row: &GroupKeyRow) -> Result<(), StoreError> {
        write_and_notify(
            self,
            "INSERT INTO keys (key_id, scope, not_before, not_after, sealed_per_node, level) \
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &row.key_id,
                &row.scope,
                &to_i64(row.not_before_ms),
                &to_i64(row.not_after_ms),
                &row.sealed_per_node,
                &row.level,
            ],
            0,
        )
        .map(drop)
    }

    fn group_key_rows(&mut self) -> Result<Vec<GroupKeyRow>, StoreError> {
        let rows = self
            .client
            .query(
                "SELECT key_id, scope, not_before, not_after, sealed_per_node, level FROM keys \
                 ORDER BY not_before, key_id",
                &[],
            )
            .map_err(|e| self.err(e))?;
        rows.iter()
            .map(|r| {
                Ok(GroupKeyRow {
                    key_id: r.try_get(0)?,
                    scope: r.try_get(1)?,
                    not_before_ms: to_u64(r.try_get(2)?),
                    not_after_ms: to_u64(r.try_get(3)?),
                    sealed_per_node: r.try_get(4)?,
                    level: r.try_get(5)?,
                })
            })
            .collect::<Result<_, postgres::Error>>()
            .map_err(|e| self.err(e))
    }

    fn retire_group_keys(
        &mut self,
        scope: &str,
        keep: &str,
        until_ms: u64,
    ) -> Result<usize, StoreError> {
        let n = write_and_notify(
            self,
            "UPDATE keys SET not_after = $1 WHERE scope = $2 AND key_id != $3 \
             AND not_after > $1",
            &[&to_i64(until_ms), &scope, &keep],
            1,
        )?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn meta_value(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        let row = self
            .client
            .query_opt("SELECT value FROM meta WHERE key = $1", &[&key])
            .map_err(|e| self.err(e))?;
        row.map(|r| r.try_get(0))
            .transpose()
            .map_err(|e| self.err(e))
    }

    fn put_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        self.client
            .execute(
                "INSERT INTO meta (key, value) VALUES ($1, $2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&key, &value],
            )
            .map(drop)
            .map_err(|e| self.err(e))
    }

    fn merge_carried(&mut self, rows: &CarriedRows) -> Result<CarriedOver, StoreError> {
        let target = self.target.clone();
        let pg = |e| crate::postgres::pg(&target, e);
        let mut tx = self.client.transaction().map_err(pg)?;
        let mut done = CarriedOver::default();
        for t in &rows.tokens {
            done.tokens += tx
                .execute(
                    sql::TOKEN,
                    &[
                        &t.hash,
                        &t.router,
                        &to_i64(t.expires_ms),
                        &t.used_ms.map(to_i64),
                    ],
                )
                .map_err(pg)?;
        }
        for r in &rows.nodes {
            done.routers += tx
                .execute(
                    sql::NODE,
                    &[
                        &r.name,
                        &r.pubkey,
                        &r.kem_pubkey,
                        &r.cert,
                        &to_i64(r.enrolled_ms),
                        &to_i64(r.last_seen_ms),
                    ],
                )
                .map_err(pg)?;
        }
        for d in &rows.deny {
            done.denied += tx
                .execute(sql::DENY, &[&d.name, &to_i64(d.added_ms), &d.reason])
                .map_err(pg)?;
        }
        for k in &rows.keys {
            done.group_keys += tx
                .execute(
                    sql::KEY,
                    &[
                        &k.key_id,
                        &k.scope,
                        &to_i64(k.not_before_ms),
                        &to_i64(k.not_after_ms),
                        &k.sealed_per_node,
                        &k.level,
                    ],
                )
                .map_err(pg)?;
        }
        if done != CarriedOver::default() {
            // The controllers running read the deny list and trust again now.
            tx.execute(&format!("SELECT pg_notify('{CA_CHANNEL}', '')"), &[])
                .map_err(pg)?;
        }
        tx.commit().map_err(pg)?;
        Ok(done)
    }
}
