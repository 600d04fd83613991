//! The load of `nameway bench`: one producer answering every Interest with a pre-built Data,
//! and consumers each keeping a window of Interests in flight over their own connection.
//!
//! Packets are built by hand from pre-encoded pieces: the benchmark should measure the
//! forwarder, not the client's encoder. Names are `<prefix>/c<consumer>/<tag>/<seq>` with
//! generic components (`tag` is `r<run>`, or `hit` for the cache-hit pool), padded with `p<i>`
//! components before `<seq>` up to the requested number of components.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use nameway_wire::security::DigestSha256;
use nameway_wire::tlv::{self, types};
use nameway_wire::{Data, DataView, InterestView, MetaInfo, Name};
use tokio::time::Instant;

use crate::client::{random_u64, ClientError, Conn, Incoming};

/// How often outstanding Interests are checked for expiry.
const EXPIRY_TICK: Duration = Duration::from_millis(50);

/// Builds Interests `<head>/<seq>` from pre-encoded name components.
#[derive(Clone, Debug)]
pub(crate) struct InterestGen {
    /// Encoded name components before the sequence number.
    head: Vec<u8>,
    must_be_fresh: bool,
    lifetime_ms: u64,
    rng: u64,
}

impl InterestGen {
    /// Interests named `<prefix>/c<consumer>/<tag>/p<i>.../<seq>`, `components` in all.
    ///
    /// # Errors
    /// `components` leaves no room for the three components after the prefix.
    pub(crate) fn new(
        prefix: &Name,
        components: usize,
        consumer: usize,
        tag: &str,
        must_be_fresh: bool,
        lifetime_ms: u64,
    ) -> anyhow::Result<Self> {
        let Some(pads) = components.checked_sub(prefix.len() + 3) else {
            anyhow::bail!(
                "--components {components} is too few: names are <prefix>/c<consumer>/<run>/<seq>, \
                 at least {} components with prefix {prefix}",
                prefix.len() + 3
            );
        };
        let mut head = prefix.value_bytes().to_vec();
        tlv::put_tlv(
            &mut head,
            types::GENERIC_NAME_COMPONENT,
            format!("c{consumer}").as_bytes(),
        );
        tlv::put_tlv(&mut head, types::GENERIC_NAME_COMPONENT, tag.as_bytes());
        for i in 0..pads {
            tlv::put_tlv(
                &mut head,
                types::GENERIC_NAME_COMPONENT,
                format!("p{i}").as_bytes(),
            );
        }
        Ok(Self {
            head,
            must_be_fresh,
            lifetime_ms,
            rng: random_u64() | 1,
        })
    }

    /// Appends the Interest for `seq` to `out`.
    pub(crate) fn encode(&mut self, seq: u64, out: &mut Vec<u8>) {
        let mut digits = [0u8; 20];
        let digits = decimal(seq, &mut digits);
        let name_len = self.head.len() + tlv::tlv_len(types::GENERIC_NAME_COMPONENT, digits.len());
        let body = tlv::tlv_len(types::NAME, name_len)
            + if self.must_be_fresh { 2 } else { 0 }
            + 6
            + tlv::nni_tlv_len(types::INTEREST_LIFETIME, self.lifetime_ms);
        tlv::put_header(out, types::INTEREST, body);
        tlv::put_header(out, types::NAME, name_len);
        out.extend_from_slice(&self.head);
        tlv::put_tlv(out, types::GENERIC_NAME_COMPONENT, digits);
        if self.must_be_fresh {
            tlv::put_header(out, types::MUST_BE_FRESH, 0);
        }
        tlv::put_tlv(out, types::NONCE, &self.nonce().to_be_bytes());
        tlv::put_nni_tlv(out, types::INTEREST_LIFETIME, self.lifetime_ms);
    }

    /// xorshift64: Nonces only need to differ.
    fn nonce(&mut self) -> u32 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 32) as u32
    }
}

/// `n` in decimal ASCII, written at the end of `buf`.
fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

/// The sequence number in the last component of `name`, as [`InterestGen`] wrote it.
fn seq_of(name: &Name) -> Option<u64> {
    let last = name.last()?;
    if last.value().is_empty() || last.value().len() > 20 {
        return None;
    }
    last.value().iter().try_fold(0u64, |acc, &b| {
        b.is_ascii_digit()
            .then(|| acc.checked_mul(10)?.checked_add(u64::from(b - b'0')))
            .flatten()
    })
}

