//! Entry points for the fuzz targets in `fuzz/`, one per decoder.
//!
//! Each function takes untrusted bytes, decodes them, and when decoding succeeds checks
//! invariants that must hold for every accepted input:
//! - the checked view and the owned decoder agree (accept the same packets, read the same
//!   fields);
//! - re-encoding is faithful: `decode(encode(x)) == x` for the owned types, and encoding is
//!   stable (`encode(decode(encode(x))) == encode(x)`);
//! - the view's in-place rewrites (HopLimit, Nonce) give packets that still decode, with only
//!   that field changed;
//! - a decoded Name prints as a URI that parses back to the same Name (typed numbers in their
//!   shortest form, as the URI cannot show their width), and its prefix hashes
//!   agree with the hashes of its prefixes;
//! - every error points inside the input.
//!
//! A panic here is the point: it means an invariant does not hold, never a bad input. Not part
//! of the stable API, and compiled only with the `fuzzing` feature (which `fuzz/` turns on)
//! and for this crate's unit tests, which run it over the fuzz seeds. A target is one line:
//! `fuzz_target!(|data: &[u8]| nameway_wire::fuzzing::decode_any(data));`

#![doc(hidden)]
// Fuzzing entry points panic on purpose when an invariant breaks, so the crate's
// no-unwrap/no-expect rules do not apply here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bytes::Bytes;

use crate::data::content_type;
use crate::error::{DecodeError, ErrorKind};
use crate::lp::{fragment, LpPacket, Packet, Reassembler, ReassemblerConfig};
use crate::mgmt::{
    self, ControlParameters, ControlResponse, CsInfo, FaceQueryFilter, FaceStatus, FibEntry,
    ForwarderStatus, RibEntry, StrategyChoice,
};
use crate::name::{Component, Name};
use crate::tlv::{self, types, Reader};
use crate::{Data, DataView, Interest, InterestView, NameHasher};

/// Decodes an Interest with both [`InterestView::new_checked`] and [`Interest::decode`] and
/// checks that they agree, that the owned Interest re-encodes faithfully and that the view's
/// HopLimit and Nonce rewrites keep the packet valid.
pub fn decode_interest(data: &[u8]) {
    let wire = Bytes::copy_from_slice(data);
    let view = InterestView::new_checked(wire.clone());
    let owned = Interest::decode(&wire);
    for err in [view.as_ref().err(), owned.as_ref().err()]
        .into_iter()
        .flatten()
    {
        check_error_location(err, data.len());
    }
    match (&view, &owned) {
        (Ok(v), Ok(i)) => {
            check_view_matches_interest(v, i);
            check_interest_round_trip(i);
            check_name(&i.name);
            i.forwarding_hint.iter().for_each(check_name);
        }
        (Err(e), Ok(_)) => panic!("Interest::decode accepted what InterestView rejected: {e}"),
        (Ok(_), Err(e)) => assert_eq!(
            e.kind,
            ErrorKind::ParametersDigestMismatch,
            "InterestView accepted what Interest::decode rejected for another reason than the \
             parameters digest: {e}"
        ),
        (Err(_), Err(_)) => {}
    }
    if let Ok(v) = &view {
        check_interest_rewrites(v, owned.is_ok());
    }
}

/// Decodes a Data with both [`DataView::new_checked`] and [`Data::decode`] and checks that they
/// agree, that the owned Data re-encodes faithfully and that the full name is the name plus the
/// implicit digest.
pub fn decode_data(data: &[u8]) {
    let wire = Bytes::copy_from_slice(data);
    let view = DataView::new_checked(wire.clone());
    let owned = Data::decode(&wire);
    match (&view, &owned) {
        (Ok(v), Ok(d)) => {
            check_view_matches_data(v, d);
            check_data_round_trip(d);
            check_name(&d.name);
        }
        (Err(a), Err(b)) => {
            assert_eq!(
                a, b,
                "DataView and Data::decode reject with different errors"
            );
            check_error_location(a, data.len());
        }
        (Ok(_), Err(e)) => panic!("DataView accepted what Data::decode rejected: {e}"),
        (Err(e), Ok(_)) => panic!("Data::decode accepted what DataView rejected: {e}"),
    }
}

