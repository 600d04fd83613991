//! C3 (registry) and C4 (route computation: the engine, and `serve`'s state up to the
//! objects to push) benchmarks.
#![allow(missing_docs)] // criterion_group! generates an undocumented function
#![allow(clippy::unwrap_used)] // fixed, valid inputs: a failure is a broken benchmark
//!
//! `cargo bench -p nameway-ctl --bench ctl`. Restart with 10^6 names and the durable
//! registration latency percentiles: `cargo run --release -p nameway-ctl --example
//! registry_figures`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use nameway_ctl::channel::{NeighbourReport, RegistrationReport, Report};
use nameway_ctl::serve::state::ControllerState;
use nameway_ctl::{
    Durability, GroupCommitConfig, LinkReport, NodeId, Origin, Registration, Registry, RouteEngine,
    SqliteStore, Topology,
};
use nameway_wire::Name;

const NOW: u64 = 1_800_000_000_000;

fn reg(i: u64) -> Registration {
    Registration {
        prefix: format!("/example/site{}/app{}/obj{i}", i % 97, i % 1013)
            .parse()
            .unwrap(),
        node: format!("/example/r{}", i % 1000),
        face: 256 + i % 7,
        origin: 255,
        cost: 10,
        flags: 1,
        expires_ms: NOW + 3_600_000,
        owner_key: Some(vec![0xAB; 44]),
        announcement: Some(vec![0xCD; 150]),
    }
}

fn registry_bulk_load(c: &mut Criterion) {
    const N: u64 = 100_000;
    let mut g = c.benchmark_group("registry");
    g.sample_size(10).throughput(Throughput::Elements(N));
    let regs: Vec<Registration> = (0..N).map(reg).collect();
    g.bench_function("bulk_load_100k", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().unwrap();
                let store =
                    SqliteStore::open(&dir.path().join("c.db"), Durability::Normal).unwrap();
                let (r, _) = Registry::open(store, NOW, GroupCommitConfig::default()).unwrap();
                (dir, r)
            },
            // One commit (a bulk load; 10^4 per commit is slower: docs/controller.md).
            |(dir, r)| {
                r.register_all(regs.clone()).unwrap();
                (dir, r)
            },
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

fn registry_lookup(c: &mut Criterion) {
    const N: u64 = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("c.db"), Durability::Normal).unwrap();
    let (r, _) = Registry::open(store, NOW, GroupCommitConfig::default()).unwrap();
    let regs: Vec<Registration> = (0..N).map(reg).collect();
    for chunk in regs.chunks(10_000) {
        r.register_all(chunk.to_vec()).unwrap();
    }
    // Names below registered prefixes (segments of the objects): a longest-prefix match.
    let names: Vec<Name> = (0..1024u64)
        .map(|i| {
            let p = &regs[((i * 7919) % N) as usize].prefix;
            format!("{p}/v=1/seg={i}").parse().unwrap()
        })
        .collect();
    let mut g = c.benchmark_group("registry");
    g.throughput(Throughput::Elements(names.len() as u64));
    g.bench_function("lookup_lpm_1024_in_100k", |b| {
        b.iter(|| {
            let mut hits = 0;
            for n in &names {
                hits += r.lookup_count(black_box(n));
            }
            assert_eq!(hits, names.len());
        });
    });
    g.finish();
}

/// 1000 routers of degree 4: a ring plus one random chord per router (xorshift, fixed seed).
pub fn topology(n: u32) -> (Topology, Vec<(NodeId, NodeId)>) {
    let mut t = Topology::new();
    for i in 0..n {
        t.add_router(&format!("/example/r{i}"));
    }
    let mut s: u64 = 0x2545_F491_4F6C_DD1D;
    let mut links = Vec::new();
    for i in 0..n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let chord = (s % u64::from(n)) as u32;
        for j in [(i + 1) % n, chord] {
            if j == i {
                continue;
            }
            let cost = 1 + (s >> 32) as u32 % 10;
            t.report(
                i,
                j,
                LinkReport {
                    face: u64::from(j) + 1,
                    cost,
                    up: true,
                },
            );
            t.report(
                j,
                i,
                LinkReport {
                    face: u64::from(i) + 1,
                    cost,
                    up: true,
                },
            );
            links.push((i, j));
        }
    }
    (t, links)
}

