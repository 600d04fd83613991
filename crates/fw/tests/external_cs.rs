//! The decoupled content store through the forwarder's API: filter misses go straight on,
//! filter hits wait for one hand-off, hits satisfy every aggregated downstream, false
//! positives continue to the FIB and are counted, nothing is lost.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use bytes::Bytes;
use nameway_fw::{Config, CsFilter, CsRequest, FaceId, FaceScope, Forwarder, LinkType, Time};
use nameway_wire::{Data, Interest, Name, Packet};

struct Net {
    fw: Forwarder,
    consumer: FaceId,
    consumer2: FaceId,
    producer: FaceId,
    nonce: u32,
    /// A stand-in for the content-store server: name → Data.
    server: HashMap<Name, Bytes>,
}

fn data(name: &Name) -> Bytes {
    let mut d = Data::new(name.clone(), Bytes::from_static(b"payload"));
    d.sign(&nameway_wire::security::DigestSha256).unwrap();
    d.encode()
}

impl Net {
    fn new(filter: CsFilter) -> Self {
        let mut fw = Forwarder::new(Config::default());
        let consumer = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
        let consumer2 = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
        let producer = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
        fw.add_nexthop(&"/p".parse().unwrap(), producer, 0).unwrap();
        fw.enable_external_cs(filter);
        Net {
            fw,
            consumer,
            consumer2,
            producer,
            nonce: 0,
            server: HashMap::new(),
        }
    }

    fn interest(&mut self, at: u64, face: FaceId, name: &str, cbp: bool) {
        self.nonce += 1;
        let mut i = Interest::new(name.parse().unwrap());
        i.nonce = Some(self.nonce);
        i.can_be_prefix = cbp;
        i.lifetime_ms = Some(1000);
        self.fw
            .handle_packet(Time::from_millis(at), face, i.encode());
    }

    /// Transmits so far: (face, "I name" or "D name").
    fn sent(&mut self) -> Vec<(FaceId, String)> {
        let mut out = Vec::new();
        while let Some(t) = self.fw.poll_transmit() {
            let what = match Packet::classify(t.wire).unwrap() {
                Packet::Interest(i) => format!("I {}", Interest::decode(&i).unwrap().name),
                Packet::Data(d) => format!("D {}", Data::decode(&d).unwrap().name),
                other => format!("{other:?}"),
            };
            out.push((t.face, what));
        }
        out
    }

    fn requests(&mut self) -> Vec<CsRequest> {
        std::iter::from_fn(|| self.fw.poll_cs_request()).collect()
    }

    /// Plays the server: stores inserts (and tells the filter), answers look-ups.
    fn serve(&mut self, at: u64) -> usize {
        let mut lookups = 0;
        for r in self.requests() {
            match r {
                CsRequest::Insert { data, .. } => {
                    let name = Data::decode(&data).unwrap().name;
                    self.fw.cs_filter_insert(&name);
                    self.server.insert(name, data);
                }
                CsRequest::Lookup {
                    token,
                    name,
                    can_be_prefix,
                    ..
                } => {
                    lookups += 1;
                    let found = self
                        .server
                        .iter()
                        .find(|(n, _)| **n == name || (can_be_prefix && name.is_prefix_of(n)))
                        .map(|(_, d)| d.clone());
                    self.fw
                        .handle_cs_answer(Time::from_millis(at), token, found);
                }
            }
        }
        lookups
    }
}

#[test]
fn a_filter_miss_goes_straight_to_the_fib_and_a_hit_comes_from_the_server() {
    let mut n = Net::new(CsFilter::new(1000, 0.01));
    let (c, p) = (n.consumer, n.producer);
    n.interest(0, c, "/p/a", false);
    // Nothing cached: no look-up, the Interest is forwarded at once.
    assert!(n.requests().is_empty());
    assert_eq!(n.sent(), vec![(p, "I /p/a".to_string())]);
    n.fw.handle_packet(Time::from_millis(5), p, data(&"/p/a".parse().unwrap()));
    assert_eq!(n.sent(), vec![(c, "D /p/a".to_string())]);
    // The Data was admitted: an insert request, then the filter learns the name.
    assert_eq!(n.serve(5), 0);

    n.interest(10, c, "/p/a", false);
    // A filter hit: the Interest waits for the server, nothing goes upstream.
    assert!(n.sent().is_empty());
    assert_eq!(n.serve(11), 1);
    assert_eq!(n.sent(), vec![(c, "D /p/a".to_string())]);
    assert_eq!(n.fw.status().n_pit_entries, 0);
    let f = n.fw.cs_filter().unwrap().counters();
    assert_eq!((f.hits, f.misses, f.false_positives), (1, 1, 0));
    assert_eq!(n.fw.external_cs_counters(), Some((1, 0, 0)));
    // The server's Data is not offered to the server again.
    assert!(n.requests().is_empty());
}

