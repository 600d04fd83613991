//! The domain's certificate authority: the Ed25519 trust anchor, one-time enrolment tokens,
//! short-lived router certificates and the signed deny list.
//!
//! Router certificates are NDN certificates (Data, ContentType KEY, a ValidityPeriod) named
//! `<router>/KEY/<key-id>/ctl/v=<ms>` and signed by the anchor (KeyLocator = the anchor's
//! key name); they decode and verify with `nameway-transport`'s [`Certificate`].

use std::path::{Path, PathBuf};

use bytes::Bytes;
use nameway_transport::cert::iso8601;
use nameway_transport::{Certificate, SignatureKind, SigningKey, VerifyKey};
use nameway_wire::data::content_type;
use nameway_wire::name::Component;
use nameway_wire::security::verify_data_wire;
use nameway_wire::signature::ValidityPeriod;
use nameway_wire::{Data, DataView, MetaInfo, Name};
use sha2::{Digest as _, Sha256};

#[cfg(feature = "server")]
use crate::ca_store::{CaStore, TokenUse};
use crate::error::StoreError;
#[cfg(feature = "server")]
use crate::store::NodeRecord;

/// How long a router certificate is valid: 7 days (renewed at 2/3 of that).
pub const ROUTER_CERT_DAYS: u64 = 7;

/// How long the anchor's self-signed certificate is valid.
pub const ANCHOR_CERT_DAYS: u32 = 3650;

/// Why a CA operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A key or certificate file cannot be read, written or parsed.
    #[error("{0}")]
    KeyFile(String),
    /// Building or decoding a certificate failed.
    #[error(transparent)]
    Cert(#[from] nameway_transport::CertError),
    /// The database was initialised for another domain, or not initialised.
    #[error("the database is for domain {found:?}, not {expected}")]
    WrongDomain {
        /// The domain asked for.
        expected: String,
        /// The domain stored (`None`: never initialised).
        found: Option<String>,
    },
    /// A router name outside the domain.
    #[error("router {router} is not under the domain {domain}")]
    OutsideDomain {
        /// The router.
        router: String,
        /// The domain.
        domain: String,
    },
    /// The enrolment token is not one this CA issued.
    #[error("unknown enrolment token")]
    UnknownToken,
    /// The token was already used.
    #[error("enrolment token already used")]
    TokenUsed,
    /// The token's lifetime is over.
    #[error("enrolment token expired")]
    TokenExpired,
    /// The token was issued for another router.
    #[error("enrolment token is for router {issued_for}, not {presented}")]
    WrongRouter {
        /// Whom it was issued for.
        issued_for: String,
        /// Who presented it.
        presented: String,
    },
    /// The router's public key is not an Ed25519 SubjectPublicKeyInfo.
    #[error("the router's public key is not an Ed25519 SubjectPublicKeyInfo")]
    BadRouterKey,
    /// The router (or its certificate) is on the deny list.
    #[error("{0} is on the deny list")]
    Denied(String),
    /// A certificate is outside its ValidityPeriod.
    #[error("certificate {name} is not valid at {now} ({not_before} .. {not_after})")]
    NotValidNow {
        /// The certificate.
        name: String,
        /// NotBefore.
        not_before: String,
        /// NotAfter.
        not_after: String,
        /// The time checked.
        now: String,
    },
    /// A signed object (deny list) does not verify or decode.
    #[error("signed object refused: {0}")]
    BadObject(String),
    /// The system RNG failed.
    #[error("random number generator failed")]
    Rng,
}

/// The anchor: the domain's Ed25519 key and self-signed certificate.
pub struct Authority {
    domain: Name,
    key: SigningKey,
    cert: Certificate,
    router_cert_lifetime_s: u64,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authority")
            .field("domain", &self.domain)
            .field("cert", &self.cert.name())
            .finish_non_exhaustive()
    }
}

/// The anchor key's path beside the database: `<db>.anchor.key` (its public key in
/// `.pub`, its certificate in `<db>.anchor.cert`).
pub fn anchor_key_path(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push(".anchor.key");
    PathBuf::from(p)
}

/// The anchor certificate's path beside the database.
pub fn anchor_cert_path(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push(".anchor.cert");
    PathBuf::from(p)
}

impl Authority {
    /// Makes a new anchor for `domain`: the key written to `key_path` (mode 0600) and its
    /// self-signed certificate to `cert_path`. Refuses to overwrite an existing key.
    ///
    /// # Errors
    /// The key exists, or a file cannot be written.
    pub fn create(domain: &Name, key_path: &Path, cert_path: &Path) -> Result<Self, CaError> {
        if key_path.exists() {
            return Err(CaError::KeyFile(format!(
                "{} exists: refusing to replace the domain's anchor key",
                key_path.display()
            )));
        }
        let key = SigningKey::generate(SignatureKind::Ed25519)
            .map_err(|e| CaError::KeyFile(e.to_string()))?;
        key.save(key_path)
            .map_err(|e| CaError::KeyFile(format!("{e}: {}", source_of(&e))))?;
        let cert = Certificate::issue(&key, domain, None, ANCHOR_CERT_DAYS)?;
        cert.save(cert_path)?;
        Ok(Self::with(domain.clone(), key, cert))
    }

