//! Objects out: each object is published (segments and manifests signed by the anchor,
//! `objects/offers.rs`), offered to the router by name (`Offer`), and the agent's Interests
//! for it, arriving as `Ndn` messages, answered from the connection's recent publications.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use bytes::Bytes;
use tokio::sync::mpsc;

use super::state::ConnId;
use super::Shared;
use crate::ca::CaError;
use crate::channel::Message;
use crate::objects::{ConfigObject, Offers};

/// Every connection's recent publications.
#[derive(Debug, Default)]
pub(crate) struct ConnOffers {
    by_conn: Mutex<HashMap<ConnId, Offers>>,
    /// Data sent in answer to agents' Interests (segments and manifests).
    pub(crate) answered: AtomicU64,
    /// Agents' Interests for nothing offered (or undecodable).
    pub(crate) unanswered: AtomicU64,
}

impl ConnOffers {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<ConnId, Offers>) -> T) -> T {
        let mut g = self
            .by_conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut g)
    }

    /// The Data answering an agent's Interest on `conn`, counted.
    pub(crate) fn answer(&self, conn: ConnId, interest: Bytes) -> Option<Bytes> {
        let data = self.with(|m| m.get_mut(&conn).and_then(|o| o.answer(interest)));
        let counter = if data.is_some() {
            &self.answered
        } else {
            &self.unanswered
        };
        counter.fetch_add(1, Ordering::Relaxed);
        data
    }

    /// The connection closed: its publications go.
    pub(crate) fn gone(&self, conn: ConnId) {
        self.with(|m| m.remove(&conn));
    }
}

/// Publishes `object` for the router on `conn` and offers it (`Ok(false)`: the connection
/// is gone).
pub(crate) fn send_object(
    shared: &Shared,
    conn: ConnId,
    tx: &mpsc::UnboundedSender<Message>,
    object: &ConfigObject,
) -> Result<bool, CaError> {
    if tx.is_closed() {
        return Ok(false);
    }
    let publication = object.publish(&shared.auth.ca)?;
    let name = shared
        .offers
        .with(|m| m.entry(conn).or_default().offer(publication));
    Ok(tx.send(Message::Offer(name)).is_ok())
}

/// An `Ndn` message from the agent on `conn`: its answer queued on `tx`.
pub(crate) fn on_ndn(
    shared: &Shared,
    conn: ConnId,
    tx: &mpsc::UnboundedSender<Message>,
    wire: Bytes,
) {
    if let Some(data) = shared.offers.answer(conn, wire) {
        let _ = tx.send(Message::Ndn(data));
    }
}
