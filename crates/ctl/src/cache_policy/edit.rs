//! Changes to a cache policy made through the operators' API (`POST /api/cache`, `nameway
//! ctl cache set`), and the policy written back as its file (TOML) and as JSON.

use std::fmt::Write as _;

use nameway_wire::Name;

use super::{CachePolicy, PrefixRule, Settings};

/// Settings to change; `None` leaves a setting as it is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SettingsPatch {
    /// The in-process store's capacity, in packets.
    pub capacity: Option<u64>,
    /// The admit flag.
    pub admit: Option<bool>,
    /// The serve flag.
    pub serve: Option<bool>,
    /// The decoupled store's memory tier, in bytes.
    pub memory_bytes: Option<u64>,
    /// The decoupled store's disk tier, in bytes.
    pub disk_bytes: Option<u64>,
}

impl SettingsPatch {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    fn apply(&self, s: &mut Settings) {
        if self.capacity.is_some() {
            s.capacity = self.capacity;
        }
        if self.admit.is_some() {
            s.admit = self.admit;
        }
        if self.serve.is_some() {
            s.serve = self.serve;
        }
        if self.memory_bytes.is_some() {
            s.memory_bytes = self.memory_bytes;
        }
        if self.disk_bytes.is_some() {
            s.disk_bytes = self.disk_bytes;
        }
    }
}

/// One change to the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheEdit {
    /// Every router's settings.
    Defaults(SettingsPatch),
    /// One router's settings, over the defaults.
    Router(Name, SettingsPatch),
    /// One router's own settings removed (it takes the defaults again).
    RemoveRouter(Name),
    /// A prefix's rule, set or replaced.
    Prefix(PrefixRule),
    /// A prefix's rule removed.
    RemovePrefix(Name),
}

impl CachePolicy {
    /// Applies `edit`. Returns whether the policy changed (removing what is not there
    /// changes nothing).
    pub fn apply_edit(&mut self, edit: &CacheEdit) -> bool {
        let before = self.clone();
        match edit {
            CacheEdit::Defaults(p) => p.apply(&mut self.defaults),
            CacheEdit::Router(r, p) => p.apply(self.routers.entry(r.clone()).or_default()),
            CacheEdit::RemoveRouter(r) => {
                self.routers.remove(r);
            }
            CacheEdit::Prefix(rule) => {
                self.prefixes.retain(|p| p.prefix != rule.prefix);
                self.prefixes.push(rule.clone());
                self.prefixes.sort();
            }
            CacheEdit::RemovePrefix(prefix) => self.prefixes.retain(|p| &p.prefix != prefix),
        }
        *self != before
    }

    /// The policy as a file [`CachePolicy::parse`] reads back to the same policy.
    pub fn to_toml(&self) -> String {
        let mut out = String::from(
            "# Written by namewayctl (POST /api/cache); edits by hand are read too.\n",
        );
        settings_toml(&mut out, &self.defaults);
        for p in &self.prefixes {
            let _ = write!(
                out,
                "\n[[prefix]]\nprefix = {}\nadmit = {}\npriority = \"{}\"\n",
                quoted(&p.prefix.to_string()),
                p.admit,
                priority(p)
            );
        }
        for (r, s) in &self.routers {
            let _ = writeln!(out, "\n[router.{}]", quoted(&r.to_string()));
            settings_toml(&mut out, s);
        }
        for path in &self.paths {
            let routers: Vec<String> = path.iter().map(|r| quoted(&r.to_string())).collect();
            let _ = write!(out, "\n[[partition]]\nrouters = [{}]\n", routers.join(", "));
        }
        out
    }

    /// The policy as JSON (`GET /api/cache`): `defaults`, `prefixes`, `routers`,
    /// `partitions`.
    pub fn to_json(&self) -> String {
        let prefixes: Vec<String> = self
            .prefixes
            .iter()
            .map(|p| {
                format!(
                    "{{\"prefix\":{},\"admit\":{},\"priority\":\"{}\"}}",
                    quoted(&p.prefix.to_string()),
                    p.admit,
                    priority(p)
                )
            })
            .collect();
        let routers: Vec<String> = self
            .routers
            .iter()
            .map(|(r, s)| {
                format!(
                    "{{\"router\":{},{}}}",
                    quoted(&r.to_string()),
                    settings_json(s)
                )
            })
            .collect();
        let partitions: Vec<String> = self
            .paths
            .iter()
            .map(|path| {
                let r: Vec<String> = path.iter().map(|r| quoted(&r.to_string())).collect();
                format!("{{\"routers\":[{}]}}", r.join(","))
            })
            .collect();
        format!(
            "{{\"defaults\":{{{}}},\"prefixes\":[{}],\"routers\":[{}],\"partitions\":[{}]}}",
            settings_json(&self.defaults),
            prefixes.join(","),
            routers.join(","),
            partitions.join(",")
        )
    }
}

