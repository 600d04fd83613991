//! The controller end to end, with real processes on loopback: `namewayctl serve` and three
//! or four `namewayd` whose agents enrol with one-time tokens, joined by secure UDP faces.
//! An application registers a prefix at one edge and `nameway get` at the other edge fetches
//! it with no static route anywhere; routes follow a router's death; forwarders keep
//! forwarding when the controller dies; hostile agents and a controller with the wrong key
//! are refused.
//!
//! `namewayctl` and `nameway` are built beside `namewayd` (once per test process).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::ctl::{bin, run, wait, Controller, Proc as Producer, SERIAL};
use common::relay::{Direction, Fault, Matcher, Relay};
use common::{free_port, http_get, Daemon};
use serde_json::Value;

/// Origin of the routes the agent installs.
const CTL: u64 = 131;

/// A forwarder with its secure-link identity, ports chosen before it starts.
struct Router {
    name: String,
    udp: u16,
    tcp: u16,
    link_key: String,
    identity: PathBuf,
    cfg: String,
    d: Option<Daemon>,
}

struct Net {
    routers: Vec<Router>,
    _keys: tempfile::TempDir,
}

/// `n` routers `/example/r1..rn` joined by `links` (pairs of indexes), each running an agent
/// with a fresh token (or what `agent` returns for router i, when it returns Some).
fn net(
    ctl: &Controller,
    n: usize,
    links: &[(usize, usize)],
    agent: impl Fn(usize, &str) -> Option<String>,
) -> Net {
    net_relayed(ctl, n, links, &[], agent).0
}

/// [`net`] where each link `(a, b)` of `relayed` crosses a UDP relay of the test's: `a`'s
/// face points at the relay, which forwards to `b`'s listener (`b` gets an on-demand face
/// for the relay's address). The relays come back in the order of `relayed`.
fn net_relayed(
    ctl: &Controller,
    n: usize,
    links: &[(usize, usize)],
    relayed: &[(usize, usize)],
    agent: impl Fn(usize, &str) -> Option<String>,
) -> (Net, Vec<Relay>) {
    let keys = tempfile::tempdir().unwrap();
    let mut routers: Vec<Router> = (0..n)
        .map(|i| {
            let identity = keys.path().join(format!("r{}.key", i + 1));
            let (id, _) = nameway_face::secure::Identity::load_or_create(&identity).unwrap();
            Router {
                name: format!("/example/r{}", i + 1),
                udp: free_port(),
                tcp: free_port(),
                link_key: hex::encode(id.public_key().0),
                identity,
                cfg: String::new(),
                d: None,
            }
        })
        .collect();
    let relays: Vec<Relay> = relayed
        .iter()
        .map(|&(_, b)| Relay::start(SocketAddr::from(([127, 0, 0, 1], routers[b].udp))))
        .collect();
    for i in 0..n {
        let peers: Vec<usize> = links
            .iter()
            .filter_map(|&(a, b)| {
                if a == i {
                    Some(b)
                } else if b == i {
                    Some(a)
                } else {
                    None
                }
            })
            .collect();
        let r = &routers[i];
        let trusted: Vec<String> = peers
            .iter()
            .map(|&p| format!("{:?}", routers[p].link_key))
            .collect();
        let mut cfg = format!(
            "[security]\nidentity = {:?}\ntrusted_peers = [{}]\n",
            r.identity,
            trusted.join(", ")
        );
        for &p in &peers {
            if relayed.contains(&(p, i)) {
                continue; // the far end of a relayed link: its face is made on demand
            }
            let remote = match relayed.iter().position(|&l| l == (i, p)) {
                Some(k) => relays[k].a_facing_addr().to_string(),
                None => format!("127.0.0.1:{}", routers[p].udp),
            };
            cfg += &format!("[[face]]\nuri = \"udp4://{remote}\"\nsecure = true\n");
        }
        let state = keys.path().join(format!("state-r{}", i + 1));
        cfg += &agent(i, &r.name).unwrap_or_else(|| {
            format!(
                "[controller]\nuri = \"tcp://{}\"\nkey = {:?}\nname = {:?}\ntoken = {:?}\nstate_dir = {state:?}\n",
                ctl.listen,
                ctl.pin,
                r.name,
                ctl.token(&r.name)
            )
        });
        routers[i].cfg = cfg;
        routers[i].start();
    }
    let net = Net {
        routers,
        _keys: keys,
    };
    (net, relays)
}

impl Router {
    /// Starts (or restarts) the daemon with its configuration, ports and state directory.
    fn start(&mut self) {
        self.d = None;
        self.d = Some(Daemon::start_on(
            &bin("namewayd"),
            self.tcp,
            self.udp,
            &self.cfg,
        ));
    }

    fn d(&self) -> &Daemon {
        self.d.as_ref().unwrap()
    }

    fn nameway(&self, args: &[&str]) -> String {
        let mut all = vec!["--transport".to_owned(), self.d().transport()];
        all.extend(args.iter().map(|s| (*s).to_owned()));
        let out = Command::new(bin("nameway")).args(&all).output().unwrap();
        assert!(
            out.status.success(),
            "nameway {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            self.d().log()
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn routes(&self) -> Vec<Value> {
        let v: Value = serde_json::from_str(&self.nameway(&["route", "list", "--json"])).unwrap();
        v.as_array().unwrap().clone()
    }

    /// Faces of the controller's routes for `prefix`.
    fn ctl_faces(&self, prefix: &str) -> Vec<u64> {
        let mut f: Vec<u64> = self
            .routes()
            .iter()
            .filter(|r| r["prefix"] == prefix && r["origin"] == CTL)
            .map(|r| r["face_id"].as_u64().unwrap())
            .collect();
        f.sort_unstable();
        f
    }

    /// This router's face toward `other` (its static face to other's UDP port).
    fn face_to(&self, other: &Router) -> u64 {
        let v: Value = serde_json::from_str(&self.nameway(&["face", "list", "--json"])).unwrap();
        let uri = format!("udp4://127.0.0.1:{}", other.udp);
        v.as_array()
            .unwrap()
            .iter()
            .find(|f| f["uri"] == uri.as_str())
            .unwrap_or_else(|| panic!("no face to {uri}: {v}"))["face_id"]
            .as_u64()
            .unwrap()
    }
}

/// `nameway put` of `bytes` under `name` at router `r`, serving until dropped.
fn put(r: &Router, name: &str, bytes: &[u8], dir: &Path) -> Producer {
    let file = dir.join(name.replace('/', "_"));
    std::fs::write(&file, bytes).unwrap();
    let mut child = Command::new(bin("nameway"))
        .args(["--transport", &r.d().transport(), "put", "--json"])
        .arg(&file)
        .arg(name)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Ready when it prints its JSON line.
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains(name), "{line}");
    Producer(child)
}

fn get(r: &Router, name: &str, dir: &Path) -> Vec<u8> {
    let out = dir.join("got");
    let _ = std::fs::remove_file(&out);
    r.nameway(&[
        "get",
        "-q",
        "--lifetime",
        "1000",
        "-o",
        out.to_str().unwrap(),
        name,
    ]);
    std::fs::read(out).unwrap()
}

fn payload(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect()
}

#[test]
fn a_prefix_registered_at_one_edge_is_fetched_from_the_other_with_no_static_route_and_after_the_controller_dies(
) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctl = Controller::start();
    let net = net(&ctl, 3, &[(0, 1), (1, 2)], |_, _| None);
    let (r1, r2, r3) = (&net.routers[0], &net.routers[1], &net.routers[2]);
    let files = tempfile::tempdir().unwrap();
    let a = payload(300_000, 1);
    let b = payload(200_000, 2);
    let _pa = put(r3, "/example/app/a", &a, files.path());
    let _pb = put(r3, "/example/app/b", &b, files.path());
    // r1 and r2 get a controller route toward r3; nobody has a static route.
    let converged = wait(Duration::from_secs(30), || {
        !r1.ctl_faces("/example/app/a").is_empty() && !r2.ctl_faces("/example/app/a").is_empty()
    });
    assert!(
        converged,
        "no controller route at r1: {:?}\nstatus {}\nctl log {}\nr1 log {}",
        r1.routes(),
        ctl.status(),
        ctl.log(),
        r1.d().log()
    );
    assert_eq!(r1.ctl_faces("/example/app/a"), vec![r1.face_to(r2)]);
    assert_eq!(r2.ctl_faces("/example/app/a"), vec![r2.face_to(r3)]);
    for r in &net.routers {
        assert!(
            r.routes().iter().all(|x| x["origin"] != 255),
            "a static route at {}",
            r.name
        );
    }
    let status = ctl.status();
    assert_eq!(status["links"].as_array().unwrap().len(), 2, "{status}");
    assert_eq!(
        ctl.metric("namewayctl_agents_total{result=\"enrolled\"} "),
        3
    );
    // The registrations are in the registry too (soft state, with r3 as their node).
    let in_registry = wait(Duration::from_secs(10), || {
        ctl.registry_list()
            .lines()
            .any(|l| l.starts_with("/example/app/a ") && l.contains("node /example/r3"))
    });
    assert!(in_registry, "{}", ctl.registry_list());
    assert_eq!(get(r1, "/example/app/a", files.path()), a);
    operators_see_the_line(&ctl, &net);

