//! The agent's connection to the controller (a tokio task): dial, the Noise (or mutual TLS)
//! session, the
//! controller's proof checked against the pinned anchor, the Hello (token or certificate),
//! then reports out and configuration objects in: each offered object is fetched with the
//! transport library over the channel (`agent/fetcher.rs`), verified against the anchor,
//! and turned into the FIB it describes; the driver applies it and answers, and the task
//! acknowledges the version and writes the FIB to `state_dir`. Lost connections are dialled
//! again with exponential backoff (200 ms to 10 s).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use nameway_ctl::cache_policy::CsDocument;
use nameway_ctl::channel::{self, messages::router_proof, Credential, Hello, Message, Report};
use nameway_ctl::objects::{ConfigBody, ConfigKind, ConfigObject, ObjectFetchError};
use nameway_ctl::renew::{renew_proof, renewal_due_s};
use nameway_ctl::Fib;
use nameway_transport::{Certificate, SigningKey};
use nameway_wire::Name;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::fetcher::{Fetched, Fetcher};
use super::group_keys::{open_grants, GroupKey};
use super::stats::{ObjectRefusal, SessionFailure};
use super::store::StateDir;
use super::AgentCounters;
use nameway_ctl::sealed::KemKeyPair;
use nameway_ctl::security_object::{decode_grants, decode_trust};

const BACKOFF_MIN: Duration = Duration::from_millis(200);
const BACKOFF_MAX: Duration = Duration::from_secs(10);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long to wait for a renewal's answer before asking again.
const RENEW_RETRY: Duration = Duration::from_secs(5);

/// From the driver to the task.
#[derive(Debug)]
pub(crate) enum ToTask {
    /// The forwarder's state changed: report it.
    Report(Report),
    /// The driver applied this version.
    Applied(u64, Arc<Fib>),
    /// The driver applied this cache policy version.
    CsApplied(u64, CsDocument),
}

/// From the task to the driver: a verified object to apply.
#[derive(Debug)]
pub enum Update {
    /// A FIB.
    Fib {
        /// Its version.
        version: u64,
        /// The whole FIB.
        fib: Arc<Fib>,
    },
    /// A cache policy.
    Cs {
        /// Its version.
        version: u64,
        /// The document.
        doc: CsDocument,
    },
    /// The group keys opened from a `security` object.
    Keys {
        /// Its version.
        version: u64,
        /// The keys.
        keys: Vec<GroupKey>,
    },
    /// A `trust` object: the link keys of the domain's valid routers.
    Trust {
        /// Its version.
        version: u64,
        /// The link keys.
        keys: Vec<[u8; 32]>,
    },
}

/// What the task needs.
pub(crate) struct LinkSetup {
    pub(crate) address: String,
    /// Mutual TLS instead of Noise (`tls://`).
    pub(crate) tls: Option<channel::tls::ClientTls>,
    pub(crate) pinned: [u8; 32],
    pub(crate) router: Name,
    pub(crate) token: String,
    pub(crate) link_key: Option<[u8; 32]>,
    /// The secure-link identity as an HPKE key pair, to open group keys.
    pub(crate) kem: Option<KemKeyPair>,
    pub(crate) key: SigningKey,
    pub(crate) state: StateDir,
    pub(crate) counters: Arc<AgentCounters>,
    /// The FIB restored from `state_dir`, if any.
    pub(crate) applied: Option<(u64, Arc<Fib>)>,
}

struct Task {
    s: LinkSetup,
    from_driver: mpsc::UnboundedReceiver<ToTask>,
    to_driver: mpsc::UnboundedSender<Update>,
    /// The last report from the driver (sent again on every new session).
    report: Option<Report>,
    /// The FIB the driver applied last.
    applied: Option<(u64, Arc<Fib>)>,
}

