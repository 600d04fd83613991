//! The exchange loops of `benches/pipeline.rs` as a plain program, for profilers and for
//! comparing two commits run by run on a noisy machine (`scripts/ab-exchange.sh`), where a
//! criterion run on its own says little.
//!
//! `cargo run --release -p nameway-fw --example exchange_loop -- COMPONENTS EXCHANGES MODE`
//!
//! - MODE `rx`: each packet is copied into a receive buffer first, as a face's read delivers
//!   it (`exchange_rx` in the benchmark);
//! - MODE `pool`: packets come pre-encoded from a pool of 2^17 (`exchange`).
//!
//! A warm-up of 2^17 exchanges fills the content store (2^16 packets) first. Prints
//! `ns/exchange: <mean over the measured exchanges> <mode>`. Environment: `ROUTES` (FIB size,
//! default 1), `CS` (content-store capacity, default 2^16).

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use core::time::Duration;
use std::hint::black_box;
use std::time::Instant;

use bytes::{BufMut, Bytes, BytesMut};
use nameway_fw::{Config, FaceId, FaceScope, Forwarder, LinkType, Time, Transmit};
use nameway_wire::{Component, Data, Interest, MetaInfo, Name, NameHasher};

const POOL: usize = 1 << 17;

fn prefix(components: usize) -> String {
    let mut s = String::from("/bench");
    for c in ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .take(components - 2)
    {
        s.push('/');
        s.push_str(c);
    }
    s
}

fn interest(name: &Name, nonce: u32) -> Bytes {
    let mut i = Interest::new(name.clone());
    i.nonce = Some(nonce);
    i.encode()
}

fn data(name: &Name) -> Bytes {
    let mut d = Data::new(name.clone(), Bytes::from(vec![0x5a; 100]));
    d.meta_info = Some(MetaInfo {
        freshness_period: Some(10_000),
        ..MetaInfo::default()
    });
    d.signature_value = Bytes::from(vec![0; 32]);
    d.encode()
}

/// Interest from the consumer, out to the producer; Data back, out to the consumer; timers.
fn exchange(
    fw: &mut Forwarder,
    now: Time,
    (consumer, producer): (FaceId, FaceId),
    interest: Bytes,
    data: Bytes,
) -> (Option<Transmit>, Option<Transmit>) {
    fw.handle_packet(now, consumer, interest);
    let up = fw.poll_transmit();
    fw.handle_packet(now, producer, data);
    let down = fw.poll_transmit();
    if fw.poll_timeout().is_some_and(|t| t <= now) {
        fw.handle_timeout(now);
    }
    (up, down)
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .map_or(default, |v| v.parse().expect("a number"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (components, n, mode) = match &args[..] {
        [_, c, n, m] => (c.parse().unwrap(), n.parse::<usize>().unwrap(), m.as_str()),
        _ => {
            eprintln!("usage: exchange_loop COMPONENTS EXCHANGES rx|pool");
            std::process::exit(2);
        }
    };
    let mut fw = Forwarder::new(Config {
        hasher: Some(NameHasher::with_seed(1)),
        cs_capacity: env("CS", 1 << 16),
        ..Config::default()
    });
    let consumer = fw.add_face(FaceScope::Local, LinkType::PointToPoint);
    let producer = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
    fw.add_nexthop(&"/bench".parse().unwrap(), producer, 10)
        .unwrap();
    let other = fw.add_face(FaceScope::NonLocal, LinkType::PointToPoint);
    for i in 1..env("ROUTES", 1) {
        let p = match i % 3 {
            0 => format!("/x{i}"),
            1 => format!("/bench/x{i}"),
            _ => format!("/bench/a/x{i}"),
        };
        fw.add_nexthop(&p.parse().unwrap(), other, 1).unwrap();
    }
    let faces = (consumer, producer);
    let mut now = Time::ZERO;
    let elapsed = match mode {
        "pool" => {
            let names: Vec<Name> = (0..POOL)
                .map(|i| format!("{}/seq={i}", prefix(components)).parse().unwrap())
                .collect();
            let interests: Vec<Bytes> = names
                .iter()
                .enumerate()
                .map(|(i, n)| interest(n, i as u32))
                .collect();
            let datas: Vec<Bytes> = names.iter().map(data).collect();
            let step = |fw: &mut Forwarder, now: Time, k: usize| {
                let k = k % POOL;
                black_box(exchange(
                    fw,
                    now,
                    faces,
                    interests[k].clone(),
                    datas[k].clone(),
                ));
            };
            for k in 0..POOL {
                now += Duration::from_micros(10);
                step(&mut fw, now, k);
            }
            let start = Instant::now();
            for k in 0..n {
                now += Duration::from_micros(10);
                step(&mut fw, now, k);
            }
            start.elapsed()
        }
        "rx" => {
            const SEQ: u32 = 0xa1b2_c3d4;
            const NONCE: u32 = 0x5566_7788;
            let name = prefix(components)
                .parse::<Name>()
                .unwrap()
                .append(&Component::sequence_num(u64::from(SEQ)))
                .unwrap();
            let (it, dt) = (interest(&name, NONCE), data(&name));
            let offset =
                |hay: &[u8], v: u32| hay.windows(4).position(|w| w == v.to_be_bytes()).unwrap();
            let (i_seq, i_nonce, d_seq) = (offset(&it, SEQ), offset(&it, NONCE), offset(&dt, SEQ));
            let mut buf = BytesMut::with_capacity(1 << 16);
            let mut receive = |template: &[u8], patches: &[(usize, u32)]| {
                if buf.capacity() < template.len() {
                    buf = BytesMut::with_capacity(1 << 16);
                }
                buf.put_slice(template);
                for &(at, v) in patches {
                    buf[at..at + 4].copy_from_slice(&v.to_be_bytes());
                }
                buf.split().freeze()
            };
            let mut step = |fw: &mut Forwarder, now: Time, i: u32| {
                let k = i % POOL as u32;
                let interest = receive(&it, &[(i_seq, k), (i_nonce, i)]);
                let data = receive(&dt, &[(d_seq, k)]);
                black_box(exchange(fw, now, faces, interest, data));
            };
            for i in 0..POOL as u32 {
                now += Duration::from_micros(10);
                step(&mut fw, now, i);
            }
            let start = Instant::now();
            for i in 0..n {
                now += Duration::from_micros(10);
                step(&mut fw, now, (POOL + i) as u32);
            }
            start.elapsed()
        }
        _ => {
            eprintln!("MODE is rx or pool");
            std::process::exit(2);
        }
    };
    let st = fw.status();
    assert_eq!(
        st.counters.n_satisfied_interests, st.counters.n_in_interests,
        "every exchange satisfied"
    );
    println!(
        "ns/exchange: {:.1} {mode}",
        elapsed.as_nanos() as f64 / n.max(1) as f64
    );
}
