//! SignatureInfo, KeyLocator and the signing traits shared by Interest and Data.
//!
//= https://docs.named-data.net/NDN-packet-spec/0.3/signature.html
//# SignatureInfo = SIGNATURE-INFO-TYPE TLV-LENGTH SignatureType [KeyLocator] [ValidityPeriod]
//# *OtherSubelements
//# InterestSignatureInfo = INTEREST-SIGNATURE-INFO-TYPE TLV-LENGTH SignatureType [KeyLocator]
//# [SignatureNonce] [SignatureTime] [SignatureSeqNum]

use bytes::{BufMut, Bytes};

use crate::error::{DecodeError, ErrorKind};
use crate::name::{self, Name};
use crate::tlv::{self, types, Element};

/// SignatureType numbers assigned by the spec.
pub mod signature_type {
    /// DigestSha256: a SHA-256 digest, no key.
    pub const DIGEST_SHA256: u64 = 0;
    /// SignatureSha256WithRsa (PKCS#1 v1.5).
    pub const SHA256_WITH_RSA: u64 = 1;
    /// SignatureSha256WithEcdsa (DER-encoded ECDSA signature).
    pub const SHA256_WITH_ECDSA: u64 = 3;
    /// SignatureHmacWithSha256.
    pub const HMAC_WITH_SHA256: u64 = 4;
    /// SignatureEd25519.
    pub const ED25519: u64 = 5;
}

/// Where the verification key can be found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyLocator {
    /// The name of the key or certificate.
    Name(Name),
    /// The SHA-256 digest of the key.
    KeyDigest(Bytes),
}

/// A certificate's validity period (ISO 8601 basic strings, `YYYYMMDDThhmmss`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidityPeriod {
    /// NotBefore.
    pub not_before: Bytes,
    /// NotAfter.
    pub not_after: Bytes,
}

/// SignatureInfo of a Data packet, or InterestSignatureInfo of a signed Interest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SignatureInfo {
    /// SignatureType; see [`signature_type`].
    pub signature_type: u64,
    /// KeyLocator.
    pub key_locator: Option<KeyLocator>,
    /// ValidityPeriod (certificates).
    pub validity_period: Option<ValidityPeriod>,
    /// SignatureNonce (signed Interests).
    pub nonce: Option<Bytes>,
    /// SignatureTime in milliseconds since the Unix epoch (signed Interests).
    pub time: Option<u64>,
    /// SignatureSeqNum (signed Interests).
    pub seq_num: Option<u64>,
}

impl KeyLocator {
    fn value_len(&self) -> usize {
        match self {
            Self::Name(n) => n.encoded_len(),
            Self::KeyDigest(d) => tlv::tlv_len(types::KEY_DIGEST, d.len()),
        }
    }

    fn decode(e: &Element<'_>, wire: &Bytes) -> Result<Self, DecodeError> {
        let inner = Self::check(e)?;
        Ok(match inner.typ {
            types::NAME => Self::Name(Name::from_value(
                slice_abs(wire, inner.value_range(), inner.value_start)?,
                inner.value_start,
            )?),
            _ => Self::KeyDigest(slice_abs(wire, inner.value_range(), inner.value_start)?),
        })
    }

    /// Checks a KeyLocator element; returns its Name or KeyDigest element.
    fn check<'a>(e: &Element<'a>) -> Result<Element<'a>, DecodeError> {
        let mut r = e.children();
        let inner = r.read_element()?;
        match inner.typ {
            types::NAME => Name::check_value(inner.value, inner.value_start)?,
            types::KEY_DIGEST => {}
            found => {
                return Err(inner.error(ErrorKind::UnexpectedType {
                    expected: types::NAME,
                    found,
                }))
            }
        }
        while let Some(extra) = r.read()? {
            tlv::skip_unrecognized(&extra)?;
        }
        Ok(inner)
    }
}

/// Slices `wire` at an absolute range, reporting a truncation at `offset` if it is out of range
/// (it cannot be when the range came from a reader over `wire`).
pub(crate) fn slice_abs(
    wire: &Bytes,
    range: core::ops::Range<usize>,
    offset: usize,
) -> Result<Bytes, DecodeError> {
    if range.end > wire.len() || range.start > range.end {
        return Err(DecodeError::new(ErrorKind::Truncated, offset));
    }
    Ok(wire.slice(range))
}

