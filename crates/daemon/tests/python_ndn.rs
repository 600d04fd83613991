//! Real python-ndn applications (PyPI python-ndn, both `ndn.app` and `ndn.appv2`) exchange Data
//! through a real namewayd process, unmodified: prefix registration over both command formats,
//! exact and CanBePrefix fetches, a segmented transfer, Nack NoRoute, route cleanup when the
//! producer exits, and the content store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{App, Daemon};

#[test]
fn legacy_app_producer_and_consumer() {
    let Some(py) = common::python() else { return };
    let d = Daemon::start("");
    let t = d.transport();
    let _p = App::producer(
        &py,
        &t,
        &[
            "produce",
            "--api",
            "app",
            "--prefix",
            "/e2e/legacy",
            "--size",
            "1024",
        ],
    );
    let r = App::run(
        &py,
        &t,
        &[
            "consume",
            "--api",
            "app",
            "--name",
            "/e2e/legacy/x",
            "--must-be-fresh",
        ],
    );
    assert_eq!(r["name"], "/e2e/legacy/x", "{r}\n{}", d.log());
    assert_eq!(r["size"], 1024);
}

#[test]
fn appv2_producer_and_consumer() {
    let Some(py) = common::python() else { return };
    let d = Daemon::start("");
    let t = d.transport();
    let _p = App::producer(
        &py,
        &t,
        &[
            "produce", "--api", "appv2", "--prefix", "/e2e/v2", "--size", "3000",
        ],
    );
    let r = App::run(
        &py,
        &t,
        &[
            "consume",
            "--api",
            "appv2",
            "--name",
            "/e2e/v2/y",
            "--must-be-fresh",
        ],
    );
    assert_eq!(r["name"], "/e2e/v2/y", "{r}\n{}", d.log());
    assert_eq!(r["size"], 3000);
    // Over TCP this time, from the other API: a new name goes to the producer...
    let tcp = format!("tcp://127.0.0.1:{}", d.tcp);
    let r = App::run(
        &py,
        &tcp,
        &["consume", "--api", "app", "--name", "/e2e/v2/z"],
    );
    assert_eq!(r["name"], "/e2e/v2/z", "{r}");
    // ...and CanBePrefix on the prefix is answered by a cached Data under it.
    let r = App::run(
        &py,
        &tcp,
        &[
            "consume",
            "--api",
            "app",
            "--name",
            "/e2e/v2",
            "--can-be-prefix",
        ],
    );
    let name = r["name"].as_str().unwrap_or_default();
    assert!(name == "/e2e/v2/y" || name == "/e2e/v2/z", "{r}");
}

#[test]
fn segmented_transfer_with_digest() {
    let Some(py) = common::python() else { return };
    let d = Daemon::start("");
    let t = d.transport();
    let p = App::spawn(
        &py,
        &t,
        &["serve-object", "--prefix", "/e2e/file", "--size", "300000"],
    );
    let ready = p.next(20);
    assert_eq!(ready["ready"], true);
    let r = App::run(&py, &t, &["fetch-object", "--name", "/e2e/file"]);
    assert_eq!(r["size"], 300_000, "{r}\n{}", d.log());
    assert_eq!(r["segments"], ready["segments"]);
    assert_eq!(r["sha256"], ready["sha256"]);
}

#[test]
fn nack_no_route_reaches_the_consumer() {
    let Some(py) = common::python() else { return };
    let d = Daemon::start("");
    let t = d.transport();
    for api in ["app", "appv2"] {
        let r = App::run(
            &py,
            &t,
            &["consume", "--api", api, "--name", "/no/route/here"],
        );
        assert_eq!(r["nack"], 150, "{api}: {r}");
    }
}

#[test]
fn producer_exit_removes_its_route_and_the_cache_still_serves() {
    let Some(py) = common::python() else { return };
    let d = Daemon::start("");
    let t = d.transport();
    let producer = App::producer(
        &py,
        &t,
        &["produce", "--api", "app", "--prefix", "/e2e/gone"],
    );
    let r = App::run(&py, &t, &["consume", "--name", "/e2e/gone/a"]);
    assert_eq!(r["name"], "/e2e/gone/a", "{r}");
    drop(producer);
    // The cached Data is still served (no MustBeFresh needed: it is fresh for 10 s anyway).
    let r = App::run(&py, &t, &["consume", "--name", "/e2e/gone/a"]);
    assert_eq!(r["name"], "/e2e/gone/a", "cache miss: {r}");
    // A new name has no route any more: Nack NoRoute once the face is gone.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = App::run(
            &py,
            &t,
            &["consume", "--name", "/e2e/gone/b", "--lifetime", "1000"],
        );
        if r["nack"] == 150 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "route not removed: {r}\n{}",
            d.log()
        );
    }
}
