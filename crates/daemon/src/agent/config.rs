//! `[controller]`: the agent's settings (docs/controller.md, "The agent").

use std::path::PathBuf;

use serde::Deserialize;

/// `[controller]`. Off while `uri` is empty.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct ControllerConfig {
    /// The controller's agent listener: `tcp://host:port` or `host:port` (Noise), or
    /// `tls://host:port` (mutual TLS: `tls_ca`, `tls_cert` and `tls_key` then). Empty: no
    /// agent.
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
    /// With `tls://`: the CA certificates (PEM) the controller's certificate must chain to.
    pub tls_ca: PathBuf,
    /// With `tls://`: this router's client certificate chain (PEM).
    pub tls_cert: PathBuf,
    /// With `tls://`: the client certificate's private key (PEM).
    pub tls_key: PathBuf,
    /// With `tls://`: the name the controller's certificate must hold (default: the host
    /// of `uri`).
    pub tls_server_name: String,
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
            tls_ca: PathBuf::new(),
            tls_cert: PathBuf::new(),
            tls_key: PathBuf::new(),
            tls_server_name: String::new(),
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
        let a = self
            .uri
            .strip_prefix("tls://")
            .or_else(|| self.uri.strip_prefix("tcp://"))
            .unwrap_or(&self.uri);
        if a.is_empty() || !a.contains(':') || a.contains('/') {
            return Err(format!(
                "controller.uri {:?} must be tcp://host:port or tls://host:port",
                self.uri
            ));
        }
        Ok(a.to_owned())
    }

    /// Whether the channel is mutual TLS (`tls://`).
    pub fn is_tls(&self) -> bool {
        self.uri.starts_with("tls://")
    }

    /// The mutual-TLS settings with `tls://` (the PEM files read now), None with Noise.
    ///
    /// # Errors
    /// A one-line reason: a missing setting, a file that cannot be used.
    pub fn tls(&self) -> Result<Option<nameway_ctl::channel::tls::ClientTls>, String> {
        self.check_tls_keys()?;
        if !self.is_tls() {
            return Ok(None);
        }
        let address = self.address()?;
        let name = if self.tls_server_name.is_empty() {
            // host:port, [v6]:port
            let host = address.rsplit_once(':').map_or(&*address, |(h, _)| h);
            host.trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned()
        } else {
            self.tls_server_name.clone()
        };
        nameway_ctl::channel::tls::ClientTls::from_pem(
            &self.tls_ca,
            &self.tls_cert,
            &self.tls_key,
            &name,
        )
        .map(Some)
        .map_err(|e| format!("controller.tls_*: {e}"))
    }

    /// The `tls_*` keys are all set with `tls://`, none without.
    fn check_tls_keys(&self) -> Result<(), String> {
        let files = [
            ("controller.tls_ca", &self.tls_ca),
            ("controller.tls_cert", &self.tls_cert),
            ("controller.tls_key", &self.tls_key),
        ];
        for (key, path) in files {
            match (self.is_tls(), path.as_os_str().is_empty()) {
                (true, true) => {
                    return Err(format!("{key} must be set with a tls:// controller.uri"))
                }
                (false, false) => {
                    return Err(format!(
                        "{key} is for a tls:// controller.uri (this one is {:?})",
                        self.uri
                    ))
                }
                _ => {}
            }
        }
        if !self.is_tls() && !self.tls_server_name.is_empty() {
            return Err("controller.tls_server_name is for a tls:// controller.uri".into());
        }
        Ok(())
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
        self.check_tls_keys()?;
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
        let cases: [(Change, &str); 11] = [
            (
                |c| c.uri = "tls://127.0.0.1:7400".into(),
                "controller.tls_ca",
            ),
            (|c| c.tls_cert = "/x.pem".into(), "controller.tls_cert"),
            (
                |c| c.tls_server_name = "ctl".into(),
                "controller.tls_server_name",
            ),
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