/// Why a session ended.
#[derive(Debug, thiserror::Error)]
enum SessionEnd {
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error(transparent)]
    Channel(#[from] channel::ChannelError),
    #[error("the controller is not the pinned anchor: {0}")]
    Anchor(channel::ProofError),
    #[error("refused by the controller: {0}")]
    Refused(String),
    #[error("{0}")]
    Local(String),
    #[error("protocol: {0}")]
    Protocol(String),
    #[error("the driver stopped")]
    Stopped,
}

impl SessionEnd {
    /// The counter's reason (none when the daemon stops).
    fn failure(&self) -> Option<SessionFailure> {
        Some(match self {
            Self::Connect(_) => SessionFailure::Connect,
            Self::Channel(channel::ChannelError::Tls(_)) => SessionFailure::Tls,
            Self::Channel(_) => SessionFailure::Channel,
            Self::Anchor(_) => SessionFailure::Anchor,
            Self::Refused(_) => SessionFailure::Refused,
            Self::Local(_) => SessionFailure::Local,
            Self::Protocol(_) => SessionFailure::Protocol,
            Self::Stopped => return None,
        })
    }
}

/// Starts the task.
pub(crate) fn spawn(
    setup: LinkSetup,
    from_driver: mpsc::UnboundedReceiver<ToTask>,
    to_driver: mpsc::UnboundedSender<Update>,
) {
    let applied = setup.applied.clone();
    let task = Task {
        s: setup,
        from_driver,
        to_driver,
        report: None,
        applied,
    };
    tokio::spawn(task.run());
}

