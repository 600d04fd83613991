//! Counters declared once, shown everywhere.
//!
//! Every figure the daemon exports is a field of a statistics struct declared with [`stats!`](crate::stats!):
//! one line gives the field, its doc (the JSON documentation and the metric's help), and how
//! Prometheus sees it (a counter or gauge of a family, with fixed labels or one sample per map
//! key, an info label, or JSON only). From that one declaration come the JSON of `/api/status`
//! and of the management datasets (serde), and the `/metrics` families ([`Families`]); the
//! declarations are listed in `FIELDS`, which the tests compare with every surface, so a new
//! counter is one line and cannot be missing from one of them.

use std::collections::{BTreeMap, HashMap};

/// How Prometheus types a field's family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A monotonic counter.
    Counter,
    /// A value that goes up and down.
    Gauge,
    /// A label of an info family (value 1), for strings.
    Info,
    /// Not a metric: in the JSON only (names, versions, nested structures).
    Json,
}

/// One declared field.
#[derive(Clone, Copy, Debug)]
pub struct FieldDecl {
    /// Its name in Rust and in the JSON.
    pub field: &'static str,
    /// The Prometheus family it is exported in, if any.
    pub family: Option<&'static str>,
    /// How.
    pub kind: Kind,
}

/// Where a field goes in `/metrics`.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// The family.
    pub family: &'static str,
    /// Labels every sample of the field carries.
    pub fixed: &'static [(&'static str, &'static str)],
    /// For maps: the label naming the key; for info fields: the label taking the value.
    pub by: Option<&'static str>,
}

/// A sample's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// An integer count.
    Int(u64),
    /// A signed integer.
    Signed(i64),
    /// A real number.
    Real(f64),
}

/// What a statistics field can hold.
pub trait Value {
    /// Calls `f` with each (map key, number) the field holds; a plain number has no key.
    fn each(&self, f: &mut dyn FnMut(Option<&str>, Number));
    /// The text of an info field.
    fn text(&self) -> Option<String> {
        None
    }
}

impl Value for u64 {
    fn each(&self, f: &mut dyn FnMut(Option<&str>, Number)) {
        f(None, Number::Int(*self));
    }
}

impl Value for u32 {
    fn each(&self, f: &mut dyn FnMut(Option<&str>, Number)) {
        f(None, Number::Int(u64::from(*self)));
    }
}

impl Value for usize {
    fn each(&self, f: &mut dyn FnMut(Option<&str>, Number)) {
        f(None, Number::Int(*self as u64));
    }
}

impl Value for i64 {
    fn each(&self, f: &mut dyn FnMut(Option<&str>, Number)) {
        f(None, Number::Signed(*self));
    }
}

impl Value for f64 {
    fn each(&self, f: &mut dyn FnMut(Option<&str>, Number)) {
        f(None, Number::Real(*self));
    }
}

impl Value for bool {
    fn each(&self, f: &mut dyn FnMut(Option<&str>, Number)) {
        f(None, Number::Int(u64::from(*self)));
    }
}

impl<T: Value> Value for Option<T> {
    fn each(&self, f: &mut dyn FnMut(Option<&str>, Number)) {
        if let Some(v) = self {
            v.each(f);
        }
    }
    fn text(&self) -> Option<String> {
        self.as_ref().and_then(Value::text)
    }
}

impl Value for BTreeMap<&'static str, u64> {
    fn each(&self, f: &mut dyn FnMut(Option<&str>, Number)) {
        for (k, v) in self {
            f(Some(k), Number::Int(*v));
        }
    }
}

impl Value for String {
    fn each(&self, _: &mut dyn FnMut(Option<&str>, Number)) {}
    fn text(&self) -> Option<String> {
        Some(self.clone())
    }
}

impl Value for &'static str {
    fn each(&self, _: &mut dyn FnMut(Option<&str>, Number)) {}
    fn text(&self) -> Option<String> {
        Some((*self).to_owned())
    }
}

