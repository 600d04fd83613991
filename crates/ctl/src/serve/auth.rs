//! Who a connecting forwarder is: enrolment with a one-time token, or the router certificate
//! it was issued, each with a signature over the session's handshake hash.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use bytes::Bytes;
use nameway_wire::Name;

use crate::ca::{self, Authority, CaError, DenyList};
use crate::ca_store::{BoxedCaStore, CaStore};
use crate::channel::{self, messages::router_proof, Credential, Hello};
use crate::renew::{self, RenewError};
use crate::StoreError;

/// A forwarder admitted: its name, its secure-link key, and the certificate issued now (on
/// enrolment).
#[derive(Debug)]
pub struct Admitted {
    /// The router.
    pub router: Name,
    /// Its secure-link public key, as recorded at enrolment.
    pub link_key: Option<Bytes>,
    /// The certificate issued by this enrolment.
    pub issued: Option<Bytes>,
}

/// Why a forwarder was refused (each counted).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The token is unknown, used, expired or for another router.
    #[error("enrolment refused: {0}")]
    Token(CaError),
    /// The certificate is not the anchor's, not valid now, or malformed.
    #[error("certificate refused: {0}")]
    Certificate(String),
    /// The router or its certificate is on the deny list.
    #[error("denied: {0}")]
    Denied(String),
    /// The router is not enrolled (no record).
    #[error("router {0} is not enrolled")]
    Unknown(String),
    /// The signature over the session does not verify with the presented key.
    #[error("the proof over the session does not verify")]
    Signature,
    /// The secure-link key presented at enrolment is another router's.
    #[error("the link key is already enrolled by {0}")]
    LinkKeyTaken(String),
    /// The mutual-TLS handshake failed: no client certificate, one the client CA did not
    /// sign, not TLS at all.
    #[error("TLS handshake: {0}")]
    Tls(String),
    /// The Hello is malformed or did not come in time.
    #[error("bad hello: {0}")]
    Malformed(String),
    /// The database failed.
    #[error("controller database: {0}")]
    Store(String),
}

/// Refusals and admissions, by reason.
#[derive(Debug, Default)]
pub struct AuthCounters {
    /// Admitted by enrolment.
    pub enrolled: AtomicU64,
    /// Admitted by certificate.
    pub admitted: AtomicU64,
    /// Refused: token.
    pub refused_token: AtomicU64,
    /// Refused: certificate.
    pub refused_certificate: AtomicU64,
    /// Refused: deny list.
    pub refused_denied: AtomicU64,
    /// Refused: not enrolled.
    pub refused_unknown: AtomicU64,
    /// Refused: signature.
    pub refused_signature: AtomicU64,
    /// Refused: malformed or late hello, failed handshake.
    pub refused_malformed: AtomicU64,
    /// Refused: the database failed.
    pub refused_store: AtomicU64,
    /// Refused in the mutual-TLS handshake.
    pub refused_tls: AtomicU64,
    /// Certificates renewed.
    pub renewed: AtomicU64,
    /// Renewals refused: denied.
    pub renew_refused_denied: AtomicU64,
    /// Renewals refused: the proof does not verify.
    pub renew_refused_signature: AtomicU64,
    /// Renewals refused: not enrolled.
    pub renew_refused_unknown: AtomicU64,
    /// Renewals refused: the database or signing failed.
    pub renew_refused_store: AtomicU64,
    /// Sessions ended because their router was denied after it connected.
    pub sessions_ended_denied: AtomicU64,
}