/// Decodes an LpPacket and checks that [`Packet::classify`] agrees, that it re-encodes
/// faithfully, that the packet in an unfragmented Fragment survives [`fragment`] and
/// [`Reassembler`], and runs the Interest or Data checks on that packet.
pub fn decode_lp(data: &[u8]) {
    let wire = Bytes::copy_from_slice(data);
    let decoded = LpPacket::decode(&wire);
    if let Err(e) = &decoded {
        check_error_location(e, data.len());
    }
    let classified = Packet::classify(wire.clone());
    if tlv::read_single(&wire).is_ok_and(|e| e.typ == types::LP_PACKET) {
        match (&decoded, &classified) {
            (Ok(lp), Ok(Packet::Lp(c))) => assert_eq!(lp, c, "classify decoded another header"),
            (Err(a), Err(b)) => assert_eq!(a, b, "classify and decode reject differently"),
            (a, b) => panic!("LpPacket::decode gave {a:?} but Packet::classify gave {b:?}"),
        }
    }
    let Ok(lp) = decoded else {
        return;
    };
    check_lp_round_trip(&lp);
    let Some(frag) = lp.fragment.as_ref().filter(|_| !lp.is_fragmented()) else {
        return;
    };
    check_reassembly(frag, data.len());
    match tlv::read_var_number(frag) {
        Ok((typ, _)) if typ == u64::from(types::INTEREST) => decode_interest(frag),
        Ok((typ, _)) if typ == u64::from(types::DATA) => decode_data(frag),
        _ => {}
    }
}

/// Decodes management TLVs: ControlParameters, ControlResponse (and its ControlParameters
/// body), FaceQueryFilter by their TLV-TYPE; anything else as the Content of every status
/// dataset. Whatever decodes must re-encode faithfully.
pub fn decode_mgmt(data: &[u8]) {
    let wire = Bytes::copy_from_slice(data);
    let typ = tlv::read_var_number(data).map(|(t, _)| t).unwrap_or(0);
    match u32::try_from(typ).unwrap_or(0) {
        mgmt::types::CONTROL_PARAMETERS => {
            if let Some(p) = round_trip(&wire, ControlParameters::decode, ControlParameters::encode)
            {
                p.name.iter().chain(&p.strategy).for_each(check_name);
            }
        }
        mgmt::types::CONTROL_RESPONSE => {
            let r = round_trip(&wire, ControlResponse::decode, ControlResponse::encode);
            if let Some(Ok(Some(p))) = r.map(|r| r.parameters()) {
                round_trip(
                    &p.encode(),
                    ControlParameters::decode,
                    ControlParameters::encode,
                );
            }
        }
        mgmt::types::FACE_QUERY_FILTER => {
            round_trip(&wire, FaceQueryFilter::decode, FaceQueryFilter::encode);
        }
        _ => {
            round_trip(&wire, FaceStatus::decode_list, |l| {
                FaceStatus::encode_list(l)
            });
            round_trip(&wire, FibEntry::decode_list, |l| FibEntry::encode_list(l));
            round_trip(&wire, RibEntry::decode_list, |l| RibEntry::encode_list(l));
            round_trip(&wire, CsInfo::decode_list, |l| CsInfo::encode_list(l));
            round_trip(&wire, StrategyChoice::decode_list, |l| {
                StrategyChoice::encode_list(l)
            });
            round_trip(&wire, ForwarderStatus::decode, ForwarderStatus::encode);
        }
    }
}

/// Decodes `wire`; when that succeeds, checks `decode(encode(x)) == x` and that encoding is
/// stable, and returns `x`. Checks the error location otherwise.
fn round_trip<T: PartialEq + core::fmt::Debug>(
    wire: &Bytes,
    decode: impl Fn(&Bytes) -> Result<T, DecodeError>,
    encode: impl Fn(&T) -> Bytes,
) -> Option<T> {
    let x = match decode(wire) {
        Ok(x) => x,
        Err(e) => {
            check_error_location(&e, wire.len());
            return None;
        }
    };
    let encoded = encode(&x);
    let back = decode(&encoded)
        .unwrap_or_else(|e| panic!("re-encoded {} does not decode: {e}\n{x:?}", type_of(&x)));
    assert_eq!(back, x, "{} round trip", type_of(&x));
    assert_eq!(
        encode(&back),
        encoded,
        "{} encoding is not stable",
        type_of(&x)
    );
    Some(x)
}