/// One sample: its labels and value.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Label names and values.
    pub labels: Vec<(&'static str, String)>,
    /// The value.
    pub value: Number,
}

/// One metric family.
#[derive(Clone, Debug)]
pub struct Family {
    /// Its name (`nameway_...`).
    pub name: &'static str,
    /// The help line.
    pub help: String,
    /// Counter, gauge or info (a gauge of 1).
    pub kind: Kind,
    /// The samples.
    pub samples: Vec<Sample>,
}

/// Metric families collected from statistics structs, in the order first seen.
#[derive(Debug, Default)]
pub struct Families {
    list: Vec<Family>,
    index: HashMap<&'static str, usize>,
}

impl Families {
    /// Adds a field's samples (see [`stats!`](crate::stats!)); fields with no spec are JSON only.
    pub fn add(
        &mut self,
        kind: Kind,
        help: &str,
        value: &dyn Value,
        labels: &[(&'static str, String)],
        specs: &[Spec],
    ) {
        for spec in specs {
            let family = self.family(spec.family, kind, help);
            let base = || {
                let mut l = labels.to_vec();
                l.extend(spec.fixed.iter().map(|&(k, v)| (k, v.to_owned())));
                l
            };
            if kind == Kind::Info {
                let (Some(by), Some(text)) = (spec.by, value.text()) else {
                    continue;
                };
                let base = base();
                match family
                    .samples
                    .iter_mut()
                    .find(|s| s.labels.starts_with(&base))
                {
                    Some(s) => s.labels.push((by, text)),
                    None => {
                        let mut l = base;
                        l.push((by, text));
                        family.samples.push(Sample {
                            labels: l,
                            value: Number::Int(1),
                        });
                    }
                }
                continue;
            }
            value.each(&mut |key, n| {
                let mut l = base();
                if let (Some(by), Some(key)) = (spec.by, key) {
                    l.push((by, key.to_owned()));
                }
                family.samples.push(Sample {
                    labels: l,
                    value: n,
                });
            });
        }
    }

    /// The family `name`, created (empty) if new, so that it is exported even without samples.
    fn family(&mut self, name: &'static str, kind: Kind, help: &str) -> &mut Family {
        let i = *self.index.entry(name).or_insert_with(|| {
            self.list.push(Family {
                name,
                help: help.trim().to_owned(),
                kind,
                samples: Vec::new(),
            });
            self.list.len() - 1
        });
        &mut self.list[i]
    }

    /// The families, in the order first seen.
    pub fn iter(&self) -> impl Iterator<Item = &Family> {
        self.list.iter()
    }
}

/// Declares a statistics struct whose fields are also metrics (see the module doc).
///
/// ```ignore
/// stats! {
///     /// The forwarding core.
///     pub struct ForwarderStats {
///         /// Interests received.
///         pub n_in_interests: u64 = counter("nameway_forwarder_packets",
///             "direction" = "in", "type" = "interest")
///             help "Network packets through the forwarding core",
///         /// Packets dropped, by reason.
///         pub drops: BTreeMap<&'static str, u64> = counter("nameway_forwarder_drops"; by "reason"),
///         /// The version.
///         pub version: String = json,
///     }
/// }
/// ```
///
/// A family's help is the `help` text given where it is declared first, else the field's doc.
#[macro_export]
macro_rules! stats {
    (
        $(#[doc = $sdoc:literal])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])+
                pub $field:ident : $ty:ty = $kind:ident
                    $( ( $family:literal $(, $lk:literal = $lv:literal)* $(; by $by:literal)? ) )?
                    $( help $help:literal )?
            ),* $(,)?
        }
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Clone, Debug, Default, serde::Serialize)]
        pub struct $name {
            $(
                $(#[doc = $doc])+
                pub $field: $ty,
            )*
        }

        impl $name {
            /// Every field, with its family and kind.
            pub const FIELDS: &'static [$crate::metrics::FieldDecl] = &[
                $(
                    $crate::metrics::FieldDecl {
                        field: stringify!($field),
                        family: $crate::stats!(@family $($family)?),
                        kind: $crate::stats!(@kind $kind),
                    },
                )*
            ];