impl AuthCounters {
    /// Counts `r`.
    pub fn refused(&self, r: &Refusal) {
        let c = match r {
            Refusal::Token(_) => &self.refused_token,
            Refusal::Certificate(_) => &self.refused_certificate,
            Refusal::Denied(_) => &self.refused_denied,
            Refusal::Unknown(_) => &self.refused_unknown,
            Refusal::Signature => &self.refused_signature,
            Refusal::Malformed(_) | Refusal::LinkKeyTaken(_) => &self.refused_malformed,
            Refusal::Store(_) => &self.refused_store,
            Refusal::Tls(_) => &self.refused_tls,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Every counter with its reason label.
    pub fn all(&self) -> Vec<(&'static str, u64)> {
        [
            ("enrolled", &self.enrolled),
            ("admitted", &self.admitted),
            ("refused_token", &self.refused_token),
            ("refused_certificate", &self.refused_certificate),
            ("refused_denied", &self.refused_denied),
            ("refused_unknown", &self.refused_unknown),
            ("refused_signature", &self.refused_signature),
            ("refused_malformed", &self.refused_malformed),
            ("refused_store", &self.refused_store),
            ("refused_tls", &self.refused_tls),
            ("ended_denied", &self.sessions_ended_denied),
        ]
        .into_iter()
        .map(|(n, c)| (n, c.load(Ordering::Relaxed)))
        .collect()
    }

    /// Renewals: renewed, and refused by reason.
    pub fn renewals(&self) -> Vec<(&'static str, u64)> {
        [
            ("renewed", &self.renewed),
            ("refused_denied", &self.renew_refused_denied),
            ("refused_signature", &self.renew_refused_signature),
            ("refused_unknown", &self.renew_refused_unknown),
            ("refused_store", &self.renew_refused_store),
        ]
        .into_iter()
        .map(|(n, c)| (n, c.load(Ordering::Relaxed)))
        .collect()
    }
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Self {
        Self::Store(e.to_string())
    }
}

/// The CA and its store's connection (tokens, nodes, deny list, group keys): the
/// controller's SQLite file, or the PostgreSQL database the controllers share.
pub struct Auth {
    /// The domain's anchor.
    pub ca: Authority,
    /// `None` once dropped (see `Drop`).
    store: Mutex<Option<BoxedCaStore>>,
    /// Counters.
    pub counters: AuthCounters,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("ca", &self.ca)
            .finish_non_exhaustive()
    }
}

impl Drop for Auth {
    /// The store goes to a thread of its own to be closed: a synchronous PostgreSQL client
    /// must not be dropped on a runtime thread.
    fn drop(&mut self) {
        let store = self
            .store
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(store) = store {
            let _ = std::thread::Builder::new().spawn(move || drop(store));
        }
    }
}

impl Auth {
    /// Over `store` (an SQLite file opened with `Durability::Full`, or PostgreSQL).
    pub fn new(ca: Authority, store: impl CaStore + Send + 'static) -> Self {
        Self {
            ca,
            store: Mutex::new(Some(Box::new(store))),
            counters: AuthCounters::default(),
        }
    }