impl SignatureInfo {
    /// A SignatureInfo with only a SignatureType.
    pub fn new(signature_type: u64) -> Self {
        Self {
            signature_type,
            ..Self::default()
        }
    }

    /// Size of the TLV-VALUE.
    pub fn value_len(&self) -> usize {
        let mut n = tlv::nni_tlv_len(types::SIGNATURE_TYPE, self.signature_type);
        if let Some(kl) = &self.key_locator {
            n += tlv::tlv_len(types::KEY_LOCATOR, kl.value_len());
        }
        if let Some(vp) = &self.validity_period {
            n += tlv::tlv_len(types::VALIDITY_PERIOD, vp.value_len());
        }
        if let Some(nonce) = &self.nonce {
            n += tlv::tlv_len(types::SIGNATURE_NONCE, nonce.len());
        }
        if let Some(t) = self.time {
            n += tlv::nni_tlv_len(types::SIGNATURE_TIME, t);
        }
        if let Some(s) = self.seq_num {
            n += tlv::nni_tlv_len(types::SIGNATURE_SEQ_NUM, s);
        }
        n
    }

    /// Size of the whole element of type `typ` (SignatureInfo or InterestSignatureInfo).
    pub fn encoded_len(&self, typ: u32) -> usize {
        tlv::tlv_len(typ, self.value_len())
    }

    /// Writes the whole element with TLV-TYPE `typ`.
    pub fn encode(&self, typ: u32, buf: &mut impl BufMut) {
        tlv::put_header(buf, typ, self.value_len());
        tlv::put_nni_tlv(buf, types::SIGNATURE_TYPE, self.signature_type);
        if let Some(kl) = &self.key_locator {
            tlv::put_header(buf, types::KEY_LOCATOR, kl.value_len());
            match kl {
                KeyLocator::Name(n) => n.encode(buf),
                KeyLocator::KeyDigest(d) => tlv::put_tlv(buf, types::KEY_DIGEST, d),
            }
        }
        if let Some(vp) = &self.validity_period {
            tlv::put_header(buf, types::VALIDITY_PERIOD, vp.value_len());
            tlv::put_tlv(buf, types::NOT_BEFORE, &vp.not_before);
            tlv::put_tlv(buf, types::NOT_AFTER, &vp.not_after);
        }
        if let Some(nonce) = &self.nonce {
            tlv::put_tlv(buf, types::SIGNATURE_NONCE, nonce);
        }
        if let Some(t) = self.time {
            tlv::put_nni_tlv(buf, types::SIGNATURE_TIME, t);
        }
        if let Some(s) = self.seq_num {
            tlv::put_nni_tlv(buf, types::SIGNATURE_SEQ_NUM, s);
        }
    }

    /// Decodes a (Interest)SignatureInfo element read from `wire`.
    ///
    /// # Errors
    /// Missing SignatureType, elements out of order, unknown critical elements.
    pub fn decode(e: &Element<'_>, wire: &Bytes) -> Result<Self, DecodeError> {
        let mut info = Self::new(0);
        walk(e, wire, Some(&mut info))?;
        Ok(info)
    }

    /// Checks a SignatureInfo or InterestSignatureInfo element exactly as
    /// [`SignatureInfo::decode`] does, without building it (the forwarding path only needs to
    /// know that it is well formed).
    ///
    /// # Errors
    /// As [`SignatureInfo::decode`].
    #[inline]
    pub fn check(e: &Element<'_>, wire: &Bytes) -> Result<(), DecodeError> {
        if Self::is_simple(e.value) {
            return Ok(());
        }
        walk(e, wire, None)
    }

    /// Whether `value`, the TLV-VALUE of a SignatureInfo, has a shape that `walk` accepts
    /// without looking further: a one-octet SignatureType and nothing else (DigestSha256),
    /// or followed by a KeyLocator holding only a Name whose components the name scan's fast
    /// path takes whole (a signature by a named key, as most signed Data carry), every
    /// element in one-octet TYPE and LENGTH. Anything else is left to `walk`.
    #[inline(always)]
    pub(crate) fn is_simple(value: &[u8]) -> bool {
        match *value {
            [0x1b, 0x01, _] => true,
            [0x1b, 0x01, _, 0x1c, l @ 0..=0xfc, 0x07, n, ref name @ ..] => {
                usize::from(l) == usize::from(n) + 2
                    && usize::from(n) == name.len()
                    && name::scan_simple(name, &mut [0; 16]).1.is_empty()
            }
            _ => false,
        }
    }
}

