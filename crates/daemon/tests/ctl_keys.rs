//! The controller's keys end to end, with real processes on loopback: `namewayctl serve`
//! issuing short-lived router certificates (`--cert-lifetime`), `namewayd` agents renewing
//! theirs over the channel before they expire and staying joined, while an agent whose
//! certificate expired, or a denied router, cannot come back.
//!
//! `namewayctl` is built beside `namewayd` (once per test process).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::ctl::{bin, run, wait, wait_every, Controller, Proc as Producer, SERIAL};
use common::{free_port, http_get, Daemon};
use serde_json::Value;

/// A forwarder with a secure-link identity and an agent; its state directory survives
/// restarts.
struct Agent {
    cfg: String,
    state: PathBuf,
    udp: u16,
    d: Option<Daemon>,
}

impl Agent {
    fn new(ctl: &Controller, dir: &Path, i: usize) -> Self {
        Self::with(ctl, dir, i, "", free_port())
    }

    /// Router `i` with `security` appended to its `[security]` section and `extra` after
    /// its `[controller]` section, its UDP port `udp`.
    fn with(ctl: &Controller, dir: &Path, i: usize, security: &str, udp: u16) -> Self {
        let name = format!("/example/r{i}");
        let identity = dir.join(format!("r{i}.key"));
        let state = dir.join(format!("state-r{i}"));
        let cfg = format!(
            "[security]\nidentity = {identity:?}\n{security}[controller]\nuri = \"tcp://{}\"\nkey = {:?}\nname = {name:?}\ntoken = {:?}\nstate_dir = {state:?}\n",
            ctl.listen,
            ctl.pin,
            ctl.token(&name)
        );
        let mut a = Self {
            cfg,
            state,
            udp,
            d: None,
        };
        a.start();
        a
    }

    fn start(&mut self) {
        self.d = None;
        self.d = Some(Daemon::start_on(
            &bin("namewayd"),
            free_port(),
            self.udp,
            &self.cfg,
        ));
    }

    fn nameway(&self, args: &[&str]) -> String {
        let d = self.d.as_ref().unwrap();
        let out = Command::new(bin("nameway"))
            .arg("--transport")
            .arg(d.transport())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "nameway {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            d.log()
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The level of `prefix` in this forwarder's security policy.
    fn level(&self, prefix: &str) -> Option<String> {
        let v: Value =
            serde_json::from_str(&self.nameway(&["security", "list", "--json"])).unwrap();
        v["policy"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["prefix"] == prefix)
            .and_then(|p| p["level"].as_str().map(str::to_owned))
    }

    /// The state of the secure link to the peer whose link key is `peer` (hex), if any.
    fn link_state(&self, peer: &str) -> Option<String> {
        let v: Value =
            serde_json::from_str(&self.nameway(&["neighbour", "list", "--json"])).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .find(|n| n["peer"] == peer)
            .and_then(|n| n["state"].as_str().map(str::to_owned))
    }

    fn trusted(&self, peer: &str) -> bool {
        let v: Value =
            serde_json::from_str(&self.nameway(&["security", "list", "--json"])).unwrap();
        v["trusted_peers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k == peer)
    }

    /// The agent's group-key counters (`nameway status --json`): packets by result, refusals
    /// by reason, use per key held.
    fn group_keys(&self) -> GroupCounts {
        let v: Value = serde_json::from_str(&self.nameway(&["status", "--json"])).unwrap();
        let c = &v["controller"];
        let n = |v: &Value| v.as_u64().unwrap();
        GroupCounts {
            sealed: n(&c["group_key_packets"]["sealed"]),
            opened: n(&c["group_key_packets"]["opened"]),
            refused: c["group_key_refused"]
                .as_object()
                .unwrap()
                .values()
                .map(n)
                .sum(),
            by_key: c["group_key_use"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, u)| (k.clone(), (n(&u["sealed"]), n(&u["opened"]))))
                .collect(),
        }
    }

    /// Every secure neighbour's drop counters, summed, and the packets decrypted.
    fn secure_drops_and_decrypted(&self) -> (u64, u64) {
        let v: Value =
            serde_json::from_str(&self.nameway(&["neighbour", "list", "--json"])).unwrap();
        let mut drops = 0;
        let mut dec = 0;
        for n in v.as_array().unwrap() {
            dec += n["decrypted"].as_u64().unwrap_or(0);
            for (_, c) in n["drops"].as_object().unwrap() {
                drops += c.as_u64().unwrap();
            }
        }
        (drops, dec)
    }

    fn stop(&mut self) {
        self.d = None;
    }

    fn cert(&self) -> Option<Vec<u8>> {
        std::fs::read(self.state.join("router.cert")).ok()
    }

    /// The NotAfter of the certificate kept in the state directory.
    fn not_after(&self) -> String {
        let c = nameway_transport::Certificate::load(&self.state.join("router.cert")).unwrap();
        c.validity().1.to_owned()
    }

    fn log(&self) -> String {
        self.d.as_ref().map(Daemon::log).unwrap_or_default()
    }
}

#[test]
fn agents_renew_short_lived_certificates_and_stay_joined_while_expired_and_denied_ones_cannot() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 9 s certificates: renewed 6 s after issue.
    let ctl = Controller::start_with(&["--cert-lifetime", "9s"]);
    let dir = tempfile::tempdir().unwrap();
    let mut r1 = Agent::new(&ctl, dir.path(), 1);
    let mut r2 = Agent::new(&ctl, dir.path(), 2);
    assert!(
        wait(Duration::from_secs(20), || ctl.connected("/example/r1")
            && ctl.connected("/example/r2")),
        "agents did not join\n{}\n{}",
        ctl.log(),
        r1.log()
    );
    let first = r1.cert().unwrap();
    let first_not_after = r1.not_after();
    // r2 goes away with its 9 s certificate.
    r2.stop();

