//! Status datasets: versioned, segmented Data, kept briefly in an in-memory store so follow-up
//! Interests for other segments (and for segment 0 again) are answered (docs/nfd-interop.md §8).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use nameway_wire::name::Component;
use nameway_wire::security::DigestSha256;
use nameway_wire::{Data, Interest, MetaInfo, Name};

/// Payload bytes per segment: `MAX_NDN_PACKET_SIZE - 800`, as ndn-cxx.
pub const SEGMENT_SIZE: usize = 8000;
/// FreshnessPeriod of dataset and response Data (ms), as NFD.
pub const FRESHNESS_MS: u64 = 1000;
/// How long published segments stay in the store.
const IMS_LIFETIME: Duration = Duration::from_secs(1);
/// Most segments kept.
const IMS_CAPACITY: usize = 1024;

/// The in-memory store of recently published dataset segments.
#[derive(Debug, Default)]
pub struct DatasetStore {
    entries: VecDeque<(Instant, Name, Bytes)>,
}

impl DatasetStore {
    /// Segments `content` under `<prefix>/v=<version>/seg=<n>`, stores every segment and returns
    /// segment 0.
    pub fn publish(&mut self, now: Instant, prefix: &Name, version: u64, content: &[u8]) -> Bytes {
        self.expire(now);
        let versioned = prefix
            .append(&Component::version(version))
            .unwrap_or_else(|_| prefix.clone());
        let chunks: Vec<&[u8]> = if content.is_empty() {
            vec![&[][..]]
        } else {
            content.chunks(SEGMENT_SIZE).collect()
        };
        let last = chunks.len() as u64 - 1;
        let mut first = Bytes::new();
        for (i, chunk) in chunks.into_iter().enumerate() {
            let seg = Component::segment(i as u64);
            let name = versioned.append(&seg).unwrap_or_else(|_| versioned.clone());
            let mut data = Data::new(name.clone(), Bytes::copy_from_slice(chunk));
            data.meta_info = Some(MetaInfo {
                freshness_period: Some(FRESHNESS_MS),
                final_block_id: Some(Component::segment(last)),
                ..MetaInfo::default()
            });
            let wire = sign(data);
            if i == 0 {
                first = wire.clone();
            }
            if self.entries.len() >= IMS_CAPACITY {
                self.entries.pop_front();
            }
            self.entries.push_back((now + IMS_LIFETIME, name, wire));
        }
        first
    }

    /// A stored segment that satisfies `interest` (exact name, or any longer name when
    /// CanBePrefix is set).
    pub fn lookup(&mut self, now: Instant, interest: &Interest) -> Option<Bytes> {
        self.expire(now);
        self.entries
            .iter()
            .find(|(_, name, _)| {
                *name == interest.name
                    || (interest.can_be_prefix && interest.name.is_prefix_of(name))
            })
            .map(|(_, _, wire)| wire.clone())
    }

    fn expire(&mut self, now: Instant) {
        while self.entries.front().is_some_and(|(t, _, _)| *t <= now) {
            self.entries.pop_front();
        }
    }
}

/// Signs a Data with DigestSha256 and encodes it.
pub fn sign(mut data: Data) -> Bytes {
    // DigestSha256 cannot fail to sign.
    let _ = data.sign(&DigestSha256);
    data.encode()
}

/// Whether an Interest name asks for a specific version or segment (answered only from the
/// store, never by generating a new version).
pub fn names_a_segment(name: &Name) -> bool {
    name.last()
        .is_some_and(|c| c.as_version().is_some() || c.as_segment().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_datasets_are_segmented_and_served_from_the_store() {
        let mut store = DatasetStore::default();
        let t0 = Instant::now();
        let prefix: Name = "/localhost/nfd/faces/list".parse().unwrap();
        let content = vec![7u8; 20_000];
        let first = store.publish(t0, &prefix, 42, &content);
        let d0 = Data::decode(&first).unwrap();
        assert_eq!(d0.name.to_string(), "/localhost/nfd/faces/list/v=42/seg=0");
        assert_eq!(d0.content.as_ref().unwrap().len(), SEGMENT_SIZE);
        assert_eq!(
            d0.meta_info.as_ref().unwrap().final_block_id,
            Some(Component::segment(2))
        );
        let mut i = Interest::new("/localhost/nfd/faces/list/v=42/seg=2".parse().unwrap());
        let d2 = Data::decode(&store.lookup(t0, &i).unwrap()).unwrap();
        assert_eq!(d2.content.unwrap().len(), 4000);
        assert!(names_a_segment(&i.name));
        i.name = "/localhost/nfd/faces/list/v=42/seg=0".parse().unwrap();
        assert!(store.lookup(t0, &i).is_some());
        assert!(store.lookup(t0 + Duration::from_secs(2), &i).is_none());
    }
}
