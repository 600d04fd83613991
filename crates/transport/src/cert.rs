//! NDN certificates (format v2) and trust-anchor chains.
//!
//! A certificate is a Data packet named `<identity>/KEY/<key-id>/<issuer-id>/<version>`,
//! ContentType KEY, whose Content is the subject's public key (SubjectPublicKeyInfo DER) and
//! whose SignatureInfo carries a KeyLocator (the issuer's key or certificate name) and a
//! ValidityPeriod. A self-signed certificate is a trust anchor.
//!
//! A consumer given an anchor ([`crate::consumer::FetchOptions::anchor`]) follows the chain
//! from the KeyLocator of the object's first signed packet: it fetches each certificate by
//! name, checks it (a certificate, in its validity period, its identity a prefix of what it
//! signs: the hierarchical trust rule ndn-cxx calls its default schema) until a KeyLocator
//! names the anchor, then verifies the signatures from the anchor down. The leaf's key then
//! verifies every packet of the object, and every packet must name the leaf in its KeyLocator.
//!
//! Files hold the certificate's TLV, either raw or in base64 (what `ndnsec cert-dump` prints).

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use nameway_wire::data::content_type;
use nameway_wire::name::Component;
use nameway_wire::security::verify_data_wire;
use nameway_wire::signature::{KeyLocator, ValidityPeriod};
use nameway_wire::{Data, DataView, MetaInfo, Name};

use crate::keys::{KeyFileError, SigningKey, VerifyKey};

/// Longest chain followed from a packet to the anchor (certificates, anchor excluded).
pub const MAX_CHAIN: usize = 4;

/// A certificate that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// Not a Data packet, or no `KEY` component where the format puts it.
    #[error("{0} is not an NDN certificate (expected <identity>/KEY/<key-id>/<issuer>/<version>, ContentType KEY)")]
    NotACertificate(String),
    /// No ValidityPeriod in its SignatureInfo.
    #[error("certificate {0} has no ValidityPeriod")]
    NoValidity(String),
    /// A NotBefore or NotAfter not in the ISO 8601 basic format NDN certificates use.
    #[error("certificate {name} has a malformed ValidityPeriod ({field} {value:?}; expected YYYYMMDDThhmmss, UTC)")]
    BadValidity {
        /// The certificate.
        name: String,
        /// `NotBefore` or `NotAfter`.
        field: &'static str,
        /// What it holds (invalid UTF-8 shown replaced).
        value: String,
    },
    /// Outside its ValidityPeriod now.
    #[error("certificate {name} is not valid now ({not_before} .. {not_after}, now {now})")]
    Expired {
        /// The certificate.
        name: String,
        /// NotBefore.
        not_before: String,
        /// NotAfter.
        not_after: String,
        /// The current time in the same format.
        now: String,
    },
    /// Its Content is not a supported public key.
    #[error("certificate {0} holds no Ed25519, ECDSA P-256 or RSA public key")]
    BadKey(String),
    /// Its signature does not verify with the issuer's key.
    #[error("certificate {name} is not signed by {issuer} ({detail})")]
    BadSignature {
        /// The certificate.
        name: String,
        /// Who should have signed it.
        issuer: String,
        /// The verifier's message.
        detail: String,
    },
    /// The hierarchical rule: a key may only sign names under its identity.
    #[error("{signer} (identity {identity}) may not sign {signed}: not under its identity")]
    OutOfScope {
        /// The signing certificate.
        signer: String,
        /// Its identity.
        identity: String,
        /// What it signed.
        signed: String,
    },
    /// The file cannot be read.
    #[error(transparent)]
    File(#[from] KeyFileError),
    /// The signing key is not the certificate's.
    #[error("the key does not match certificate {0}")]
    KeyMismatch(String),
    /// The issuer cannot sign, or a name is too long.
    #[error("cannot issue the certificate: {0}")]
    Issue(String),
}

/// A decoded certificate.
#[derive(Debug)]
pub struct Certificate {
    wire: Bytes,
    name: Name,
    identity: Name,
    key_der: Bytes,
    key: VerifyKey,
    issuer: Option<Name>,
    not_before: String,
    not_after: String,
}