fn engine(n: u32) -> (RouteEngine, Vec<(NodeId, NodeId)>) {
    let (t, links) = topology(n);
    let mut e = RouteEngine::new(t, 2);
    // Every router originates one prefix: one shortest-path row per router (all pairs).
    for r in 0..n {
        e.add_origin(
            format!("/example/p{r}").parse().unwrap(),
            Origin {
                router: r,
                face: 0,
                cost: 0,
            },
        );
    }
    (e, links)
}

fn routes(c: &mut Criterion) {
    let mut g = c.benchmark_group("routes");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    let (mut e, links) = engine(1000);
    g.bench_function("full_1000_routers_1000_prefixes", |b| {
        b.iter(|| e.compute_all())
    });
    e.compute_all();
    // One link change: alternately fail a link and bring it back (each iteration one change).
    let mut k = 0usize;
    g.bench_function("one_link_change_1000_routers", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let (a, bb) = links[(k / 2 * 7) % links.len()];
                let up = k % 2 == 1;
                k += 1;
                let t = Instant::now();
                black_box(e.report_link(
                    a,
                    bb,
                    LinkReport {
                        face: u64::from(bb) + 1,
                        cost: 5,
                        up,
                    },
                ));
                total += t.elapsed();
            }
            total
        });
    });
    g.finish();
}

/// C4 through `serve`'s state: the 1000 routers of [`topology`] connected, each reporting
/// its links and one prefix; what one router's report with one link down (or back up) costs
/// up to the objects to push, incrementally and (the path before) recomputing everything.
fn serve_routes(c: &mut Criterion) {
    const N: u32 = 1000;
    let (t, _) = topology(N);
    let key = |i: u32| Bytes::from([&i.to_be_bytes()[..], &[7u8; 28]].concat());
    let report = |r: NodeId, down: Option<NodeId>| Report {
        neighbours: t
            .adjacencies(r)
            .iter()
            .map(|a| NeighbourReport {
                link_key: key(a.to),
                face: a.face,
                cost: a.cost,
                up: Some(a.to) != down,
            })
            .collect(),
        registrations: vec![RegistrationReport {
            prefix: format!("/example/p{r}").parse().unwrap(),
            face: 0,
            cost: 0,
        }],
        faces: vec![],
    };
    let mut g = c.benchmark_group("serve");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for (label, mut state) in [
        ("one_link_change_1000_routers", ControllerState::new(2)),
        (
            "one_link_change_1000_routers_full_recomputation",
            ControllerState::with_full_recomputation(2),
        ),
    ] {
        for r in 0..N {
            let name: Name = format!("/example/r{r}").parse().unwrap();
            state.connected(&name, Some(key(r)), u64::from(r));
        }
        let first = state.reports((0..N).map(|r| (u64::from(r), report(r, None))).collect());
        assert_eq!(first.len(), N as usize);
        // Alternately one end of a link reports it down and up again (each iteration one
        // change), links spread over the graph.
        let mut k = 0usize;
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let a = (k / 2 * 7 % N as usize) as NodeId;
                    let peer = t.adjacencies(a)[0].to;
                    let rep = report(a, k.is_multiple_of(2).then_some(peer));
                    k += 1;
                    let start = Instant::now();
                    let pushes = state.report(u64::from(a), rep);
                    total += start.elapsed();
                    black_box(pushes);
                }
                total
            });
        });
    }
    // A router joining: router 500 (degree 4) leaves (not timed), then connects on a new
    // connection and reports its links and prefix (timed); its neighbours report their links
    // to it throughout.
    for (label, mut state) in [
        ("router_join_1000_routers", ControllerState::new(2)),
        (
            "router_join_1000_routers_full_recomputation",
            ControllerState::with_full_recomputation(2),
        ),
    ] {
        for r in 0..N {
            let name: Name = format!("/example/r{r}").parse().unwrap();
            state.connected(&name, Some(key(r)), u64::from(r));
        }
        state.reports((0..N).map(|r| (u64::from(r), report(r, None))).collect());
        const J: u32 = 500;
        let joiner: Name = format!("/example/r{J}").parse().unwrap();
        let mut conn = u64::from(J);
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    black_box(state.disconnected(conn));
                    conn += u64::from(N);
                    let rep = report(J, None);
                    let start = Instant::now();
                    state.connected(&joiner, Some(key(J)), conn);
                    let pushes = state.report(conn, rep);
                    total += start.elapsed();
                    assert!(pushes.len() > 1, "the routers gain the joiner's prefix");
                    black_box(pushes);
                }
                total
            });
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    registry_bulk_load,
    registry_lookup,
    routes,
    serve_routes
);
criterion_main!(benches);