/// What one consumer does in one run.
#[derive(Clone, Debug)]
pub(crate) struct ConsumerPlan {
    /// Interest builder.
    pub(crate) interests: InterestGen,
    /// Exchanges to complete (Data, Nack or timeout each count as one).
    pub(crate) count: u64,
    /// Interests kept in flight.
    pub(crate) window: usize,
    /// Sequence numbers wrap at this pool size (cache-hit mode), or never (`u64::MAX`).
    pub(crate) pool: u64,
    /// When an Interest counts as lost.
    pub(crate) lifetime: Duration,
}

/// What one consumer saw in one run.
#[derive(Clone, Debug, Default)]
pub(crate) struct ConsumerResult {
    /// Data received.
    pub(crate) completed: u64,
    /// Nacks received.
    pub(crate) nacks: u64,
    /// Interests unanswered within their lifetime.
    pub(crate) timeouts: u64,
    /// Round-trip time of every Data, microseconds.
    pub(crate) latencies_us: Vec<u32>,
}

/// Runs one consumer over `conn` and gives the connection back.
pub(crate) async fn consume(
    mut conn: Conn,
    mut plan: ConsumerPlan,
) -> (Conn, Result<ConsumerResult, ClientError>) {
    let result = consume_on(&mut conn, &mut plan).await;
    (conn, result)
}

async fn consume_on(
    conn: &mut Conn,
    plan: &mut ConsumerPlan,
) -> Result<ConsumerResult, ClientError> {
    let mut r = ConsumerResult {
        latencies_us: Vec::with_capacity(plan.count.min(1 << 24) as usize),
        ..ConsumerResult::default()
    };
    let mut outstanding: HashMap<u64, Instant> = HashMap::with_capacity(plan.window * 2);
    let mut next = 0u64;
    let mut scratch = Vec::with_capacity(256);
    let mut tick = tokio::time::interval(EXPIRY_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let now = Instant::now();
        while outstanding.len() < plan.window && next < plan.count {
            let seq = next % plan.pool;
            if outstanding.contains_key(&seq) {
                break;
            }
            scratch.clear();
            plan.interests.encode(seq, &mut scratch);
            conn.queue(&scratch);
            outstanding.insert(seq, now);
            next += 1;
        }
        conn.flush().await?;
        if r.completed + r.nacks + r.timeouts >= plan.count {
            return Ok(r);
        }
        tokio::select! {
            incoming = conn.recv() => {
                on_incoming(incoming?, &mut outstanding, &mut r);
                while let Some(more) = conn.try_recv()? {
                    on_incoming(more, &mut outstanding, &mut r);
                }
            }
            _ = tick.tick() => {
                let now = Instant::now();
                let before = outstanding.len();
                outstanding.retain(|_, sent| now.duration_since(*sent) < plan.lifetime);
                r.timeouts += (before - outstanding.len()) as u64;
            }
        }
    }
}

fn on_incoming(
    incoming: Incoming,
    outstanding: &mut HashMap<u64, Instant>,
    r: &mut ConsumerResult,
) {
    match incoming {
        Incoming::Data(wire) => {
            let Ok(data) = DataView::new_checked(wire) else {
                return;
            };
            if let Some(sent) = seq_of(data.name()).and_then(|s| outstanding.remove(&s)) {
                r.completed += 1;
                let us = sent.elapsed().as_micros();
                r.latencies_us.push(u32::try_from(us).unwrap_or(u32::MAX));
            }
        }
        Incoming::Nack { interest, .. } => {
            let Ok(i) = InterestView::new_checked(interest) else {
                return;
            };
            if seq_of(i.name())
                .and_then(|s| outstanding.remove(&s))
                .is_some()
            {
                r.nacks += 1;
            }
        }
        Incoming::Interest(_) => {}
    }
}

/// Builds the producer's answers: Data of the Interest's name with a fixed MetaInfo, Content
/// and signature.
#[derive(Clone, Debug)]
pub(crate) struct DataGen {
    /// Everything after the Name: MetaInfo, Content, SignatureInfo, SignatureValue.
    tail: Vec<u8>,
    content: Bytes,
    freshness_ms: u64,
    sign: bool,
}