    // r1 renews before its certificate expires, more than once, without leaving.
    let started = Instant::now();
    let mut always_joined = true;
    while started.elapsed() < Duration::from_secs(14) {
        always_joined &= ctl.connected("/example/r1");
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(always_joined, "r1 left the controller\n{}", r1.log());
    assert_ne!(
        r1.cert().unwrap(),
        first,
        "r1's certificate was not renewed"
    );
    assert!(
        r1.not_after() > first_not_after,
        "{} <= {first_not_after}",
        r1.not_after()
    );
    assert!(
        ctl.metric("namewayctl_renewals_total{result=\"renewed\"}") >= 2,
        "{}",
        ctl.log()
    );
    assert!(r1.log().contains("router certificate renewed and kept"));
    assert_eq!(
        ctl.metric("namewayctl_agents_total{result=\"refused_certificate\"}"),
        0
    );

    // r1 killed the moment it asks for its next renewal (before or just after it stored the
    // answer: either way its state directory holds one whole certificate, the old one still
    // valid or the renewed one), restarted long after its first certificate expired: it comes
    // back.
    let asked = |log: &str| log.matches("asking the controller to renew").count();
    let before = asked(&r1.log());
    assert!(
        wait_every(Duration::from_secs(15), Duration::from_millis(2), || asked(
            &r1.log()
        )
            > before),
        "r1 did not ask for a renewal\n{}",
        r1.log()
    );
    let admitted = ctl.metric("namewayctl_agents_total{result=\"admitted\"}");
    r1.start();
    nameway_transport::Certificate::load(&r1.state.join("router.cert"))
        .expect("r1's certificate after a kill during its renewal");
    assert!(
        wait(Duration::from_secs(15), || ctl
            .metric("namewayctl_agents_total{result=\"admitted\"}")
            > admitted
            && ctl.connected("/example/r1")),
        "r1 restarted was not admitted\n{}\n{}",
        ctl.log(),
        r1.log()
    );

    // r2, back after its certificate expired, cannot join: its certificate is refused.
    r2.start();
    assert!(
        wait(Duration::from_secs(15), || ctl.metric(
            "namewayctl_agents_total{result=\"refused_certificate\"}"
        ) >= 1),
        "{}",
        ctl.log()
    );
    assert!(!ctl.connected("/example/r2"));
    assert!(r2.log().contains("certificate refused"), "{}", r2.log());

    // r2 with a damaged certificate file: one clear error that says what to do, and the
    // forwarder keeps running.
    r2.stop();
    std::fs::write(r2.state.join("router.cert"), "not base64 ***\n").unwrap();
    r2.start();
    assert!(
        wait(Duration::from_secs(15), || r2.log().contains(
            "remove it and enrol again with a new controller.token"
        )),
        "{}",
        r2.log()
    );
    assert!(r2.log().contains("router.cert"), "{}", r2.log());
    r2.nameway(&["status"]);

    // r1 denied: the session ends (the controller reads the deny list every 500 ms and ends a
    // denied router's session; a renewal that comes first is refused) and it cannot come back.
    run("namewayctl", &["deny", "/example/r1", "--db", &ctl.db()]);
    assert!(
        wait(Duration::from_secs(15), || ctl.metric(
            "namewayctl_renewals_total{result=\"refused_denied\"}"
        ) + ctl
            .metric("namewayctl_agents_total{result=\"ended_denied\"}")
            >= 1),
        "{}",
        ctl.log()
    );
    assert!(
        wait(Duration::from_secs(15), || !ctl.connected("/example/r1")),
        "r1 denied is still connected"
    );
    assert!(
        wait(Duration::from_secs(15), || ctl
            .metric("namewayctl_agents_total{result=\"refused_denied\"}")
            >= 1),
        "{}",
        ctl.log()
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(!ctl.connected("/example/r1"));
}

/// A forwarder's group-key counters.
#[derive(Debug)]
struct GroupCounts {
    sealed: u64,
    opened: u64,
    refused: u64,
    /// Per key id held: (sealed, opened).
    by_key: std::collections::BTreeMap<String, (u64, u64)>,
}

/// `nameway put` serving until dropped.
#[test]
fn a_group_key_rotated_and_certificates_renewed_during_a_transfer_lose_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctl = Controller::start_with(&["--cert-lifetime", "6s"]);
    let dir = tempfile::tempdir().unwrap();
    // r1 - r2 joined by a secure UDP face, each trusting the other's link key.
    let keys: Vec<String> = (1..=2)
        .map(|i| {
            let (id, _) = nameway_face::secure::Identity::load_or_create(
                &dir.path().join(format!("r{i}.key")),
            )
            .unwrap();
            hex::encode(id.public_key().0)
        })
        .collect();
    let ports = [free_port(), free_port()];
    let security = |me: usize| {
        let peer = 1 - me;
        format!(
            "trusted_peers = [{:?}]\n[[face]]\nuri = \"udp4://127.0.0.1:{}\"\nsecure = true\n",
            keys[peer], ports[peer]
        )
    };
    let r1 = Agent::with(&ctl, dir.path(), 1, &security(0), ports[0]);
    let r2 = Agent::with(&ctl, dir.path(), 2, &security(1), ports[1]);
    assert!(
        wait(Duration::from_secs(20), || ctl.connected("/example/r1")
            && ctl.connected("/example/r2")),
        "agents did not join\n{}",
        ctl.log()
    );

    // A group key for /example/video: both members install the prefix's level.
    let group = |overlap: &str| {
        run(
            "namewayctl",
            &[
                "keys",
                "--group",
                "/example/video",
                "--member",
                "/example/r1",
                "--member",
                "/example/r2",
                "--level",
                "chacha20-poly1305",
                "--overlap",
                overlap,
                "--db",
                &ctl.db(),
            ],
        )
        .trim()
        .to_owned()
    };
    let k1 = group("2s");
    for r in [&r1, &r2] {
        assert!(
            wait(Duration::from_secs(10), || r
                .level("/example/video")
                .as_deref()
                == Some("chacha20-poly1305")),
            "the group key's prefix was not installed\n{}",
            r.log()
        );
    }
    let api: Value = {
        let (_, _, body) = http_get(&ctl.http, "/api/keys");
        serde_json::from_slice(&body).unwrap()
    };
    assert_eq!(api["group_keys"][0]["key_id"], k1.as_str());
    assert_eq!(api["group_keys"][0]["prefix"], "/example/video");
    assert_eq!(api["group_keys"][0]["valid"], true);
    assert!(!String::from_utf8_lossy(&serde_json::to_vec(&api).unwrap()).contains("sealed"));

    // 24 MiB published at r2, fetched at r1 through the controller's route with a small
    // fixed window, so that the transfer outlives the rotation and a certificate renewal.
    let bytes: Vec<u8> = (0..24 << 20)
        .map(|i: usize| (i as u8).wrapping_mul(29) ^ 0x5a)
        .collect();
    let file = dir.path().join("big");
    std::fs::write(&file, &bytes).unwrap();
    let mut put = Command::new(bin("nameway"))
        .args([
            "--transport",
            &r2.d.as_ref().unwrap().transport(),
            "put",
            "--json",
        ])
        .arg(&file)
        .arg("/example/video/big")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(put.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _put = Producer(put);
    assert!(
        wait(Duration::from_secs(15), || r1
            .nameway(&["route", "list", "--json"])
            .contains("/example/video")),
        "no route at r1"
    );
    let (drops_before, dec_before) = r1.secure_drops_and_decrypted();
    let (drops2_before, _) = r2.secure_drops_and_decrypted();
    let (g1_before, g2_before) = (r1.group_keys(), r2.group_keys());
    let renewed_before = ctl.metric("namewayctl_renewals_total{result=\"renewed\"}");
    let out = dir.path().join("got");
    let mut get = Command::new(bin("nameway"))
        .args([
            "--transport",
            &r1.d.as_ref().unwrap().transport(),
            "get",
            "--json",
        ])
        .args(["--cc", "fixed", "-w", "1"])
        .arg("-o")
        .arg(&out)
        .arg("/example/video/big")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    // The rotation: k2 pushed while k1 still opens for 2 s.
    let k2 = group("2s");
    assert_ne!(k1, k2);
    let rotated = wait(Duration::from_secs(10), || {
        r1.log().matches("group keys installed").count() >= 2
            && r2.log().matches("group keys installed").count() >= 2
    });
    assert!(
        rotated,
        "the rotation did not reach both members\n{}",
        r1.log()
    );
    assert!(
        get.try_wait().unwrap().is_none(),
        "the transfer ended before the rotation reached the members: make it longer"
    );
    // A certificate renewal while the transfer runs; which group key r1 opens the Data
    // with, sampled meanwhile (a key leaves the counters when it leaves the keyring).
    let mut renewed_during = false;
    let mut opened_with: std::collections::BTreeMap<String, u64> = Default::default();
    while get.try_wait().unwrap().is_none() {
        renewed_during |=
            ctl.metric("namewayctl_renewals_total{result=\"renewed\"}") > renewed_before;
        for (k, (_, opened)) in r1.group_keys().by_key {
            let seen = opened_with.entry(k).or_default();
            *seen = (*seen).max(opened);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let got = get.wait_with_output().unwrap();
    assert!(
        got.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&got.stderr),
        r1.log()
    );
    let summary: Value = serde_json::from_slice(&got.stdout).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), bytes, "wrong bytes");
    // No segment lost: no timeout, no Nack, and every retransmission (if any) a tail loss
    // probe sent on a delay (an RTT spike on a loaded machine), not after a loss; and the
    // secure faces dropped nothing (below).
    assert_eq!(summary["timeouts"], 0, "{summary}");
    assert_eq!(summary["nacks"], 0, "{summary}");
    assert_eq!(summary["retransmissions"], summary["probes"], "{summary}");
    assert_eq!(summary["fast_retransmits"], 0, "{summary}");
    let (drops_after, dec_after) = r1.secure_drops_and_decrypted();
    let (drops2_after, _) = r2.secure_drops_and_decrypted();
    assert_eq!(drops_after, drops_before, "secure drops at r1");
    assert_eq!(drops2_after, drops2_before, "secure drops at r2");
    // The Data of /example/video came encrypted at the level the group key installed.
    assert!(dec_after > dec_before + 1000, "{dec_before} -> {dec_after}");
    // ... sealed with the group key, not the session's: r2 sealed every one of them with a
    // group key and r1 opened every Data it decrypted with one; nothing was refused.
    let (g1, g2) = (r1.group_keys(), r2.group_keys());
    assert_eq!(
        g1.opened - g1_before.opened,
        dec_after - dec_before,
        "Data opened with a session key at r1: {g1:?}"
    );
    assert!(
        g2.sealed - g2_before.sealed >= g1.opened - g1_before.opened,
        "{g2:?}"
    );
    assert_eq!(g1.refused, g1_before.refused, "{g1:?}");
    assert_eq!(g2.refused, g2_before.refused, "{g2:?}");
    // Both keys carried Data during the transfer: k1 before the rotation, k2 after.
    assert!(
        opened_with.get(&k1).is_some_and(|&n| n > 0),
        "{opened_with:?}"
    );
    assert!(g1.by_key.get(&k2).is_some_and(|&(_, n)| n > 0), "{g1:?}");
    // A certificate was renewed during the transfer as well, and nobody left.
    assert!(renewed_during, "no renewal during the transfer: {summary}");
    assert!(ctl.connected("/example/r1") && ctl.connected("/example/r2"));
    // After the overlap the old key is gone from both members, the new one stays.
    assert!(
        wait(Duration::from_secs(10), || {
            let (_, _, body) = http_get(&ctl.http, "/api/keys");
            let v: Value = serde_json::from_slice(&body).unwrap();
            v["group_keys"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["key_id"] == k1.as_str() && k["valid"] == false)
        }),
        "k1 never retired"
    );
    assert!(wait(Duration::from_secs(10), || r1
        .log()
        .lines()
        .rev()
        .find(|l| l.contains("group keys installed"))
        .is_some_and(|l| l.contains(&k2) && !l.contains(&k1))));
    assert_eq!(
        r1.level("/example/video").as_deref(),
        Some("chacha20-poly1305")
    );
    // The CLI shows the same.
    let cli: Value = serde_json::from_str(&run(
        "nameway",
        &["ctl", "--controller", &ctl.http, "keys", "--json"],
    ))
    .unwrap();
    assert_eq!(cli["group_keys"].as_array().unwrap().len(), 2);
    assert!(run("nameway", &["ctl", "--controller", &ctl.http, "keys"]).contains(&k2));
}

#[test]
fn forwarders_trust_the_domain_s_valid_routers_on_their_links_and_stop_when_one_is_denied() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctl = Controller::start();
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<String> = (1..=2)
        .map(|i| {
            let (id, _) = nameway_face::secure::Identity::load_or_create(
                &dir.path().join(format!("r{i}.key")),
            )
            .unwrap();
            hex::encode(id.public_key().0)
        })
        .collect();
    let ports = [free_port(), free_port()];
    // A secure face to the other, and no trusted_peers list at all.
    let security = |me: usize| {
        format!(
            "[[face]]\nuri = \"udp4://127.0.0.1:{}\"\nsecure = true\n",
            ports[1 - me]
        )
    };
    let r1 = Agent::with(&ctl, dir.path(), 1, &security(0), ports[0]);
    let r2 = Agent::with(&ctl, dir.path(), 2, &security(1), ports[1]);
    // Both enrolled with valid certificates: each trusts the other, the link comes up.
    assert!(
        wait(Duration::from_secs(30), || r1
            .link_state(&keys[1])
            .as_deref()
            == Some("established")
            && r2.link_state(&keys[0]).as_deref() == Some("established")),
        "the link did not come up on domain trust\n{}\n{}",
        r1.log(),
        ctl.log()
    );
    assert!(r1.trusted(&keys[1]) && r2.trusted(&keys[0]));
    assert!(r1.log().contains("domain trust installed"));
    // r2 denied: r1 stops trusting it and ends the session.
    run("namewayctl", &["deny", "/example/r2", "--db", &ctl.db()]);
    assert!(
        wait(Duration::from_secs(15), || !r1.trusted(&keys[1])
            && r1.link_state(&keys[1]).as_deref() != Some("established")),
        "r1 still trusts the denied r2\n{}",
        r1.log()
    );
    assert!(r1.log().contains("no longer in the domain's trust"));
}