impl Task {
    async fn run(mut self) {
        let mut backoff = BACKOFF_MIN;
        loop {
            let started = tokio::time::Instant::now();
            let end = self.session().await;
            if let Some(why) = end.failure() {
                self.s.counters.failed(why);
            }
            match &end {
                SessionEnd::Stopped => return,
                SessionEnd::Anchor(_) => {
                    tracing::error!(controller = %self.s.address, "controller refused: {end}");
                }
                SessionEnd::Refused(_) | SessionEnd::Local(_) => {
                    tracing::error!(controller = %self.s.address, "{end}");
                }
                _ => {
                    tracing::warn!(controller = %self.s.address, "controller session ended: {end}")
                }
            }
            self.s.counters.connected.store(0, Ordering::Relaxed);
            if started.elapsed() > Duration::from_secs(30) {
                backoff = BACKOFF_MIN;
            }
            // Wait, still taking the driver's reports and acknowledgements.
            let wake = tokio::time::sleep(backoff);
            tokio::pin!(wake);
            loop {
                tokio::select! {
                    () = &mut wake => break,
                    m = self.from_driver.recv() => match m {
                        Some(m) => self.take(m),
                        None => return,
                    },
                }
            }
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
    }

    /// A message from the driver while no session is up.
    fn take(&mut self, m: ToTask) {
        match m {
            ToTask::Report(r) => self.report = Some(r),
            ToTask::Applied(v, fib) => self.persist(v, fib),
            ToTask::CsApplied(v, doc) => self.persist_cs(v, &doc),
        }
    }

    fn persist(&mut self, version: u64, fib: Arc<Fib>) {
        if let Err(e) = self.s.state.save_fib(version, &fib) {
            tracing::error!("cannot keep the applied FIB: {e}");
        }
        self.applied = Some((version, fib));
    }

    fn persist_cs(&mut self, version: u64, doc: &CsDocument) {
        if let Err(e) = super::cs::save(&self.s.state, version, doc) {
            tracing::error!("cannot keep the applied cache policy: {e}");
        }
    }

    async fn session(&mut self) -> SessionEnd {
        match self.session_inner().await {
            Ok(()) => SessionEnd::Protocol("closed".into()),
            Err(e) => e,
        }
    }

    async fn session_inner(&mut self) -> Result<(), SessionEnd> {
        let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&self.s.address))
            .await
            .map_err(|_| SessionEnd::Connect("timed out".into()))?
            .map_err(|e| SessionEnd::Connect(e.to_string()))?;
        let _ = stream.set_nodelay(true);
        let handshake = async {
            Ok::<_, channel::ChannelError>(match &self.s.tls {
                None => channel::connect(stream).await?.boxed(),
                Some(tls) => channel::tls::connect(stream, tls).await?.boxed(),
            })
        };
        let session = tokio::time::timeout(CONNECT_TIMEOUT, handshake)
            .await
            .map_err(|_| SessionEnd::Connect("handshake timed out".into()))??;
        let hh = session.handshake_hash.clone();
        let (mut tx, mut rx) = session.split();
        // In TLS 1.3 the controller checks this router's certificate after the client's
        // side of the handshake is done: a refusal shows as the first read failing.
        let first = rx.recv().await.map_err(|e| match (&self.s.tls, e) {
            (Some(_), channel::ChannelError::Io(e)) => channel::ChannelError::Tls(format!(
                "{e} (did the controller refuse controller.tls_cert?)"
            )),
            (_, e) => e,
        })?;
        let anchor = match first {
            Message::ServerHello {
                anchor_cert,
                signature,
            } => channel::check_server(&self.s.pinned, anchor_cert, &signature, &hh)
                .map_err(SessionEnd::Anchor)?,
            other => {
                return Err(SessionEnd::Protocol(format!(
                    "expected ServerHello: {other:?}"
                )))
            }
        };
        tx.send(&Message::Hello(self.hello(&hh)?)).await?;
        match rx.recv().await? {
            Message::Welcome(cert) => {
                if let Some(c) = cert {
                    self.s
                        .state
                        .save_certificate(c)
                        .map_err(|e| SessionEnd::Local(e.to_string()))?;
                    tracing::info!(router = %self.s.router, "enrolled: router certificate kept");
                }
            }
            Message::Refused(why) => {
                self.s.counters.refused.fetch_add(1, Ordering::Relaxed);
                return Err(SessionEnd::Refused(why));
            }
            other => return Err(SessionEnd::Protocol(format!("expected Welcome: {other:?}"))),
        }
        tracing::info!(controller = %self.s.address, router = %self.s.router, "controller connected");
        self.s.counters.connected.store(1, Ordering::Relaxed);
        self.s.counters.sessions.fetch_add(1, Ordering::Relaxed);
        // Reads in their own task: a read cut short by select! would lose a frame.
        let (in_tx, mut in_rx) = mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            loop {
                let m = rx.recv().await;
                let end = m.is_err();
                if in_tx.send(m).is_err() || end {
                    return;
                }
            }
        });
        let result = self.serve(&mut tx, &mut in_rx, &anchor, &hh).await;
        reader.abort();
        result
    }

    fn hello(&self, hh: &[u8]) -> Result<Hello, SessionEnd> {
        let signature = channel::sign(&self.s.key, &router_proof(hh))
            .map_err(|e| SessionEnd::Local(e.to_string()))?;
        let credential = match self
            .s
            .state
            .certificate()
            .map_err(|e| {
                SessionEnd::Local(format!(
                    "the router certificate is unusable ({e}); remove it and enrol again with a new controller.token"
                ))
            })?
        {
            Some(c) => Credential::Certificate(c.wire().clone()),
            None if self.s.token.is_empty() => {
                return Err(SessionEnd::Local(
                    "no router certificate in controller.state_dir and no controller.token to enrol with".into(),
                ))
            }
            None => Credential::Enrol {
                token: self.s.token.clone(),
                key_der: Bytes::from(self.s.key.public_der().unwrap_or_default()),
                link_key: Bytes::copy_from_slice(&self.s.link_key.unwrap_or_default()),
            },
        };
        Ok(Hello {
            router: self.s.router.clone(),
            credential,
            signature,
            applied: self.applied.as_ref().map_or(0, |(v, _)| *v),
        })
    }

    async fn serve(
        &mut self,
        tx: &mut channel::BoxSender,
        in_rx: &mut mpsc::UnboundedReceiver<Result<Message, channel::ChannelError>>,
        anchor: &Certificate,
        hh: &[u8],
    ) -> Result<(), SessionEnd> {
        if let Some(r) = &self.report {
            tx.send(&Message::Report(r.clone())).await?;
        }
        let renew = tokio::time::sleep_until(self.renewal_due());
        tokio::pin!(renew);
        // The FIB of this session: the objects' base (a snapshot starts it).
        let mut session_fib: Option<(u64, Fib)> = None;
        let pinned = Certificate::decode(anchor.wire().clone())
            .map_err(|e| SessionEnd::Local(e.to_string()))?;
        let mut fetcher = Fetcher::start(pinned).map_err(|e| SessionEnd::Local(e.to_string()))?;
        loop {
            tokio::select! {
                m = self.from_driver.recv() => match m {
                    Some(ToTask::Report(r)) => {
                        tx.send(&Message::Report(r.clone())).await?;
                        self.report = Some(r);
                    }
                    Some(ToTask::Applied(v, fib)) => {
                        tx.send(&Message::Ack(v)).await?;
                        self.persist(v, fib);
                    }
                    Some(ToTask::CsApplied(v, doc)) => {
                        tx.send(&Message::CsAck(v)).await?;
                        self.persist_cs(v, &doc);
                    }
                    None => return Err(SessionEnd::Stopped),
                },
                () = &mut renew => {
                    let proof = channel::sign(&self.s.key, &renew_proof(hh))
                        .map_err(|e| SessionEnd::Local(e.to_string()))?;
                    tracing::info!(router = %self.s.router, "asking the controller to renew the router certificate");
                    tx.send(&Message::Renew(proof)).await?;
                    // The answer sets the next deadline; without one, ask again later.
                    renew.as_mut().reset(tokio::time::Instant::now() + RENEW_RETRY);
                }
                f = fetcher.next() => match f {
                    Fetched::Interest(wire) => tx.send(&Message::Ndn(wire)).await?,
                    Fetched::Object(name, got) => match *got {
                        Ok(o) => self.on_object(o, &mut session_fib)?,
                        Err(ObjectFetchError::Fetch(e)) => {
                            // Over one reliable stream: the controller stopped answering.
                            return Err(SessionEnd::Protocol(format!("fetch of {name}: {e}")));
                        }
                        Err(e) => {
                            // Nothing applied; the controller's next object is checked again.
                            self.s.counters.refused_object(ObjectRefusal::Signature);
                            tracing::warn!(%name, "configuration object refused: {e}");
                        }
                    },
                    Fetched::Ended => return Err(SessionEnd::Protocol("the object fetcher ended".into())),
                },
                m = in_rx.recv() => match m {
                    Some(Ok(Message::Renewed(wire))) => {
                        self.renewed(wire, anchor)?;
                        renew.as_mut().reset(self.renewal_due());
                    }
                    Some(Ok(Message::Refused(why))) => {
                        self.s.counters.refused.fetch_add(1, Ordering::Relaxed);
                        return Err(SessionEnd::Refused(why));
                    }
                    Some(Ok(Message::Offer(name))) => fetcher.offer(name),
                    Some(Ok(Message::Ndn(wire))) => {
                        if fetcher.deliver(&wire).await.is_err() {
                            return Err(SessionEnd::Protocol("the object fetcher ended".into()));
                        }
                    }
                    Some(Ok(other)) => return Err(SessionEnd::Protocol(format!("unexpected {other:?}"))),
                    Some(Err(e)) => return Err(e.into()),
                    None => return Err(SessionEnd::Protocol("reader ended".into())),
                },
            }
        }
    }
}