    /// Loads the anchor written by [`Authority::create`].
    ///
    /// # Errors
    /// A file is missing or does not parse, or the key is not the certificate's.
    pub fn load(key_path: &Path, cert_path: &Path) -> Result<Self, CaError> {
        let key = SigningKey::load(SignatureKind::Ed25519, key_path)
            .map_err(|e| CaError::KeyFile(format!("{e}: {}", source_of(&e))))?;
        let cert = Certificate::load(cert_path)?;
        if key.public_der().as_deref() != Some(cert.key_der()) {
            return Err(CaError::KeyFile(format!(
                "{} is not the key of {}",
                key_path.display(),
                cert_path.display()
            )));
        }
        Ok(Self::with(cert.identity().clone(), key, cert))
    }

    fn with(domain: Name, key: SigningKey, cert: Certificate) -> Self {
        let key = key.with_name_locator(cert.key_name());
        Self {
            domain,
            key,
            cert,
            router_cert_lifetime_s: ROUTER_CERT_DAYS * 86_400,
        }
    }

    /// Sets how long the router certificates it issues are valid, in seconds (at least 3:
    /// the ValidityPeriod counts whole seconds). The default is [`ROUTER_CERT_DAYS`].
    pub fn set_router_cert_lifetime(&mut self, secs: u64) {
        self.router_cert_lifetime_s = secs.max(3);
    }

    /// How long the router certificates it issues are valid, in seconds.
    pub fn router_cert_lifetime(&self) -> u64 {
        self.router_cert_lifetime_s
    }

    /// The domain.
    pub fn domain(&self) -> &Name {
        &self.domain
    }

    /// The anchor's certificate (what every router pins).
    pub fn certificate(&self) -> &Certificate {
        &self.cert
    }

    /// The anchor's signing key (KeyLocator = the anchor's key name).
    pub fn signing_key(&self) -> &SigningKey {
        &self.key
    }

    /// Issues a certificate for `router`'s Ed25519 key (SubjectPublicKeyInfo DER), valid
    /// from `now_s` for [`Authority::router_cert_lifetime`] ([`ROUTER_CERT_DAYS`] unless set).
    ///
    /// # Errors
    /// [`CaError::OutsideDomain`], [`CaError::BadRouterKey`], a signing failure.
    pub fn issue_router_cert(
        &self,
        router: &Name,
        key_der: &[u8],
        now_s: u64,
    ) -> Result<Certificate, CaError> {
        if !self.domain.is_prefix_of(router) || router.len() == self.domain.len() {
            return Err(CaError::OutsideDomain {
                router: router.to_string(),
                domain: self.domain.to_string(),
            });
        }
        match VerifyKey::from_public_der(key_der) {
            Some(k) if k.kind() == SignatureKind::Ed25519 => {}
            _ => return Err(CaError::BadRouterKey),
        }
        let key_id: [u8; 32] = Sha256::digest(key_der).into();
        let mut name = router.clone();
        for c in [
            Component::generic(Bytes::from_static(b"KEY")),
            Component::generic(Bytes::copy_from_slice(&key_id[..8])),
            Component::generic(Bytes::from_static(b"ctl")),
            Component::version(now_s.saturating_mul(1000)),
        ] {
            name = name
                .append(&c)
                .map_err(|e| CaError::BadObject(format!("name too long: {e}")))?;
        }
        let mut data = Data::new(name, Bytes::copy_from_slice(key_der));
        data.meta_info = Some(MetaInfo {
            content_type: Some(content_type::KEY),
            freshness_period: Some(3_600_000),
            ..MetaInfo::default()
        });
        data.signature_info.validity_period = Some(ValidityPeriod {
            not_before: Bytes::from(iso8601(now_s)),
            not_after: Bytes::from(iso8601(now_s.saturating_add(self.router_cert_lifetime_s))),
        });
        data.sign(self.key.signer())
            .map_err(|e| CaError::BadObject(e.to_string()))?;
        Ok(Certificate::decode(data.encode())?)
    }

    /// Signs the deny list `names` as Data `<domain>/32=ctl/deny/v=<version>` whose Content
    /// is the Name elements, one after another.
    ///
    /// # Errors
    /// A name too long, a signing failure.
    pub fn sign_deny_list(&self, names: &[Name], version: u64) -> Result<Bytes, CaError> {
        let mut content = Vec::new();
        for n in names {
            n.encode(&mut content);
        }
        let name = ctl_name(&self.domain, &[b"deny"], version)?;
        let mut data = Data::new(name, Bytes::from(content));
        data.sign(self.key.signer())
            .map_err(|e| CaError::BadObject(e.to_string()))?;
        Ok(data.encode())
    }
}