impl DataGen {
    /// Data with `payload` bytes of Content and FreshnessPeriod `freshness_ms`. Unless `sign`
    /// is set, the DigestSha256 SignatureValue is a fixed placeholder: forwarders do not verify
    /// Data signatures, and hashing every Data would load the machine being measured.
    pub(crate) fn new(payload: usize, freshness_ms: u64, sign: bool) -> Self {
        let content = Bytes::from(vec![b'x'; payload]);
        let mut template = Data::new(Name::root(), content.clone());
        template.meta_info = Some(MetaInfo {
            freshness_period: Some(freshness_ms),
            ..MetaInfo::default()
        });
        let _ = template.sign(&DigestSha256);
        let wire = template.encode();
        // The template is `06 LL 07 00 <tail>`: skip the outer header and the empty Name.
        let tail = tlv::read_single(&wire)
            .ok()
            .and_then(|outer| outer.value.get(2..).map(<[u8]>::to_vec))
            .unwrap_or_default();
        Self {
            tail,
            content,
            freshness_ms,
            sign,
        }
    }

    /// Appends the Data answering an Interest for `name` to `out`.
    pub(crate) fn encode(&self, name: &Name, out: &mut Vec<u8>) {
        if self.sign {
            let mut data = Data::new(name.clone(), self.content.clone());
            data.meta_info = Some(MetaInfo {
                freshness_period: Some(self.freshness_ms),
                ..MetaInfo::default()
            });
            let _ = data.sign(&DigestSha256);
            out.extend_from_slice(&data.encode());
            return;
        }
        tlv::put_header(out, types::DATA, name.encoded_len() + self.tail.len());
        name.encode(out);
        out.extend_from_slice(&self.tail);
    }
}

/// Answers every Interest on `conn` until the connection fails or the task is aborted;
/// counts the Interests answered in `served`.
pub(crate) async fn produce(
    mut conn: Conn,
    data: DataGen,
    served: Arc<AtomicU64>,
) -> Result<(), ClientError> {
    let mut scratch = Vec::with_capacity(data.tail.len() + 256);
    loop {
        let first = conn.recv().await?;
        let mut n = answer(first, &data, &mut conn, &mut scratch);
        while let Some(more) = conn.try_recv()? {
            n += answer(more, &data, &mut conn, &mut scratch);
        }
        conn.flush().await?;
        served.fetch_add(n, Ordering::Relaxed);
    }
}

fn answer(incoming: Incoming, data: &DataGen, conn: &mut Conn, scratch: &mut Vec<u8>) -> u64 {
    let Incoming::Interest(wire) = incoming else {
        return 0;
    };
    let Ok(interest) = InterestView::new_checked(wire) else {
        return 0;
    };
    scratch.clear();
    data.encode(interest.name(), scratch);
    conn.queue(scratch);
    1
}

#[cfg(test)]
mod tests {
    use super::*;
    use nameway_wire::Interest;

    #[test]
    fn interests_decode_and_carry_their_sequence_number() {
        let prefix: Name = "/bench".parse().unwrap();
        let mut g = InterestGen::new(&prefix, 6, 2, "r1", true, 4000).unwrap();
        let mut out = Vec::new();
        g.encode(1234, &mut out);
        let i = Interest::decode(&Bytes::from(out)).unwrap();
        assert_eq!(i.name.to_string(), "/bench/c2/r1/p0/p1/1234");
        assert!(i.must_be_fresh && !i.can_be_prefix);
        assert_eq!(i.lifetime(), 4000);
        assert_eq!(seq_of(&i.name), Some(1234));
        assert!(InterestGen::new(&prefix, 3, 0, "r1", true, 4000).is_err());
    }

    #[test]
    fn data_answers_decode_with_the_interest_name() {
        let name: Name = "/bench/c0/r0/42".parse().unwrap();
        for sign in [false, true] {
            let g = DataGen::new(1024, 1000, sign);
            let mut out = Vec::new();
            g.encode(&name, &mut out);
            let d = Data::decode(&Bytes::from(out)).unwrap();
            assert_eq!(d.name, name);
            assert_eq!(d.content.as_ref().unwrap().len(), 1024);
            assert_eq!(d.freshness_period(), 1000);
            assert_eq!(d.verify(&DigestSha256).is_ok(), sign);
        }
    }

    #[test]
    fn decimal_digits() {
        let mut b = [0u8; 20];
        assert_eq!(decimal(0, &mut b), b"0");
        assert_eq!(decimal(u64::MAX, &mut b), b"18446744073709551615");
        assert_eq!(seq_of(&"/a/18446744073709551616".parse().unwrap()), None);
    }
}
