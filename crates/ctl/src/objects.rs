//! Configuration objects: per router and kind (`fib`, `security`, `cs`, `trust`), a
//! versioned snapshot or a diff from a base version, signed by the anchor.
//!
//! An object is an NDN Data packet named `<domain>/32=ctl/<router suffix>/<kind>/v=<n>`
//! (`<router suffix>`: the router's name after the domain), signed with the anchor's
//! Ed25519 key. Its Content is TLV:
//!
//! ```text
//! Content      = [BaseVersion] *Entry
//! BaseVersion  = 0xC9 NonNegativeInteger      ; present: a diff from that version
//! Entry        = FibEntry / FibRemoval / Body
//! FibEntry     = 0x80 (Name *NextHopRecord)    ; NFD's FibEntry
//! NextHopRecord= 0x81 (FaceId Cost)            ; FaceId 0x69, Cost 0x6A (NFD)
//! FibRemoval   = 0xC8 Name                     ; diffs only
//! Body         = 0xCA *OCTET                   ; security, cs, trust: the whole document
//! ```

use bytes::Bytes;
use nameway_transport::Certificate;
use nameway_wire::name::Component;
use nameway_wire::security::verify_data_wire;
use nameway_wire::tlv::{put_nni_tlv, put_tlv, Reader};
use nameway_wire::{Data, DataView, Name};

use crate::ca::{ctl_name, Authority, CaError};
use crate::routes::{Fib, FibDiff, NextHop};

mod fetch;
mod offers;
#[cfg(test)]
mod transfer_tests;

pub use fetch::{fetch_object, fetch_options, ObjectFetchError, MAX_OBJECT};
pub use offers::{Offers, MANIFEST_POINTERS, RECENT_OFFERS, SEGMENT_CONTENT};

const FIB_ENTRY: u32 = 0x80;
const NEXT_HOP_RECORD: u32 = 0x81;
const FACE_ID: u32 = 0x69;
const COST: u32 = 0x6A;
const FIB_REMOVAL: u32 = 0xC8;
const BASE_VERSION: u32 = 0xC9;
const BODY: u32 = 0xCA;
const NAME: u32 = 0x07;

/// What an object configures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConfigKind {
    /// The FIB.
    Fib,
    /// Secure forwarding policy.
    Security,
    /// Content store policy.
    Cs,
    /// Trust anchors and deny list.
    Trust,
}

impl ConfigKind {
    /// The name component.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Fib => "fib",
            Self::Security => "security",
            Self::Cs => "cs",
            Self::Trust => "trust",
        }
    }

    fn parse(s: &[u8]) -> Option<Self> {
        Some(match s {
            b"fib" => Self::Fib,
            b"security" => Self::Security,
            b"cs" => Self::Cs,
            b"trust" => Self::Trust,
            _ => return None,
        })
    }
}

/// An object's payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigBody {
    /// A whole FIB.
    FibSnapshot(Fib),
    /// A FIB diff from the object's base version.
    FibDiff(FibDiff),
    /// A whole document of another kind.
    Document(Bytes),
}

/// A configuration object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigObject {
    /// The router it configures.
    pub router: Name,
    /// What it configures.
    pub kind: ConfigKind,
    /// Its version.
    pub version: u64,
    /// For a diff, the version it applies to.
    pub base: Option<u64>,
    /// The payload.
    pub body: ConfigBody,
}

impl ConfigObject {
    /// Encodes and signs the object with the anchor.
    ///
    /// # Errors
    /// The router is outside the domain; a name too long; a signing failure.
    pub fn sign(&self, ca: &Authority) -> Result<Bytes, CaError> {
        let name = self.name(ca)?;
        let mut data = Data::new(name, self.encode_content());
        data.sign(ca.signing_key().signer())
            .map_err(|e| CaError::BadObject(e.to_string()))?;
        Ok(data.encode())
    }

    fn name(&self, ca: &Authority) -> Result<Name, CaError> {
        let domain = ca.domain();
        if !domain.is_prefix_of(&self.router) {
            return Err(CaError::OutsideDomain {
                router: self.router.to_string(),
                domain: domain.to_string(),
            });
        }
        let mut parts: Vec<Vec<u8>> = self
            .router
            .iter()
            .skip(domain.len())
            .map(|c| c.value().to_vec())
            .collect();
        parts.push(self.kind.as_str().as_bytes().to_vec());
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        ctl_name(domain, &refs, self.version)
    }