    // The controller dies: routes stay, and a fetch never made before still completes.
    let http = ctl.http.clone();
    drop(ctl);
    // `nameway ctl` says so in one line and fails.
    let out = Command::new(bin("nameway"))
        .args(["ctl", "--controller", &http, "topology"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success(), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("cannot reach the controller at http://"),
        "{err}"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(r1.ctl_faces("/example/app/b"), vec![r1.face_to(r2)]);
    assert_eq!(get(r1, "/example/app/b", files.path()), b);
}

/// `nameway ctl topology|nodes|routes|registry` on the line r1 - r2 - r3 with /example/app/a
/// registered at r3.
fn operators_see_the_line(ctl: &Controller, net: &Net) {
    let (r1, r2, r3) = (&net.routers[0], &net.routers[1], &net.routers[2]);
    let topo = ctl.cli(&["topology"]);
    let routers = topo["routers"].as_array().unwrap();
    assert_eq!(routers.len(), 3, "{topo}");
    assert!(routers.iter().all(|r| r["connected"] == true), "{topo}");
    let mut links: Vec<(String, String, bool)> = topo["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            assert!(l["cost"].as_u64().unwrap() >= 1, "{l}");
            (
                l["a"].as_str().unwrap().to_owned(),
                l["b"].as_str().unwrap().to_owned(),
                l["up"] == true && l["a_up"] == true && l["b_up"] == true,
            )
        })
        .collect();
    links.sort();
    assert_eq!(
        links,
        vec![
            ("/example/r1".into(), "/example/r2".into(), true),
            ("/example/r2".into(), "/example/r3".into(), true),
        ],
        "{topo}"
    );

    let nodes = ctl.cli(&["nodes"]);
    let nodes = nodes["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3, "{nodes:?}");
    for n in nodes {
        assert_eq!(n["enrolled"], true, "{n}");
        assert_eq!(n["denied"], false, "{n}");
        assert!(n["cert_expires"].is_string(), "{n}");
    }

    // The longest match of a longer name, at every router, acknowledged.
    let hop_of = |routes: &Value, router: &str| -> (Value, Vec<u64>, bool) {
        let r = routes["routers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["router"] == router)
            .unwrap_or_else(|| panic!("no {router} in {routes}"));
        let faces = r["nexthops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["face"].as_u64().unwrap())
            .collect();
        (r["match"].clone(), faces, r["acked"] == r["version"])
    };
    let acked = wait(Duration::from_secs(10), || {
        let routes = ctl.cli(&["routes", "/example/app/a/x"]);
        ["/example/r1", "/example/r2", "/example/r3"]
            .iter()
            .all(|r| hop_of(&routes, r).2)
    });
    let routes = ctl.cli(&["routes", "/example/app/a/x"]);
    assert!(acked, "{routes}");
    let r1_hop = hop_of(&routes, "/example/r1");
    assert_eq!(r1_hop.0, "/example/app/a", "{routes}");
    assert_eq!(r1_hop.1, vec![r1.face_to(r2)], "{routes}");
    assert_eq!(hop_of(&routes, "/example/r2").1, vec![r2.face_to(r3)]);
    let r3_hop = hop_of(&routes, "/example/r3");
    assert_eq!(r3_hop.0, "/example/app/a", "{routes}");
    assert_eq!(r3_hop.1.len(), 1, "{routes}");
    let none = ctl.cli(&["routes", "/elsewhere"]);
    assert_eq!(hop_of(&none, "/example/r1").0, Value::Null, "{none}");

    let reg = ctl.cli(&["registry"]);
    let app_a: Vec<&Value> = reg["registrations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["prefix"] == "/example/app/a")
        .collect();
    assert_eq!(app_a.len(), 1, "{reg}");
    assert_eq!(app_a[0]["router"], "/example/r3", "{reg}");
    // The face registered at r3 is the face r3's FIB entry points to.
    assert_eq!(app_a[0]["face"].as_u64(), Some(r3_hop.1[0]), "{reg}");
    assert!(app_a[0]["expires_ms"].as_u64().unwrap() > 0, "{reg}");
}

#[test]
fn when_a_router_of_a_diamond_dies_the_fibs_move_to_the_other_path() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctl = Controller::start();
    // r1 - r2 - r3 and r1 - r4 - r3.
    let mut net = net(&ctl, 4, &[(0, 1), (1, 2), (0, 3), (3, 2)], |_, _| None);
    let files = tempfile::tempdir().unwrap();
    let a = payload(200_000, 3);
    let b = payload(200_000, 4);
    let _pa = put(&net.routers[2], "/example/app/a", &a, files.path());
    let _pb = put(&net.routers[2], "/example/app/b", &b, files.path());
    let (to_r2, to_r4) = {
        let r = &net.routers;
        (r[0].face_to(&r[1]), r[0].face_to(&r[3]))
    };
    let mut both = vec![to_r2, to_r4];
    both.sort_unstable();
    // Equal cost: r1 uses both paths.
    assert!(
        wait(Duration::from_secs(30), || net.routers[0]
            .ctl_faces("/example/app/a")
            == both),
        "r1: {:?}\n{}\n{}",
        net.routers[0].routes(),
        ctl.status(),
        ctl.log()
    );
    assert_eq!(get(&net.routers[0], "/example/app/a", files.path()), a);
    // r2 dies during a 16 MiB fetch: its session closes and its links leave the topology at once;
    // the fetch completes over r4.
    let big = payload(16 << 20, 7);
    let _pc = put(&net.routers[2], "/example/app/c", &big, files.path());
    assert!(wait(Duration::from_secs(10), || net.routers[0]
        .ctl_faces("/example/app/c")
        == both));
    let out = files.path().join("c");
    let mut running = Command::new(bin("nameway"))
        .args(["--transport", &net.routers[0].d().transport()])
        .args(["get", "-q", "--lifetime", "1000", "-o"])
        .arg(&out)
        .arg("/example/app/c")
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        running.try_wait().unwrap().is_none(),
        "the fetch ended before r2 died: make the object larger"
    );
    net.routers[1].d = None;
    assert!(
        wait(Duration::from_secs(10), || net.routers[0]
            .ctl_faces("/example/app/b")
            == vec![to_r4]),
        "r1 still: {:?}\n{}",
        net.routers[0].ctl_faces("/example/app/b"),
        ctl.status()
    );
    assert_eq!(ctl.status()["links"].as_array().unwrap().len(), 2);
    let status = running.wait().unwrap();
    assert!(status.success(), "the fetch running when r2 died failed");
    assert_eq!(std::fs::read(&out).unwrap(), big);
    assert_eq!(get(&net.routers[0], "/example/app/b", files.path()), b);

    // r2 comes back: its token is spent, it presents the certificate it kept, and r1 uses
    // both paths again.
    net.routers[1].start();
    assert!(
        wait(Duration::from_secs(20), || net.routers[0]
            .ctl_faces("/example/app/b")
            == both),
        "{}",
        ctl.log()
    );
    assert_eq!(
        ctl.metric("namewayctl_agents_total{result=\"admitted\"} "),
        1
    );
    // Denied, r2's certificate no longer gets it in, and its links never come back.
    ctl.deny("/example/r2");
    net.routers[1].start();
    assert!(
        wait(Duration::from_secs(20), || ctl.metric(
            "namewayctl_agents_total{result=\"refused_denied\"} "
        ) >= 1),
        "{}",
        ctl.log()
    );
    assert!(
        wait(Duration::from_secs(10), || net.routers[0]
            .ctl_faces("/example/app/b")
            == vec![to_r4]),
        "{}",
        ctl.status()
    );
    assert_eq!(ctl.status()["links"].as_array().unwrap().len(), 2);
}

/// C1 with a silent failure: the r2 - r3 link of the diamond crosses a relay that starts
/// dropping every datagram both ways while a 16 MiB fetch runs at r1. No face goes down; the
/// agents' hellos stop being answered, r2 and r3 report the link down, the FIBs move to r4
/// and the fetch completes. When the relay passes packets again the link comes back.
#[test]
fn a_link_that_silently_drops_everything_is_routed_around_by_the_hellos() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctl = Controller::start();
    // r1 - r2 - r3 and r1 - r4 - r3; r2 - r3 through the relay.
    let links = [(0, 1), (1, 2), (0, 3), (3, 2)];
    let (net, relays) = net_relayed(&ctl, 4, &links, &[(1, 2)], |_, _| None);
    let relay = &relays[0];
    let [r1, r2, r3, r4] = [0, 1, 2, 3].map(|i| &net.routers[i]);
    let files = tempfile::tempdir().unwrap();
    let big = payload(16 << 20, 9);
    let _pc = put(r3, "/example/app/c", &big, files.path());
    let (to_r2, to_r4) = (r1.face_to(r2), r1.face_to(r4));
    let mut both = vec![to_r2, to_r4];
    both.sort_unstable();
    let r2_to_r1 = r2.face_to(r1);
    assert!(
        wait(Duration::from_secs(30), || r1.ctl_faces("/example/app/c")
            == both
            && !r2.ctl_faces("/example/app/c").is_empty()
            && r2.ctl_faces("/example/app/c") != vec![r2_to_r1]),
        "r1 {:?} r2 {:?}\n{}\n{}",
        r1.ctl_faces("/example/app/c"),
        r2.ctl_faces("/example/app/c"),
        ctl.status(),
        ctl.log()
    );
    let r2_to_r3 = r2.ctl_faces("/example/app/c");
    let faces_before = r2.nameway(&["face", "list", "--json"]);
    let out = files.path().join("c");
    let mut running = Command::new(bin("nameway"))
        .args(["--transport", &r1.d().transport()])
        .args(["get", "-q", "--lifetime", "1000", "-o"])
        .arg(&out)
        .arg("/example/app/c")
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        running.try_wait().unwrap().is_none(),
        "the fetch ended before the link failed: make the object larger"
    );
    // The link goes silent: every datagram dropped both ways, no face goes down.
    for dir in Direction::ALL {
        relay.set_fault(dir, Fault::drop_next(usize::MAX, Matcher::any()));
    }
    let failed = Instant::now();
    assert!(
        wait(Duration::from_secs(10), || r1.ctl_faces("/example/app/c")
            == vec![to_r4]
            && r2.ctl_faces("/example/app/c") == vec![r2_to_r1]),
        "r1 {:?} r2 {:?}\n{}",
        r1.ctl_faces("/example/app/c"),
        r2.ctl_faces("/example/app/c"),
        ctl.status()
    );
    // Not a timing assertion (scripts/bench-ctl-e2e.py measures it): for the log.
    eprintln!(
        "silent failure -> FIBs of r1 and r2 updated in {:?}",
        failed.elapsed()
    );
    assert_eq!(
        r2.nameway(&["face", "list", "--json"])
            .matches("\"face_id\"")
            .count(),
        faces_before.matches("\"face_id\"").count(),
        "a face went down: the failure was not silent"
    );
    // One end's report is enough to stop using the link; soon both ends report it down.
    let r2r3 = || {
        let topo = ctl.cli(&["topology"]);
        topo["links"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["a"] == "/example/r2" && l["b"] == "/example/r3")
            .unwrap_or_else(|| panic!("{topo}"))
            .clone()
    };
    assert!(
        wait(Duration::from_secs(5), || {
            let l = r2r3();
            l["up"] == false && l["a_up"] == false && l["b_up"] == false
        }),
        "{}",
        r2r3()
    );
    let status = running.wait().unwrap();
    assert!(
        status.success(),
        "the fetch running when the link went silent failed"
    );
    assert_eq!(std::fs::read(&out).unwrap(), big);
    // Packets cross again: after hellos are answered the link is back and r1 uses both paths.
    for dir in Direction::ALL {
        relay.set_fault(dir, Fault::Pass);
    }
    assert!(
        wait(Duration::from_secs(10), || r1.ctl_faces("/example/app/c")
            == both
            && r2.ctl_faces("/example/app/c") == r2_to_r3),
        "r1 {:?} r2 {:?}\n{}",
        r1.ctl_faces("/example/app/c"),
        r2.ctl_faces("/example/app/c"),
        ctl.status()
    );
}

#[test]
fn a_forwarder_restarted_without_the_controller_forwards_with_the_fib_it_kept_and_a_restarted_controller_takes_it_back(
) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctl = Controller::start();
    let mut net = net(&ctl, 2, &[(0, 1)], |_, _| None);
    let files = tempfile::tempdir().unwrap();
    let a = payload(100_000, 6);
    let _pa = put(&net.routers[1], "/example/app/a", &a, files.path());
    let face = net.routers[0].face_to(&net.routers[1]);
    assert!(
        wait(Duration::from_secs(30), || net.routers[0]
            .ctl_faces("/example/app/a")
            == vec![face]),
        "{}",
        ctl.log()
    );
    // The controller stops; r1 restarts: the FIB it kept in state_dir is back at once.
    let stopped = ctl.restart_later();
    net.routers[0].start();
    assert_eq!(net.routers[0].ctl_faces("/example/app/a"), vec![face]);
    assert!(
        wait(Duration::from_secs(20), || net.routers[0]
            .nameway(&["neighbour", "list", "--json"])
            .contains("established")),
        "no secure link after the restart"
    );
    assert_eq!(get(&net.routers[0], "/example/app/a", files.path()), a);
    // The controller comes back on an empty state: both agents reconnect with their
    // certificates and the routes are the same.
    let ctl = stopped.start_again();
    assert!(
        wait(Duration::from_secs(30), || ctl
            .metric("namewayctl_agents_total{result=\"admitted\"} ")
            == 2),
        "{}",
        ctl.log()
    );
    assert!(
        wait(Duration::from_secs(10), || ctl.status()["links"]
            .as_array()
            .unwrap()
            .len()
            == 1),
        "{}",
        ctl.status()
    );
    assert_eq!(net.routers[0].ctl_faces("/example/app/a"), vec![face]);
}

