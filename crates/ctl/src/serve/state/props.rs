//! Property: the incremental path (`ControllerState::new`) holds, publishes and pushes
//! exactly what recomputing everything on every change does
//! (`ControllerState::with_full_recomputation`), after any sequence of link changes,
//! registrations, withdrawals, disconnections, reconnections and routers joining for the
//! first time.

use std::collections::BTreeMap;

use bytes::Bytes;
use nameway_wire::Name;
use proptest::prelude::*;

use super::{ConnId, ControllerState, Push};
use crate::channel::{NeighbourReport, RegistrationReport, Report};
use crate::objects::ConfigBody;
use crate::routes::Fib;

const ROUTERS: u8 = 7;
/// The last routers are not connected at the start: their first `Back` is a join (their
/// neighbours may report links to them before).
const JOINERS: u8 = 2;
const PREFIXES: u8 = 5;

#[derive(Clone, Debug)]
enum Op {
    /// `a`'s report about `b`: `None` no longer reported, else (up, cost).
    Link(u8, u8, Option<(bool, u8)>),
    /// Both ends report the link up with this cost (two reports).
    BothUp(u8, u8, u8),
    /// `a` registers (or, when it has, withdraws) prefix `p` on face `f`.
    Toggle(u8, u8, u8),
    /// `a`'s connection closes.
    Gone(u8),
    /// `a` connects again (a new connection, or its first) and reports what it had.
    Back(u8),
    /// `a` acknowledges the FIB version last pushed to it (or, `false`, one past it).
    Ack(u8, bool),
}

fn op() -> impl Strategy<Value = Op> {
    let r = 0..ROUTERS;
    prop_oneof![
        6 => (r.clone(), r.clone(), proptest::option::of((any::<bool>(), 1..6u8)))
            .prop_map(|(a, b, l)| Op::Link(a, b, l)),
        6 => (r.clone(), r.clone(), 1..6u8).prop_map(|(a, b, c)| Op::BothUp(a, b, c)),
        5 => (r.clone(), 0..PREFIXES, 0..2u8).prop_map(|(a, p, f)| Op::Toggle(a, p, f)),
        1 => r.clone().prop_map(Op::Gone),
        1 => r.clone().prop_map(Op::Back),
        2 => (r, proptest::bool::weighted(0.9)).prop_map(|(a, ok)| Op::Ack(a, ok)),
    ]
}

/// What each router would report, and its connection.
struct Model {
    links: Vec<BTreeMap<u8, (bool, u8)>>,
    regs: Vec<BTreeMap<(u8, u8), ()>>,
    conn: Vec<Option<ConnId>>,
    next_conn: ConnId,
}

fn name(i: u8) -> Name {
    format!("/ex/r{i}").parse().unwrap()
}

fn key(i: u8) -> Bytes {
    Bytes::from(vec![i + 1; 32])
}

impl Model {
    fn report(&self, a: u8) -> Report {
        Report {
            neighbours: self.links[a as usize]
                .iter()
                .map(|(&b, &(up, cost))| NeighbourReport {
                    link_key: key(b),
                    face: 100 + u64::from(b),
                    cost: u64::from(cost),
                    up,
                })
                .collect(),
            registrations: self.regs[a as usize]
                .keys()
                .map(|&(p, f)| RegistrationReport {
                    prefix: format!("/p{p}").parse().unwrap(),
                    face: 300 + u64::from(f),
                    cost: u64::from(f),
                })
                .collect(),
            faces: vec![],
        }
    }
}

/// Both states, fed the same events.
struct Pair {
    inc: ControllerState,
    full: ControllerState,
}

impl Pair {
    fn both(&mut self, f: impl Fn(&mut ControllerState) -> Vec<Push>) -> Vec<Push> {
        let a = f(&mut self.inc);
        let b = f(&mut self.full);
        assert_eq!(a, b, "pushes differ");
        self.same();
        a
    }