    fn encode_content(&self) -> Bytes {
        let mut c = Vec::new();
        if let Some(b) = self.base {
            put_nni_tlv(&mut c, BASE_VERSION, b);
        }
        match &self.body {
            ConfigBody::FibSnapshot(fib) => {
                for (p, hops) in fib {
                    put_fib_entry(&mut c, p, hops);
                }
            }
            ConfigBody::FibDiff(d) => {
                for (p, hops) in &d.upserts {
                    put_fib_entry(&mut c, p, hops);
                }
                for p in &d.removals {
                    put_tlv(&mut c, FIB_REMOVAL, &p.to_wire());
                }
            }
            ConfigBody::Document(b) => put_tlv(&mut c, BODY, b),
        }
        Bytes::from(c)
    }

    /// Verifies `wire`, one object as one Data ([`ConfigObject::sign`]), against the anchor
    /// certificate and decodes it. (On the controller channel objects are fetched instead:
    /// [`ConfigObject::publish`], [`fetch_object`].)
    ///
    /// # Errors
    /// [`CaError::BadObject`]: a bad signature (another key, tampered), a name that is not
    /// a configuration object of this domain, malformed Content.
    pub fn decode_verified(wire: Bytes, anchor: &Certificate) -> Result<Self, CaError> {
        let bad = |m: String| CaError::BadObject(m);
        let view = DataView::new_checked(wire).map_err(|e| bad(format!("object: {e}")))?;
        verify_data_wire(&view, anchor.key().verifier())
            .map_err(|e| bad(format!("object signature: {e}")))?;
        Self::decode_parts(view.name().clone(), view.content(), anchor)
    }

    /// The object named `name` with `content` (its signature, or its segments' signatures,
    /// already verified).
    fn decode_parts(name: Name, content: Bytes, anchor: &Certificate) -> Result<Self, CaError> {
        let bad = |m: String| CaError::BadObject(m);
        let domain = anchor.identity();
        let d = domain.len();
        let ok_prefix = domain.is_prefix_of(&name)
            && name.get(d).map(|c| c.to_owned()) == Component::from_uri("32=ctl").ok()
            && name.len() >= d + 4;
        let version = name.last().and_then(|c| c.as_version());
        let kind = name
            .get(name.len().saturating_sub(2))
            .and_then(|c| ConfigKind::parse(c.value()));
        let (true, Some(version), Some(kind)) = (ok_prefix, version, kind) else {
            return Err(bad(format!(
                "{name} is not a configuration object of {domain}"
            )));
        };
        let mut router = domain.clone();
        for c in name.iter().skip(d + 1).take(name.len() - d - 3) {
            router = router
                .append(&c.to_owned())
                .map_err(|e| bad(e.to_string()))?;
        }
        let (base, body) = decode_content(&content, kind).map_err(bad)?;
        Ok(Self {
            router,
            kind,
            version,
            base,
            body,
        })
    }
}

fn put_fib_entry(c: &mut Vec<u8>, prefix: &Name, hops: &[NextHop]) {
    let mut v = prefix.to_wire().to_vec();
    for h in hops {
        let mut r = Vec::new();
        put_nni_tlv(&mut r, FACE_ID, h.face);
        put_nni_tlv(&mut r, COST, h.cost);
        put_tlv(&mut v, NEXT_HOP_RECORD, &r);
    }
    put_tlv(c, FIB_ENTRY, &v);
}

