//! Objects larger than one NDN packet: segmented Data.
//!
//! An object whose Content does not fit in one packet ([`SEGMENT_CONTENT`] octets) is sent as
//! segments `<object name>/seg=<i>`, each a Data signed by the anchor, with FinalBlockId the
//! last segment's component; a smaller object stays one unsegmented Data, as before. The
//! receiver ([`ObjectAssembler`]) verifies every segment, takes them in order on the
//! channel (the channel is one ordered stream: a segment out of order, of another object, or
//! a new object before the last one ended is refused), and decodes the object once the last
//! segment arrived, so an object is applied whole or not at all.

use bytes::{Bytes, BytesMut};
use nameway_transport::Certificate;
use nameway_wire::name::Component;
use nameway_wire::security::verify_data_wire;
use nameway_wire::tlv::read_nni;
use nameway_wire::tlv::types;
use nameway_wire::{Data, DataView, MetaInfo, Name};

use super::ConfigObject;
use crate::ca::{Authority, CaError};

/// The Content octets of one segment: with the name and the signature the Data stays well
/// inside NDN's 8800-octet packet.
pub const SEGMENT_CONTENT: usize = 7 * 1024;

/// The most segments of one object (16 MiB of Content): more is refused before buffering.
pub const MAX_SEGMENTS: u64 = (16 << 20) / SEGMENT_CONTENT as u64;

/// Signs `content` under `name` as one Data, or as segments when it does not fit.
pub(super) fn sign_segmented(
    ca: &Authority,
    name: Name,
    content: Bytes,
) -> Result<Vec<Bytes>, CaError> {
    let sign = |name: Name, content: Bytes, meta: Option<MetaInfo>| {
        let mut data = Data::new(name, content);
        data.meta_info = meta;
        data.sign(ca.signing_key().signer())
            .map_err(|e| CaError::BadObject(e.to_string()))?;
        Ok(data.encode())
    };
    if content.len() <= SEGMENT_CONTENT {
        return Ok(vec![sign(name, content, None)?]);
    }
    let count = content.len().div_ceil(SEGMENT_CONTENT);
    let last = Component::segment(count as u64 - 1);
    (0..count)
        .map(|i| {
            let seg = name
                .append(&Component::segment(i as u64))
                .map_err(|e| CaError::BadObject(e.to_string()))?;
            let end = ((i + 1) * SEGMENT_CONTENT).min(content.len());
            let meta = MetaInfo {
                final_block_id: Some(last.clone()),
                ..MetaInfo::default()
            };
            sign(seg, content.slice(i * SEGMENT_CONTENT..end), Some(meta))
        })
        .collect()
}

/// An object being received segment by segment.
#[derive(Debug)]
struct Partial {
    name: Name,
    last: u64,
    next: u64,
    content: BytesMut,
}

/// Puts an object's segments back together (one per channel: segments arrive in order).
#[derive(Debug, Default)]
pub struct ObjectAssembler {
    partial: Option<Partial>,
}

impl ObjectAssembler {
    /// A new assembler, holding nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one Data of an object: the object when it is complete (an unsegmented Data is
    /// complete at once), `None` while segments are missing.
    ///
    /// # Errors
    /// [`CaError::BadObject`]: a segment that does not verify against `anchor`, out of order,
    /// of another object than the one in progress, without a FinalBlockId, of an object
    /// larger than [`MAX_SEGMENTS`] segments; or the whole object's own refusals (a name
    /// that is not a configuration object of the anchor's domain, malformed Content). The
    /// object in progress is dropped.
    pub fn push(
        &mut self,
        wire: Bytes,
        anchor: &Certificate,
    ) -> Result<Option<ConfigObject>, CaError> {
        let r = self.accept(wire, anchor);
        if r.is_err() {
            self.partial = None;
        }
        r
    }