impl Certificate {
    /// Decodes and checks the format (not the signature, not the validity period).
    ///
    /// # Errors
    /// [`CertError::NotACertificate`], [`CertError::NoValidity`], [`CertError::BadKey`].
    pub fn decode(wire: Bytes) -> Result<Self, CertError> {
        let view = DataView::new_checked(wire.clone())
            .map_err(|e| CertError::NotACertificate(format!("a packet ({e})")))?;
        let name = view.name().clone();
        let shown = name.to_string();
        let n = name.len();
        let key_at = n.checked_sub(4).filter(|&i| {
            name.get(i)
                .is_some_and(|c| c.typ() == 8 && c.value() == b"KEY")
        });
        let data = Data::decode(&wire).map_err(|_| CertError::NotACertificate(shown.clone()))?;
        let is_key = data
            .meta_info
            .as_ref()
            .is_some_and(|m| m.content_type == Some(content_type::KEY));
        let (Some(key_at), true) = (key_at, is_key) else {
            return Err(CertError::NotACertificate(shown));
        };
        let identity = name.prefix(key_at);
        let info = data.signature_info.clone();
        let Some(vp) = info.validity_period else {
            return Err(CertError::NoValidity(shown));
        };
        for (field, value) in [("NotBefore", &vp.not_before), ("NotAfter", &vp.not_after)] {
            if !is_basic_iso8601(value) {
                return Err(CertError::BadValidity {
                    name: shown,
                    field,
                    value: String::from_utf8_lossy(value).into_owned(),
                });
            }
        }
        let key_der = data.content.clone().unwrap_or_default();
        let key = VerifyKey::from_public_der(&key_der).ok_or(CertError::BadKey(shown))?;
        let issuer = match info.key_locator {
            Some(KeyLocator::Name(n)) => Some(n),
            _ => None,
        };
        Ok(Self {
            wire,
            name,
            identity,
            key_der,
            key,
            issuer,
            not_before: String::from_utf8_lossy(&vp.not_before).into_owned(),
            not_after: String::from_utf8_lossy(&vp.not_after).into_owned(),
        })
    }

    /// Reads a certificate file: the TLV, raw or base64 (as `ndnsec cert-dump` prints it).
    ///
    /// # Errors
    /// The file cannot be read or is not a certificate.
    pub fn load(path: &Path) -> Result<Self, CertError> {
        let bytes = std::fs::read(path).map_err(|source| KeyFileError::Io {
            path: path.display().to_string(),
            source,
        })?;
        let wire = if bytes.first() == Some(&6) {
            bytes
        } else {
            let text: String = String::from_utf8_lossy(&bytes)
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            data_encoding::BASE64.decode(text.as_bytes()).map_err(|_| {
                CertError::NotACertificate(format!("{} (neither TLV nor base64)", path.display()))
            })?
        };
        Self::decode(Bytes::from(wire))
    }

    /// Writes the certificate's TLV in base64 with line breaks, as `ndnsec` does. The file is
    /// replaced whole (a temporary file renamed over it): a process stopped during the write
    /// leaves the old certificate intact, never a truncated one.
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn save(&self, path: &Path) -> Result<(), CertError> {
        let text = data_encoding::BASE64.encode(&self.wire);
        let mut out = String::with_capacity(text.len() + text.len() / 64 + 1);
        for line in text.as_bytes().chunks(64) {
            out.push_str(&String::from_utf8_lossy(line));
            out.push('\n');
        }
        crate::keys::replace_file(path, out.as_bytes(), false).map_err(|source| {
            CertError::File(KeyFileError::Io {
                path: path.display().to_string(),
                source,
            })
        })
    }

    /// Issues a certificate for `subject`'s public key under `identity`, valid from now for
    /// `days`, signed by `issuer` (its certificate `issuer_cert`), or self-signed (a trust
    /// anchor) when `issuer` is `None`.
    ///
    /// # Errors
    /// A kind without a public key (DigestSha256, HMAC), a key that does not match
    /// `issuer_cert`, a signing failure.
    pub fn issue(
        subject: &SigningKey,
        identity: &Name,
        issuer: Option<(&SigningKey, &Certificate)>,
        days: u32,
    ) -> Result<Self, CertError> {
        let der = subject.public_der().ok_or_else(|| {
            CertError::Issue(format!("{} keys have no public key", subject.kind()))
        })?;
        let mut key_id = [0u8; 8];
        getrandom::fill(&mut key_id).map_err(|e| CertError::Issue(e.to_string()))?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let issuer_id: &[u8] = if issuer.is_some() {
            b"nameway"
        } else {
            b"self"
        };
        let mut name = identity.clone();
        for c in [
            Component::generic(Bytes::from_static(b"KEY")),
            Component::generic(Bytes::copy_from_slice(&key_id)),
            Component::generic(Bytes::copy_from_slice(issuer_id)),
            Component::version(now.saturating_mul(1000)),
        ] {
            name = name
                .append(&c)
                .map_err(|e| CertError::Issue(format!("name too long: {e}")))?;
        }
        let mut data = Data::new(name.clone(), Bytes::from(der));
        data.meta_info = Some(MetaInfo {
            content_type: Some(content_type::KEY),
            freshness_period: Some(3_600_000),
            ..MetaInfo::default()
        });
        data.signature_info.validity_period = Some(ValidityPeriod {
            not_before: Bytes::from(iso8601(now)),
            not_after: Bytes::from(iso8601(
                now.saturating_add(u64::from(days) * 86_400)
                    .min(MAX_VALIDITY_SECS),
            )),
        });
        let signer = match issuer {
            Some((key, cert)) => {
                if key.public_der().as_deref() != Some(&cert.key_der[..]) {
                    return Err(CertError::KeyMismatch(cert.name.to_string()));
                }
                key.clone().with_name_locator(cert.name.clone())
            }
            None => subject
                .clone()
                .with_name_locator(name.prefix(identity.len() + 2)),
        };
        data.sign(signer.signer())
            .map_err(|e| CertError::Issue(e.to_string()))?;
        Self::decode(data.encode())
    }