fn source_of(e: &dyn std::error::Error) -> String {
    e.source().map(ToString::to_string).unwrap_or_default()
}

/// `<domain>/32=ctl/<parts...>/v=<version>`.
pub(crate) fn ctl_name(domain: &Name, parts: &[&[u8]], version: u64) -> Result<Name, CaError> {
    let too_long = |e: nameway_wire::ParseError| CaError::BadObject(format!("name too long: {e}"));
    let mut name = domain.append(&keyword_ctl()).map_err(too_long)?;
    for p in parts {
        name = name
            .append(&Component::generic(Bytes::copy_from_slice(p)))
            .map_err(too_long)?;
    }
    name.append(&Component::version(version)).map_err(too_long)
}

/// The keyword component `32=ctl`.
fn keyword_ctl() -> Component {
    Component::from_uri("32=ctl").unwrap_or_else(|_| Component::generic(Bytes::from_static(b"ctl")))
}

/// A verified deny list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DenyList {
    /// Its version.
    pub version: u64,
    /// Router identities or certificate names refused.
    pub names: Vec<Name>,
}

impl DenyList {
    /// Verifies a signed deny list against the anchor and decodes it.
    ///
    /// # Errors
    /// [`CaError::BadObject`]: not Data, not signed by `anchor`, not a deny list name, a
    /// malformed Content.
    pub fn decode_verified(wire: Bytes, anchor: &Certificate) -> Result<Self, CaError> {
        let bad = |m: String| CaError::BadObject(m);
        let view = DataView::new_checked(wire).map_err(|e| bad(format!("deny list: {e}")))?;
        verify_data_wire(&view, anchor.key().verifier())
            .map_err(|e| bad(format!("deny list signature: {e}")))?;
        let name = view.name().clone();
        let d = anchor.identity().len();
        let kw = name.get(d).map(|c| c.to_owned());
        let part = name.get(d + 1).map(|c| c.to_owned());
        let version = name.last().and_then(|c| c.as_version());
        let (Some(kw), Some(part), Some(version)) = (kw, part, version) else {
            return Err(bad(format!("{name} is not a deny list")));
        };
        if !anchor.identity().is_prefix_of(&name)
            || kw != keyword_ctl()
            || part != Component::generic(Bytes::from_static(b"deny"))
        {
            return Err(bad(format!("{name} is not a deny list")));
        }
        let content = view.content();
        let mut names = Vec::new();
        let mut r = nameway_wire::tlv::Reader::new(&content);
        while let Some(e) = r
            .read()
            .map_err(|e| bad(format!("deny list content: {e}")))?
        {
            let n = Name::decode(&content.slice(e.range()))
                .map_err(|e| bad(format!("deny list entry: {e}")))?;
            names.push(n);
        }
        Ok(Self { version, names })
    }

    /// Whether `name` or a prefix of it is denied.
    pub fn denies(&self, name: &Name) -> bool {
        self.names.iter().any(|n| n.is_prefix_of(name))
    }
}

/// Checks a router certificate: issued by the anchor, in its ValidityPeriod at `now_s`, its
/// router under the domain and not denied. Returns the decoded certificate.
///
/// # Errors
/// [`CaError::Cert`] (not a certificate, bad signature, out of scope),
/// [`CaError::NotValidNow`], [`CaError::Denied`].
pub fn verify_router_cert(
    wire: Bytes,
    anchor: &Certificate,
    deny: &DenyList,
    now_s: u64,
) -> Result<Certificate, CaError> {
    let cert = Certificate::decode(wire)?;
    cert.check_issued_by(anchor)?;
    let (nb, na) = cert.validity();
    let now = iso8601(now_s);
    if !(nb <= now.as_str() && now.as_str() <= na) {
        return Err(CaError::NotValidNow {
            name: cert.name().to_string(),
            not_before: nb.to_owned(),
            not_after: na.to_owned(),
            now,
        });
    }
    if deny.denies(cert.name()) {
        return Err(CaError::Denied(cert.name().to_string()));
    }
    Ok(cert)
}

#[cfg(feature = "server")]
/// Creates a one-time enrolment token for `router`, valid `ttl_ms`; only its SHA-256 is
/// stored. Returns the token to hand to the router's operator.
///
/// # Errors
/// The RNG or the database failed.
pub fn create_token<S: CaStore + ?Sized>(
    store: &mut S,
    router: &Name,
    ttl_ms: u64,
    now_ms: u64,
) -> Result<String, CaError> {
    let mut raw = [0u8; 32];
    getrandom::fill(&mut raw).map_err(|_| CaError::Rng)?;
    let token = data_encoding::BASE32_NOPAD
        .encode(&raw)
        .to_ascii_lowercase();
    let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    let r = router.to_string();
    store.put_token(&hash, &r, now_ms.saturating_add(ttl_ms))?;
    store.audit(now_ms, "operator", "token", &r)?;
    Ok(token)
}