fn priority(p: &PrefixRule) -> &'static str {
    if p.low_priority {
        "low"
    } else {
        "normal"
    }
}

fn settings_toml(out: &mut String, s: &Settings) {
    if let Some(c) = s.capacity {
        let _ = writeln!(out, "capacity = {c}");
    }
    if let Some(a) = s.admit {
        let _ = writeln!(out, "admit = {a}");
    }
    if let Some(v) = s.serve {
        let _ = writeln!(out, "serve = {v}");
    }
    if let Some(b) = s.memory_bytes {
        let _ = writeln!(out, "memory_bytes = {b}");
    }
    if let Some(b) = s.disk_bytes {
        let _ = writeln!(out, "disk_bytes = {b}");
    }
}

fn settings_json(s: &Settings) -> String {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "null".into());
    format!(
        "\"capacity\":{},\"admit\":{},\"serve\":{},\"memory_bytes\":{},\"disk_bytes\":{}",
        opt(s.capacity.map(|c| c.to_string())),
        opt(s.admit.map(|a| a.to_string())),
        opt(s.serve.map(|v| v.to_string())),
        opt(s.memory_bytes.map(|b| b.to_string())),
        opt(s.disk_bytes.map(|b| b.to_string()))
    )
}

/// A string literal valid in both TOML (basic string) and JSON.
fn quoted(s: &str) -> String {
    let mut o = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn edits_change_the_documents_and_the_file_reads_back_the_same_policy() {
        let mut p = CachePolicy::parse(
            "capacity = 10\n[[partition]]\nrouters = [\"/e/r1\", \"/e/r2\"]\n[[prefix]]\nprefix = \"/e/a\"\n",
        )
        .unwrap();
        assert!(p.apply_edit(&CacheEdit::Defaults(SettingsPatch {
            capacity: Some(20),
            serve: Some(false),
            ..SettingsPatch::default()
        })));
        assert!(p.apply_edit(&CacheEdit::Router(
            n("/e/r2"),
            SettingsPatch {
                capacity: Some(5),
                disk_bytes: Some(1 << 30),
                ..SettingsPatch::default()
            }
        )));
        assert!(p.apply_edit(&CacheEdit::Prefix(PrefixRule {
            prefix: n("/e/live"),
            admit: false,
            low_priority: false,
        })));
        // Setting a prefix's rule again replaces it.
        assert!(p.apply_edit(&CacheEdit::Prefix(PrefixRule {
            prefix: n("/e/a"),
            admit: true,
            low_priority: true,
        })));
        assert!(!p.apply_edit(&CacheEdit::RemovePrefix(n("/e/none"))));
        let r2 = p.document(&n("/e/r2"));
        assert_eq!(r2.capacity, Some(5));
        assert_eq!(r2.disk_bytes, Some(1 << 30));
        assert_eq!(r2.serve, Some(false));
        assert_eq!(r2.partition, Some((1, 2)));
        assert_eq!(r2.prefixes.len(), 2);
        assert!(!p.rule_for(&n("/e/live/x")).unwrap().admit);
        assert!(p.rule_for(&n("/e/a/x")).unwrap().low_priority);
        assert_eq!(CachePolicy::parse(&p.to_toml()).unwrap(), p);
        assert!(p.apply_edit(&CacheEdit::RemoveRouter(n("/e/r2"))));
        assert!(p.apply_edit(&CacheEdit::RemovePrefix(n("/e/live"))));
        assert_eq!(p.document(&n("/e/r2")).capacity, Some(20));
        assert!(p.rule_for(&n("/e/live/x")).is_none());
        assert_eq!(CachePolicy::parse(&p.to_toml()).unwrap(), p);
    }

    #[test]
    fn names_with_quotes_and_escapes_survive_the_file_and_the_json() {
        let mut p = CachePolicy::default();
        let odd = n("/e/%22q%22/b%5Cs");
        p.apply_edit(&CacheEdit::Prefix(PrefixRule {
            prefix: odd.clone(),
            admit: false,
            low_priority: false,
        }));
        let back = CachePolicy::parse(&p.to_toml()).unwrap();
        assert_eq!(back, p);
        assert!(p.to_json().contains("\"admit\":false"));
        assert!(p.to_json().starts_with("{\"defaults\":{\"capacity\":null"));
    }
}