#[test]
fn interests_aggregated_during_a_look_up_are_all_satisfied_by_its_hit() {
    let mut n = Net::new(CsFilter::new(1000, 0.01));
    let (c, c2) = (n.consumer, n.consumer2);
    let name: Name = "/p/agg".parse().unwrap();
    n.server.insert(name.clone(), data(&name));
    n.fw.cs_filter_insert(&name);
    n.interest(0, c, "/p/agg", false);
    n.interest(1, c2, "/p/agg", false);
    // One look-up for both.
    let mut sent = n.sent();
    assert!(sent.is_empty());
    assert_eq!(n.serve(2), 1);
    sent = n.sent();
    sent.sort();
    assert_eq!(
        sent,
        vec![(c, "D /p/agg".to_string()), (c2, "D /p/agg".to_string())]
    );
}

#[test]
fn a_false_positive_comes_back_as_a_miss_and_the_interest_goes_on() {
    let mut n = Net::new(CsFilter::new(1000, 0.01));
    let (c, p) = (n.consumer, n.producer);
    // The filter says yes, the server has nothing (as after a false positive).
    n.fw.cs_filter_insert(&"/p/fp".parse().unwrap());
    n.interest(0, c, "/p/fp", false);
    assert!(n.sent().is_empty());
    assert_eq!(n.serve(1), 1);
    assert_eq!(n.sent(), vec![(p, "I /p/fp".to_string())]);
    assert_eq!(n.fw.cs_filter().unwrap().counters().false_positives, 1);
    n.fw.handle_packet(Time::from_millis(3), p, data(&"/p/fp".parse().unwrap()));
    assert_eq!(n.sent(), vec![(c, "D /p/fp".to_string())]);
}

#[test]
fn can_be_prefix_interests_find_cached_data_under_their_name() {
    let mut n = Net::new(CsFilter::new(1000, 0.01));
    let c = n.consumer;
    let name: Name = "/p/obj/v=1/seg=0".parse().unwrap();
    n.server.insert(name.clone(), data(&name));
    n.fw.cs_filter_insert(&name);
    n.interest(0, c, "/p/obj", true);
    assert_eq!(n.serve(1), 1);
    assert_eq!(n.sent(), vec![(c, "D /p/obj/v=1/seg=0".to_string())]);
    // An exact Interest for the prefix is no filter hit (and goes upstream).
    n.interest(2, c, "/p/obj", false);
    assert!(n.requests().is_empty());
}

#[test]
fn an_answer_after_the_entry_expired_is_dropped() {
    let mut n = Net::new(CsFilter::new(1000, 0.01));
    let name: Name = "/p/late".parse().unwrap();
    n.server.insert(name.clone(), data(&name));
    n.fw.cs_filter_insert(&name);
    n.interest(0, n.consumer, "/p/late", false);
    n.fw.handle_timeout(Time::from_millis(2000));
    assert_eq!(n.fw.status().n_pit_entries, 0);
    assert_eq!(n.serve(2000), 1);
    assert!(n.sent().is_empty());
}

#[test]
fn a_tiny_filter_full_of_false_positives_loses_no_interest() {
    // A filter for 4 packets holding 300 names: nearly every Interest is a filter hit.
    let mut n = Net::new(CsFilter::new(4, 0.01));
    let (c, p) = (n.consumer, n.producer);
    for i in 0..300 {
        let name: Name = format!("/other/{i}").parse().unwrap();
        n.fw.cs_filter_insert(&name);
    }
    let mut delivered = 0;
    for i in 0..200u64 {
        let name = format!("/p/x/{i}");
        n.interest(i * 10, c, &name, false);
        n.serve(i * 10);
        let upstream: Vec<_> = n.sent();
        assert_eq!(upstream, vec![(p, format!("I {name}"))], "Interest {i}");
        n.fw.handle_packet(
            Time::from_millis(i * 10 + 1),
            p,
            data(&name.parse().unwrap()),
        );
        delivered += n.sent().iter().filter(|(f, _)| *f == c).count();
        n.serve(i * 10 + 1);
    }
    assert_eq!(delivered, 200);
    let f = n.fw.cs_filter().unwrap().counters();
    assert!(f.false_positives > 150, "{f:?}");
}