    /// The certificate's name.
    pub fn name(&self) -> &Name {
        &self.name
    }

    /// The identity: the name before `KEY`.
    pub fn identity(&self) -> &Name {
        &self.identity
    }

    /// The key's name: `<identity>/KEY/<key-id>`.
    pub fn key_name(&self) -> Name {
        self.name.prefix(self.identity.len() + 2)
    }

    /// The subject's public key.
    pub fn key(&self) -> &VerifyKey {
        &self.key
    }

    /// The subject's public key, SubjectPublicKeyInfo DER.
    pub fn key_der(&self) -> &[u8] {
        &self.key_der
    }

    /// The certificate's TLV.
    pub fn wire(&self) -> &Bytes {
        &self.wire
    }

    /// The KeyLocator name of the issuer.
    pub fn issuer(&self) -> Option<&Name> {
        self.issuer.as_ref()
    }

    /// ValidityPeriod as written (`YYYYMMDDThhmmss`, UTC).
    pub fn validity(&self) -> (&str, &str) {
        (&self.not_before, &self.not_after)
    }

    /// Whether a KeyLocator name designates this certificate (its key name or its name).
    pub fn is_named_by(&self, locator: &Name) -> bool {
        locator.is_prefix_of(&self.name) && locator.len() >= self.identity.len() + 2
    }

    /// Checks the ValidityPeriod against the current time.
    ///
    /// # Errors
    /// [`CertError::Expired`].
    pub fn check_validity(&self) -> Result<(), CertError> {
        let now = iso8601(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        );
        // The basic format orders lexicographically as it orders in time.
        if self.not_before.as_str() <= now.as_str() && now.as_str() <= self.not_after.as_str() {
            Ok(())
        } else {
            Err(CertError::Expired {
                name: self.name.to_string(),
                not_before: self.not_before.clone(),
                not_after: self.not_after.clone(),
                now,
            })
        }
    }

    /// Checks that `issuer` signed this certificate and may (hierarchical rule).
    ///
    /// # Errors
    /// [`CertError::BadSignature`], [`CertError::OutOfScope`].
    pub fn check_issued_by(&self, issuer: &Certificate) -> Result<(), CertError> {
        issuer.check_scope(&self.identity)?;
        let view = DataView::new_checked(self.wire.clone())
            .map_err(|e| CertError::NotACertificate(e.to_string()))?;
        verify_data_wire(&view, issuer.key.verifier()).map_err(|e| CertError::BadSignature {
            name: self.name.to_string(),
            issuer: issuer.name.to_string(),
            detail: e.to_string(),
        })
    }

    /// The hierarchical rule: this certificate's key may sign `signed` only if its identity
    /// is a prefix of it.
    ///
    /// # Errors
    /// [`CertError::OutOfScope`].
    pub fn check_scope(&self, signed: &Name) -> Result<(), CertError> {
        if self.identity.is_prefix_of(signed) {
            Ok(())
        } else {
            Err(CertError::OutOfScope {
                signer: self.name.to_string(),
                identity: self.identity.to_string(),
                signed: signed.to_string(),
            })
        }
    }
}

/// The last second a ValidityPeriod can name, 9999-12-31T23:59:59 UTC: its format has four
/// digits of year, and validity is checked by comparing the strings (a year 10000 would sort
/// before today).
const MAX_VALIDITY_SECS: u64 = 253_402_300_799;

