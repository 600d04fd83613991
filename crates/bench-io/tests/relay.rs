//! Every engine relays a few thousand exchanges between real client processes, with every
//! byte intact (each client checks every packet it receives, byte for byte, and the relay's
//! counts must match).

use std::path::Path;

use bench_io::run::{run_round, Engine, Load};
use bench_io::tlv::{DATA_LEN, INTEREST_LEN};

const EXCHANGES: u64 = 3000;

/// Whether this kernel lets the process set up a ring (`kernel.io_uring_disabled` can forbid
/// it); the io_uring tests say so and pass where it does not.
fn uring_allowed(engine: Engine) -> bool {
    if engine == Engine::Epoll {
        return true;
    }
    match io_uring::IoUring::new(2) {
        Ok(_) => true,
        Err(e) => {
            eprintln!(
                "skipped: {} needs io_uring, which this kernel refuses: {e}",
                engine.name()
            );
            false
        }
    }
}

fn relays_intact(engine: Engine, batching: bool) {
    if !uring_allowed(engine) {
        return;
    }
    for clients_epoll in [false, true] {
        relays_intact_with(engine, batching, clients_epoll);
    }
}

fn relays_intact_with(engine: Engine, batching: bool, clients_epoll: bool) {
    let exe = Path::new(env!("CARGO_BIN_EXE_bench-io"));
    let load = Load {
        exchanges: EXCHANGES,
        window: 16,
        batching,
        clients_epoll,
        bad_packet_at: None,
    };
    let round = run_round(exe, engine, load).unwrap_or_else(|e| {
        panic!(
            "{} (batching {batching}, clients in epoll {clients_epoll}): {e}",
            engine.name()
        )
    });
    let s = round.stats;
    assert_eq!(s.exchanges, EXCHANGES);
    assert_eq!(s.interests, EXCHANGES);
    assert_eq!(s.bytes_in[0], EXCHANGES * INTEREST_LEN as u64);
    assert_eq!(s.bytes_in[1], EXCHANGES * DATA_LEN as u64);
    assert!(
        s.syscalls > 0 && s.waits > 0 && s.reads > 0 && s.writes > 0,
        "{s:?}"
    );
    if engine != Engine::Epoll && engine != Engine::UringSingle {
        assert!(round.multishot, "this kernel has multishot receives");
    }
    if engine == Engine::UringSqpoll {
        assert!(
            round.io_threads.iter().any(|t| t.starts_with("iou-sqp")),
            "{:?}",
            round.io_threads
        );
    }
}

#[test]
fn epoll_relays_every_byte() {
    relays_intact(Engine::Epoll, false);
    relays_intact(Engine::Epoll, true);
}

#[test]
fn uring_multishot_relays_every_byte() {
    relays_intact(Engine::Uring, false);
    relays_intact(Engine::Uring, true);
}

#[test]
fn uring_single_recv_relays_every_byte() {
    relays_intact(Engine::UringSingle, false);
    relays_intact(Engine::UringSingle, true);
}

#[test]
fn uring_sqpoll_relays_every_byte() {
    relays_intact(Engine::UringSqpoll, false);
    relays_intact(Engine::UringSqpoll, true);
}

#[test]
fn a_client_that_fails_fails_the_round() {
    // A consumer that is told to connect nowhere never connects.
    let missing = Path::new("/nonexistent/bench-io");
    let load = Load {
        exchanges: 10,
        window: 16,
        batching: false,
        clients_epoll: false,
        bad_packet_at: None,
    };
    assert!(run_round(missing, Engine::Epoll, load).is_err());
}

#[test]
fn a_bad_packet_fails_the_round_at_once_on_every_engine() {
    let exe = Path::new(env!("CARGO_BIN_EXE_bench-io"));
    for engine in Engine::ALL.into_iter().filter(|e| uring_allowed(*e)) {
        for batching in [false, true] {
            let load = Load {
                exchanges: EXCHANGES,
                window: 16,
                batching,
                clients_epoll: batching,
                bad_packet_at: Some(1000),
            };
            let started = std::time::Instant::now();
            let e = run_round(exe, engine, load)
                .err()
                .unwrap_or_else(|| panic!("{} relayed a bad packet", engine.name()))
                .to_string();
            assert!(e.contains("type 0x5 where 0x6"), "{}: {e}", engine.name());
            // The engine ends what it has in flight without waiting out its stall timeout.
            assert!(
                started.elapsed() < std::time::Duration::from_secs(5),
                "{} took {:?}",
                engine.name(),
                started.elapsed()
            );
        }
    }
}