#[test]
fn forwarders_without_a_valid_token_and_agents_pinned_to_another_key_get_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctl = Controller::start();
    let other_key = format!("ed25519:{}", "5a".repeat(32));
    let dir = tempfile::tempdir().unwrap();
    // r1 honest; r2 with a token that was never issued; r3 pinned to another key.
    let net = net(&ctl, 3, &[(0, 1), (0, 2)], |i, name| {
        let state = dir.path().join(format!("s{i}"));
        match i {
            1 => Some(format!(
                "[controller]\nuri = \"tcp://{}\"\nkey = {:?}\nname = {name:?}\ntoken = \"aaaabbbbccccdddd\"\nstate_dir = {state:?}\n",
                ctl.listen, ctl.pin
            )),
            2 => Some(format!(
                "[controller]\nuri = \"tcp://{}\"\nkey = {other_key:?}\nname = {name:?}\ntoken = {:?}\nstate_dir = {state:?}\n",
                ctl.listen,
                ctl.token(name)
            )),
            _ => None,
        }
    });
    let (r1, r2, r3) = (&net.routers[0], &net.routers[1], &net.routers[2]);
    let files = tempfile::tempdir().unwrap();
    // Registrations at r1 (so that a connected r2 or r3 would get a route to it).
    let _p = put(r1, "/example/app/a", &payload(10_000, 5), files.path());
    assert!(
        wait(Duration::from_secs(20), || ctl
            .metric("namewayctl_agents_total{result=\"refused_token\"} ")
            >= 2),
        "{}",
        ctl.log()
    );
    assert!(
        wait(Duration::from_secs(20), || r3
            .d()
            .log()
            .matches("is not the pinned key")
            .count()
            >= 2),
        "{}",
        r3.d().log()
    );
    let status = ctl.status();
    let routers = status["routers"].as_array().unwrap();
    assert_eq!(
        routers
            .iter()
            .map(|r| r["name"].clone())
            .collect::<Vec<_>>(),
        vec![Value::from("/example/r1")],
        "{status}"
    );
    assert!(status["links"].as_array().unwrap().is_empty(), "{status}");
    assert!(r2.ctl_faces("/example/app/a").is_empty());
    assert!(r3.ctl_faces("/example/app/a").is_empty());
    // r3 never sent a Hello: the controller counted no enrolment for it.
    assert_eq!(
        ctl.metric("namewayctl_agents_total{result=\"enrolled\"} "),
        1
    );
}