fn type_of<T>(_: &T) -> &'static str {
    core::any::type_name::<T>()
}

/// Parses bytes as an NDN URI. A URI that parses must print canonically, parse back to the
/// same Name (up to the width of typed numbers: `50=%00%05` is a segment number written in two
/// bytes, which prints as `seg=5` as in ndn-cxx and parses back in one byte), and survive a
/// wire round trip.
pub fn parse_uri(data: &[u8]) {
    let Ok(uri) = core::str::from_utf8(data) else {
        return;
    };
    let Ok(name) = uri.parse::<Name>() else {
        return;
    };
    let printed = name.to_string();
    let reparsed: Name = printed
        .parse()
        .unwrap_or_else(|e| panic!("canonical URI {printed:?} of {uri:?} does not parse: {e}"));
    assert_eq!(
        reparsed,
        canonical(&name),
        "{uri:?} -> {printed:?} parses to another name"
    );
    check_name(&name);
}

/// Dispatches on the first TLV-TYPE to the decoder of that packet type; anything else is
/// walked as generic TLV (checking the reader's offsets) and parsed as a URI.
pub fn decode_any(data: &[u8]) {
    let typ = tlv::read_var_number(data).map(|(t, _)| t).unwrap_or(0);
    match u32::try_from(typ).unwrap_or(0) {
        types::INTEREST => decode_interest(data),
        types::DATA => decode_data(data),
        types::LP_PACKET => decode_lp(data),
        types::NAME => decode_name(data),
        mgmt::types::CONTROL_PARAMETERS
        | mgmt::types::CONTROL_RESPONSE
        | mgmt::types::FACE_QUERY_FILTER
        | mgmt::types::FACE_STATUS => decode_mgmt(data),
        _ => {
            walk(data, 0, 0);
            parse_uri(data);
        }
    }
}

/// Decodes a Name element and checks it as every decoded name is checked.
pub fn decode_name(data: &[u8]) {
    match Name::decode(&Bytes::copy_from_slice(data)) {
        Ok(name) => check_name(&name),
        Err(e) => check_error_location(&e, data.len()),
    }
}

/// An error must point inside the input (or just past its end, for a truncation).
fn check_error_location(err: &DecodeError, len: usize) {
    assert!(
        err.offset <= len,
        "error offset {} past the input ({len} bytes): {err}",
        err.offset
    );
}

fn check_view_matches_interest(v: &InterestView, i: &Interest) {
    assert_eq!(v.name(), &i.name, "name");
    assert_eq!(v.can_be_prefix(), i.can_be_prefix, "CanBePrefix");
    assert_eq!(v.must_be_fresh(), i.must_be_fresh, "MustBeFresh");
    assert_eq!(v.nonce(), i.nonce, "Nonce");
    assert_eq!(v.lifetime_ms(), i.lifetime(), "InterestLifetime");
    assert_eq!(v.hop_limit(), i.hop_limit, "HopLimit");
    assert_eq!(
        v.has_parameters(),
        i.app_parameters.is_some(),
        "ApplicationParameters"
    );
    assert_eq!(
        v.is_signed(),
        i.signature_info.is_some(),
        "InterestSignatureInfo"
    );
    assert_eq!(
        v.has_forwarding_hint(),
        !i.forwarding_hint.is_empty(),
        "ForwardingHint"
    );
    assert_eq!(
        v.forwarding_hint(),
        i.forwarding_hint,
        "ForwardingHint names"
    );
}

/// `decode(encode(x)) == x`, except that the ParametersSha256DigestComponent is recomputed by
/// `encode` (unrecognized elements in the parameters block are not kept, which changes the
/// digest); and encoding is stable.
fn check_interest_round_trip(i: &Interest) {
    let wire = i.encode();
    let back = Interest::decode(&wire)
        .unwrap_or_else(|e| panic!("re-encoded Interest does not decode: {e}\n{i:?}"));
    assert_eq!(
        without_params_digest(&back),
        without_params_digest(i),
        "round trip"
    );
    assert_eq!(back.encode(), wire, "encoding is not stable");
}

