//! Entry points for the fuzz targets in `fuzz/` that reach this crate's decoders of what a
//! peer sends: manifests and certificates (both arrive as Data from the network).
//!
//! Each function takes untrusted bytes and, when decoding succeeds, checks invariants that
//! must hold for every accepted input. A panic here means an invariant does not hold, never a
//! bad input. Not part of the stable API, and compiled only with the `fuzzing` feature (which
//! `fuzz/` turns on) and for this crate's unit tests.

#![doc(hidden)]
// Fuzzing entry points panic on purpose when an invariant breaks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bytes::Bytes;
use nameway_wire::DataView;

use crate::cert::Certificate;
use crate::manifest::{Manifest, DIGEST_LEN};

/// Decodes a manifest's content; an accepted one re-encodes to a manifest that decodes to
/// the same thing, with a stable encoding, and every segment it covers has its digest.
pub fn decode_manifest(content: &[u8]) {
    let Ok(m) = Manifest::decode(content) else {
        return;
    };
    assert!(!m.digests.is_empty(), "a manifest points to something");
    let wire = m.encode();
    let again = Manifest::decode(&wire).expect("an encoded manifest decodes");
    assert_eq!(again, m, "round trip");
    assert_eq!(again.encode(), wire, "stable encoding");
    let range = m.segments();
    assert_eq!(range.end - range.start, m.digests.len() as u64);
    for (i, d) in m.digests.iter().enumerate() {
        assert_eq!(m.digest_of(range.start + i as u64), Some(d));
    }
    assert_eq!(m.digest_of(range.end), None);
    if let Some(before) = range.start.checked_sub(1) {
        assert_eq!(m.digest_of(before), None);
    }
    assert!(wire.len() > m.digests.len() * DIGEST_LEN);
}

/// Decodes a certificate; an accepted one is a Data named `<identity>/KEY/<key-id>/...`
/// with a well-formed ValidityPeriod, and every check on it answers without panicking.
pub fn decode_certificate(wire: &[u8]) {
    let Ok(cert) = Certificate::decode(Bytes::copy_from_slice(wire)) else {
        return;
    };
    let view = DataView::new_checked(Bytes::copy_from_slice(wire)).expect("a certificate is Data");
    assert_eq!(cert.name(), view.name());
    assert!(cert.identity().is_prefix_of(cert.name()));
    assert!(cert.key_name().is_prefix_of(cert.name()));
    assert!(cert.is_named_by(&cert.key_name()));
    assert!(cert.is_named_by(cert.name()));
    assert!(cert.check_scope(cert.identity()).is_ok());
    let (not_before, not_after) = cert.validity();
    assert_eq!((not_before.len(), not_after.len()), (15, 15));
    let _ = cert.check_validity();
    let _ = cert.check_issued_by(&cert);
    let again = Certificate::decode(cert.wire().clone()).expect("decodes again");
    assert_eq!(again.key_der(), cert.key_der());
}

#[cfg(test)]
mod tests {
    use nameway_wire::fuzzing::seeds;

    use super::*;
    use crate::keys::{SignatureKind, SigningKey};

    /// Every truncation and every single-byte change of a valid input: the entry points
    /// hold their invariants (they panic otherwise), as the fuzz targets check at scale.
    fn mutations(wire: &[u8], check: fn(&[u8])) {
        check(wire);
        for cut in 0..wire.len() {
            check(&wire[..cut]);
        }
        for i in 0..wire.len() {
            for v in [0x00, 0x01, 0x7f, 0xfd, 0xff] {
                let mut m = wire.to_vec();
                m[i] = v;
                check(&m);
            }
        }
    }

    #[test]
    fn mutated_manifests_and_certificates_keep_the_invariants() {
        let m = Manifest {
            start_segment: 250,
            leaf_size: 8000,
            digests: vec![[3; 32]; 3],
        };
        mutations(&m.encode(), decode_manifest);
        let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        let cert = Certificate::issue(&key, &"/a/b".parse().unwrap(), None, 30).unwrap();
        mutations(cert.wire(), decode_certificate);
    }

    #[test]
    fn the_fuzz_seeds_decode_and_keep_the_invariants() {
        for (path, wire) in seeds("manifest") {
            Manifest::decode(&wire).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            decode_manifest(&wire);
        }
        for (path, wire) in seeds("certificate") {
            Certificate::decode(wire.clone()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            decode_certificate(&wire);
        }
    }
}
