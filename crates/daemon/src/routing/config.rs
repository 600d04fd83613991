//! `[routing]`: secure location-independent routing (docs/routing.md). Off by default: with
//! `mode = "off"` nothing of this module runs and the forwarder behaves as before.

use std::path::PathBuf;

use nameway_wire::Name;
use serde::Deserialize;

/// `[routing]`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    /// `off` (the default) or `secure`.
    pub mode: RoutingMode,
    /// What the first hop does with an Interest for an unresolved `/32=sc/<h>` name.
    pub miss: MissMode,
    /// This router's routing key (Ed25519, PKCS#8), created with mode 0600 on first start. Its
    /// hash is the router's name `/32=sc/<hR>`, the ForwardingHint toward it.
    pub identity: PathBuf,
    /// The FaceUris this router's locator record gives (how others reach it); empty: one
    /// per UDP and TCP listener on a specific address (not 0.0.0.0 or `[::]`).
    pub face_uris: Vec<String>,
    /// How long this router's locator records, and the registrations it sends, live; they
    /// are renewed at 2/3 of it.
    #[serde(deserialize_with = "duration_ms")]
    pub announce_lifetime: u64,
    /// Look-ups queued or in flight at most; a miss beyond is Nacked NoRoute.
    pub max_pending: usize,
    /// RIB look-up Interests per second at most (deduplicated per name).
    pub resolve_rate: u32,
    /// Answer RIB look-ups and registrations for the `[[routing.rib]]` prefixes that have no
    /// `uri` here, from a persistent registry.
    pub rib_service: bool,
    /// The RIB service's registry file (redb); empty: kept in memory only.
    pub database: PathBuf,
    /// Where self-certifying names are resolved and registered.
    pub rib: Vec<RibEntry>,
}

/// `[[routing.rib]]`: a RIB service prefix and how to reach it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RibEntry {
    /// The service's prefix, e.g. `/example/32=RIB`.
    pub prefix: String,
    /// A FaceUri the forwarder creates a permanent face to and routes `prefix` over; absent:
    /// the service runs here (`rib_service = true`) or a `[[route]]` reaches it.
    #[serde(default)]
    pub uri: Option<String>,
}

/// `routing.mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RoutingMode {
    /// No resolution, no checks: the forwarder as without `[routing]`.
    #[default]
    Off,
    /// Self-certifying names are checked, resolved and registered.
    Secure,
}

/// `routing.miss`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MissMode {
    /// The Interest waits in the PIT and is forwarded once the route is verified.
    #[default]
    Hold,
    /// Nack NoRoute at once, with RetryAfter.
    Nack,
}

impl RoutingMode {
    /// As written in the configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Secure => "secure",
        }
    }
}

impl MissMode {
    /// As written in the configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hold => "hold",
            Self::Nack => "nack",
        }
    }
}

/// The default announcement lifetime: 10 minutes.
pub const DEFAULT_ANNOUNCE_LIFETIME_MS: u64 = 600_000;

impl Default for RoutingConfig {
    fn default() -> Self {
        Self {
            mode: RoutingMode::Off,
            miss: MissMode::Hold,
            identity: PathBuf::new(),
            face_uris: Vec::new(),
            announce_lifetime: DEFAULT_ANNOUNCE_LIFETIME_MS,
            max_pending: 4096,
            resolve_rate: 2000,
            rib_service: false,
            database: PathBuf::new(),
            rib: Vec::new(),
        }
    }
}

impl RoutingConfig {
    /// Whether routing runs.
    pub fn is_on(&self) -> bool {
        self.mode == RoutingMode::Secure
    }

    /// The RIB prefixes, parsed (checked by [`RoutingConfig::validate`]).
    pub fn rib_prefixes(&self) -> Vec<Name> {
        self.rib
            .iter()
            .filter_map(|r| r.prefix.parse().ok())
            .collect()
    }

    /// The prefixes this daemon's RIB service answers: those without `uri`.
    pub fn served_prefixes(&self) -> Vec<Name> {
        if !self.rib_service {
            return Vec::new();
        }
        self.rib
            .iter()
            .filter(|r| r.uri.is_none())
            .filter_map(|r| r.prefix.parse().ok())
            .collect()
    }