fn without_params_digest(i: &Interest) -> Interest {
    let comps: Vec<Component> = i
        .name
        .iter()
        .filter(|c| c.typ() != types::PARAMETERS_SHA256_DIGEST_COMPONENT)
        .map(|c| c.to_owned())
        .collect();
    let name = Name::from_components(&comps).expect("a sub-name of a valid name is valid");
    Interest { name, ..i.clone() }
}

/// The view's rewrites: HopLimit and Nonce change, nothing else does, and a packet that passed
/// [`Interest::decode`] still does (the Nonce is outside the parameters digest).
fn check_interest_rewrites(v: &InterestView, owned_ok: bool) {
    if let Some(h) = v.hop_limit() {
        let h2 = h.wrapping_sub(1);
        let w = v.with_hop_limit(h2);
        assert_eq!(w.len(), v.wire().len(), "HopLimit rewrite changed the size");
        let v2 = InterestView::new_checked(w.clone())
            .unwrap_or_else(|e| panic!("Interest with HopLimit rewritten does not decode: {e}"));
        assert_eq!(v2.hop_limit(), Some(h2));
        check_same_interest_fields(v, &v2, true);
        assert_eq!(
            Interest::decode(&w).is_ok(),
            owned_ok,
            "HopLimit rewrite and decode"
        );
    }
    let nonce = v.nonce().map_or(0x5a5a_5a5a, |n| !n);
    let w = v.with_nonce(nonce);
    if w.len() > tlv::MAX_PACKET_SIZE {
        return; // inserting the Nonce pushed the packet past the limit
    }
    let v2 = InterestView::new_checked(w.clone())
        .unwrap_or_else(|e| panic!("Interest with Nonce set does not decode: {e}"));
    assert_eq!(v2.nonce(), Some(nonce));
    assert_eq!(v2.hop_limit(), v.hop_limit());
    check_same_interest_fields(v, &v2, false);
    assert_eq!(
        Interest::decode(&w).is_ok(),
        owned_ok,
        "Nonce rewrite and decode"
    );
    let mut v3 = v.clone();
    v3.set_nonce(nonce);
    assert_eq!(v3.wire(), &w, "set_nonce and with_nonce differ");
    assert_eq!(v3.nonce(), Some(nonce));
}

fn check_same_interest_fields(a: &InterestView, b: &InterestView, same_nonce: bool) {
    assert_eq!(a.name(), b.name());
    assert_eq!(a.can_be_prefix(), b.can_be_prefix());
    assert_eq!(a.must_be_fresh(), b.must_be_fresh());
    assert_eq!(a.lifetime_ms(), b.lifetime_ms());
    assert_eq!(a.has_parameters(), b.has_parameters());
    assert_eq!(a.is_signed(), b.is_signed());
    assert_eq!(a.forwarding_hint(), b.forwarding_hint());
    if same_nonce {
        assert_eq!(a.nonce(), b.nonce());
    }
}

fn check_view_matches_data(v: &DataView, d: &Data) {
    let meta = d.meta_info.clone().unwrap_or_default();
    assert_eq!(v.name(), &d.name, "name");
    assert_eq!(
        v.content(),
        d.content.clone().unwrap_or_default(),
        "Content"
    );
    assert_eq!(
        v.content_type(),
        meta.content_type.unwrap_or(content_type::BLOB),
        "ContentType"
    );
    assert_eq!(
        v.freshness_period_ms(),
        d.freshness_period(),
        "FreshnessPeriod"
    );
    assert_eq!(v.final_block_id(), meta.final_block_id, "FinalBlockId");
    assert_eq!(v.signature_info(), d.signature_info, "SignatureInfo");
    assert_eq!(v.signature_value(), d.signature_value, "SignatureValue");
    let full = v.full_name();
    assert_eq!(
        full.len(),
        d.name.len() + 1,
        "full name is not name + digest"
    );
    let digest = full.last().map(|c| c.value().to_vec()).unwrap_or_default();
    assert_eq!(
        digest,
        v.implicit_digest(),
        "full name does not end in the implicit digest"
    );
    assert!(
        v.signed_portion().starts_with(&d.name.to_wire()),
        "signed portion starts at Name"
    );
}