/// A client of the test's own on the channel: the Noise handshake, then `hello` built from the
/// handshake hash; returns the controller's answer.
async fn hello_with(
    listen: &str,
    hello: impl FnOnce(&[u8]) -> nameway_ctl::channel::Hello,
) -> nameway_ctl::channel::Message {
    use nameway_ctl::channel::{self, Message};
    let tcp = tokio::net::TcpStream::connect(listen).await.unwrap();
    let session = channel::connect(tcp).await.unwrap();
    let hh = session.handshake_hash.clone();
    let (mut tx, mut rx) = session.split();
    assert!(matches!(
        rx.recv().await.unwrap(),
        Message::ServerHello { .. }
    ));
    tx.send(&Message::Hello(hello(&hh))).await.unwrap();
    rx.recv().await.unwrap()
}

#[test]
fn garbage_forged_certificates_and_stolen_certificates_are_refused_and_counted() {
    use nameway_ctl::channel::{self, messages::router_proof, Credential, Hello, Message};
    use nameway_transport::{SignatureKind, SigningKey};
    use tokio::io::AsyncWriteExt as _;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ctl = Controller::start();
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let r9: nameway_wire::Name = "/example/r9".parse().unwrap();
    let key = SigningKey::generate(SignatureKind::Ed25519).unwrap();
    let der = key.public_der().unwrap();
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    rt.block_on(async {
        // Bytes that are not a Noise handshake.
        let mut s = tokio::net::TcpStream::connect(&ctl.listen).await.unwrap();
        s.write_all(b"\x00\x05GET / HTTP/1.0\r\n\r\n")
            .await
            .unwrap();
        drop(s);
        // A certificate for r9 issued by another anchor of the same domain name.
        let forger = nameway_ctl::ca::Authority::create(
            &"/example".parse().unwrap(),
            &dir.path().join("forged.key"),
            &dir.path().join("forged.cert"),
        )
        .unwrap();
        let forged = forger.issue_router_cert(&r9, &der, now_s).unwrap();
        let answer = hello_with(&ctl.listen, |hh| Hello {
            router: r9.clone(),
            credential: Credential::Certificate(forged.wire().clone()),
            signature: channel::sign(&key, &router_proof(hh)).unwrap(),
            applied: 0,
        })
        .await;
        assert!(matches!(answer, Message::Refused(_)), "{answer:?}");
        // A valid token presented with a proof by another key than the one to certify.
        let token = ctl.token("/example/r9");
        let thief = SigningKey::generate(SignatureKind::Ed25519).unwrap();
        let answer = hello_with(&ctl.listen, |hh| Hello {
            router: r9.clone(),
            credential: Credential::Enrol {
                token: token.clone(),
                key_der: der.clone().into(),
                link_key: vec![1u8; 32].into(),
            },
            signature: channel::sign(&thief, &router_proof(hh)).unwrap(),
            applied: 0,
        })
        .await;
        assert!(matches!(answer, Message::Refused(_)), "{answer:?}");
        // The same token with the right proof still enrols (the refusal did not spend it).
        let answer = hello_with(&ctl.listen, |hh| Hello {
            router: r9.clone(),
            credential: Credential::Enrol {
                token: token.clone(),
                key_der: der.clone().into(),
                link_key: vec![1u8; 32].into(),
            },
            signature: channel::sign(&key, &router_proof(hh)).unwrap(),
            applied: 0,
        })
        .await;
        assert!(matches!(answer, Message::Welcome(Some(_))), "{answer:?}");
    });
    let m = |r: &str| ctl.metric(&format!("namewayctl_agents_total{{result=\"{r}\"}} "));
    assert!(
        wait(Duration::from_secs(15), || m("refused_malformed") >= 1),
        "{}",
        ctl.log()
    );
    assert_eq!(m("refused_certificate"), 1);
    assert_eq!(m("refused_signature"), 1);
    assert_eq!(m("enrolled"), 1);
}