/// Whether `s` is a time in the form a ValidityPeriod must use, `YYYYMMDDThhmmss` (ISO 8601
/// basic format, UTC, as ndn-cxx writes and requires it), with month, day, hour, minute and
/// second in range. Validity is checked by comparing these strings, which orders them in time
/// only when every one has this form.
fn is_basic_iso8601(s: &[u8]) -> bool {
    let Ok(s) = <&[u8; 15]>::try_from(s) else {
        return false;
    };
    let digits = |r: std::ops::Range<usize>| {
        s.get(r).and_then(|d| {
            d.iter().try_fold(0u32, |n, &c| {
                c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
            })
        })
    };
    let in_range = |r, lo, hi| digits(r).is_some_and(|n| (lo..=hi).contains(&n));
    s[8] == b'T'
        && digits(0..4).is_some()
        && in_range(4..6, 1, 12)
        && in_range(6..8, 1, 31)
        && in_range(9..11, 0, 23)
        && in_range(11..13, 0, 59)
        && in_range(13..15, 0, 59)
}

/// `secs` since the Unix epoch as ISO 8601 basic format, UTC: `YYYYMMDDThhmmss`.
pub fn iso8601(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::SignatureKind;

    #[test]
    fn iso8601_matches_known_dates() {
        assert_eq!(iso8601(0), "19700101T000000");
        assert_eq!(iso8601(951_782_400), "20000229T000000");
        assert_eq!(iso8601(1_795_600_000), "20261125T094640"); // date -u -d @1795600000
    }

    #[test]
    fn a_chain_issues_decodes_and_checks() {
        let root_key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        let root_id: Name = "/example".parse().unwrap();
        let root = Certificate::issue(&root_key, &root_id, None, 365).unwrap();
        assert_eq!(root.identity(), &root_id);
        assert!(root.is_named_by(root.issuer().unwrap()), "self-signed");
        root.check_validity().unwrap();
        root.check_issued_by(&root).unwrap();

        let leaf_key = SigningKey::generate(SignatureKind::EcdsaP256).unwrap();
        let leaf_id: Name = "/example/producer".parse().unwrap();
        let leaf = Certificate::issue(&leaf_key, &leaf_id, Some((&root_key, &root)), 30).unwrap();
        assert_eq!(leaf.issuer(), Some(root.name()));
        leaf.check_issued_by(&root).unwrap();
        leaf.check_scope(&"/example/producer/file/v=1/seg=0".parse().unwrap())
            .unwrap();
        assert!(matches!(
            leaf.check_scope(&"/other/file".parse().unwrap()),
            Err(CertError::OutOfScope { .. })
        ));
        // Signed by someone else: the signature does not verify.
        let other_key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        let other = Certificate::issue(&other_key, &root_id, None, 365).unwrap();
        assert!(matches!(
            leaf.check_issued_by(&other),
            Err(CertError::BadSignature { .. })
        ));
        // An issuer outside the subject's hierarchy.
        let side = Certificate::issue(&other_key, &"/side".parse().unwrap(), None, 1).unwrap();
        let under = Certificate::issue(&leaf_key, &leaf_id, Some((&other_key, &side)), 1).unwrap();
        assert!(matches!(
            under.check_issued_by(&side),
            Err(CertError::OutOfScope { .. })
        ));
        // The issuing key must be the issuer certificate's.
        assert!(matches!(
            Certificate::issue(&leaf_key, &leaf_id, Some((&other_key, &root)), 1),
            Err(CertError::KeyMismatch(_))
        ));
    }

    #[test]
    fn files_round_trip_in_base64_and_raw_tlv() {
        let dir = tempfile::tempdir().unwrap();
        let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        let cert = Certificate::issue(&key, &"/a/b".parse().unwrap(), None, 1).unwrap();
        let b64 = dir.path().join("a.cert");
        cert.save(&b64).unwrap();
        assert!(std::fs::read_to_string(&b64)
            .unwrap()
            .lines()
            .all(|l| l.len() <= 64));
        assert_eq!(Certificate::load(&b64).unwrap().wire(), cert.wire());
        let raw = dir.path().join("a.tlv");
        std::fs::write(&raw, cert.wire()).unwrap();
        assert_eq!(Certificate::load(&raw).unwrap().name(), cert.name());
        std::fs::write(&raw, b"not a certificate").unwrap();
        assert!(Certificate::load(&raw).is_err());
    }

    #[test]
    fn saving_over_a_certificate_replaces_the_file_whole_and_never_rewrites_it_in_place() {
        // An agent killed while it stores a renewed certificate must find the old one whole
        // on restart. A reader that opened the old file before the save still reads all of
        // it: the new certificate went to another file, renamed over the old name, so no
        // moment exists at which the name holds a truncated certificate.
        use std::io::Read as _;
        let dir = tempfile::tempdir().unwrap();
        let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        let old = Certificate::issue(&key, &"/a/b".parse().unwrap(), None, 1).unwrap();
        let new = Certificate::issue(&key, &"/a/b".parse().unwrap(), None, 2).unwrap();
        let path = dir.path().join("router.cert");
        old.save(&path).unwrap();
        let before = std::fs::read(&path).unwrap();
        let mut held = std::fs::File::open(&path).unwrap();
        new.save(&path).unwrap();
        let mut through_old_handle = Vec::new();
        held.read_to_end(&mut through_old_handle).unwrap();
        assert!(
            through_old_handle == before,
            "the old certificate was rewritten in place"
        );
        assert_eq!(Certificate::load(&path).unwrap().wire(), new.wire());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("router.cert")]);
        // Through a symbolic link: the link stays, the file it names gets the certificate.
        #[cfg(unix)]
        {
            let elsewhere = dir.path().join("kept-elsewhere.cert");
            old.save(&elsewhere).unwrap();
            let link = dir.path().join("link.cert");
            std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
            new.save(&link).unwrap();
            assert!(std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink());
            assert_eq!(Certificate::load(&elsewhere).unwrap().wire(), new.wire());
        }
        // A directory that does not exist: an error naming the path.
        let missing = dir.path().join("no-such-dir").join("router.cert");
        let e = new.save(&missing).unwrap_err();
        assert!(e.to_string().contains("no-such-dir"), "{e}");
    }

    #[test]
    fn a_validity_past_the_year_9999_ends_at_its_last_second_and_is_valid_now() {
        // `nameway key cert --days 4000000`: a NotAfter in the year 10000 or later has five
        // digits of year, so it sorted before today and the new certificate was expired.
        let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        for days in [3_000_000, u32::MAX] {
            let cert = Certificate::issue(&key, &"/a".parse().unwrap(), None, days).unwrap();
            assert_eq!(cert.validity().1, "99991231T235959", "{days} days");
            cert.check_validity()
                .unwrap_or_else(|e| panic!("{days} days: {e}"));
        }
        assert_eq!(iso8601(MAX_VALIDITY_SECS), "99991231T235959");
    }

    #[test]
    fn an_expired_certificate_is_refused() {
        let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        let cert = Certificate::issue(&key, &"/a".parse().unwrap(), None, 0).unwrap();
        // Valid for zero days: not_after is now, so a later second is outside it.
        std::thread::sleep(std::time::Duration::from_millis(1100));
        assert!(matches!(
            cert.check_validity(),
            Err(CertError::Expired { .. })
        ));
    }

    /// A certificate whose ValidityPeriod, signed as it is, holds `not_before` and `not_after`.
    fn with_validity(not_before: &[u8], not_after: &[u8]) -> Bytes {
        let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        let id: Name = "/a".parse().unwrap();
        let cert = Certificate::issue(&key, &id, None, 30).unwrap();
        let mut data = Data::decode(cert.wire()).unwrap();
        data.signature_info.validity_period = Some(ValidityPeriod {
            not_before: Bytes::copy_from_slice(not_before),
            not_after: Bytes::copy_from_slice(not_after),
        });
        let signer = key.with_name_locator(cert.name().prefix(id.len() + 2));
        data.sign(signer.signer()).unwrap();
        data.encode()
    }

    #[test]
    fn a_validity_period_not_in_the_basic_iso_format_is_refused() {
        // Validity is checked by comparing strings, so "0" .. "9" would have been valid from
        // the year 0 for ever; ndn-cxx refuses anything but YYYYMMDDThhmmss as well.
        assert!(Certificate::decode(with_validity(b"20260101T000000", b"20991231T235959")).is_ok());
        for (nb, na) in [
            (&b"0"[..], &b"9"[..]),
            (b"20260101T000000", b"99999999999999999"),
            (b"20260101T000000", b"2099-12-31T23:59"),
            (b"20260101T000000", b"20991231 235959"),
            (b"2026010100000", b"20991231T235959"),
            (b"20260101T00000\xff", b"20991231T235959"),
            (b"20261301T000000", b"20991231T235959"),
            (b"20260101T000000", b"20991231T246000"),
            (b"", b""),
        ] {
            let err = Certificate::decode(with_validity(nb, na)).unwrap_err();
            assert!(
                matches!(err, CertError::BadValidity { .. }),
                "{:?} .. {:?}: {err}",
                String::from_utf8_lossy(nb),
                String::from_utf8_lossy(na)
            );
            assert!(err.to_string().contains("YYYYMMDDThhmmss"), "{err}");
        }
    }
}
