//! Router certificate renewal: when a router asks (over its authenticated session, with a
//! fresh proof by its router key), the CA issues a new certificate for the key it enrolled,
//! unless the router is denied; and when a router should ask (at 2/3 of its certificate's
//! lifetime).

use nameway_transport::Certificate;
#[cfg(feature = "server")]
use nameway_wire::Name;

use crate::ca::CaError;
#[cfg(feature = "server")]
use crate::ca::{self, Authority};

/// What a router signs with its certified key to ask for a renewal: a context string and
/// the session's Noise handshake hash (so a proof is bound to one session).
pub fn renew_proof(handshake_hash: &[u8]) -> Vec<u8> {
    [b"nameway-ctl/1 renew ".as_slice(), handshake_hash].concat()
}

/// Why a renewal was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenewError {
    /// The router (or a prefix of its name) is on the deny list.
    #[error("{0} is denied: its certificate is not renewed")]
    Denied(String),
    /// The router has no enrolment record.
    #[error("router {0} is not enrolled")]
    Unknown(String),
    /// The proof does not verify with the key the router enrolled.
    #[error("the renewal proof does not verify with {0}'s enrolled key")]
    Signature(String),
    /// The database or the signing failed.
    #[error(transparent)]
    Ca(#[from] CaError),
}

impl From<crate::StoreError> for RenewError {
    fn from(e: crate::StoreError) -> Self {
        Self::Ca(CaError::Store(e))
    }
}

impl RenewError {
    /// The counter label of this refusal.
    pub const fn reason(&self) -> &'static str {
        match self {
            Self::Denied(_) => "denied",
            Self::Unknown(_) => "unknown",
            Self::Signature(_) => "signature",
            Self::Ca(_) => "store",
        }
    }
}

/// Renews `router`'s certificate at `now_ms`: checks the deny list, the enrolment record and
/// `signature` (by the enrolled key over [`renew_proof`] of `handshake_hash`), then issues a
/// new certificate for the same key and records it. Returns the new certificate.
///
/// # Errors
/// [`RenewError`].
#[cfg(feature = "server")]
pub fn renew<S: crate::ca_store::CaStore + ?Sized>(
    store: &mut S,
    authority: &Authority,
    router: &Name,
    handshake_hash: &[u8],
    signature: &[u8],
    now_ms: u64,
) -> Result<Certificate, RenewError> {
    let name = router.to_string();
    if ca::denied(store)?.iter().any(|d| d.is_prefix_of(router)) {
        return Err(RenewError::Denied(name));
    }
    let mut node = store
        .nodes()
        .map_err(CaError::from)?
        .into_iter()
        .find(|n| n.name == name)
        .ok_or_else(|| RenewError::Unknown(name.clone()))?;
    crate::channel::verify(&node.pubkey, &renew_proof(handshake_hash), signature)
        .map_err(|_| RenewError::Signature(name.clone()))?;
    let cert = authority.issue_router_cert(router, &node.pubkey, now_ms / 1000)?;
    node.cert = Some(cert.wire().to_vec());
    node.last_seen_ms = now_ms;
    store.put_node(&node).map_err(CaError::from)?;
    store
        .audit(now_ms, &name, "renew", &cert.name().to_string())
        .map_err(CaError::from)?;
    Ok(cert)
}