/// The `[controller]` section of router `name` with a fresh token, and `extra` after it.
fn agent_section(ctl: &Controller, name: &str, state: &Path, extra: &str) -> String {
    format!(
        "[controller]\nuri = \"tcp://{}\"\nkey = {:?}\nname = {name:?}\ntoken = {:?}\nstate_dir = {state:?}\n{extra}",
        ctl.listen,
        ctl.pin,
        ctl.token(name)
    )
}

/// `nameway status --json` at `r`: the `controller` block.
fn agent_status(r: &Router) -> Value {
    let v: Value = serde_json::from_str(&r.nameway(&["status", "--json"])).unwrap();
    v["controller"].clone()
}

/// The value of the `/metrics` line that starts with `line_prefix`, if any.
fn metric_at(http: &str, line_prefix: &str) -> Option<u64> {
    let (_, _, body) = http_get(http, "/metrics");
    String::from_utf8(body)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(line_prefix))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn the_agents_counters_show_sessions_objects_applied_and_failures_by_reason() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 6 s certificates: the agents renew theirs 4 s after issue, which the counters show.
    let ctl = Controller::start_with(&["--cert-lifetime", "6s"]);
    let other_key = format!("ed25519:{}", "5a".repeat(32));
    let dir = tempfile::tempdir().unwrap();
    let http_port = free_port();
    let http = format!("http://127.0.0.1:{http_port}");
    // r1 (with /metrics) and r2 honest; r3 pinned to another key.
    let net = net(&ctl, 3, &[(0, 1), (0, 2)], |i, name| {
        let state = dir.path().join(format!("s{i}"));
        match i {
            0 => Some(agent_section(
                &ctl,
                name,
                &state,
                &format!("[http]\nlisten = \"127.0.0.1:{http_port}\"\n"),
            )),
            2 => Some(format!(
                "[controller]\nuri = \"tcp://{}\"\nkey = {other_key:?}\nname = {name:?}\ntoken = {:?}\nstate_dir = {state:?}\n",
                ctl.listen,
                ctl.token(name)
            )),
            _ => None,
        }
    });
    let (r1, r2, r3) = (&net.routers[0], &net.routers[1], &net.routers[2]);
    let files = tempfile::tempdir().unwrap();
    let _p = put(r2, "/example/app/a", &payload(10_000, 5), files.path());
    assert!(
        wait(Duration::from_secs(20), || !r1
            .ctl_faces("/example/app/a")
            .is_empty()),
        "{}",
        r1.d().log()
    );
    let c1 = agent_status(r1);
    assert_eq!(c1["reachable"], true, "{c1}");
    assert_eq!(c1["sessions"], 1, "{c1}");
    assert!(c1["objects_applied"]["fib"].as_u64().unwrap() >= 1, "{c1}");
    let version = c1["applied_version"]["fib"].as_u64().unwrap();
    assert!(version >= 1, "{c1}");
    assert_eq!(
        c1["objects_refused"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>(),
        0,
        "{c1}"
    );
    // The same figures in namewayd's /metrics.
    assert_eq!(metric_at(&http, "nameway_controller_reachable "), Some(1));
    assert_eq!(
        metric_at(&http, "nameway_controller_sessions_total "),
        Some(1)
    );
    assert!(
        metric_at(
            &http,
            "nameway_controller_objects_applied_total{kind=\"fib\"} "
        )
        .unwrap()
            >= 1
    );
    assert!(metric_at(&http, "nameway_controller_applied_version{kind=\"fib\"} ").unwrap() >= 1);
    // The text view has a controller block.
    let text = r1.nameway(&["status"]);
    assert!(text.contains("Controller:"), "{text}");
    assert!(text.contains("reachable"), "{text}");
    // Hellos with r2 and the certificate renewal: in the status and in /metrics.
    assert!(
        wait(Duration::from_secs(15), || {
            let c = agent_status(r1);
            c["hellos_answered"].as_u64().unwrap() >= 1
                && c["hellos_received"].as_u64().unwrap() >= 1
                && c["renewals"]["renewed"].as_u64().unwrap() >= 1
        }),
        "{}\n{}",
        agent_status(r1),
        r1.d().log()
    );
    let c1 = agent_status(r1);
    assert!(
        c1["hellos_sent"].as_u64().unwrap() >= c1["hellos_answered"].as_u64().unwrap(),
        "{c1}"
    );
    assert_eq!(c1["renewals"]["refused"], 0, "{c1}");
    assert_eq!(c1["neighbours_dead"], 0, "{c1}");
    assert!(metric_at(&http, "nameway_controller_hellos_sent_total ").unwrap() >= 1);
    assert!(metric_at(&http, "nameway_controller_hellos_answered_total ").unwrap() >= 1);
    assert!(metric_at(&http, "nameway_controller_hellos_received_total ").unwrap() >= 1);
    assert_eq!(
        metric_at(&http, "nameway_controller_neighbours_dead_total "),
        Some(0)
    );
    assert!(
        metric_at(
            &http,
            "nameway_controller_renewals_total{result=\"renewed\"} "
        )
        .unwrap()
            >= 1
    );
    assert_eq!(
        metric_at(
            &http,
            "nameway_controller_renewals_total{result=\"refused\"} "
        ),
        Some(0)
    );
    let text = r1.nameway(&["status"]);
    assert!(text.contains("renewals"), "{text}");
    assert!(text.contains("refused=0 renewed="), "{text}");
    assert!(text.contains("hellos"), "{text}");
    // r3 never had a session: every attempt failed on the anchor.
    assert!(
        wait(Duration::from_secs(20), || agent_status(r3)
            ["session_failures"]["anchor"]
            .as_u64()
            .unwrap()
            >= 2),
        "{}",
        r3.d().log()
    );
    let c3 = agent_status(r3);
    assert_eq!(c3["reachable"], false, "{c3}");
    assert_eq!(c3["sessions"], 0, "{c3}");
    assert_eq!(c3["applied_version"]["fib"], 0, "{c3}");
    // The controller dies: r1 sees it unreachable, the session's end and the failed dials
    // counted, and keeps the version it applied.
    drop(ctl);
    assert!(
        wait(Duration::from_secs(20), || {
            let c = agent_status(r1);
            c["reachable"] == false && c["session_failures"]["connect"].as_u64().unwrap() >= 1
        }),
        "{}",
        r1.d().log()
    );
    assert_eq!(metric_at(&http, "nameway_controller_reachable "), Some(0));
    let c1 = agent_status(r1);
    assert_eq!(c1["applied_version"]["fib"], version, "{c1}");
    let ended: u64 = ["channel", "protocol"]
        .iter()
        .map(|k| c1["session_failures"][k].as_u64().unwrap())
        .sum();
    assert_eq!(ended, 1, "{c1}");
}