impl Task {
    /// A fetched, verified object: handed to the driver, or refused and counted.
    fn on_object(
        &mut self,
        o: ConfigObject,
        session_fib: &mut Option<(u64, Fib)>,
    ) -> Result<(), SessionEnd> {
        match self.security_object(&o) {
            Some(Some(keys)) => {
                return self.to_driver.send(keys).map_err(|_| SessionEnd::Stopped);
            }
            Some(None) => return Ok(()),
            None => {}
        }
        match accept_decoded(o, &self.s.router, session_fib.as_ref()) {
            Ok(Accepted::Fib(version, fib)) => {
                self.s.counters.objects.fetch_add(1, Ordering::Relaxed);
                let update = Update::Fib {
                    version,
                    fib: Arc::new(fib.clone()),
                };
                *session_fib = Some((version, fib));
                self.to_driver.send(update).map_err(|_| SessionEnd::Stopped)
            }
            Ok(Accepted::Cs(version, doc)) => {
                self.s.counters.objects.fetch_add(1, Ordering::Relaxed);
                self.to_driver
                    .send(Update::Cs { version, doc })
                    .map_err(|_| SessionEnd::Stopped)
            }
            Err(Refused::BadObject(reason, why)) => {
                // Nothing applied; the controller's next object is checked again.
                self.s.counters.refused_object(reason);
                tracing::warn!("configuration object refused: {why}");
                Ok(())
            }
            Err(Refused::Base(why)) => {
                self.s.counters.refused_object(ObjectRefusal::Base);
                Err(SessionEnd::Protocol(why))
            }
        }
    }

