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

use nameway_fw::{Forwarder, Time};

#[path = "../benches/fixture/mod.rs"]
mod fixture;
use fixture::{assert_all_satisfied, one_exchange, pool_packets, setup, RxBuffer, POOL};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .map_or(default, |v| v.parse().expect("a number"))
}

/// Runs `step` over the warm-up (2^17 exchanges) then `n` measured exchanges, 10 µs of
/// virtual time apart; returns the measured time.
fn run(
    fw: &mut Forwarder,
    n: usize,
    mut step: impl FnMut(&mut Forwarder, Time, usize),
) -> Duration {
    let mut now = Time::ZERO;
    for k in 0..POOL {
        now += Duration::from_micros(10);
        step(fw, now, k);
    }
    let start = Instant::now();
    for k in POOL..POOL + n {
        now += Duration::from_micros(10);
        step(fw, now, k);
    }
    start.elapsed()
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
    let fixture::Setup {
        mut fw,
        consumer,
        producer,
    } = setup(env("ROUTES", 1), env("CS", 1 << 16));
    let elapsed = match mode {
        "pool" => {
            let (interests, datas) = pool_packets(components);
            run(&mut fw, n, |fw, now, k| {
                let k = k % POOL;
                let packets = (interests[k].clone(), datas[k].clone());
                black_box(one_exchange(fw, now, consumer, producer, packets));
            })
        }
        "rx" => {
            let mut rx = RxBuffer::new(components);
            run(&mut fw, n, |fw, now, k| {
                let packets = rx.exchange((k % POOL) as u32, k as u32);
                black_box(one_exchange(fw, now, consumer, producer, packets));
            })
        }
        _ => {
            eprintln!("MODE is rx or pool");
            std::process::exit(2);
        }
    };
    assert_all_satisfied(&fw);
    println!(
        "ns/exchange: {:.1} {mode}",
        elapsed.as_nanos() as f64 / n.max(1) as f64
    );
}