    /// Runs `f` on the store, one caller at a time (blocking).
    fn with<R, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut (dyn CaStore + Send)) -> Result<R, E>,
    ) -> Result<R, E> {
        let mut guard = self
            .store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match guard.as_deref_mut() {
            Some(store) => f(store),
            None => Err(StoreError::Closed.into()),
        }
    }

    /// Checks `hello` on the session with `handshake_hash` at `now_ms` (blocking: database).
    ///
    /// # Errors
    /// [`Refusal`], already counted.
    pub fn admit(
        &self,
        hello: &Hello,
        handshake_hash: &[u8],
        now_ms: u64,
    ) -> Result<Admitted, Refusal> {
        let r = self.check(hello, handshake_hash, now_ms);
        match &r {
            Ok(a) if a.issued.is_some() => {
                self.counters.enrolled.fetch_add(1, Ordering::Relaxed);
            }
            Ok(_) => {
                self.counters.admitted.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => self.counters.refused(e),
        }
        r
    }

    /// Renews `router`'s certificate on the session with `handshake_hash` (blocking:
    /// database); counted.
    ///
    /// # Errors
    /// [`RenewError`], already counted.
    pub fn renew(
        &self,
        router: &Name,
        handshake_hash: &[u8],
        signature: &[u8],
        now_ms: u64,
    ) -> Result<nameway_transport::Certificate, RenewError> {
        let r = self
            .with(|store| renew::renew(store, &self.ca, router, handshake_hash, signature, now_ms));
        let c = match &r {
            Ok(_) => &self.counters.renewed,
            Err(RenewError::Denied(_)) => &self.counters.renew_refused_denied,
            Err(RenewError::Signature(_)) => &self.counters.renew_refused_signature,
            Err(RenewError::Unknown(_)) => &self.counters.renew_refused_unknown,
            Err(_) => &self.counters.renew_refused_store,
        };
        c.fetch_add(1, Ordering::Relaxed);
        r
    }

    /// The group keys `router` must hold now, sealed to it (blocking: database).
    ///
    /// # Errors
    /// A database failure or a malformed key row.
    pub fn grants_for(
        &self,
        router: &Name,
        now_ms: u64,
    ) -> Result<Vec<crate::security_object::Grant>, crate::group_keys::GroupKeyError> {
        self.with(|store| crate::security_object::grants_for(store, &router.to_string(), now_ms))
    }

    /// The secure-link keys of every enrolled router whose certificate is valid at `now_ms`
    /// and not denied, sorted (blocking: database): what the `trust` objects carry.
    ///
    /// # Errors
    /// A database failure.
    pub fn trusted_link_keys(&self, now_ms: u64) -> Result<Vec<[u8; 32]>, CaError> {
        let (nodes, names) = self.nodes()?;
        let deny = DenyList { version: 0, names };
        let mut keys: Vec<[u8; 32]> = nodes
            .into_iter()
            .filter(|n| {
                let Some(cert) = &n.cert else { return false };
                let valid = ca::verify_router_cert(
                    Bytes::from(cert.clone()),
                    self.ca.certificate(),
                    &deny,
                    now_ms / 1000,
                );
                let denied = n.name.parse::<Name>().map_or(true, |r| deny.denies(&r));
                valid.is_ok() && !denied
            })
            .filter_map(|n| n.kem_pubkey.and_then(|k| <[u8; 32]>::try_from(k).ok()))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        Ok(keys)
    }

    /// The group keys, the enrolled routers and the deny list (blocking: database).
    ///
    /// # Errors
    /// A database failure, as one line.
    #[allow(clippy::type_complexity)]
    pub fn key_infos(
        &self,
    ) -> Result<
        (
            Vec<crate::group_keys::GroupKeyInfo>,
            Vec<crate::store::NodeRecord>,
            Vec<Name>,
        ),
        String,
    > {
        let keys = self
            .with(|store| crate::group_keys::group_key_infos(store))
            .map_err(|e| e.to_string())?;
        let (nodes, denied) = self.nodes().map_err(|e| e.to_string())?;
        Ok((keys, nodes, denied))
    }

    /// Records that `router` was admitted now (`nodes.last_seen`; blocking: database).
    ///
    /// # Errors
    /// A database failure.
    pub fn seen(&self, router: &Name, now_ms: u64) -> Result<(), StoreError> {
        let name = router.to_string();
        self.with(|store| {
            let node = store.nodes()?.into_iter().find(|n| n.name == name);
            match node {
                Some(mut n) => {
                    n.last_seen_ms = now_ms;
                    store.put_node(&n)
                }
                None => Ok(()),
            }
        })
    }

    /// The enrolled routers and the deny list (blocking: database).
    ///
    /// # Errors
    /// A database failure.
    pub fn nodes(&self) -> Result<(Vec<crate::store::NodeRecord>, Vec<Name>), CaError> {
        self.with(|store| {
            let nodes = store.nodes()?;
            let denied = ca::denied(store)?;
            Ok((nodes, denied))
        })
    }

    fn check(&self, hello: &Hello, hh: &[u8], now_ms: u64) -> Result<Admitted, Refusal> {
        self.with(|store| self.check_on(store, hello, hh, now_ms))
    }

    fn check_on(
        &self,
        store: &mut (dyn CaStore + Send),
        hello: &Hello,
        hh: &[u8],
        now_ms: u64,
    ) -> Result<Admitted, Refusal> {
        let proof = router_proof(hh);
        let store_err = |e: CaError| match e {
            CaError::Store(s) => Refusal::Store(s.to_string()),
            CaError::Denied(d) => Refusal::Denied(d),
            other => Refusal::Token(other),
        };
        match &hello.credential {
            Credential::Enrol {
                token,
                key_der,
                link_key,
            } => {
                if link_key.len() != 32 {
                    return Err(Refusal::Malformed("link key is not 32 bytes".into()));
                }
                channel::verify(key_der, &proof, &hello.signature)
                    .map_err(|_| Refusal::Signature)?;
                // A link key names a forwarder to its neighbours' reports: one claimed by
                // another router would let this one take that router's links.
                let me = hello.router.to_string();
                let taken = store
                    .nodes()
                    .map_err(|e| Refusal::Store(e.to_string()))?
                    .into_iter()
                    .find(|n| n.name != me && n.kem_pubkey.as_deref() == Some(&link_key[..]));
                if let Some(n) = taken {
                    return Err(Refusal::LinkKeyTaken(n.name));
                }
                let cert = ca::enrol(
                    store,
                    &self.ca,
                    token,
                    &hello.router,
                    key_der,
                    Some(link_key),
                    now_ms,
                )
                .map_err(store_err)?;
                Ok(Admitted {
                    router: hello.router.clone(),
                    link_key: Some(link_key.clone()),
                    issued: Some(cert.wire().clone()),
                })
            }
            Credential::Certificate(wire) => {
                let deny = DenyList {
                    version: 0,
                    names: ca::denied(store).map_err(store_err)?,
                };
                let cert = ca::verify_router_cert(
                    wire.clone(),
                    self.ca.certificate(),
                    &deny,
                    now_ms / 1000,
                )
                .map_err(|e| match e {
                    CaError::Denied(d) => Refusal::Denied(d),
                    other => Refusal::Certificate(other.to_string()),
                })?;
                if deny.denies(&hello.router) {
                    return Err(Refusal::Denied(hello.router.to_string()));
                }
                if cert.identity() != &hello.router {
                    return Err(Refusal::Certificate(format!(
                        "{} is not a certificate of {}",
                        cert.name(),
                        hello.router
                    )));
                }
                channel::verify(cert.key_der(), &proof, &hello.signature)
                    .map_err(|_| Refusal::Signature)?;
                let name = hello.router.to_string();
                let node = store
                    .nodes()
                    .map_err(|e| Refusal::Store(e.to_string()))?
                    .into_iter()
                    .find(|n| n.name == name)
                    .ok_or_else(|| Refusal::Unknown(name.clone()))?;
                Ok(Admitted {
                    router: hello.router.clone(),
                    link_key: node.kem_pubkey.map(Bytes::from),
                    issued: None,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ca::{anchor_cert_path, anchor_key_path};
    use crate::sqlite::{Durability, SqliteStore};

    #[test]
    fn a_link_key_enrolled_by_one_router_is_refused_to_another() {
        use crate::channel::messages::router_proof;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("ctl.db");
        let domain: Name = "/example".parse().unwrap();
        let ca = Authority::create(&domain, &anchor_key_path(&db), &anchor_cert_path(&db)).unwrap();
        let mut store = SqliteStore::open(&db, Durability::Full).unwrap();
        store.set_meta("domain", "/example").unwrap();
        let mut tokens = Vec::new();
        for r in ["/example/r1", "/example/r2"] {
            let n: Name = r.parse().unwrap();
            tokens.push(ca::create_token(&mut store, &n, 60_000, crate::now_ms()).unwrap());
        }
        let auth = Auth::new(ca, store);
        let hh = [9u8; 32];
        let hello = |router: &str, token: &str| {
            let key =
                nameway_transport::SigningKey::generate(nameway_transport::SignatureKind::Ed25519)
                    .unwrap();
            Hello {
                router: router.parse().unwrap(),
                credential: Credential::Enrol {
                    token: token.to_owned(),
                    key_der: key.public_der().unwrap().into(),
                    link_key: Bytes::from(vec![4u8; 32]),
                },
                signature: channel::sign(&key, &router_proof(&hh)).unwrap(),
                applied: 0,
            }
        };
        auth.admit(&hello("/example/r1", &tokens[0]), &hh, crate::now_ms())
            .unwrap();
        let refused = auth
            .admit(&hello("/example/r2", &tokens[1]), &hh, crate::now_ms())
            .unwrap_err();
        assert!(matches!(refused, Refusal::LinkKeyTaken(ref n) if n == "/example/r1"));
        assert_eq!(auth.counters.refused_malformed.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn tokens_made_by_another_process_after_an_enrolment_are_seen() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("ctl.db");
        let domain: Name = "/example".parse().unwrap();
        let ca = Authority::create(&domain, &anchor_key_path(&db), &anchor_cert_path(&db)).unwrap();
        let mut other = SqliteStore::open(&db, Durability::Full).unwrap();
        other.set_meta("domain", "/example").unwrap();
        let mut mine = SqliteStore::open(&db, Durability::Full).unwrap();
        let reg = SqliteStore::open(&db, Durability::Normal).unwrap();
        let (_registry, _) =
            crate::Registry::open(reg, crate::now_ms(), crate::GroupCommitConfig::default())
                .unwrap();
        let key =
            nameway_transport::SigningKey::generate(nameway_transport::SignatureKind::Ed25519)
                .unwrap();
        let der = key.public_der().unwrap();
        for i in 1..=3 {
            let r: Name = format!("/example/r{i}").parse().unwrap();
            let mut cli = SqliteStore::open(&db, Durability::Full).unwrap();
            let t = ca::create_token(&mut cli, &r, 60_000, crate::now_ms()).unwrap();
            drop(cli);
            std::thread::sleep(std::time::Duration::from_millis(300));
            ca::enrol(&mut mine, &ca, &t, &r, &der, None, crate::now_ms()).unwrap();
        }
    }
}
