//! 50 forwarders on this machine: a line of 50 namewayd comes up, an Interest crosses all 49
//! links and back, and the line is torn down. Prints the time to come up and the total RSS.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use nameway_lab::{signals::Signals, Lab, Options, Topology};

const NODES: usize = 50;

#[test]
fn fifty_forwarders_in_a_line() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("name = \"t-line50\"\n");
    for i in 1..=NODES {
        text += &format!("[[node]]\nname = \"n{i}\"\n");
    }
    for i in 1..NODES {
        text += &format!("[[link]]\na = \"n{i}\"\nb = \"n{}\"\n", i + 1);
    }
    text += &format!("[[node]]\nname = \"server\"\nkind = \"app\"\non = \"n{NODES}\"\ncommand = \"nameway ping-server /far\"\nready = \"PING SERVER\"\n");
    text += &format!("[[route]]\nprefix = \"/far\"\nto = \"n{NODES}\"\n");
    let topology = Topology::parse(&text, "x").unwrap();
    let opts = Options {
        root: dir.path().to_path_buf(),
        bin_dir: bin_dir(),
        nfd_dir: None,
        verbose: false,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut signals = Signals::catch().unwrap();
        let start = Instant::now();
        let mut lab = Lab::up(topology, opts, &mut signals).await.unwrap();
        let up = start.elapsed();
        assert_eq!(namespaces("t-line50").len(), NODES);
        let rss: u64 = lab
            .state()
            .nodes
            .iter()
            .filter(|n| n.kind.is_forwarder())
            .map(|n| nameway_lab::process::rss_bytes(n.proc.unwrap().pid).unwrap())
            .sum();
        let ping = lab
            .spawn("ping", "n1", "nameway ping /far -c 3 -i 100", &[])
            .unwrap();
        let status = lab.wait(ping, Duration::from_secs(120)).await.unwrap();
        let out = std::fs::read_to_string(lab.log_of(ping).unwrap()).unwrap();
        assert!(status.is_some_and(|s| s.success()), "{out}");
        assert!(out.contains("3 packets transmitted, 3 received"), "{out}");
        let down = lab.down().await.unwrap();
        assert_eq!(down.namespaces.len(), NODES);
        eprintln!(
            "{NODES} forwarders: up in {:.2} s, total RSS {:.0} MiB ({:.1} MiB each); {}",
            up.as_secs_f64(),
            rss as f64 / 1048576.0,
            rss as f64 / 1048576.0 / NODES as f64,
            out.lines().last().unwrap_or_default()
        );
    });
    assert_nothing_left(dir.path(), "t-line50");
}