    /// A verified `security` or `trust` object for this router, its keys opened (`None`:
    /// not one, left to [`accept_decoded`]; `Some(None)`: refused, counted, nothing changes).
    fn security_object(&self, o: &ConfigObject) -> Option<Option<Update>> {
        if o.router != self.s.router {
            return None;
        }
        if o.kind == ConfigKind::Trust {
            return Some(self.trust_object(o));
        }
        if o.kind != ConfigKind::Security {
            return None;
        }
        let refuse = |why: String| {
            self.s.counters.refused_object(ObjectRefusal::Document);
            self.s
                .counters
                .keys
                .malformed
                .fetch_add(1, Ordering::Relaxed);
            tracing::warn!("security object refused: {why}");
        };
        let ConfigBody::Document(body) = &o.body else {
            refuse("not a document".into());
            return Some(None);
        };
        let grants = match decode_grants(body) {
            Ok(g) => g,
            Err(why) => {
                refuse(why);
                return Some(None);
            }
        };
        let Some(kem) = &self.s.kem else {
            refuse("no [security] identity to open group keys with".into());
            return Some(None);
        };
        self.s.counters.objects.fetch_add(1, Ordering::Relaxed);
        let keys = open_grants(
            kem,
            &self.s.router.to_string(),
            &grants,
            &self.s.counters.keys,
        );
        Some(Some(Update::Keys {
            version: o.version,
            keys,
        }))
    }

    /// A verified `trust` object for this router: the link keys to trust (`None`: refused,
    /// counted).
    fn trust_object(&self, o: &ConfigObject) -> Option<Update> {
        let decoded = match &o.body {
            ConfigBody::Document(body) => decode_trust(body),
            _ => Err("not a document".into()),
        };
        match decoded {
            Ok(keys) => {
                self.s.counters.objects.fetch_add(1, Ordering::Relaxed);
                Some(Update::Trust {
                    version: o.version,
                    keys,
                })
            }
            Err(why) => {
                self.s.counters.refused_object(ObjectRefusal::Document);
                tracing::warn!("trust object refused: {why}");
                None
            }
        }
    }

    /// When to ask for a renewal: at 2/3 of the certificate's lifetime (now when it is past,
    /// or when there is no certificate to read, never).
    fn renewal_due(&self) -> tokio::time::Instant {
        let now = tokio::time::Instant::now();
        let cert = match self.s.state.certificate() {
            Ok(Some(c)) => c,
            Ok(None) => return now + Duration::from_secs(86_400 * 365),
            Err(e) => {
                tracing::error!("the router certificate in controller.state_dir is unusable: {e}");
                return now + Duration::from_secs(86_400 * 365);
            }
        };
        let Some(due_s) = renewal_due_s(&cert) else {
            return now;
        };
        let wait_ms = due_s
            .saturating_mul(1000)
            .saturating_sub(nameway_ctl::now_ms());
        now + Duration::from_millis(wait_ms)
    }