/// Seconds since the Unix epoch of an ISO 8601 basic time `YYYYMMDDThhmmss` (UTC), as
/// written in a ValidityPeriod; `None` if it is not one.
pub fn parse_iso8601(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() != 15 || b[8] != b'T' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let (y, m, d) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (hh, mm, ss) = (num(9..11)?, num(11..13)?, num(13..15)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days since 1970-01-01 of a civil date (the inverse of the transport's `iso8601`).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).ok()
}

/// When a router should renew `cert`: at 2/3 of its ValidityPeriod (seconds since the
/// epoch); `None` if the period does not parse.
pub fn renewal_due_s(cert: &Certificate) -> Option<u64> {
    let (nb, na) = cert.validity();
    let (nb, na) = (parse_iso8601(nb)?, parse_iso8601(na)?);
    Some(nb + na.saturating_sub(nb) * 2 / 3)
}

/// The NotAfter of `cert` in seconds since the epoch, if it parses.
pub fn not_after_s(cert: &Certificate) -> Option<u64> {
    parse_iso8601(cert.validity().1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ca::{anchor_cert_path, anchor_key_path};
    use crate::sqlite::{Durability, SqliteStore};
    use crate::store::RegistryStore as _;
    use nameway_transport::cert::iso8601;
    use nameway_transport::{SignatureKind, SigningKey};

    #[test]
    fn iso8601_parses_back_to_the_same_second() {
        for s in [0, 951_782_400, 1_795_600_000, 4_102_444_799, 1_709_210_096] {
            assert_eq!(parse_iso8601(&iso8601(s)), Some(s), "{}", iso8601(s));
        }
        for bad in ["", "20261125 094640", "2026112XT094640", "20261325T000000"] {
            assert_eq!(parse_iso8601(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_enrolled_router_is_renewed_with_its_key_and_a_denied_or_unproven_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("ctl.db");
        let domain: Name = "/example".parse().unwrap();
        let mut authority =
            Authority::create(&domain, &anchor_key_path(&db), &anchor_cert_path(&db)).unwrap();
        authority.set_router_cert_lifetime(30);
        let mut store = SqliteStore::open(&db, Durability::Full).unwrap();
        store.set_meta("domain", "/example").unwrap();
        let r1: Name = "/example/r1".parse().unwrap();
        let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        let der = key.public_der().unwrap();
        let now_ms = 1_795_600_000_000;
        let token = ca::create_token(&mut store, &r1, 60_000, now_ms).unwrap();
        let first = ca::enrol(&mut store, &authority, &token, &r1, &der, None, now_ms).unwrap();
        assert_eq!(renewal_due_s(&first), Some(1_795_600_020));
        assert_eq!(not_after_s(&first), Some(1_795_600_030));
        let hh = [7u8; 32];
        let proof = crate::channel::sign(&key, &renew_proof(&hh)).unwrap();
        let later = now_ms + 20_000;
        let renewed = renew(&mut store, &authority, &r1, &hh, &proof, later).unwrap();
        assert_eq!(renewed.key_der(), &der[..]);
        assert_eq!(not_after_s(&renewed), Some(1_795_600_050));
        ca::verify_router_cert(
            renewed.wire().clone(),
            authority.certificate(),
            &ca::DenyList::default(),
            1_795_600_045,
        )
        .unwrap();
        // The first one has expired by then; the renewed one is what the record holds.
        assert!(ca::verify_router_cert(
            first.wire().clone(),
            authority.certificate(),
            &ca::DenyList::default(),
            1_795_600_045,
        )
        .is_err());
        let node = store.nodes().unwrap().into_iter().next().unwrap();
        assert_eq!(node.cert.as_deref(), Some(&renewed.wire()[..]));
        // A proof by another key, or over another session, is refused.
        let other = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        let forged = crate::channel::sign(&other, &renew_proof(&hh)).unwrap();
        let e = renew(&mut store, &authority, &r1, &hh, &forged, later).unwrap_err();
        assert_eq!(e.reason(), "signature");
        let e = renew(&mut store, &authority, &r1, &[8u8; 32], &proof, later).unwrap_err();
        assert_eq!(e.reason(), "signature");
        // A router never enrolled.
        let r2: Name = "/example/r2".parse().unwrap();
        let e = renew(&mut store, &authority, &r2, &hh, &proof, later).unwrap_err();
        assert_eq!(e.reason(), "unknown");
        // Denied: not renewed.
        ca::deny(&mut store, &r1, "lost", later).unwrap();
        let e = renew(&mut store, &authority, &r1, &hh, &proof, later).unwrap_err();
        assert!(matches!(e, RenewError::Denied(_)), "{e}");
    }
}
