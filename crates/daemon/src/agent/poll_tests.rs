//! The agent builds a report only after a change (review finding: it scanned every face and
//! the whole RIB on every poll).

use std::sync::atomic::Ordering;
use std::time::Duration;

use nameway_face::{FaceSystem, FaceSystemConfig};
use nameway_fw::{Config as FwConfig, Forwarder, Time};

use super::*;
use crate::config::Config;
use crate::mgmt::Management;

fn built(a: &Agent) -> u64 {
    a.counters.reports_built.load(Ordering::Relaxed)
}

#[tokio::test]
async fn a_report_is_built_only_after_the_rib_or_a_face_changed() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::from_toml(&format!(
        "[controller]\nuri = \"tcp://127.0.0.1:9\"\nkey = \"ed25519:{}\"\nname = \"/ex/r1\"\nstate_dir = {:?}\nreport_interval_ms = 5\n",
        "ab".repeat(32),
        dir.path()
    ))
    .unwrap();
    let faces_config = FaceSystemConfig {
        unix_path: None,
        tcp: vec![],
        udp: vec![],
        ..FaceSystemConfig::default()
    };
    let (faces, _events) = FaceSystem::start(faces_config).await.unwrap();
    let mut fw = Forwarder::new(FwConfig::default());
    let mut mgmt = Management::new(config.mgmt.clone());
    let mut agent = Agent::start(&config, &mut fw, &mut mgmt, &faces)
        .unwrap()
        .unwrap();
    let t = Time::from_nanos(0);
    // The first poll reports the state once.
    agent.poll(&mut fw, &mgmt, &faces, t);
    assert_eq!(built(&agent), 1);
    // Nothing changes: many polls, well past the report interval, build nothing, and the
    // driver is not asked to wake up for a report.
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(2)).await;
        agent.poll(&mut fw, &mgmt, &faces, t);
    }
    assert_eq!(built(&agent), 1);
    assert!(agent.next_deadline(&mgmt) >= agent.hellos.next_deadline());
    // An application registers a prefix: one report, with the registration in it.
    let route = Route {
        face: 300,
        origin: route_origin::APP,
        cost: 0,
        flags: crate::rib::CHILD_INHERIT,
        expires: None,
    };
    mgmt.add_route(&mut fw, &"/ex/app".parse().unwrap(), route);
    tokio::time::sleep(Duration::from_millis(6)).await;
    assert!(agent.next_deadline(&mgmt) <= Instant::now());
    agent.poll(&mut fw, &mgmt, &faces, t);
    assert_eq!(built(&agent), 2);
    let reported = agent.last_report.as_ref().unwrap();
    assert_eq!(reported.registrations.len(), 1);
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(6)).await;
        agent.poll(&mut fw, &mgmt, &faces, t);
    }
    assert_eq!(built(&agent), 2);
    // A face event makes the agent list the secure links again; none changed: no report.
    agent.face_changed(300);
    tokio::time::sleep(Duration::from_millis(6)).await;
    agent.poll(&mut fw, &mgmt, &faces, t);
    agent.poll(&mut fw, &mgmt, &faces, t);
    assert_eq!(built(&agent), 2);
    faces.shutdown().await;
}

/// A neighbour's hello reaches this forwarder's hello face and no other face, even with a
/// default route toward another neighbour: hellos never go beyond one hop.
#[tokio::test]
async fn a_hello_from_a_neighbour_is_answered_here_and_never_forwarded() {
    use nameway_fw::{FaceScope, LinkType};
    let dir = tempfile::tempdir().unwrap();
    let config = Config::from_toml(&format!(
        "[controller]\nuri = \"tcp://127.0.0.1:9\"\nkey = \"ed25519:{}\"\nname = \"/ex/r1\"\nstate_dir = {:?}\n",
        "ab".repeat(32),
        dir.path()
    ))
    .unwrap();
    let faces_config = FaceSystemConfig {
        unix_path: None,
        tcp: vec![],
        udp: vec![],
        ..FaceSystemConfig::default()
    };
    let (faces, _events) = FaceSystem::start(faces_config).await.unwrap();
    let mut fw = Forwarder::new(FwConfig::default());
    let mut mgmt = Management::new(config.mgmt.clone());
    let mut agent = Agent::start(&config, &mut fw, &mut mgmt, &faces)
        .unwrap()
        .unwrap();
    let (from, other) = (FaceId(300), FaceId(301));
    for f in [from, other] {
        fw.add_face_with_id(f, FaceScope::NonLocal, LinkType::PointToPoint)
            .unwrap();
    }
    fw.add_nexthop(&Name::default(), other, 0).unwrap();
    // The neighbour's hello, as its agent builds it (its NextHopFaceId stays on its side).
    let mut theirs = hello::Hellos::new(
        hello::HelloTimers {
            interval: Duration::from_millis(500),
            dead_intervals: 3,
            recover: 2,
        },
        7,
        Instant::now(),
    );
    theirs.add(1, Instant::now());
    let wire = theirs.poll(Instant::now()).remove(0).1;
    let interest = nameway_wire::LpPacket::decode(&wire)
        .unwrap()
        .fragment
        .unwrap();
    let t = Time::from_nanos(1_000_000);
    fw.handle_packet(t, from, interest);
    let mut sent = Vec::new();
    // The driver's flush: what goes to the hello face is handed to the agent.
    for _ in 0..10 {
        let Some(tx) = fw.poll_transmit() else { break };
        if tx.face == HELLO_FACE {
            agent.on_hello(&mut fw, &faces, t, tx.wire);
        } else {
            sent.push((tx.face, tx.kind));
        }
    }
    assert_eq!(sent, vec![(from, nameway_fw::PacketKind::Data)]);
    assert_eq!(agent.counters.hellos_received.load(Ordering::Relaxed), 1);
    faces.shutdown().await;
}