#[cfg(feature = "server")]
/// Consumes `token` for `router` (single use: a second redemption fails, also at another
/// controller on the same database).
///
/// # Errors
/// [`CaError::UnknownToken`], [`CaError::TokenUsed`], [`CaError::TokenExpired`],
/// [`CaError::WrongRouter`], a database failure.
pub fn redeem_token<S: CaStore + ?Sized>(
    store: &mut S,
    token: &str,
    router: &Name,
    now_ms: u64,
) -> Result<(), CaError> {
    let hash: [u8; 32] = Sha256::digest(token.trim().to_ascii_lowercase().as_bytes()).into();
    let presented = router.to_string();
    let verdict = match store.consume_token(&hash, &presented, now_ms)? {
        TokenUse::Consumed => Ok(()),
        TokenUse::Unknown => Err(CaError::UnknownToken),
        TokenUse::Used => Err(CaError::TokenUsed),
        TokenUse::Expired => Err(CaError::TokenExpired),
        TokenUse::WrongRouter(issued_for) => Err(CaError::WrongRouter {
            issued_for,
            presented: presented.clone(),
        }),
    };
    store.audit(
        now_ms,
        &presented,
        "redeem",
        match &verdict {
            Ok(()) => "ok",
            Err(_) => "refused",
        },
    )?;
    verdict
}

#[cfg(feature = "server")]
/// Adds `name` to the deny list table.
///
/// # Errors
/// A database failure.
pub fn deny<S: CaStore + ?Sized>(
    store: &mut S,
    name: &Name,
    reason: &str,
    now_ms: u64,
) -> Result<(), CaError> {
    let n = name.to_string();
    store.put_deny(&n, now_ms, reason)?;
    store.audit(now_ms, "operator", "deny", &n)?;
    Ok(())
}

#[cfg(feature = "server")]
/// The names on the deny list table.
///
/// # Errors
/// A database failure, or a stored name that does not parse.
pub fn denied<S: CaStore + ?Sized>(store: &mut S) -> Result<Vec<Name>, CaError> {
    store
        .deny_names()?
        .iter()
        .map(|n| {
            n.parse().map_err(|_| {
                CaError::Store(StoreError::Corrupt {
                    path: "deny".to_owned(),
                    detail: format!("deny list entry {n:?} is not a name"),
                })
            })
        })
        .collect()
}

#[cfg(feature = "server")]
/// Enrols a router: redeems its token, refuses a denied router, issues its certificate and
/// records it in `nodes`.
///
/// # Errors
/// As [`redeem_token`] and [`Authority::issue_router_cert`]; [`CaError::Denied`].
pub fn enrol<S: CaStore + ?Sized>(
    store: &mut S,
    ca: &Authority,
    token: &str,
    router: &Name,
    key_der: &[u8],
    kem_pubkey: Option<&[u8]>,
    now_ms: u64,
) -> Result<Certificate, CaError> {
    let deny_list = DenyList {
        version: 0,
        names: denied(store)?,
    };
    if deny_list.denies(router) {
        return Err(CaError::Denied(router.to_string()));
    }
    if VerifyKey::from_public_der(key_der).map(|k| k.kind()) != Some(SignatureKind::Ed25519) {
        return Err(CaError::BadRouterKey);
    }
    redeem_token(store, token, router, now_ms)?;
    let cert = ca.issue_router_cert(router, key_der, now_ms / 1000)?;
    store.put_node(&NodeRecord {
        name: router.to_string(),
        pubkey: key_der.to_vec(),
        kem_pubkey: kem_pubkey.map(<[u8]>::to_vec),
        cert: Some(cert.wire().to_vec()),
        enrolled_ms: now_ms,
        last_seen_ms: now_ms,
    })?;
    store.audit(
        now_ms,
        &router.to_string(),
        "enrol",
        &cert.name().to_string(),
    )?;
    Ok(cert)
}

#[cfg(feature = "server")]
/// Checks that `store` was initialised for `domain`.
///
/// # Errors
/// [`CaError::WrongDomain`].
pub fn check_domain<S: CaStore + ?Sized>(store: &mut S, domain: &Name) -> Result<(), CaError> {
    let found = store.meta_value("domain")?;
    if found.as_deref() == Some(domain.to_string().as_str()) {
        Ok(())
    } else {
        Err(CaError::WrongDomain {
            expected: domain.to_string(),
            found,
        })
    }
}
