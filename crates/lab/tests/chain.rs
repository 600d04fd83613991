//! A 3-node chain whose middle link delays and loses packets: `nameway get` completes through
//! it, and what it measured shows the delay and the losses were really there.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;

#[test]
fn get_completes_over_a_delayed_lossy_chain() {
    if !root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chain.toml");
    std::fs::write(
        &file,
        r#"
name = "t-chain"
[[node]]
name = "c"
[[node]]
name = "r"
[[node]]
name = "p"
[[node]]
name = "server"
kind = "app"
on = "p"
command = "head -c 1000000 /dev/urandom > object.bin && nameway put object.bin /chain/object --json"
ready = "\"name\""
[[link]]
a = "c"
b = "r"
[[link]]
a = "r"
b = "p"
delay_ms = 5
jitter_ms = 1
loss = 0.03
[[route]]
prefix = "/chain"
to = "p"
[[step]]
on = "c"
run = "nameway get /chain/object -o got.bin --json && cmp got.bin ../p/object.bin"
timeout_s = 120
"#,
    )
    .unwrap();
    let out = lab_output(dir.path(), &["run", file.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("1 steps passed"), "{stdout}");
    let log = std::fs::read_to_string(dir.path().join("t-chain/logs/step-1.log")).unwrap();
    let start = log.find('{').unwrap();
    let report: serde_json::Value = serde_json::from_str(&log[start..]).unwrap();
    assert_eq!(report["bytes"], 1_000_000, "{report}");
    // 5 ms each way on r-p, from each side's face: no round trip can be shorter than 10 ms.
    let rtt_min = report["rtt_min_ms"].as_f64().unwrap();
    assert!(
        rtt_min >= 10.0,
        "rtt_min_ms {rtt_min}: the delay was not applied"
    );
    // 3 % of each direction's packets are lost: some segments had to be sent again.
    let retx = report["retransmissions"].as_u64().unwrap();
    assert!(
        retx > 0,
        "no retransmission: the loss was not applied ({report})"
    );
    assert_nothing_left(dir.path(), "t-chain");
}
