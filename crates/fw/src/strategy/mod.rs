//! Forwarding strategies: the [`Strategy`] trait with NFD's triggers, the
//! [`StrategyContext`] they act through, and the [`StrategyRegistry`] of strategies by
//! versioned name ([`builtin()`] lists ours).
//!
//! A strategy instance is chosen per name prefix (strategy choice, longest-prefix match; the
//! root defaults to best-route). Triggers run synchronously inside the pipelines; the actions
//! (`send_interest`, `send_data`, `send_nack`, `reject_pending_interest`) enter the outgoing
//! pipelines at once. Per-PIT-entry state lives in the entry's typed scratch slot
//! ([`StrategyContext::scratch`]), which the forwarder clears when the entry is satisfied or
//! its strategy changes.

mod asf;
mod best_route;
mod context;
mod multicast;
mod retx_suppression;

use core::fmt;

use nameway_wire::lp::NackReason;
use nameway_wire::tlv::types;
use nameway_wire::{Component, DataView, InterestView, Name};

pub use self::asf::{Asf, ASF_NAME};
pub use self::best_route::BestRoute;
pub use self::context::StrategyContext;
pub use self::multicast::Multicast;
pub use self::retx_suppression::{RetxSuppressionExponential, RetxSuppressionResult};
use crate::table::face_table::FaceId;
use crate::table::pit::PitEntry;

/// What to do with an Interest found to be looping (NFD `onInterestLoop`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoopResponse {
    /// Answer with Nack Duplicate (point-to-point faces only): NFD's default.
    NackDuplicate,
    /// Drop silently.
    Drop,
}

/// A forwarding strategy. Triggers follow NFD's `Strategy` class.
pub trait Strategy: Send {
    /// The instance name, with version and any parameters
    /// (e.g. `/localhost/nfd/strategy/best-route/v=5`).
    fn instance_name(&self) -> &Name;

    /// An Interest was received and the content store could not answer it; it is in
    /// `cx.interest()`, and `ingress` is now an in-record of the entry.
    fn after_receive_interest(&mut self, cx: &mut StrategyContext<'_>, ingress: FaceId);

    /// Data arrived for this entry, the only one it satisfies. The default calls
    /// [`Strategy::before_satisfy_interest`] and sends the Data to every pending downstream
    /// except `ingress`.
    fn after_receive_data(
        &mut self,
        cx: &mut StrategyContext<'_>,
        data: &DataView,
        ingress: FaceId,
    ) {
        self.before_satisfy_interest(cx, data, ingress);
        cx.send_data_to_all(data, ingress);
    }

    /// Data is about to satisfy this entry (several entries matched; the forwarder sends the
    /// Data to their downstreams itself).
    fn before_satisfy_interest(
        &mut self,
        _cx: &mut StrategyContext<'_>,
        _data: &DataView,
        _ingress: FaceId,
    ) {
    }

    /// A Nack arrived from upstream `ingress`; the out-record already holds its reason.
    fn after_receive_nack(
        &mut self,
        _cx: &mut StrategyContext<'_>,
        _reason: NackReason,
        _ingress: FaceId,
    ) {
    }

    /// An Interest from a point-to-point face carries a Nonce already seen for its name.
    fn on_interest_loop(&mut self, _interest: &InterestView, _ingress: FaceId) -> LoopResponse {
        LoopResponse::NackDuplicate
    }

    /// The entry expires unsatisfied and is about to be removed.
    fn on_interest_expiry(&mut self, _entry: &PitEntry) {}

    /// Entries this instance keeps in its measurements (NFD's measurements table, counted in
    /// `nMeasurementsEntries`); none by default.
    fn measurements_len(&self) -> usize {
        0
    }
}

/// Why a strategy could not be chosen or created.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StrategyError {
    /// No registered strategy has this name (NFD answers 404).
    Unknown(Name),
    /// The strategy exists but not in this version (404).
    UnsupportedVersion(Name),
    /// The strategy refused the parameters after the version (400).
    BadParameters(String),
    /// The strategy-choice prefix is longer than 32 components (414).
    PrefixTooLong,
    /// The root prefix always has a strategy; it can be changed, not unset (400).
    CannotUnsetRoot,
}

