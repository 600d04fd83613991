//! `[controller]`: the agent's settings (docs/controller.md, "The agent").

use std::path::PathBuf;

use serde::Deserialize;

/// `[controller]`. Off while `uri` is empty.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerConfig {
    /// The controller's agent listener: `tcp://host:port` or `host:port`. Empty: no agent.
    pub uri: String,
    /// The domain anchor's public key, pinned: `ed25519:<64 hex digits>` (printed by
    /// `namewayctl serve`), 64 hex digits, or the hex of its SubjectPublicKeyInfo.
    pub key: String,
    /// This router's name under the domain (`/example/r1`).
    pub name: String,
    /// The one-time enrolment token (`namewayctl token`), used on the first start only.
    pub token: String,
    /// Where the agent keeps its router key, its certificate and the last applied FIB.
    pub state_dir: PathBuf,
    /// The cost reported for every secure-link neighbour.
    pub link_cost: u64,
    /// How often the agent looks for changes to report, in milliseconds.
    pub report_interval_ms: u64,
    /// Between two hellos to each secure-link neighbour, in milliseconds.
    pub hello_interval_ms: u64,
    /// A neighbour none of whose hellos was answered for this many intervals is reported
    /// down.
    pub hello_dead_intervals: u32,
    /// A neighbour reported down comes back after this many hellos answered in a row.
    pub hello_recover: u32,
    /// Declared links (`[{ key = "<the neighbour's link key, hex>", face = "udp4://…" }]`):
    /// neighbours without a secure link (an NFD through `nameway-nfd-agent`), reported up
    /// while a face with that remote URI exists.
    pub neighbours: Vec<super::declared::DeclaredNeighbour>,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            uri: String::new(),
            key: String::new(),
            name: String::new(),
            token: String::new(),
            state_dir: PathBuf::new(),
            link_cost: 10,
            report_interval_ms: 20,
            hello_interval_ms: 500,
            hello_dead_intervals: 3,
            hello_recover: 2,
            neighbours: Vec::new(),
        }
    }
}

impl ControllerConfig {
    /// Whether the agent runs.
    pub fn is_on(&self) -> bool {
        !self.uri.is_empty()
    }

    /// The controller's address, `host:port`.
    ///
    /// # Errors
    /// A one-line reason.
    pub fn address(&self) -> Result<String, String> {
        let a = self.uri.strip_prefix("tcp://").unwrap_or(&self.uri);
        if a.is_empty() || !a.contains(':') || a.contains('/') {
            return Err(format!(
                "controller.uri {:?} must be tcp://host:port",
                self.uri
            ));
        }
        Ok(a.to_owned())
    }

    /// Checks the section; one-line errors.
    ///
    /// # Errors
    /// The reason.
    pub fn validate(&self) -> Result<(), String> {
        if !self.is_on() {
            return Ok(());
        }
        self.address()?;
        nameway_ctl::channel::parse_pin(&self.key).map_err(|e| format!("controller.key: {e}"))?;
        match self.name.parse::<nameway_wire::Name>() {
            Ok(n) if !n.is_empty() => {}
            _ => {
                return Err(format!(
                    "controller.name {:?} must be this router's name (/example/r1)",
                    self.name
                ))
            }
        }
        if self.state_dir.as_os_str().is_empty() {
            return Err("controller.state_dir must be set (the router key, certificate and last FIB live there)".into());
        }
        if self.report_interval_ms == 0 || self.report_interval_ms > 60_000 {
            return Err("controller.report_interval_ms must be between 1 and 60000".into());
        }
        if !(50..=60_000).contains(&self.hello_interval_ms) {
            return Err("controller.hello_interval_ms must be between 50 and 60000".into());
        }
        if !(2..=100).contains(&self.hello_dead_intervals) {
            return Err("controller.hello_dead_intervals must be between 2 and 100".into());
        }
        if !(1..=100).contains(&self.hello_recover) {
            return Err("controller.hello_recover must be between 1 and 100".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on() -> ControllerConfig {
        ControllerConfig {
            uri: "tcp://127.0.0.1:7400".into(),
            key: format!("ed25519:{}", "ab".repeat(32)),
            name: "/example/r1".into(),
            state_dir: "/tmp/x".into(),
            ..ControllerConfig::default()
        }
    }

    type Change = fn(&mut ControllerConfig);

    #[test]
    fn a_good_section_passes_and_each_bad_key_is_named() {
        assert_eq!(on().validate(), Ok(()));
        assert_eq!(ControllerConfig::default().validate(), Ok(()));
        let cases: [(Change, &str); 8] = [
            (|c| c.hello_interval_ms = 10, "controller.hello_interval_ms"),
            (
                |c| c.hello_dead_intervals = 1,
                "controller.hello_dead_intervals",
            ),
            (|c| c.hello_recover = 0, "controller.hello_recover"),
            (|c| c.uri = "http://x/y".into(), "controller.uri"),
            (|c| c.key = "ed25519:12".into(), "controller.key"),
            (|c| c.name = String::new(), "controller.name"),
            (|c| c.state_dir = PathBuf::new(), "controller.state_dir"),
            (
                |c| c.report_interval_ms = 0,
                "controller.report_interval_ms",
            ),
        ];
        for (change, key) in cases {
            let mut c = on();
            change(&mut c);
            let e = c.validate().unwrap_err();
            assert!(e.starts_with(key), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}

#[cfg(test)]
mod sample_tests {
    use crate::config::Config;

    #[test]
    fn the_sample_section_is_the_default_and_a_bad_key_stops_the_whole_file() {
        let text = include_str!("../../../../docs/namewayd.sample.toml");
        let c = Config::from_toml(text).unwrap();
        assert_eq!(c.controller, super::ControllerConfig::default());
        let bad = Config::from_toml(
            "[controller]\nuri = \"tcp://127.0.0.1:7400\"\nkey = \"nope\"\nname = \"/e/r1\"\nstate_dir = \"/tmp/s\"\n",
        )
        .unwrap();
        let e = bad.validate().unwrap_err();
        assert!(e.starts_with("controller.key: "), "{e}");
    }
}
