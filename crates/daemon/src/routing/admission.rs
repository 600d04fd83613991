//! What management checks for self-certifying names (routing on): `rib/announce` of a name
//! under `/32=sc/<h>` must be signed by the key hashing to `h` (carried in NwPublicKey), and
//! `rib/register` of one must be a signed command whose key hashes to `h` (the key in
//! NwPublicKey inside the command's ApplicationParameters). Refusals are counted by reason.
//! Accepted announcements delegated to this router are queued for [`super::Routing`], which
//! registers them with the RIB services.

use std::collections::BTreeMap;

use bytes::Bytes;
use nameway_routing::key::PublicKey;
use nameway_routing::{verify_owner, Announcement, KeyHash, RejectReason, Rejected};
use nameway_wire::security::verify_interest_wire;
use nameway_wire::tlv;
use nameway_wire::{InterestView, Name};

/// An announcement accepted for this router: to register and renew.
#[derive(Clone, Debug)]
pub struct Accepted {
    /// The name's hash.
    pub h: KeyHash,
    /// The announcement Data.
    pub announcement: Bytes,
    /// When it expires (ms since the Unix epoch).
    pub expires_at_ms: u64,
}

/// See the module documentation.
#[derive(Debug)]
pub struct Admission {
    /// This router's name's hash.
    pub me: KeyHash,
    grace_ms: u64,
    /// Refusals by reason.
    pub rejected: BTreeMap<&'static str, u64>,
    /// `rib/announce` commands accepted, by kind.
    pub accepted_counts: BTreeMap<&'static str, u64>,
    /// Signatures checked.
    pub signatures: u64,
    /// Accepted announcements delegated here, not yet taken by the routing.
    pub queue: Vec<Accepted>,
}

/// NwPublicKey (0x8e02), as in announcements.
const NW_PUBLIC_KEY: u32 = 0x8e02;

impl Admission {
    /// For the router `me`, with `grace_ms` of clock grace.
    pub fn new(me: KeyHash, grace_ms: u64) -> Self {
        Self {
            me,
            grace_ms,
            rejected: RejectReason::ALL.iter().map(|r| (r.as_str(), 0)).collect(),
            accepted_counts: [("self_certifying", 0), ("plain", 0)].into_iter().collect(),
            signatures: 0,
            queue: Vec::new(),
        }
    }

    fn refuse(&mut self, r: Rejected) -> Rejected {
        *self.rejected.entry(r.reason.as_str()).or_default() += 1;
        r
    }

    /// Checks an announcement given to `rib/announce`. A prefix outside `/32=sc` is accepted
    /// as NFD accepts it by default (any signature); one under `/32=sc/<h>` must verify
    /// ([`verify_owner`]). An accepted self-certifying name delegated to this router is
    /// queued for registration.
    ///
    /// # Errors
    /// [`Rejected`] (counted) for a self-certifying name that does not verify.
    pub fn check_announcement(&mut self, now_ms: u64, pa: &Announcement) -> Result<(), Rejected> {
        if KeyHash::from_name(pa.prefix()).is_none() {
            *self.accepted_counts.entry("plain").or_default() += 1;
            return Ok(());
        }
        self.signatures += 1;
        let h = verify_owner(now_ms, self.grace_ms, pa).map_err(|r| self.refuse(r))?;
        *self.accepted_counts.entry("self_certifying").or_default() += 1;
        let delegated_here = pa
            .delegate()
            .and_then(KeyHash::from_name)
            .is_some_and(|d| d == self.me);
        if delegated_here && pa.prefix().len() == 2 {
            self.queue.push(Accepted {
                h,
                announcement: pa.wire().clone(),
                expires_at_ms: pa.expires_at_ms(),
            });
        }
        Ok(())
    }

    /// Checks `rib/register` of `name`: a name under `/32=sc/<h>` needs a signed command
    /// (`wire`, a v0.3 signed Interest) whose ApplicationParameters carry NwPublicKey hashing
    /// to `h` and whose signature verifies with it. Other names pass.
    ///
    /// # Errors
    /// [`Rejected`] (counted) otherwise.
    pub fn check_register(&mut self, name: &Name, wire: &Bytes) -> Result<(), Rejected> {
        let Some(h) = KeyHash::from_name(name) else {
            return Ok(());
        };
        let r = self.owner_signed(h, wire);
        r.map_err(|e| self.refuse(e))
    }

    fn owner_signed(&mut self, h: KeyHash, wire: &Bytes) -> Result<(), Rejected> {
        let unsigned = || {
            Rejected::new(
                RejectReason::BadSig,
                "registering a self-certifying name needs a command signed by its key, with NwPublicKey in ApplicationParameters",
            )
        };
        let view = InterestView::new_checked(wire.clone()).map_err(|_| unsigned())?;
        let interest = nameway_wire::Interest::decode(wire).map_err(|_| unsigned())?;
        let info = interest.signature_info.as_ref().ok_or_else(unsigned)?;
        let params = interest.app_parameters.as_ref().ok_or_else(unsigned)?;
        let spki = find_public_key(params).ok_or_else(unsigned)?;
        if KeyHash::of_spki(&spki) != h {
            return Err(Rejected::new(
                RejectReason::NameKeyMismatch,
                "the command's key does not hash to the name",
            ));
        }
        self.signatures += 1;
        let key = PublicKey::for_signature(info.signature_type, &spki)
            .map_err(|e| Rejected::new(RejectReason::BadSig, e.to_string()))?;
        verify_interest_wire(&view, &key)
            .map_err(|e| Rejected::new(RejectReason::BadSig, e.to_string()))
    }
}

/// NwPublicKey in a command's ApplicationParameters.
fn find_public_key(params: &Bytes) -> Option<Bytes> {
    let mut r = tlv::Reader::new(params);
    while let Ok(Some(e)) = r.read() {
        if e.typ == NW_PUBLIC_KEY {
            return Some(params.slice(e.value_range()));
        }
    }
    None
}