    fn accept(
        &mut self,
        wire: Bytes,
        anchor: &Certificate,
    ) -> Result<Option<ConfigObject>, CaError> {
        let bad = |m: String| CaError::BadObject(m);
        let view = DataView::new_checked(wire).map_err(|e| bad(format!("object: {e}")))?;
        verify_data_wire(&view, anchor.key().verifier())
            .map_err(|e| bad(format!("object signature: {e}")))?;
        let name = view.name().clone();
        let Some(i) = name.last().and_then(|c| c.as_segment()) else {
            if let Some(p) = self.partial.take() {
                return Err(bad(format!("{} ended before its last segment", p.name)));
            }
            return ConfigObject::decode_parts(name, view.content(), anchor).map(Some);
        };
        let object = name.prefix(name.len() - 1);
        let last = view
            .final_block_id()
            .filter(|c| c.typ == types::SEGMENT_NAME_COMPONENT)
            .and_then(|c| read_nni(&c.value).ok())
            .ok_or_else(|| bad(format!("{name}: a segment without a FinalBlockId")))?;
        if last >= MAX_SEGMENTS || i > last {
            return Err(bad(format!("{name}: segment {i} of {}", last + 1)));
        }
        let partial = match self.partial.as_mut() {
            None if i == 0 => self.partial.insert(Partial {
                name: object,
                last,
                next: 0,
                content: BytesMut::new(),
            }),
            Some(p) if p.name == object && p.next == i && p.last == last => p,
            _ => return Err(bad(format!("{name}: a segment out of order"))),
        };
        partial.content.extend_from_slice(&view.content());
        partial.next += 1;
        if i < last {
            return Ok(None);
        }
        let Some(p) = self.partial.take() else {
            return Ok(None);
        };
        ConfigObject::decode_parts(p.name, p.content.freeze(), anchor).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{ConfigBody, ConfigKind};
    use crate::routes::{Fib, NextHop};

    fn authority(dir: &std::path::Path, tag: &str) -> Authority {
        Authority::create(
            &"/example".parse().unwrap(),
            &dir.join(format!("{tag}.key")),
            &dir.join(format!("{tag}.cert")),
        )
        .unwrap()
    }

    fn fib_object(version: u64, prefixes: usize) -> ConfigObject {
        let mut fib = Fib::new();
        for i in 0..prefixes {
            let p: Name = format!("/example/app-{i}/videos").parse().unwrap();
            fib.insert(
                p,
                vec![NextHop {
                    face: 257 + i as u64 % 7,
                    cost: 10,
                }],
            );
        }
        ConfigObject {
            router: "/example/r1".parse().unwrap(),
            kind: ConfigKind::Fib,
            version,
            base: None,
            body: ConfigBody::FibSnapshot(fib),
        }
    }

    #[test]
    fn a_fib_of_a_thousand_routes_goes_as_packets_and_comes_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let ca = authority(dir.path(), "ca");
        let object = fib_object(3, 1000);
        let wires = object.sign_segments(&ca).unwrap();
        assert!(wires.len() > 3, "{} segments", wires.len());
        for w in &wires {
            assert!(
                w.len() <= nameway_wire::MAX_PACKET_SIZE,
                "a segment of {} octets",
                w.len()
            );
        }
        // One Data of that size is what an agent used to refuse.
        let whole = object.sign(&ca).unwrap();
        assert!(ConfigObject::decode_verified(whole, ca.certificate()).is_err());
        let mut a = ObjectAssembler::new();
        let (last, first) = wires.split_last().unwrap();
        for w in first {
            assert!(a.push(w.clone(), ca.certificate()).unwrap().is_none());
        }
        let got = a.push(last.clone(), ca.certificate()).unwrap().unwrap();
        assert_eq!(got.version, 3);
        assert_eq!(got.body, object.body);
    }

    #[test]
    fn a_small_object_stays_one_packet() {
        let dir = tempfile::tempdir().unwrap();
        let ca = authority(dir.path(), "ca");
        let object = fib_object(1, 5);
        let wires = object.sign_segments(&ca).unwrap();
        assert_eq!(wires.len(), 1);
        assert_eq!(wires[0], object.sign(&ca).unwrap());
        let got = ObjectAssembler::new()
            .push(wires[0].clone(), ca.certificate())
            .unwrap()
            .unwrap();
        assert_eq!(got.body, object.body);
    }

    #[test]
    fn forged_missing_or_reordered_segments_are_refused_and_nothing_is_applied() {
        let dir = tempfile::tempdir().unwrap();
        let ca = authority(dir.path(), "ca");
        let forger = authority(dir.path(), "forger");
        let good = fib_object(2, 1000).sign_segments(&ca).unwrap();
        let forged = fib_object(2, 1000).sign_segments(&forger).unwrap();
        let anchor = ca.certificate();

        // A forged segment in the middle: refused, and the object in progress dropped.
        let mut a = ObjectAssembler::new();
        assert!(a.push(good[0].clone(), anchor).unwrap().is_none());
        assert!(a.push(forged[1].clone(), anchor).is_err());
        assert!(
            a.push(good[2].clone(), anchor).is_err(),
            "continued after a refusal"
        );

        // A segment skipped.
        let mut a = ObjectAssembler::new();
        assert!(a.push(good[0].clone(), anchor).unwrap().is_none());
        assert!(a.push(good[2].clone(), anchor).is_err());

        // Another object before the first ended.
        let small = fib_object(4, 1).sign_segments(&ca).unwrap();
        let mut a = ObjectAssembler::new();
        assert!(a.push(good[0].clone(), anchor).unwrap().is_none());
        assert!(a.push(small[0].clone(), anchor).is_err());

        // After refusals the assembler takes a whole object again.
        let mut got = None;
        for w in &good {
            got = a.push(w.clone(), anchor).unwrap();
        }
        assert_eq!(got.unwrap().version, 2);
    }
}
