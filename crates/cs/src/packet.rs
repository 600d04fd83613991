//! What the tiers store ([`Packet`]) and what they are asked ([`Query`]), and the one matching
//! rule both tiers apply.

use bytes::Bytes;
use nameway_wire::tlv::types;
use nameway_wire::{DataView, DecodeError, Name};

/// One Data packet with what look-ups need, decoded once when it enters the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// The whole Data TLV, as received.
    pub wire: Bytes,
    /// The Name's TLV-VALUE (a slice of `wire`): the key in both tiers. Names that share a
    /// component prefix share this byte prefix, so a CanBePrefix look-up is a range scan.
    pub key: Bytes,
    /// Wall-clock arrival time, milliseconds since the Unix epoch (kept across restarts).
    pub arrived_ms: u64,
    /// Until when the packet is fresh (arrival + FreshnessPeriod; equal to arrival when the
    /// Data has no FreshnessPeriod, so MustBeFresh never matches it).
    pub fresh_until_ms: u64,
    /// The implicit SHA-256 digest of `wire`: the checksum of disk records, and what an
    /// implicit-digest Interest names.
    pub digest: [u8; 32],
    /// Whatever the caller attached at insert, given back in [`crate::Change`]s (the forwarder
    /// attaches the name's prefix hashes). Kept in memory only: packets read from disk have none.
    pub tag: Tag,
}

/// A tag a caller attaches to a packet: the forwarder attaches the name's prefix hashes
/// (inline up to 11 components, so no allocation per packet on the forwarder's thread; about
/// as much memory per entry as a shared slice with its heap block would take).
pub type Tag = Option<nameway_wire::PrefixHashes>;

impl Packet {
    /// Decodes a Data that arrived at `arrived_ms`.
    ///
    /// # Errors
    /// `wire` is not a valid Data.
    pub fn new(wire: Bytes, arrived_ms: u64) -> Result<Self, DecodeError> {
        let view = DataView::new_checked(wire)?;
        Ok(Self::from_view(&view, arrived_ms))
    }

    /// The packet of an already checked view.
    pub fn from_view(view: &DataView, arrived_ms: u64) -> Self {
        let wire = view.wire().clone();
        let key = name_key(&wire, view.name());
        Self {
            fresh_until_ms: arrived_ms.saturating_add(view.freshness_period_ms()),
            digest: view.implicit_digest(),
            wire,
            key,
            arrived_ms,
            tag: None,
        }
    }

    /// Bytes this packet is charged in a tier: the wire plus the index overhead.
    pub fn charge(&self) -> usize {
        self.wire.len() + ENTRY_OVERHEAD
    }

    /// Whether it is fresh at `now_ms`.
    pub fn is_fresh(&self, now_ms: u64) -> bool {
        self.fresh_until_ms > now_ms
    }
}

/// Bytes charged per entry for the maps and the policy's bookkeeping (measured order of
/// magnitude of a BTreeMap node share, two hash-map entries and a `Bytes` handle each).
pub const ENTRY_OVERHEAD: usize = 192;

/// The Name's TLV-VALUE as a slice of the packet when it is one, else a copy.
fn name_key(wire: &Bytes, name: &Name) -> Bytes {
    let value = name.value_bytes();
    let base = wire.as_ptr() as usize;
    let start = value.as_ptr() as usize;
    if start >= base && start + value.len() <= base + wire.len() {
        wire.slice(start - base..start - base + value.len())
    } else {
        Bytes::copy_from_slice(value)
    }
}

/// A content-store look-up, from an Interest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// The Interest name's TLV-VALUE without a final implicit-digest component.
    pub key: Bytes,
    /// The implicit digest the Interest names, if its last component is one.
    pub digest: Option<[u8; 32]>,
    /// CanBePrefix.
    pub can_be_prefix: bool,
    /// MustBeFresh.
    pub must_be_fresh: bool,
}

impl Query {
    /// The query for an Interest name and its selectors.
    pub fn new(name: &Name, can_be_prefix: bool, must_be_fresh: bool) -> Self {
        let digest = name
            .last()
            .filter(|c| c.typ() == types::IMPLICIT_SHA256_DIGEST_COMPONENT)
            .and_then(|c| <[u8; 32]>::try_from(c.value()).ok());
        let key = match digest {
            Some(_) => {
                let len = name.prefix_value_len(name.len() - 1);
                Bytes::copy_from_slice(&name.value_bytes()[..len])
            }
            None => Bytes::copy_from_slice(name.value_bytes()),
        };
        Self {
            key,
            digest,
            can_be_prefix,
            must_be_fresh,
        }
    }

    /// Whether a stored packet with `key`, `digest` and freshness answers this query at `now_ms`.
    pub fn matches(&self, key: &[u8], digest: &[u8; 32], fresh_until_ms: u64, now_ms: u64) -> bool {
        let name_ok = match self.digest {
            Some(d) => key == &self.key[..] && *digest == d,
            None if self.can_be_prefix => key.starts_with(&self.key),
            None => key == &self.key[..],
        };
        name_ok && (!self.must_be_fresh || fresh_until_ms > now_ms)
    }

    /// Whether a range scan from `self.key` may still find matches at `key`.
    pub fn in_range(&self, key: &[u8]) -> bool {
        if self.can_be_prefix && self.digest.is_none() {
            key.starts_with(&self.key)
        } else {
            key == &self.key[..]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nameway_wire::{Component, Data, MetaInfo};

    pub(crate) fn data(name: &str, freshness: Option<u64>, content: &[u8]) -> Bytes {
        let mut d = Data::new(name.parse().unwrap(), Bytes::copy_from_slice(content));
        d.meta_info = Some(MetaInfo {
            freshness_period: freshness,
            ..MetaInfo::default()
        });
        d.sign(&nameway_wire::security::DigestSha256).unwrap();
        d.encode()
    }

    #[test]
    fn queries_match_exact_prefix_digest_and_freshness() {
        let p = Packet::new(data("/a/b/c", Some(1000), b"x"), 5_000).unwrap();
        let q = |n: &str, cbp, mbf| Query::new(&n.parse().unwrap(), cbp, mbf);
        let m = |q: Query, now| q.matches(&p.key, &p.digest, p.fresh_until_ms, now);
        assert!(m(q("/a/b/c", false, false), 0));
        assert!(!m(q("/a/b", false, false), 0));
        assert!(m(q("/a/b", true, false), 0));
        assert!(!m(q("/a/bb", true, false), 0));
        assert!(m(q("/a/b/c", false, true), 5_999));
        assert!(!m(q("/a/b/c", false, true), 6_000));
        let full: Name = "/a/b/c"
            .parse::<Name>()
            .unwrap()
            .append(&Component::implicit_digest(p.digest))
            .unwrap();
        assert!(m(Query::new(&full, false, false), 0));
        let wrong = "/a/b/c"
            .parse::<Name>()
            .unwrap()
            .append(&Component::implicit_digest([7; 32]))
            .unwrap();
        assert!(!m(Query::new(&wrong, false, false), 0));
        // A component prefix is a byte prefix of the key, and only then.
        let p2 = Packet::new(data("/a/bx", None, b"y"), 0).unwrap();
        assert!(!q("/a/b", true, false).matches(&p2.key, &p2.digest, 0, 0));
        assert!(!p2.is_fresh(0));
    }
}
