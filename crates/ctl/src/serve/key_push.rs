//! Pushing each connected member the group keys it must hold: a signed `security` object
//! (a whole snapshot, [`crate::security_object`]) when a router connects and whenever the
//! set of its valid keys changes (a key made, rotated or expired).

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use nameway_wire::Name;
use tokio::sync::mpsc;

use super::state::ConnId;
use super::Shared;
use crate::channel::Message;
use crate::now_ms;
use crate::objects::{ConfigBody, ConfigKind, ConfigObject};
use crate::security_object::{encode_grants, encode_trust};

/// Per connection: the router, the key ids and the trust list it was last sent.
#[derive(Debug, Default)]
pub(super) struct KeyPusher {
    routers: HashMap<ConnId, (Name, Option<Vec<String>>)>,
    trust_sent: HashMap<ConnId, Vec<[u8; 32]>>,
    /// Sessions told they are refused (their router denied since it connected).
    ended: std::collections::HashSet<ConnId>,
    version: u64,
}

impl KeyPusher {
    pub(super) fn connected(&mut self, conn: ConnId, router: Name) {
        self.routers.insert(conn, (router, None));
    }

    pub(super) fn gone(&mut self, conn: ConnId) {
        self.routers.remove(&conn);
        self.trust_sent.remove(&conn);
        self.ended.remove(&conn);
    }

    /// Ends the session of every connected router on the deny list (denied by any
    /// controller on the store since it connected): it is sent `Refused`, on which the agent
    /// closes the session (and reconnecting, it is refused).
    fn end_denied(
        &mut self,
        shared: &Shared,
        conns: &HashMap<ConnId, mpsc::UnboundedSender<Message>>,
    ) {
        let denied = match tokio::task::block_in_place(|| shared.auth.nodes()) {
            Ok((_, d)) => d,
            Err(e) => {
                tracing::error!("deny list: {e}");
                return;
            }
        };
        for (conn, (router, _)) in &self.routers {
            if self.ended.contains(conn) || !denied.iter().any(|d| d.is_prefix_of(router)) {
                continue;
            }
            if let Some(tx) = conns.get(conn) {
                tracing::warn!(%router, "router denied: its session ends");
                let _ = tx.send(Message::Refused(format!("{router} is on the deny list")));
                shared
                    .auth
                    .counters
                    .sessions_ended_denied
                    .fetch_add(1, Ordering::Relaxed);
            }
            self.ended.insert(*conn);
        }
    }

    /// Sends a `trust` object (the link keys of every router with a valid, non-denied
    /// certificate) to every connected router whose list changed.
    fn push_trust(
        &mut self,
        shared: &Shared,
        conns: &HashMap<ConnId, mpsc::UnboundedSender<Message>>,
        now: u64,
    ) {
        let keys = match tokio::task::block_in_place(|| shared.auth.trusted_link_keys(now)) {
            Ok(k) => k,
            Err(e) => {
                tracing::error!("trust list: {e}");
                return;
            }
        };
        for (conn, (router, _)) in &self.routers {
            if self.trust_sent.get(conn) == Some(&keys) {
                continue;
            }
            self.version = self.version.saturating_add(1).max(now);
            let object = ConfigObject {
                router: router.clone(),
                kind: ConfigKind::Trust,
                version: self.version,
                base: None,
                body: ConfigBody::Document(encode_trust(&keys)),
            };
            let Some(tx) = conns.get(conn) else {
                continue;
            };
            if let Ok(true) = super::offer::send_object(shared, *conn, tx, &object) {
                shared.counters.objects_sent.fetch_add(1, Ordering::Relaxed);
                tracing::info!(%router, peers = keys.len(), "trust object sent");
                self.trust_sent.insert(*conn, keys.clone());
            }
        }
    }

    /// Sends a `security` object to every connected router whose valid keys changed since
    /// the last one it was sent (nothing to a router that never had a key).
    pub(super) fn poll(
        &mut self,
        shared: &Shared,
        conns: &HashMap<ConnId, mpsc::UnboundedSender<Message>>,
    ) {
        let now = now_ms();
        self.end_denied(shared, conns);
        self.push_trust(shared, conns, now);
        for (conn, (router, sent)) in &mut self.routers {
            let grants = match tokio::task::block_in_place(|| shared.auth.grants_for(router, now)) {
                Ok(g) => g,
                Err(e) => {
                    tracing::error!(%router, "group keys: {e}");
                    continue;
                }
            };
            let ids: Vec<String> = grants.iter().map(|g| g.key_id.clone()).collect();
            if sent.as_ref() == Some(&ids) || (sent.is_none() && ids.is_empty()) {
                continue;
            }
            // Versions grow across restarts of the controller: the clock, kept increasing.
            self.version = self.version.saturating_add(1).max(now);
            let object = ConfigObject {
                router: router.clone(),
                kind: ConfigKind::Security,
                version: self.version,
                base: None,
                body: ConfigBody::Document(encode_grants(&grants)),
            };
            let Some(tx) = conns.get(conn) else {
                continue;
            };
            let queued = super::offer::send_object(shared, *conn, tx, &object);
            if let Err(e) = &queued {
                tracing::error!(%router, "cannot sign a security object: {e}");
            }
            if let Ok(true) = queued {
                shared.counters.objects_sent.fetch_add(1, Ordering::Relaxed);
                tracing::info!(%router, keys = ?ids, version = self.version, "security object sent");
                *sent = Some(ids);
            }
        }
    }
}