impl fmt::Display for StrategyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown(n) => write!(f, "unknown strategy {n}"),
            Self::UnsupportedVersion(n) => write!(f, "unsupported strategy version {n}"),
            Self::BadParameters(m) => write!(f, "bad strategy parameters: {m}"),
            Self::PrefixTooLong => f.write_str("prefix longer than 32 components"),
            Self::CannotUnsetRoot => f.write_str("the root strategy choice cannot be unset"),
        }
    }
}

impl std::error::Error for StrategyError {}

/// Makes a strategy instance from its full instance name (`<name>/v=<version>[/<params>...]`).
pub type StrategyFactory = fn(&Name) -> Result<Box<dyn Strategy>, StrategyError>;

#[derive(Clone)]
struct Registered {
    name: Name,
    version: u64,
    factory: StrategyFactory,
}

/// Strategies by versioned name, registered explicitly (no static-initializer magic).
#[derive(Clone, Default)]
pub struct StrategyRegistry {
    entries: Vec<Registered>,
}

impl fmt::Debug for StrategyRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.versions().map(|(n, v)| format!("{n}/v={v}")))
            .finish()
    }
}

impl StrategyRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers version `version` of the strategy `name` (without version component);
    /// a second registration of the same name and version replaces the first.
    pub fn register(&mut self, name: Name, version: u64, factory: StrategyFactory) {
        self.entries
            .retain(|r| !(r.name == name && r.version == version));
        self.entries.push(Registered {
            name,
            version,
            factory,
        });
    }

    /// `(name, version)` of every registered strategy.
    pub fn versions(&self) -> impl Iterator<Item = (&Name, u64)> + '_ {
        self.entries.iter().map(|r| (&r.name, r.version))
    }

    /// Creates an instance for `requested`: a registered name, then optionally a version
    /// component (the latest version when absent), then parameters for the strategy.
    ///
    /// # Errors
    /// [`StrategyError::Unknown`], [`StrategyError::UnsupportedVersion`], or the factory's error.
    pub fn create(&self, requested: &Name) -> Result<Box<dyn Strategy>, StrategyError> {
        let base = self
            .entries
            .iter()
            .filter(|r| r.name.is_prefix_of(requested))
            .map(|r| r.name.len())
            .max()
            .ok_or_else(|| StrategyError::Unknown(requested.clone()))?;
        let candidates = || {
            self.entries
                .iter()
                .filter(move |r| r.name.len() == base && r.name.is_prefix_of(requested))
        };
        let asked = requested
            .get(base)
            .filter(|c| c.typ() == types::VERSION_NAME_COMPONENT);
        let chosen = match asked {
            Some(c) => {
                let v = c
                    .as_version()
                    .ok_or_else(|| StrategyError::UnsupportedVersion(requested.clone()))?;
                candidates().find(|r| r.version == v)
            }
            None => candidates().max_by_key(|r| r.version),
        }
        .ok_or_else(|| StrategyError::UnsupportedVersion(requested.clone()))?;
        let params_from = if asked.is_some() { base + 1 } else { base };
        let mut instance = chosen
            .name
            .append(&Component::version(chosen.version))
            .map_err(|_| StrategyError::Unknown(requested.clone()))?;
        for c in requested.iter().skip(params_from) {
            instance = instance
                .append(&c.to_owned())
                .map_err(|_| StrategyError::BadParameters(requested.to_string()))?;
        }
        (chosen.factory)(&instance)
    }
}

/// NFD's name of best-route, without version.
pub const BEST_ROUTE_NAME: &str = "/localhost/nfd/strategy/best-route";
/// NFD's name of multicast, without version.
pub const MULTICAST_NAME: &str = "/localhost/nfd/strategy/multicast";

/// Every strategy Nameway ships, under NFD's names: best-route v5, multicast v4 and v5, ASF v5.
pub fn builtin() -> StrategyRegistry {
    let mut reg = StrategyRegistry::new();
    if let Ok(n) = ASF_NAME.parse::<Name>() {
        reg.register(n, Asf::VERSION, |name| Ok(Box::new(Asf::new(name)?)));
    }
    if let Ok(n) = BEST_ROUTE_NAME.parse::<Name>() {
        reg.register(n, BestRoute::VERSION, |name| {
            Ok(Box::new(BestRoute::new(name)?))
        });
    }
    if let Ok(n) = MULTICAST_NAME.parse::<Name>() {
        reg.register(n.clone(), 4, |name| Ok(Box::new(Multicast::new(name)?)));
        reg.register(n, 5, |name| Ok(Box::new(Multicast::new(name)?)));
    }
    reg
}