/// Walks a SignatureInfo, checking every field, and fills `info` when given one.
#[inline(never)]
fn walk(
    e: &Element<'_>,
    wire: &Bytes,
    mut info: Option<&mut SignatureInfo>,
) -> Result<(), DecodeError> {
    let mut r = e.children();
    let st = r.expect(types::SIGNATURE_TYPE)?;
    let signature_type = st.nni()?;
    if let Some(info) = info.as_deref_mut() {
        info.signature_type = signature_type;
    }
    // SignatureType, read above, has place 0.
    let mut last = 0;
    let order = |typ: u32| match typ {
        types::KEY_LOCATOR => 1,
        types::VALIDITY_PERIOD => 2,
        types::SIGNATURE_NONCE => 3,
        types::SIGNATURE_TIME => 4,
        types::SIGNATURE_SEQ_NUM => 5,
        _ => 0,
    };
    while let Some(f) = r.read_ranked(order, &mut last)? {
        match f.typ {
            types::KEY_LOCATOR => match info.as_deref_mut() {
                Some(info) => info.key_locator = Some(KeyLocator::decode(&f, wire)?),
                None => {
                    KeyLocator::check(&f)?;
                }
            },
            types::VALIDITY_PERIOD => {
                let mut vr = f.children();
                let nb = vr.expect(types::NOT_BEFORE)?;
                let na = vr.expect(types::NOT_AFTER)?;
                if let Some(info) = info.as_deref_mut() {
                    info.validity_period = Some(ValidityPeriod {
                        not_before: slice_abs(wire, nb.value_range(), nb.start)?,
                        not_after: slice_abs(wire, na.value_range(), na.start)?,
                    });
                }
            }
            types::SIGNATURE_NONCE => {
                if let Some(info) = info.as_deref_mut() {
                    info.nonce = Some(slice_abs(wire, f.value_range(), f.start)?);
                }
            }
            types::SIGNATURE_TIME => {
                let t = f.nni()?;
                if let Some(info) = info.as_deref_mut() {
                    info.time = Some(t);
                }
            }
            _ => {
                let n = f.nni()?;
                if let Some(info) = info.as_deref_mut() {
                    info.seq_num = Some(n);
                }
            }
        }
    }
    Ok(())
}

impl ValidityPeriod {
    fn value_len(&self) -> usize {
        tlv::tlv_len(types::NOT_BEFORE, self.not_before.len())
            + tlv::tlv_len(types::NOT_AFTER, self.not_after.len())
    }
}

/// Why signing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignError {
    /// The key cannot produce this signature (wrong type, bad key material).
    #[error("signing key error: {0}")]
    Key(String),
}

/// Why a signature did not verify.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The packet carries no signature.
    #[error("packet is not signed")]
    Unsigned,
    /// The SignatureType is not the one this verifier checks.
    #[error("signature type {0} does not match the verifier")]
    WrongType(u64),
    /// The signature bytes are malformed (bad length, bad DER).
    #[error("malformed signature value")]
    Malformed,
    /// The signature does not match the signed portion.
    #[error("signature mismatch")]
    Mismatch,
}

/// Produces signatures over the signed portion of a packet.
pub trait Signer {
    /// The SignatureType this signer produces.
    fn signature_type(&self) -> u64;

    /// The KeyLocator to put in the SignatureInfo, if any.
    fn key_locator(&self) -> Option<KeyLocator>;

    /// Signs the concatenation of `parts` (the signed portion may be discontiguous, as for
    /// Interests).
    ///
    /// # Errors
    /// [`SignError`] when the key cannot sign.
    fn sign(&self, parts: &[&[u8]]) -> Result<Vec<u8>, SignError>;
}

