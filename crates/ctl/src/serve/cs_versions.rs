//! A router's cache policy versions (sans-I/O): the document published for it, the version
//! sent on its current session and the version it acknowledged (`CsAck`).

use bytes::Bytes;
use nameway_wire::Name;

use crate::objects::{ConfigBody, ConfigKind, ConfigObject};

/// See the module documentation.
#[derive(Clone, Debug, Default)]
pub(crate) struct CsVersions {
    current: u64,
    acked: u64,
    doc: String,
    /// The version sent on the current session.
    sent: Option<u64>,
}

impl CsVersions {
    /// Publishes `doc` as the next version when it differs from the current one (a first
    /// empty document publishes nothing: no policy, no object).
    pub(crate) fn publish(&mut self, doc: String) {
        if doc != self.doc || (self.current == 0 && !doc.is_empty()) {
            self.current += 1;
            self.doc = doc;
        }
    }

    /// The object to send on this session, if the current version was not sent yet.
    pub(crate) fn take_pending(&mut self, router: &Name) -> Option<ConfigObject> {
        if self.current == 0 || self.sent == Some(self.current) {
            return None;
        }
        self.sent = Some(self.current);
        Some(ConfigObject {
            router: router.clone(),
            kind: ConfigKind::Cs,
            version: self.current,
            base: None,
            body: ConfigBody::Document(Bytes::from(self.doc.clone().into_bytes())),
        })
    }

    /// A new session (or none): the current version is sent again on the next one.
    pub(crate) fn new_session(&mut self) {
        self.sent = None;
    }

    /// The router applied `version`; false when it was never published (ignored).
    pub(crate) fn ack(&mut self, version: u64) -> bool {
        if version > self.current {
            return false;
        }
        self.acked = self.acked.max(version);
        true
    }

    /// (current, acknowledged).
    pub(crate) fn versions(&self) -> (u64, u64) {
        (self.current, self.acked)
    }
}
