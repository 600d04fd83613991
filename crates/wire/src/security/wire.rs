//! Verification over the signed portion exactly as received.
//!
//! [`Interest::verify`](crate::Interest::verify) and [`Data::verify`](crate::Data::verify)
//! rebuild the signed portion from the decoded fields. That matches the received bytes for every
//! packet Nameway, python-ndn, NDNts and ndn-cxx build, but not for one carrying elements the
//! decoders skip (an unrecognized non-critical element inside SignatureInfo, such as a
//! certificate's AdditionalDescription, or between ApplicationParameters and
//! InterestSignatureInfo). These functions hash the original bytes instead, as ndn-cxx does.

use crate::data::DataView;
use crate::interest::InterestView;
use crate::signature::{SignatureInfo, Verifier, VerifyError};
use crate::tlv::{self, types};

/// Verifies a Data packet over its received Name-to-SignatureInfo bytes.
///
/// # Errors
/// The verifier's [`VerifyError`].
pub fn verify_data_wire(data: &DataView, verifier: &dyn Verifier) -> Result<(), VerifyError> {
    let info = data.signature_info();
    verifier.verify(
        info.signature_type,
        &[data.signed_portion()],
        &data.signature_value(),
    )
}

/// Verifies a signed Interest over its received signed portion: the Name components except the
/// ParametersSha256DigestComponent, then everything from ApplicationParameters to the end of
/// InterestSignatureInfo.
///
//= https://docs.named-data.net/NDN-packet-spec/0.3/signed-interest.html#signed-interest-specific-elements
//# the signed portion of an Interest begins at the first name component (excluding the Name
//# TLV-TYPE and TLV-LENGTH) and continues to the end of InterestSignatureInfo
///
/// # Errors
/// [`VerifyError::Unsigned`] without InterestSignatureInfo and InterestSignatureValue, or the
/// verifier's error.
pub fn verify_interest_wire(
    interest: &InterestView,
    verifier: &dyn Verifier,
) -> Result<(), VerifyError> {
    let wire = interest.wire();
    // The view checked the structure already; failures here can only mean "not signed".
    let top = tlv::read_single(wire).map_err(|_| VerifyError::Malformed)?;
    let mut r = top.children();
    let name = r.expect(types::NAME).map_err(|_| VerifyError::Malformed)?;
    let mut parts: Vec<&[u8]> = Vec::new();
    let mut comps = name.children();
    while let Some(c) = comps.read().map_err(|_| VerifyError::Malformed)? {
        if c.typ != types::PARAMETERS_SHA256_DIGEST_COMPONENT {
            parts.push(wire.get(c.range()).unwrap_or_default());
        }
    }
    let (mut block_start, mut info, mut value) = (None, None, None);
    while let Some(e) = r.read().map_err(|_| VerifyError::Malformed)? {
        match e.typ {
            types::APPLICATION_PARAMETERS => block_start = Some(e.start),
            types::INTEREST_SIGNATURE_INFO => info = Some(e),
            types::INTEREST_SIGNATURE_VALUE => value = Some(e.value),
            _ => {}
        }
    }
    let (Some(info), Some(value)) = (info, value) else {
        return Err(VerifyError::Unsigned);
    };
    let start = block_start.unwrap_or(info.start);
    parts.push(wire.get(start..info.end()).unwrap_or_default());
    let info = SignatureInfo::decode(&info, wire).map_err(|_| VerifyError::Malformed)?;
    verifier.verify(info.signature_type, &parts, value)
}