    /// Checks and keeps a renewed certificate: issued by the anchor, valid now, for this
    /// router and its key.
    fn renewed(&mut self, wire: Bytes, anchor: &Certificate) -> Result<(), SessionEnd> {
        let now_s = nameway_ctl::now_ms() / 1000;
        let checked =
            nameway_ctl::ca::verify_router_cert(wire.clone(), anchor, &Default::default(), now_s)
                .map_err(|e| e.to_string())
                .and_then(|c| {
                    let mine = self.s.key.public_der().unwrap_or_default();
                    if c.identity() != &self.s.router || c.key_der() != mine.as_slice() {
                        Err(format!(
                            "{} is not a certificate of this router's key",
                            c.name()
                        ))
                    } else {
                        Ok(c)
                    }
                });
        match checked {
            Ok(cert) => {
                self.s
                    .state
                    .save_certificate(wire)
                    .map_err(|e| SessionEnd::Local(e.to_string()))?;
                self.s.counters.renewed.fetch_add(1, Ordering::Relaxed);
                tracing::info!(
                    router = %self.s.router,
                    not_after = cert.validity().1,
                    "router certificate renewed and kept"
                );
                Ok(())
            }
            Err(why) => {
                self.s
                    .counters
                    .renew_refused
                    .fetch_add(1, Ordering::Relaxed);
                tracing::warn!("renewed certificate refused: {why}");
                Err(SessionEnd::Protocol(format!(
                    "bad renewed certificate: {why}"
                )))
            }
        }
    }
}

/// Why an object was not applied.
#[derive(Debug)]
pub(crate) enum Refused {
    /// Not signed by the anchor, not for this router, a kind not applied, malformed.
    BadObject(ObjectRefusal, String),
    /// A diff from a version this session does not hold (the session restarts, and the
    /// controller starts it with a snapshot).
    Base(String),
}

/// An object verified and decoded.
#[derive(Debug)]
pub(crate) enum Accepted {
    /// The whole FIB (a diff applied to the session's).
    Fib(u64, Fib),
    /// A cache policy.
    Cs(u64, CsDocument),
}

/// Verifies `wire` against `anchor` and returns the FIB it makes from `current`, or the
/// cache policy it carries.
#[cfg(test)]
pub(crate) fn accept_object(
    wire: Bytes,
    anchor: &Certificate,
    router: &Name,
    current: Option<&(u64, Fib)>,
) -> Result<Accepted, Refused> {
    let o = ConfigObject::decode_verified(wire, anchor)
        .map_err(|e| Refused::BadObject(ObjectRefusal::Signature, e.to_string()))?;
    accept_decoded(o, router, current)
}