            /// Adds every field to `out`, each sample carrying `labels` first.
            pub fn metrics(
                &self,
                labels: &[(&'static str, String)],
                out: &mut $crate::metrics::Families,
            ) {
                $(
                    $crate::stats!(@add $kind, out, &self.$field, labels,
                        $crate::stats!(@help concat!($($doc),+) $(, $help)?),
                        &[$(
                            $crate::metrics::Spec {
                                family: $family,
                                fixed: &[$(($lk, $lv)),*],
                                by: $crate::stats!(@by $($by)?),
                            }
                        )?]
                    );
                )*
            }
        }
    };
    (@add json, $($rest:tt)*) => {};
    (@add $kind:ident, $out:expr, $value:expr, $labels:expr, $help:expr, $specs:expr) => {
        $out.add($crate::stats!(@kind $kind), $help, $value, $labels, $specs)
    };
    (@family) => { None };
    (@family $family:literal) => { Some($family) };
    (@by) => { None };
    (@by $by:literal) => { Some($by) };
    (@help $doc:expr) => { $doc };
    (@help $doc:expr, $help:literal) => { $help };
    (@kind counter) => { $crate::metrics::Kind::Counter };
    (@kind gauge) => { $crate::metrics::Kind::Gauge };
    (@kind info) => { $crate::metrics::Kind::Info };
    (@kind json) => { $crate::metrics::Kind::Json };
}

#[cfg(test)]
#[allow(unreachable_pub)]
mod tests {
    use super::*;

    crate::stats! {
        /// A test struct.
        pub struct Example {
            /// Interests in.
            pub n_in: u64 = counter("x_packets", "dir" = "in") help "Packets",
            /// Interests out.
            pub n_out: u64 = counter("x_packets", "dir" = "out"),
            /// Drops.
            pub drops: BTreeMap<&'static str, u64> = counter("x_drops"; by "reason"),
            /// Now.
            pub level: f64 = gauge("x_level"),
            /// Where.
            pub remote: String = info("x_info"; by "remote"),
            /// How.
            pub scope: String = info("x_info"; by "scope"),
            /// Not a metric.
            pub note: String = json,
        }
    }

    #[test]
    fn one_declaration_gives_json_and_families() {
        let e = Example {
            n_in: 3,
            n_out: 4,
            drops: [("a", 1), ("b", 2)].into_iter().collect(),
            level: 0.5,
            remote: "udp4://1.2.3.4:6363".into(),
            scope: "non-local".into(),
            note: "hello".into(),
        };
        let mut out = Families::default();
        e.metrics(&[("face", "7".into())], &mut out);
        let fams: Vec<_> = out.iter().collect();
        let names: Vec<_> = fams.iter().map(|f| f.name).collect();
        assert_eq!(names, ["x_packets", "x_drops", "x_level", "x_info"]);
        assert_eq!(fams[0].help, "Packets");
        assert_eq!(fams[0].samples.len(), 2);
        assert_eq!(
            fams[0].samples[1].labels,
            [("face", "7".to_owned()), ("dir", "out".to_owned())]
        );
        assert_eq!(fams[1].samples[1].labels[1], ("reason", "b".to_owned()));
        assert_eq!(fams[1].samples[1].value, Number::Int(2));
        assert_eq!(
            fams[3].samples.len(),
            1,
            "info labels merge into one sample"
        );
        assert_eq!(fams[3].samples[0].labels.len(), 3);
        let json = serde_json::to_value(&e).unwrap();
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        let declared: Vec<&str> = Example::FIELDS.iter().map(|f| f.field).collect();
        assert_eq!(keys.len(), declared.len());
        assert!(declared.iter().all(|d| keys.contains(d)));
        assert_eq!(Example::FIELDS[6].kind, Kind::Json);
        assert_eq!(Example::FIELDS[6].family, None);
    }
}