    /// Checks what the types cannot.
    ///
    /// # Errors
    /// A message naming the key at fault.
    pub fn validate(&self) -> Result<(), String> {
        for r in &self.rib {
            let prefix: Name = r
                .prefix
                .parse()
                .map_err(|e| format!("routing.rib prefix {:?}: {e}", r.prefix))?;
            if prefix.is_empty() {
                return Err("routing.rib prefix cannot be /".into());
            }
            if let Some(uri) = &r.uri {
                uri.parse::<nameway_face::FaceUri>()
                    .map_err(|e| format!("routing.rib uri {uri:?}: {e}"))?;
            }
        }
        for uri in &self.face_uris {
            uri.parse::<nameway_face::FaceUri>()
                .map_err(|e| format!("routing.face_uris {uri:?}: {e}"))?;
        }
        if self.max_pending == 0 {
            return Err("routing.max_pending must be at least 1".into());
        }
        if self.resolve_rate == 0 {
            return Err("routing.resolve_rate must be at least 1".into());
        }
        if self.announce_lifetime < 1000 {
            return Err("routing.announce_lifetime must be at least 1s".into());
        }
        if !self.is_on() {
            return Ok(());
        }
        if self.identity.as_os_str().is_empty() {
            return Err(
                "routing.mode = \"secure\" needs routing.identity (a key file path, created on first start)"
                    .into(),
            );
        }
        if self.rib_service && self.rib.iter().all(|r| r.uri.is_some()) {
            return Err(
                "routing.rib_service = true needs a [[routing.rib]] prefix without uri to serve"
                    .into(),
            );
        }
        Ok(())
    }
}

/// Parses a duration: a number of milliseconds, or a string with a unit (`500ms`, `30s`,
/// `10m`, `1h`).
///
/// # Errors
/// Anything else.
pub fn parse_duration_ms(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (write it like 500ms, 30s, 10m, 1h)"))?;
    let scale = match unit.trim() {
        "" | "ms" => 1.0,
        "s" => 1e3,
        "m" | "min" => 60e3,
        "h" => 3600e3,
        other => return Err(format!("{s:?}: unknown unit {other:?} (ms, s, m or h)")),
    };
    let ms = value * scale;
    if !ms.is_finite() || ms < 0.0 || ms > u64::MAX as f64 {
        return Err(format!("{s:?} is out of range"));
    }
    Ok(ms as u64)
}

fn duration_ms<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Millis(u64),
        Text(String),
    }
    match Raw::deserialize(d)? {
        Raw::Millis(n) => Ok(n),
        Raw::Text(s) => parse_duration_ms(&s).map_err(serde::de::Error::custom),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::config::Config;

    #[test]
    fn off_by_default_and_durations_take_units() {
        let c = Config::from_toml("").unwrap();
        assert_eq!(c.routing, RoutingConfig::default());
        assert!(!c.routing.is_on());
        for (text, ms) in [
            ("10m", 600_000),
            ("30s", 30_000),
            ("250ms", 250),
            ("1.5s", 1500),
        ] {
            assert_eq!(parse_duration_ms(text).unwrap(), ms, "{text}");
        }
        assert!(parse_duration_ms("soon").is_err());
        assert!(parse_duration_ms("3 weeks").is_err());
        let c = Config::from_toml("[routing]\nannounce_lifetime = 4000\n").unwrap();
        assert_eq!(c.routing.announce_lifetime, 4000);
    }

    #[test]
    fn a_secure_configuration_is_checked() {
        let ok = "[routing]\nmode = \"secure\"\nmiss = \"nack\"\nidentity = \"/tmp/r.key\"\n\
                  rib_service = true\n[[routing.rib]]\nprefix = \"/example/32=RIB\"\n\
                  [[routing.rib]]\nprefix = \"/other/32=RIB\"\nuri = \"udp4://127.0.0.1:6364\"\n";
        let c = Config::from_toml(ok).unwrap();
        assert!(c.validate().is_ok(), "{:?}", c.validate());
        assert_eq!(c.routing.miss, MissMode::Nack);
        assert_eq!(c.routing.served_prefixes().len(), 1);
        assert_eq!(c.routing.rib_prefixes().len(), 2);
        for (bad, says) in [
            ("[routing]\nmode = \"on\"\n", "unknown variant `on`"),
            ("[routing]\nmode = \"secure\"\n", "routing.identity"),
            (
                "[routing]\n[[routing.rib]]\nprefix = \"/a\"\nuri = \"carrier-pigeon://x\"\n",
                "routing.rib uri",
            ),
            ("[routing]\nresolve_rate = 0\n", "routing.resolve_rate"),
            (
                "[routing]\nmode = \"secure\"\nidentity = \"/k\"\nrib_service = true\n",
                "without uri",
            ),
            (
                "[routing]\nannounce_lifetime = \"10 fortnights\"\n",
                "unknown unit",
            ),
            ("[routing]\nmisses = \"hold\"\n", "unknown key `misses`"),
        ] {
            let err = match Config::from_toml(bad) {
                Err(e) => e.to_string(),
                Ok(c) => c.validate().unwrap_err(),
            };
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