/// A controller on a fresh database started with `--cache-policy` on a file holding `text`,
/// and that file's path.
fn with_cache_policy(text: &str) -> (Controller, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ctl.db");
    run(
        "namewayctl",
        &["init", "--domain", "/example", "--db", db.to_str().unwrap()],
    );
    let policy = dir.path().join("cache.toml");
    std::fs::write(&policy, text).unwrap();
    let ctl = Controller::serve_with(
        dir,
        "127.0.0.1:0",
        &["--cache-policy", policy.to_str().unwrap()],
    );
    (ctl, policy)
}

#[test]
fn a_prefix_the_cache_policy_marks_no_admit_is_not_cached_and_another_is() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (ctl, _) = with_cache_policy(
        "capacity = 4096\n[[prefix]]\nprefix = \"/example/app/live\"\nadmit = false\n",
    );
    let mut net = net(&ctl, 2, &[(0, 1)], |_, _| None);
    let (r1, r2) = (&net.routers[0], &net.routers[1]);
    let files = tempfile::tempdir().unwrap();
    let keep = payload(50_000, 7);
    let live = payload(50_000, 8);
    let producers = vec![
        put(r2, "/example/app/keep", &keep, files.path()),
        put(r2, "/example/app/live", &live, files.path()),
    ];
    // Both routers applied the policy and the controller has their acknowledgements.
    assert!(
        wait(Duration::from_secs(20), || {
            let t = ctl.cli(&["topology"]);
            let routers = t["routers"].as_array().unwrap().clone();
            routers.len() == 2
                && routers
                    .iter()
                    .all(|r| r["cs_version"] == 1 && r["cs_acked"] == 1)
        }),
        "{}",
        ctl.cli(&["topology"])
    );
    for r in [r1, r2] {
        let c = agent_status(r);
        assert_eq!(c["applied_version"]["cs"], 1, "{c}");
        assert_eq!(c["objects_applied"]["cs"], 1, "{c}");
    }
    assert!(
        wait(Duration::from_secs(20), || !r1
            .ctl_faces("/example/app/live")
            .is_empty()
            && !r1.ctl_faces("/example/app/keep").is_empty()),
        "{}",
        r1.d().log()
    );
    assert_eq!(get(r1, "/example/app/keep", files.path()), keep);
    assert_eq!(get(r1, "/example/app/live", files.path()), live);
    // `nameway ctl explain`, while the producers are registered (their going withdraws the
    // origins and routes): the origin at r2, r1's route toward it, the no-admit rule.
    let e = ctl.cli(&["explain", "/example/app/live/v=1/seg=0"]);
    assert_eq!(e["origins"][0]["router"], "/example/r2", "{e}");
    assert_eq!(e["origins"][0]["prefix"], "/example/app/live", "{e}");
    let r1_row = e["routers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["router"] == "/example/r1")
        .unwrap()
        .clone();
    assert_eq!(r1_row["match"], "/example/app/live", "{e}");
    assert_eq!(r1_row["nexthops"][0]["face"], r1.face_to(r2), "{e}");
    assert_eq!(e["cache_rule"]["admit"], false, "{e}");
    let e = ctl.cli(&["explain", "/example/app/keep"]);
    assert_eq!(e["cache_rule"], Value::Null, "{e}");
    // The producers are gone: only what the forwarders cached can answer.
    drop(producers);
    assert_eq!(get(r1, "/example/app/keep", files.path()), keep);
    let out = Command::new(bin("nameway"))
        .args([
            "--transport",
            &r1.d().transport(),
            "get",
            "-q",
            "--lifetime",
            "500",
        ])
        .args(["-o", files.path().join("live2").to_str().unwrap()])
        .arg("/example/app/live")
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "/example/app/live was served without its producer: it was cached"
    );
    // The capacity the policy set is the forwarder's.
    let v: Value = serde_json::from_str(&r1.nameway(&["cs", "info", "--json"])).unwrap();
    assert!(v.to_string().contains("4096"), "{v}");
    // The status page draws the link up, then no longer once r2 is gone.
    let page = || {
        let (_, _, body) = http_get(&ctl.http, "/");
        String::from_utf8(body).unwrap()
    };
    let link_up = "class=\"link up\" data-a=\"/example/r1\" data-b=\"/example/r2\"";
    let p = page();
    assert!(p.contains("<svg") && p.contains(link_up), "{p}");
    net.routers[1].d = None;
    assert!(
        wait(Duration::from_secs(10), || {
            let p = page();
            !p.contains("class=\"link up\"") && p.contains("<td>/example/r2</td><td>no</td>")
        }),
        "{}",
        page()
    );
}

/// `nameway ctl cache set|show` against `ctl` with the API token in `token_file` (none when
/// `None`): the command's output, or its stderr when it fails.
fn cache_cli(ctl: &Controller, token_file: Option<&Path>, args: &[&str]) -> Result<Value, String> {
    let mut cmd = Command::new(bin("nameway"));
    cmd.args(["ctl", "--controller", &ctl.http, "cache"])
        .args(args)
        .arg("--json")
        .env_remove("NAMEWAY_CTL_TOKEN");
    if let Some(f) = token_file {
        cmd.arg("--token-file").arg(f);
    }
    let out = cmd.output().unwrap();
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The cache policy changed through the operators' API (`nameway ctl cache set`, the API
/// token beside the CA's database): the controller keeps it in its policy file and pushes it
/// like an edit of the file; at r1 a prefix set no-admit is not cached and another is.
/// Without the token, or with a wrong one, nothing changes and the refusal is counted.
#[test]
fn a_prefix_set_no_admit_through_the_api_is_not_cached_and_writes_need_the_token() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // An empty policy file: the API writes the policy there.
    let (ctl, policy) = with_cache_policy("");
    let token = PathBuf::from(format!("{}.api-token", ctl.db()));
    assert!(token.exists(), "serve --http made no API token");
    let net = net(&ctl, 2, &[(0, 1)], |_, _| None);
    let (r1, r2) = (&net.routers[0], &net.routers[1]);
    let set_live = ["set", "--prefix", "/example/app/live", "--admit", "false"];

    // No token, a wrong one: refused, counted, nothing changed.
    let e = cache_cli(&ctl, None, &set_live).unwrap_err();
    assert!(e.contains("API token"), "{e}");
    let wrong = ctl.dir.path().join("wrong-token");
    std::fs::write(&wrong, "00ff\n").unwrap();
    let e = cache_cli(&ctl, Some(&wrong), &set_live).unwrap_err();
    assert!(e.contains("401"), "{e}");
    assert_eq!(
        ctl.metric("namewayctl_api_writes_total{result=\"refused_token\"}"),
        1
    );
    assert_eq!(std::fs::read_to_string(&policy).unwrap(), "");
    let shown = cache_cli(&ctl, None, &["show"]).unwrap();
    assert_eq!(shown["prefixes"], Value::Array(vec![]), "{shown}");
    // A bad change is a 400 and changes nothing either.
    let e = cache_cli(
        &ctl,
        Some(&token),
        &["set", "--prefix", "no-slash", "--admit", "false"],
    )
    .unwrap_err();
    assert!(e.contains("400"), "{e}");

    // With the token: the rule and a capacity, kept in the file and in force.
    let answer = cache_cli(&ctl, Some(&token), &set_live).unwrap();
    assert_eq!(
        answer["prefixes"][0]["prefix"], "/example/app/live",
        "{answer}"
    );
    assert_eq!(answer["prefixes"][0]["admit"], false, "{answer}");
    let answer = cache_cli(&ctl, Some(&token), &["set", "--capacity", "4096"]).unwrap();
    assert_eq!(answer["defaults"]["capacity"], 4096, "{answer}");
    let file = std::fs::read_to_string(&policy).unwrap();
    assert!(
        file.contains("/example/app/live") && file.contains("capacity = 4096"),
        "{file}"
    );
    assert_eq!(cache_cli(&ctl, None, &["show"]).unwrap(), answer);
    assert_eq!(
        ctl.metric("namewayctl_api_writes_total{result=\"applied\"}"),
        2
    );
    // Both routers applied the policy with both changes.
    assert!(
        wait(Duration::from_secs(20), || {
            let t = ctl.cli(&["topology"]);
            let routers = t["routers"].as_array().unwrap().clone();
            let v: Value = serde_json::from_str(&r1.nameway(&["cs", "info", "--json"])).unwrap();
            routers.len() == 2
                && routers.iter().all(|r| {
                    r["cs_version"].as_u64() >= Some(1) && r["cs_acked"] == r["cs_version"]
                })
                && v.to_string().contains("4096")
        }),
        "{}",
        ctl.cli(&["topology"])
    );
    let files = tempfile::tempdir().unwrap();
    let keep = payload(50_000, 17);
    let live = payload(50_000, 18);
    let producers = vec![
        put(r2, "/example/app/keep", &keep, files.path()),
        put(r2, "/example/app/live", &live, files.path()),
    ];
    assert!(
        wait(Duration::from_secs(20), || !r1
            .ctl_faces("/example/app/live")
            .is_empty()
            && !r1.ctl_faces("/example/app/keep").is_empty()),
        "{}",
        r1.d().log()
    );
    assert_eq!(get(r1, "/example/app/keep", files.path()), keep);
    assert_eq!(get(r1, "/example/app/live", files.path()), live);
    let e = ctl.cli(&["explain", "/example/app/live/seg=0"]);
    assert_eq!(e["cache_rule"]["admit"], false, "{e}");
    // The producers are gone: only what the forwarders cached can answer.
    drop(producers);
    assert_eq!(get(r1, "/example/app/keep", files.path()), keep);
    let out = Command::new(bin("nameway"))
        .args(["--transport", &r1.d().transport(), "get", "-q"])
        .args(["--lifetime", "500", "-o"])
        .arg(files.path().join("live2"))
        .arg("/example/app/live")
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "/example/app/live was served without its producer: it was cached"
    );
    // Removing the rule through the API takes it out of the file and of the policy.
    let answer = cache_cli(
        &ctl,
        Some(&token),
        &["remove", "--prefix", "/example/app/live"],
    )
    .unwrap();
    assert_eq!(answer["prefixes"], Value::Array(vec![]), "{answer}");
    assert!(!std::fs::read_to_string(&policy)
        .unwrap()
        .contains("/example/app/live"));
}