fn check_data_round_trip(d: &Data) {
    let wire = d.encode();
    let back = Data::decode(&wire)
        .unwrap_or_else(|e| panic!("re-encoded Data does not decode: {e}\n{d:?}"));
    assert_eq!(&back, d, "round trip");
    assert_eq!(back.encode(), wire, "encoding is not stable");
}

/// `decode(encode(x)) == x` for LpPacket, except HopCount, which is never encoded.
fn check_lp_round_trip(lp: &LpPacket) {
    let wire = lp.encode();
    assert_eq!(wire.len(), lp.encoded_len(), "encoded_len");
    let back = LpPacket::decode(&wire)
        .unwrap_or_else(|e| panic!("re-encoded LpPacket does not decode: {e}\n{lp:?}"));
    assert_eq!(
        back,
        LpPacket {
            hop_count: None,
            ..lp.clone()
        },
        "round trip"
    );
    assert_eq!(back.encode(), wire, "encoding is not stable");
}

/// Splits a network-layer packet at an MTU chosen from the input size, checks every piece,
/// and puts it back together from the pieces given in reverse order.
fn check_reassembly(packet: &Bytes, seed: usize) {
    // At most about 64 pieces, well within the reassembler's 400.
    let mtu = 40 + seed % 500 + packet.len() / 64;
    let seq = (seed as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let pieces = fragment(packet, mtu, seq);
    assert!(
        !pieces.is_empty(),
        "fragment() gave nothing for {} bytes at MTU {mtu}",
        packet.len()
    );
    let mut r = Reassembler::new(ReassemblerConfig::default());
    let mut out = None;
    for (i, piece) in pieces.iter().rev().enumerate() {
        assert!(
            piece.len() <= mtu,
            "fragment of {} bytes exceeds MTU {mtu}",
            piece.len()
        );
        let lp =
            LpPacket::decode(piece).unwrap_or_else(|e| panic!("fragment does not decode: {e}"));
        let got = r.receive(0, &lp);
        if i + 1 < pieces.len() {
            assert!(got.is_none(), "reassembled before the last fragment");
        }
        out = got;
    }
    assert_eq!(
        out.as_ref(),
        Some(packet),
        "reassembly of {} fragments",
        pieces.len()
    );
    assert!(r.is_empty(), "reassembler kept state after completing");
}

/// Checks every decoded name: URI print -> parse, wire round trip, prefix hashes.
fn check_name(name: &Name) {
    let uri = name.to_string();
    let parsed: Name = uri
        .parse()
        .unwrap_or_else(|e| panic!("URI {uri:?} of a decoded name does not parse: {e}"));
    assert_eq!(
        parsed,
        canonical(name),
        "URI {uri:?} parses to another name"
    );
    assert_eq!(parsed.to_string(), uri, "URI printing is not stable");
    let back = Name::decode(&name.to_wire()).unwrap_or_else(|e| panic!("Name wire: {e}"));
    assert_eq!(&back, name, "Name wire round trip");
    check_prefix_hashes(name);
}

/// The name with every typed number (`seg=`, `v=`, `t=`, `seq=`, `off=`) in its shortest
/// encoding: the URI prints the number, so it cannot keep a longer encoding.
fn canonical(name: &Name) -> Name {
    let comps: Vec<Component> = name
        .iter()
        .map(|c| match (is_number_component(c.typ()), c.as_number()) {
            (true, Some(n)) => Component::number(c.typ(), n),
            _ => c.to_owned(),
        })
        .collect();
    Name::from_components(&comps).expect("the canonical form of a valid name is valid")
}

const fn is_number_component(typ: u32) -> bool {
    matches!(
        typ,
        types::SEGMENT_NAME_COMPONENT
            | types::BYTE_OFFSET_NAME_COMPONENT
            | types::VERSION_NAME_COMPONENT
            | types::TIMESTAMP_NAME_COMPONENT
            | types::SEQUENCE_NUM_NAME_COMPONENT
    )
}

/// Prefix hashes agree with the hashes of the prefixes (the first 16 and the whole name, to
/// keep the check linear).
fn check_prefix_hashes(name: &Name) {
    let h = NameHasher::with_seed(0x6e77);
    let ph = h.prefix_hashes(name);
    assert_eq!(ph.name_len(), name.len());
    assert_eq!(ph.full(), h.hash_name(name));
    for i in (0..=name.len().min(16)).chain([name.len()]) {
        assert_eq!(
            ph.get(i),
            Some(h.hash_name(&name.prefix(i))),
            "prefix hash {i}"
        );
    }
}

/// Walks nested TLV as far as it parses, checking that every element lies inside its parent.
fn walk(buf: &[u8], base: usize, depth: usize) {
    if depth > tlv::MAX_DEPTH {
        return;
    }
    let mut r = Reader::with_base(buf, base);
    while let Ok(Some(e)) = r.read() {
        assert!(
            e.start >= base && e.end() <= base + buf.len(),
            "element outside its parent"
        );
        assert!(e.start < e.value_start && e.value_start <= e.end());
        walk(e.value, e.value_start, depth + 1);
    }
}

/// The seed files of one fuzz target (`fuzz/seeds/<target>/` in this repository), sorted, for
/// unit tests that run the invariants over them (this crate's and `nameway-transport`'s).
///
/// # Panics
/// When the folder is missing or empty, or a file cannot be read.
pub fn seeds(target: &str) -> Vec<(std::path::PathBuf, Bytes)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(target);
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no seeds in {}", dir.display());
    files
        .into_iter()
        .map(|p| (p.clone(), Bytes::from(std::fs::read(p).unwrap())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interest_seeds_decode_and_hold_the_invariants() {
        for (path, wire) in seeds("interest") {
            Interest::decode(&wire).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            decode_interest(&wire);
            decode_any(&wire);
        }
    }

    #[test]
    fn data_seeds_decode_and_hold_the_invariants() {
        for (path, wire) in seeds("data") {
            Data::decode(&wire).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            decode_data(&wire);
            decode_any(&wire);
        }
    }

    #[test]
    fn lp_seeds_decode_and_hold_the_invariants() {
        for (path, wire) in seeds("lp_packet") {
            LpPacket::decode(&wire).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            decode_lp(&wire);
            decode_any(&wire);
        }
    }

    #[test]
    fn mgmt_seeds_decode_and_hold_the_invariants() {
        for (path, wire) in seeds("mgmt") {
            let decoded = ControlParameters::decode(&wire).is_ok()
                || ControlResponse::decode(&wire).is_ok()
                || FaceQueryFilter::decode(&wire).is_ok()
                || FaceStatus::decode_list(&wire).is_ok()
                || FibEntry::decode_list(&wire).is_ok()
                || RibEntry::decode_list(&wire).is_ok()
                || CsInfo::decode_list(&wire).is_ok()
                || StrategyChoice::decode_list(&wire).is_ok()
                || ForwarderStatus::decode(&wire).is_ok();
            assert!(decoded, "{} decodes as no management type", path.display());
            decode_mgmt(&wire);
        }
    }

    #[test]
    fn uri_seeds_parse_and_round_trip() {
        for (path, uri) in seeds("name_uri") {
            let text = core::str::from_utf8(&uri).unwrap();
            text.parse::<Name>()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            parse_uri(&uri);
        }
    }

    #[test]
    fn non_minimal_typed_numbers_print_canonically() {
        // seg=5 written in 2 bytes: prints as seg=5, which parses to the 1-byte form.
        decode_name(&[0x07, 0x04, 0x32, 0x02, 0x00, 0x05]);
        // A segment component that is not a NonNegativeInteger keeps its number type.
        decode_name(&[0x07, 0x05, 0x32, 0x03, 0x00, 0x00, 0x05]);
    }

    #[test]
    fn garbage_is_not_an_invariant_violation() {
        for input in [
            &b""[..],
            b"\x05",
            b"\x05\x00",
            b"\x06\x00",
            b"\x64\x00",
            b"\xff",
            b"/a/%zz",
        ] {
            decode_any(input);
            decode_interest(input);
            decode_data(input);
            decode_lp(input);
            decode_mgmt(input);
            parse_uri(input);
        }
    }
}