/// Checks signatures over the signed portion of a packet.
pub trait Verifier {
    /// Verifies `signature` of type `signature_type` over the concatenation of `parts`.
    ///
    /// # Errors
    /// [`VerifyError`] when the signature does not verify.
    fn verify(
        &self,
        signature_type: u64,
        parts: &[&[u8]],
        signature: &[u8],
    ) -> Result<(), VerifyError>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tlv::Reader;

    /// Every one-byte corruption of a SignatureInfo with every field and of short ones: the
    /// check the forwarding path runs accepts exactly what the full decoder accepts, and
    /// refuses the rest with the same error.
    #[test]
    fn check_agrees_with_decode_under_corruption() {
        let mut info = SignatureInfo::new(3);
        info.key_locator = Some(KeyLocator::Name("/key/KEY/1".parse().unwrap()));
        info.validity_period = Some(ValidityPeriod {
            not_before: Bytes::from_static(b"20260101T000000"),
            not_after: Bytes::from_static(b"20270101T000000"),
        });
        info.nonce = Some(Bytes::from_static(&[1, 2, 3, 4]));
        info.time = Some(1_700_000_000_000);
        info.seq_num = Some(7);
        let mut buf = bytes::BytesMut::new();
        info.encode(types::INTEREST_SIGNATURE_INFO, &mut buf);
        // DigestSha256 alone, the shape `check` takes a fast path for, with an element
        // appended (so that corruptions reach past the SignatureType).
        SignatureInfo::new(0).encode(types::SIGNATURE_INFO, &mut buf);
        buf.extend_from_slice(&[0x16, 0x05, 0x1b, 0x01, 0x00, 0x1c, 0x00]);
        // A SignatureType and a KeyLocator Name, the other fast shape, also with an element
        // after the Name, after the KeyLocator, and with an empty Name.
        let mut named = SignatureInfo::new(3);
        named.key_locator = Some(KeyLocator::Name(
            "/key/KEY/%01%02/self/v=1".parse().unwrap(),
        ));
        named.encode(types::SIGNATURE_INFO, &mut buf);
        buf.extend_from_slice(&[0x16, 0x0b, 0x1b, 0x01, 0x03, 0x1c, 0x06, 0x07, 0x02, 0x08]);
        buf.extend_from_slice(&[0x00, 0x30, 0x00]);
        buf.extend_from_slice(&[0x16, 0x0b, 0x1b, 0x01, 0x03, 0x1c, 0x04, 0x07, 0x02, 0x08]);
        buf.extend_from_slice(&[0x00, 0x30, 0x00]);
        buf.extend_from_slice(&[0x16, 0x07, 0x1b, 0x01, 0x03, 0x1c, 0x02, 0x07, 0x00]);
        // A KeyLocator LENGTH of FD is a three-octet form, here past the end, though FD is
        // also the Name's LENGTH (FB) plus 2.
        buf.extend_from_slice(&[0x16, 0xfd, 0x01, 0x02, 0x1b, 0x01, 0x03, 0x1c, 0xfd, 0x07]);
        buf.extend_from_slice(&[0xfb, 0x08, 0xf9]);
        buf.extend_from_slice(&[0x61; 0xf9]);
        let wire = buf.freeze();
        let (mut accepted, mut refused, mut simple) = (0, 0, 0);
        for i in 0..wire.len() {
            for v in [
                0x00,
                0x01,
                0x02,
                0x07,
                0x08,
                0x1c,
                0x1d,
                0xfd,
                0xff,
                wire[i] ^ 0x80,
                wire[i].wrapping_add(1),
                wire[i].wrapping_sub(1),
            ] {
                let mut w = wire.to_vec();
                w[i] = v;
                let w = Bytes::from(w);
                let mut r = Reader::new(&w);
                while let Ok(Some(e)) = r.read() {
                    let decoded = SignatureInfo::decode(&e, &w);
                    assert_eq!(
                        SignatureInfo::check(&e, &w),
                        decoded.as_ref().map(drop).map_err(Clone::clone),
                        "byte {i} = {v:#04x}"
                    );
                    simple += usize::from(SignatureInfo::is_simple(e.value));
                    if decoded.is_ok() {
                        accepted += 1;
                    } else {
                        refused += 1;
                    }
                }
            }
        }
        assert!(accepted > 0 && refused > 0);
        assert!(simple > 100, "{simple} corruptions took the fast path");
    }
}