/// The decoupled store's tier sizes from the controller's cache policy: r1 runs the decoupled
/// store with a disk tier and takes both sizes at run time; r2 runs it without a disk tier
/// and takes the memory size, refusing the disk one; r3 runs the in-process store and
/// refuses both; each refusal counted by reason. A later change through the API resizes r1's
/// memory tier again while it runs.
#[test]
fn the_cache_policy_sets_the_decoupled_stores_tier_sizes_and_refuses_what_needs_a_restart() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (ctl, _) = with_cache_policy("memory_bytes = 3145728\ndisk_bytes = 50000000\n");
    let token = PathBuf::from(format!("{}.api-token", ctl.db()));
    let disk = tempfile::tempdir().unwrap();
    let states = tempfile::tempdir().unwrap();
    let net = net(&ctl, 3, &[(0, 1), (1, 2)], |i, name| {
        let state = states.path().join(format!("s{i}"));
        let cs = match i {
            0 => format!("[cs]\ndisk_path = {:?}\n", disk.path().join("store")),
            1 => "[cs]\ndecoupled = true\n".to_owned(),
            _ => return None,
        };
        Some(agent_section(&ctl, name, &state, &cs))
    });
    let (r1, r2, r3) = (&net.routers[0], &net.routers[1], &net.routers[2]);
    let tiers = |r: &Router| -> Value {
        serde_json::from_str(&r.nameway(&["cs", "info", "--json"])).unwrap()
    };
    assert!(
        wait(Duration::from_secs(20), || {
            let t = tiers(r1);
            t["memory"]["capacity_bytes"] == 3_145_728 && t["disk"]["capacity_bytes"] == 50_000_000
        }),
        "{}\n{}",
        tiers(r1),
        r1.d().log()
    );
    assert!(
        wait(Duration::from_secs(20), || tiers(r2)["memory"]
            ["capacity_bytes"]
            == 3_145_728),
        "{}",
        tiers(r2)
    );
    assert!(
        wait(Duration::from_secs(20), || agent_status(r3)
            ["applied_version"]["cs"]
            == 1),
        "{}",
        agent_status(r3)
    );
    let (c1, c2, c3) = (agent_status(r1), agent_status(r2), agent_status(r3));
    assert_eq!(c1["cs_tiers_applied"], 2, "{c1}");
    assert_eq!(c1["cs_tiers_refused"]["no_disk_tier"], 0, "{c1}");
    assert_eq!(c2["cs_tiers_applied"], 1, "{c2}");
    assert_eq!(c2["cs_tiers_refused"]["no_disk_tier"], 1, "{c2}");
    assert_eq!(c3["cs_tiers_applied"], 0, "{c3}");
    assert_eq!(c3["cs_tiers_refused"]["no_decoupled_store"], 2, "{c3}");
    // The document itself was applied everywhere (the refusal is of the tier sizes only).
    for c in [&c1, &c2, &c3] {
        assert_eq!(c["objects_applied"]["cs"], 1, "{c}");
        assert_eq!(c["objects_refused"]["document"], 0, "{c}");
    }
    assert!(r3.d().log().contains("tier size not applied"));
    // Resized again at run time through the API.
    let answer = cache_cli(&ctl, Some(&token), &["set", "--memory-bytes", "1048576"]).unwrap();
    assert_eq!(answer["defaults"]["memory_bytes"], 1_048_576, "{answer}");
    assert!(
        wait(Duration::from_secs(20), || tiers(r1)["memory"]
            ["capacity_bytes"]
            == 1_048_576),
        "{}",
        tiers(r1)
    );
    assert_eq!(tiers(r1)["disk"]["capacity_bytes"], 50_000_000);
}

/// Routes of the controller's at `r` under `prefix`.
fn ctl_routes_under(r: &Router, prefix: &str) -> usize {
    r.routes()
        .iter()
        .filter(|x| x["origin"] == CTL && x["prefix"].as_str().unwrap().starts_with(prefix))
        .count()
}

