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