/// A server that does not answer (behind on writing to its disk) holds an Interest back for
/// [`nameway_fw::LOOKUP_DEADLINE`] at most: then it goes upstream as a miss would, counted as
/// late, and the answer that comes after is ignored.
#[test]
fn a_server_that_does_not_answer_in_time_does_not_hold_the_interest_back() {
    let mut n = Net::new(CsFilter::new(1000, 0.01));
    let (c, p) = (n.consumer, n.producer);
    n.fw.cs_filter_insert(&"/p/slow".parse().unwrap());
    n.interest(0, c, "/p/slow", false);
    let lookup = n.requests();
    assert_eq!(lookup.len(), 1);
    assert!(n.sent().is_empty());
    // The forwarder asks to be woken at the deadline, and before it nothing moves.
    let deadline = Time::from_nanos(nameway_fw::LOOKUP_DEADLINE.as_nanos() as u64);
    assert_eq!(n.fw.poll_timeout(), Some(deadline));
    n.fw.handle_timeout(Time::from_millis(10));
    assert!(n.sent().is_empty());
    n.fw.handle_timeout(deadline);
    assert_eq!(n.sent(), vec![(p, "I /p/slow".to_string())]);
    assert_eq!(n.fw.external_cs_counters(), Some((0, 0, 1)));
    // The late answer changes nothing; the producer's Data satisfies the consumer.
    let CsRequest::Lookup { token, .. } = lookup[0] else {
        panic!("{lookup:?}")
    };
    n.fw.handle_cs_answer(Time::from_millis(60), token, None);
    assert!(n.sent().is_empty());
    n.fw.handle_packet(Time::from_millis(70), p, data(&"/p/slow".parse().unwrap()));
    assert_eq!(n.sent(), vec![(c, "D /p/slow".to_string())]);
}

/// With no route, a look-up the server answers late is waited for (a miss would only be
/// Nacked NoRoute): a consumer fetching what only the cache holds gets it from a slow store;
/// and once the Interest has expired the look-up is forgotten.
#[test]
fn with_no_route_a_late_answer_is_waited_for_not_nacked() {
    let mut n = Net::new(CsFilter::new(1000, 0.01));
    let c = n.consumer;
    n.fw.cs_filter_insert(&"/q/cached".parse().unwrap());
    n.interest(0, c, "/q/cached", false);
    let lookup = n.requests();
    let CsRequest::Lookup { token, .. } = lookup[0] else {
        panic!("{lookup:?}")
    };
    for ms in [50, 100, 150, 200] {
        n.fw.handle_timeout(Time::from_millis(ms));
        assert!(n.sent().is_empty(), "nothing sent at {ms} ms (no Nack)");
    }
    n.fw.handle_cs_answer(
        Time::from_millis(230),
        token,
        Some(data(&"/q/cached".parse().unwrap())),
    );
    assert_eq!(n.sent(), vec![(c, "D /q/cached".to_string())]);
    assert_eq!(n.fw.external_cs_counters(), Some((1, 0, 0)));
    // A look-up never answered ends with its Interest (lifetime 1000 ms): no Nack, no
    // look-up left behind.
    n.fw.cs_filter_insert(&"/q/never".parse().unwrap());
    n.interest(300, c, "/q/never", false);
    assert_eq!(n.requests().len(), 1);
    let mut t = 300;
    while let Some(next) = n.fw.poll_timeout() {
        if next > Time::from_millis(3000) {
            break;
        }
        t = t.max(next.as_nanos() / 1_000_000);
        n.fw.handle_timeout(next);
        assert!(
            n.sent().iter().all(|(_, what)| !what.contains("Nack")),
            "at {t} ms"
        );
    }
    assert!(t >= 1300, "woken until the Interest expired: {t} ms");
    assert!(n
        .fw
        .poll_timeout()
        .is_none_or(|next| next > Time::from_millis(3000)));
}