/// A FIB of a thousand routes (some 36 KB of Content: six segments of 7 KiB) reaches the
/// agent as segments it fetched with the transport library: each is a Data the controller
/// sent in answer to one of the agent's Interests, counted in
/// `namewayctl_object_packets_sent_total` (which the push of segments before did not have).
#[test]
fn a_fib_of_a_thousand_routes_arrives_as_segments_the_agent_fetched() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    const ROUTES: usize = 1000;
    let ctl = Controller::start();
    let net = net(&ctl, 2, &[(0, 1)], |_, _| None);
    let (r1, r2) = (&net.routers[0], &net.routers[1]);
    // An application at r2 registers the prefixes (its face stays open meanwhile).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let transport = nameway_transport::client::Transport::parse(&r2.d().transport()).unwrap();
    let mut app = rt
        .block_on(nameway_transport::client::Client::connect(transport))
        .unwrap();
    for i in 0..ROUTES {
        let prefix = format!("/example/big/p-{i:04}").parse().unwrap();
        rt.block_on(app.register(&prefix)).unwrap();
    }
    assert!(
        wait(Duration::from_secs(60), || ctl_routes_under(
            r1,
            "/example/big/"
        ) == ROUTES),
        "r1 has {} of {ROUTES}\n{}",
        ctl_routes_under(r1, "/example/big/"),
        ctl.log()
    );
    // A controller restarted on an empty state computes r1's FIB whole once both agents are
    // back: one object of a thousand routes.
    let ctl = ctl.restart_later().start_again();
    assert!(
        wait(Duration::from_secs(30), || ctl
            .metric("namewayctl_agents_total{result=\"admitted\"} ")
            == 2),
        "{}",
        ctl.log()
    );
    // r1 still holds the thousand routes the first controller gave it, so counting them is not
    // enough: wait until this controller's own FIB for r1 has them and r1 acknowledged it.
    let sent_and_acked = |prefix: &str| {
        ctl.api(&format!("/api/routes?prefix={prefix}"))["routers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| {
                r["router"] == "/example/r1"
                    && r["match"] == prefix
                    && r["version"].as_u64() > Some(0)
                    && r["version"] == r["acked"]
            })
    };
    assert!(
        wait(Duration::from_secs(60), || ctl_routes_under(
            r1,
            "/example/big/"
        ) == ROUTES
            && sent_and_acked("/example/big/p-0000")
            && sent_and_acked("/example/big/p-0999")
            && ctl.status()["routers"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["version"] == r["acked"])),
        "r1 has {} of {ROUTES}\n{}\n{}\n{}",
        ctl_routes_under(r1, "/example/big/"),
        ctl.api("/api/routes?prefix=/example/big/p-0999"),
        ctl.status(),
        r1.d().log()
    );
    // An object of one segment costs 4 answers (its segment and manifest, each also asked
    // once when the signer is looked up); one of S segments S + 3. The thousand routes took
    // at least 5 segments more than that.
    let objects = ctl.metric("namewayctl_objects_sent_total ");
    let fetched = ctl.metric("namewayctl_object_packets_sent_total ");
    assert!(
        fetched >= 4 * objects + 5,
        "{fetched} packets fetched for {objects} objects"
    );
    assert_eq!(
        ctl.metric("namewayctl_object_interests_unanswered_total "),
        0
    );
    drop(app);
}

/// An operator's PKI for the channel's mutual TLS, as PEM files: the CA `ops` signs the
/// controller's certificate (`ctl.example`, 127.0.0.1) and the routers' client
/// certificates `r1`, `r2`; the CA `rogue` signs `r3`.
fn tls_pki(dir: &Path) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca = |name: &str| {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        std::fs::write(dir.join(format!("{name}-ca.pem")), cert.pem()).unwrap();
        Issuer::new(params, key)
    };
    let leaf = |file: &str, names: &[&str], issuer: &Issuer<'_, KeyPair>| {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, issuer)
            .unwrap();
        std::fs::write(dir.join(format!("{file}.pem")), cert.pem()).unwrap();
        std::fs::write(dir.join(format!("{file}.key")), key.serialize_pem()).unwrap();
    };
    let (ops, rogue) = (ca("ops"), ca("rogue"));
    leaf("ctl", &["ctl.example", "127.0.0.1"], &ops);
    leaf("r1", &["r1.example"], &ops);
    leaf("r2", &["r2.example"], &ops);
    leaf("r3", &["r3.example"], &rogue);
}

/// Operators whose policy names TLS: `namewayctl serve --tls-listen` with the agents on
/// `tls://`, each presenting a client certificate of the operator's CA. Routes flow as on
/// Noise (r1 checks the controller's certificate for its IP address, r2 for
/// `tls_server_name`); r3, whose certificate another CA signed, is refused in the handshake,
/// counted on both sides, and never in the topology, though its enrolment token is good.
#[test]
fn agents_on_mutual_tls_are_routed_and_a_client_certificate_of_another_ca_is_refused() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let pki = tempfile::tempdir().unwrap();
    tls_pki(pki.path());
    let f = |name: &str| pki.path().join(name).to_str().unwrap().to_owned();
    let ctl = Controller::start_with(&[
        "--tls-listen",
        "127.0.0.1:0",
        "--tls-cert",
        &f("ctl.pem"),
        "--tls-key",
        &f("ctl.key"),
        "--tls-client-ca",
        &f("ops-ca.pem"),
    ]);
    let tls = ctl.tls.clone().expect("serve printed its TLS listener");
    let dir = tempfile::tempdir().unwrap();
    let net = net(&ctl, 3, &[(0, 1), (1, 2)], |i, name| {
        let state = dir.path().join(format!("s{i}"));
        let server_name = if i == 1 {
            "tls_server_name = \"ctl.example\"\n"
        } else {
            ""
        };
        Some(format!(
            "[controller]\nuri = \"tls://{tls}\"\nkey = {:?}\nname = {name:?}\ntoken = {:?}\nstate_dir = {state:?}\ntls_ca = {:?}\ntls_cert = {:?}\ntls_key = {:?}\n{server_name}",
            ctl.pin,
            ctl.token(name),
            f("ops-ca.pem"),
            f(&format!("r{}.pem", i + 1)),
            f(&format!("r{}.key", i + 1)),
        ))
    });
    let (r1, r2, r3) = (&net.routers[0], &net.routers[1], &net.routers[2]);
    let files = tempfile::tempdir().unwrap();
    let data = payload(30_000, 7);
    let _p = put(r2, "/example/tls/a", &data, files.path());
    assert!(
        wait(Duration::from_secs(20), || !r1
            .ctl_faces("/example/tls/a")
            .is_empty()),
        "{}\n{}",
        ctl.log(),
        r1.d().log()
    );
    assert_eq!(get(r1, "/example/tls/a", files.path()), data);
    assert!(
        wait(Duration::from_secs(20), || ctl
            .metric("namewayctl_agents_total{result=\"refused_tls\"} ")
            >= 2),
        "{}",
        ctl.log()
    );
    assert!(
        wait(Duration::from_secs(10), || agent_status(r3)
            ["session_failures"]["tls"]
            .as_u64()
            .unwrap()
            >= 1),
        "{}",
        r3.d().log()
    );
    assert!(
        r3.d().log().contains("controller.tls_cert"),
        "r3's log says what to look at:\n{}",
        r3.d().log()
    );
    let status = ctl.status();
    let mut routers: Vec<String> = status["routers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect();
    routers.sort();
    assert_eq!(routers, ["/example/r1", "/example/r2"], "{status}");
    assert!(r3.ctl_faces("/example/tls/a").is_empty());
    assert_eq!(
        ctl.metric("namewayctl_agents_total{result=\"enrolled\"} "),
        2
    );
    assert!(ctl.log().contains("client_cert_sha256="), "{}", ctl.log());
}