fn decode_content(content: &Bytes, kind: ConfigKind) -> Result<(Option<u64>, ConfigBody), String> {
    let mut r = Reader::new(content);
    let mut base = None;
    let mut fib = Fib::new();
    let mut removals = Vec::new();
    let mut doc = None;
    while let Some(e) = r.read().map_err(|e| e.to_string())? {
        match e.typ {
            BASE_VERSION if base.is_none() && fib.is_empty() => {
                base = Some(e.nni().map_err(|e| e.to_string())?);
            }
            FIB_ENTRY if kind == ConfigKind::Fib => {
                let (p, hops) = decode_fib_entry(&content.slice(e.value_range()))?;
                fib.insert(p, hops);
            }
            FIB_REMOVAL if kind == ConfigKind::Fib && base.is_some() => {
                removals.push(
                    Name::decode(&content.slice(e.value_range())).map_err(|e| e.to_string())?,
                );
            }
            BODY if kind != ConfigKind::Fib && doc.is_none() => {
                doc = Some(content.slice(e.value_range()));
            }
            t => {
                return Err(format!(
                    "unexpected element {t:#x} in a {} object",
                    kind.as_str()
                ))
            }
        }
    }
    let body = match (kind, base, doc) {
        (ConfigKind::Fib, Some(_), _) => ConfigBody::FibDiff(FibDiff {
            upserts: fib.into_iter().collect(),
            removals,
        }),
        (ConfigKind::Fib, None, _) => ConfigBody::FibSnapshot(fib),
        (_, _, Some(d)) => ConfigBody::Document(d),
        (k, _, None) => return Err(format!("{} object without a body", k.as_str())),
    };
    Ok((base, body))
}

fn decode_fib_entry(v: &Bytes) -> Result<(Name, Vec<NextHop>), String> {
    let mut r = Reader::new(v);
    let name = r.expect(NAME).map_err(|e| e.to_string())?;
    let prefix = Name::decode(&v.slice(name.range())).map_err(|e| e.to_string())?;
    let mut hops = Vec::new();
    while let Some(e) = r.read().map_err(|e| e.to_string())? {
        if e.typ != NEXT_HOP_RECORD {
            return Err(format!("unexpected element {:#x} in a FibEntry", e.typ));
        }
        let mut h = e.children();
        let face = h
            .expect(FACE_ID)
            .and_then(|x| x.nni())
            .map_err(|e| e.to_string())?;
        let cost = h
            .expect(COST)
            .and_then(|x| x.nni())
            .map_err(|e| e.to_string())?;
        hops.push(NextHop { face, cost });
    }
    Ok((prefix, hops))
}

/// The FIB versions of one router: what was published and what the router acknowledged.
#[derive(Clone, Debug, Default)]
pub struct FibVersions {
    current: u64,
    acked: u64,
    history: std::collections::BTreeMap<u64, Fib>,
}

impl FibVersions {
    /// No version yet (version 0 is the empty FIB, acknowledged).
    pub fn new() -> Self {
        let mut history = std::collections::BTreeMap::new();
        history.insert(0, Fib::new());
        Self {
            current: 0,
            acked: 0,
            history,
        }
    }

    /// Publishes `fib` as the next version if it differs from the current one.
    pub fn publish(&mut self, fib: Fib) -> Option<u64> {
        if self.history.get(&self.current) == Some(&fib) {
            return None;
        }
        self.current += 1;
        self.history.insert(self.current, fib);
        Some(self.current)
    }

    /// The current version.
    pub fn current(&self) -> u64 {
        self.current
    }

    /// The last version the router acknowledged.
    pub fn acked(&self) -> u64 {
        self.acked
    }

    /// The router applied `version`: older versions are forgotten. Ignored when unknown or
    /// older than the last acknowledgement.
    pub fn ack(&mut self, version: u64) {
        if version > self.acked && self.history.contains_key(&version) {
            self.acked = version;
            self.history = self.history.split_off(&version);
        }
    }

    /// The current version as a snapshot object.
    pub fn snapshot(&self, router: &Name) -> ConfigObject {
        ConfigObject {
            router: router.clone(),
            kind: ConfigKind::Fib,
            version: self.current,
            base: None,
            body: ConfigBody::FibSnapshot(
                self.history.get(&self.current).cloned().unwrap_or_default(),
            ),
        }
    }

    /// The current version as a diff from the acknowledged one.
    pub fn diff(&self, router: &Name) -> ConfigObject {
        let empty = Fib::new();
        let old = self.history.get(&self.acked).unwrap_or(&empty);
        let new = self.history.get(&self.current).unwrap_or(&empty);
        ConfigObject {
            router: router.clone(),
            kind: ConfigKind::Fib,
            version: self.current,
            base: Some(self.acked),
            body: ConfigBody::FibDiff(FibDiff::between(old, new)),
        }
    }
}