/// The FIB a verified object makes from `current`, or the cache policy it carries.
pub(crate) fn accept_decoded(
    o: ConfigObject,
    router: &Name,
    current: Option<&(u64, Fib)>,
) -> Result<Accepted, Refused> {
    if &o.router != router {
        return Err(Refused::BadObject(
            ObjectRefusal::OtherRouter,
            format!("object for {}, this router is {router}", o.router),
        ));
    }
    if let (ConfigKind::Cs, ConfigBody::Document(d)) = (o.kind, &o.body) {
        let doc = std::str::from_utf8(d)
            .map_err(|e| e.to_string())
            .and_then(|t| CsDocument::decode(t).map_err(|e| e.to_string()))
            .map_err(|e| Refused::BadObject(ObjectRefusal::Document, e))?;
        return Ok(Accepted::Cs(o.version, doc));
    }
    if o.kind != ConfigKind::Fib {
        return Err(Refused::BadObject(
            ObjectRefusal::Kind,
            format!("{} objects are not applied by this agent", o.kind.as_str()),
        ));
    }
    match o.body {
        ConfigBody::FibSnapshot(fib) => Ok(Accepted::Fib(o.version, fib)),
        ConfigBody::FibDiff(diff) => match (current, o.base) {
            (Some((v, fib)), Some(base)) if *v == base => {
                Ok(Accepted::Fib(o.version, diff.apply(fib)))
            }
            (held, base) => Err(Refused::Base(format!(
                "diff from version {base:?}, this session holds {:?}",
                held.map(|(v, _)| *v)
            ))),
        },
        ConfigBody::Document(_) => Err(Refused::BadObject(ObjectRefusal::Kind, "not a FIB".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nameway_ctl::ca::Authority;
    use nameway_ctl::{FibDiff, NextHop};

    fn authority(dir: &std::path::Path, tag: &str) -> Authority {
        Authority::create(
            &"/example".parse().unwrap(),
            &dir.join(format!("{tag}.key")),
            &dir.join(format!("{tag}.cert")),
        )
        .unwrap()
    }

    fn fib(face: u64) -> Fib {
        let mut f = Fib::new();
        f.insert("/app".parse().unwrap(), vec![NextHop { face, cost: 10 }]);
        f
    }

    fn object(version: u64, base: Option<u64>, body: ConfigBody) -> ConfigObject {
        ConfigObject {
            router: "/example/r1".parse().unwrap(),
            kind: ConfigKind::Fib,
            version,
            base,
            body,
        }
    }

    #[test]
    fn only_objects_signed_by_the_anchor_for_this_router_from_the_held_version_apply() {
        let dir = tempfile::tempdir().unwrap();
        let ca = authority(dir.path(), "real");
        let forger = authority(dir.path(), "forged");
        let me: Name = "/example/r1".parse().unwrap();
        let snap = object(1, None, ConfigBody::FibSnapshot(fib(257)));
        let Ok(Accepted::Fib(v, f)) =
            accept_object(snap.sign(&ca).unwrap(), ca.certificate(), &me, None)
        else {
            panic!("the snapshot is refused")
        };
        assert_eq!((v, &f), (1, &fib(257)));
        // The same object signed by another key of the same domain: refused.
        let forged = snap.sign(&forger).unwrap();
        assert!(matches!(
            accept_object(forged, ca.certificate(), &me, None),
            Err(Refused::BadObject(..))
        ));
        // Another router's object: refused.
        let other: Name = "/example/r2".parse().unwrap();
        assert!(matches!(
            accept_object(snap.sign(&ca).unwrap(), ca.certificate(), &other, None),
            Err(Refused::BadObject(..))
        ));
        // A diff from the held version applies; from another version it is refused.
        let diff = object(
            2,
            Some(1),
            ConfigBody::FibDiff(FibDiff::between(&fib(257), &fib(258))),
        );
        let held = (1, fib(257));
        let Ok(Accepted::Fib(v, f)) =
            accept_object(diff.sign(&ca).unwrap(), ca.certificate(), &me, Some(&held))
        else {
            panic!("the diff is refused")
        };
        assert_eq!((v, f), (2, fib(258)));
        let stale = (0, Fib::new());
        assert!(matches!(
            accept_object(diff.sign(&ca).unwrap(), ca.certificate(), &me, Some(&stale)),
            Err(Refused::Base(_))
        ));
    }

    #[test]
    fn cs_objects_carry_a_policy_and_a_bad_document_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ca = authority(dir.path(), "real");
        let me: Name = "/example/r1".parse().unwrap();
        let cs = |text: &str| ConfigObject {
            router: me.clone(),
            kind: ConfigKind::Cs,
            version: 3,
            base: None,
            body: ConfigBody::Document(Bytes::from(text.to_owned())),
        };
        let good = cs("capacity 10\nprefix no-admit normal /live\n");
        let Ok(Accepted::Cs(3, doc)) =
            accept_object(good.sign(&ca).unwrap(), ca.certificate(), &me, None)
        else {
            panic!("the cs object is refused")
        };
        assert_eq!(doc.capacity, Some(10));
        assert!(!doc.prefixes[0].admit);
        let bad = cs("prefix perhaps normal /live\n");
        assert!(matches!(
            accept_object(bad.sign(&ca).unwrap(), ca.certificate(), &me, None),
            Err(Refused::BadObject(ObjectRefusal::Document, _))
        ));
    }
}