/// Refuses parameters after the version component: `instance` must be `<base>/v=<n>`.
pub(crate) fn no_parameters(instance: &Name) -> Result<(), StrategyError> {
    let ends_with_version = instance
        .last()
        .is_some_and(|c| c.typ() == types::VERSION_NAME_COMPONENT);
    if ends_with_version {
        Ok(())
    } else {
        Err(StrategyError::BadParameters(format!(
            "{instance} takes no parameters"
        )))
    }
}

/// NFD's `ProcessNackTraits::processNack`: once every upstream has Nacked, Nack every
/// downstream with the least severe reason; when exactly one upstream has not Nacked and it is
/// also a downstream, Nack it now (it would otherwise wait for itself).
pub fn process_nack(cx: &mut StrategyContext<'_>) {
    let mut not_nacked = 0;
    let mut last_not_nacked = None;
    let mut least = NackReason::None;
    for r in cx.entry().out_records() {
        match r.incoming_nack() {
            None => {
                not_nacked += 1;
                last_not_nacked = Some(r.face());
            }
            Some(reason) => least = least.least_severe(reason),
        }
    }
    if not_nacked == 1 {
        if let Some(face) = last_not_nacked.filter(|&f| cx.entry().in_record(f).is_some()) {
            cx.send_nack(face, least);
            return;
        }
    }
    if not_nacked > 0 {
        return;
    }
    cx.send_nacks(least, &[]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn registry_resolves_versions() {
        let reg = builtin();
        let br = reg.create(&n(BEST_ROUTE_NAME)).unwrap();
        assert_eq!(
            br.instance_name().to_string(),
            "/localhost/nfd/strategy/best-route/v=5"
        );
        let br = reg
            .create(&n("/localhost/nfd/strategy/best-route/v=5"))
            .unwrap();
        assert_eq!(
            br.instance_name().to_string(),
            "/localhost/nfd/strategy/best-route/v=5"
        );
        let mc = reg
            .create(&n("/localhost/nfd/strategy/multicast/v=4"))
            .unwrap();
        assert_eq!(
            mc.instance_name().to_string(),
            "/localhost/nfd/strategy/multicast/v=4"
        );
        let mc = reg.create(&n(MULTICAST_NAME)).unwrap();
        assert_eq!(
            mc.instance_name().to_string(),
            "/localhost/nfd/strategy/multicast/v=5"
        );
        assert!(matches!(
            reg.create(&n("/localhost/nfd/strategy/best-route/v=1")),
            Err(StrategyError::UnsupportedVersion(_))
        ));
        let asf = reg.create(&n("/localhost/nfd/strategy/asf")).unwrap();
        assert_eq!(
            asf.instance_name().to_string(),
            "/localhost/nfd/strategy/asf/v=5"
        );
        let asf = reg
            .create(&n("/localhost/nfd/strategy/asf/v=5/probing-interval~5000"))
            .unwrap();
        assert_eq!(
            asf.instance_name().to_string(),
            "/localhost/nfd/strategy/asf/v=5/probing-interval~5000"
        );
        assert!(matches!(
            reg.create(&n("/localhost/nfd/strategy/asf/v=5/probing-interval~10")),
            Err(StrategyError::BadParameters(_))
        ));
        assert!(matches!(
            reg.create(&n("/localhost/nfd/strategy/nope")),
            Err(StrategyError::Unknown(_))
        ));
        assert!(matches!(
            reg.create(&n("/localhost/nfd/strategy")),
            Err(StrategyError::Unknown(_))
        ));
        assert!(matches!(
            reg.create(&n("/localhost/nfd/strategy/best-route/v=5/x")),
            Err(StrategyError::BadParameters(_))
        ));
        assert_eq!(reg.versions().count(), 4);
    }
}