    fn same(&self) {
        let fibs = |s: &ControllerState| {
            s.fibs()
                .into_iter()
                .map(|f| (f.router, f.connected, f.version, f.acked, (*f.fib).clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(fibs(&self.inc), fibs(&self.full), "FIBs differ");
        assert_eq!(self.inc.links(), self.full.links(), "links differ");
        assert_eq!(self.inc.link_views(), self.full.link_views());
        assert_eq!(self.inc.counters.bad_acks, self.full.counters.bad_acks);
    }
}

/// What the routers' agents do with `pushes`: a snapshot replaces the FIB, a diff must be
/// based on the version the router holds. Each router then holds the FIB the state has for
/// it.
fn deliver(agents: &mut BTreeMap<ConnId, (u64, Fib)>, state: &ControllerState, pushes: Vec<Push>) {
    for p in pushes {
        let agent = agents.entry(p.conn).or_default();
        match (&p.object.body, p.object.base) {
            (ConfigBody::FibSnapshot(f), None) => agent.1 = f.clone(),
            (ConfigBody::FibDiff(d), Some(base)) => {
                assert_eq!(base, agent.0, "a diff not based on what the router holds");
                agent.1 = d.apply(&agent.1);
            }
            (ConfigBody::FibDiff(_) | ConfigBody::FibSnapshot(_), _) => {
                panic!("bad base: {:?}", p.object)
            }
            _ => continue,
        }
        agent.0 = p.object.version;
        let router = p.object.router.to_string();
        let fib = state.fibs().into_iter().find(|f| f.router == router);
        assert_eq!(
            Some(&agent.1),
            fib.as_ref().map(|f| &*f.fib),
            "the router's FIB"
        );
    }
}

fn run(ops: Vec<Op>) {
    let mut m = Model {
        links: vec![BTreeMap::new(); ROUTERS.into()],
        regs: vec![BTreeMap::new(); ROUTERS.into()],
        conn: vec![None; ROUTERS.into()],
        next_conn: 0,
    };
    let mut s = Pair {
        inc: ControllerState::new(2),
        full: ControllerState::with_full_recomputation(2),
    };
    // The agents' side: each connection's FIB as its router applies the objects pushed.
    let mut agents: BTreeMap<ConnId, (u64, Fib)> = BTreeMap::new();
    let report = |s: &mut Pair, agents: &mut BTreeMap<ConnId, (u64, Fib)>, m: &Model, a: u8| {
        if let Some(c) = m.conn[a as usize] {
            let r = m.report(a);
            let pushes = s.both(|st| st.report(c, r.clone()));
            deliver(agents, &s.inc, pushes);
        }
    };
    for a in 0..ROUTERS - JOINERS {
        m.next_conn += 1;
        m.conn[a as usize] = Some(m.next_conn);
        let c = m.next_conn;
        s.both(|st| {
            st.connected(&name(a), Some(key(a)), c);
            Vec::new()
        });
        report(&mut s, &mut agents, &m, a);
    }
    for op in ops {
        match op {
            Op::Link(a, b, l) => {
                match l {
                    Some(l) => m.links[a as usize].insert(b, l),
                    None => m.links[a as usize].remove(&b),
                };
                report(&mut s, &mut agents, &m, a);
            }
            Op::BothUp(a, b, cost) => {
                m.links[a as usize].insert(b, (true, cost));
                m.links[b as usize].insert(a, (true, cost));
                report(&mut s, &mut agents, &m, a);
                report(&mut s, &mut agents, &m, b);
            }
            Op::Toggle(a, p, f) => {
                if m.regs[a as usize].remove(&(p, f)).is_none() {
                    m.regs[a as usize].insert((p, f), ());
                }
                report(&mut s, &mut agents, &m, a);
            }
            Op::Ack(a, ok) => {
                if let Some(c) = m.conn[a as usize] {
                    let v = agents.get(&c).map_or(0, |x| x.0) + u64::from(!ok);
                    s.both(|st| {
                        st.ack(c, v);
                        Vec::new()
                    });
                }
            }
            Op::Gone(a) => {
                if let Some(c) = m.conn[a as usize].take() {
                    let pushes = s.both(|st| st.disconnected(c));
                    deliver(&mut agents, &s.inc, pushes);
                }
            }
            Op::Back(a) => {
                m.next_conn += 1;
                m.conn[a as usize] = Some(m.next_conn);
                let c = m.next_conn;
                s.both(|st| {
                    st.connected(&name(a), Some(key(a)), c);
                    Vec::new()
                });
                report(&mut s, &mut agents, &m, a);
            }
        }
    }
    // The incremental path was taken, and it did not fall back to full computations.
    let (inc, full) = (&s.inc.counters, &s.full.counters);
    assert_eq!((full.incremental, full.syncs), (0, 0));
    assert!(inc.computations <= full.computations);
    assert_eq!(inc.computations + inc.incremental, full.computations);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn incremental_state_equals_a_full_recomputation(ops in proptest::collection::vec(op(), 1..60)) {
        run(ops);
    }
}

#[test]
fn after_the_routers_joined_a_registration_and_a_link_change_need_no_full_computation() {
    let mut s = ControllerState::new(2);
    for a in 0..3u8 {
        s.connected(&name(a), Some(key(a)), u64::from(a) + 1);
    }
    let nb = |b: u8, up: bool| NeighbourReport {
        link_key: key(b),
        face: 100 + u64::from(b),
        cost: 1,
        up,
    };
    let reg = RegistrationReport {
        prefix: "/p".parse().unwrap(),
        face: 1,
        cost: 0,
    };
    let r0 = |up| Report {
        neighbours: vec![nb(1, up)],
        ..Report::default()
    };
    s.report(1, r0(true));
    s.report(
        2,
        Report {
            neighbours: vec![nb(0, true), nb(2, true)],
            ..Report::default()
        },
    );
    s.report(3, Report::default());
    // One full computation (the routers joined), then the other first reports applied
    // incrementally.
    assert_eq!((s.counters.computations, s.counters.incremental), (1, 2));
    let pushes = s.report(
        3,
        Report {
            neighbours: vec![nb(1, true)],
            registrations: vec![reg.clone()],
            ..Report::default()
        },
    );
    // Every router's FIB gained /p.
    assert_eq!(pushes.len(), 3);
    let pushes = s.report(1, r0(false));
    // Only r0 (that lost its route) and r1 (whose link to r0 went) are published to; r1's
    // FIB did not change, so only r0 gets an object.
    assert_eq!(pushes.iter().map(|p| p.conn).collect::<Vec<_>>(), vec![1]);
    assert_eq!((s.counters.computations, s.counters.incremental), (1, 4));
    // A fourth router joins with a link to r2 and registers /q: no full computation; r2 and
    // the new router report, and every router gains /q.
    s.connected(&name(3), Some(key(3)), 4);
    let pushes = s.report(
        4,
        Report {
            neighbours: vec![nb(2, true)],
            registrations: vec![RegistrationReport {
                prefix: "/q".parse().unwrap(),
                face: 1,
                cost: 0,
            }],
            ..Report::default()
        },
    );
    assert_eq!(s.counters.syncs, 1);
    // The link is half reported yet: /q is routed nowhere else, the new router gets its
    // snapshot.
    assert_eq!(pushes.iter().map(|p| p.conn).collect::<Vec<_>>(), vec![4]);
    let pushes = s.report(
        3,
        Report {
            neighbours: vec![nb(1, true), nb(3, true)],
            registrations: vec![reg.clone()],
            ..Report::default()
        },
    );
    // r1 and r2 gain /q, the new router /p (r0's link to r1 is down).
    assert_eq!(
        pushes.iter().map(|p| p.conn).collect::<Vec<_>>(),
        vec![2, 3, 4]
    );
    let fib = |s: &ControllerState, r: u8| {
        s.fibs()
            .into_iter()
            .find(|f| f.router == name(r).to_string())
            .unwrap()
            .fib
    };
    assert!(fib(&s, 1).contains_key(&"/q".parse::<Name>().unwrap()));
    assert!(fib(&s, 3).contains_key(&"/p".parse::<Name>().unwrap()));
    // It leaves: its links and registration go, still without a full computation.
    let pushes = s.disconnected(4);
    assert_eq!(
        pushes.iter().map(|p| p.conn).collect::<Vec<_>>(),
        vec![2, 3]
    );
    assert!(!fib(&s, 1).contains_key(&"/q".parse::<Name>().unwrap()));
    assert_eq!((s.counters.computations, s.counters.syncs), (1, 2));
}
