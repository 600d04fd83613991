//! A deterministic simulated network for tests: several [`Forwarder`]s and application stubs
//! joined by in-memory point-to-point links with delay, seeded loss and failure, driven by a
//! virtual clock and an event queue (after quinn's `Pair`, NFD's topology tester and smoltcp's
//! fault injector).
//!
//! ```
//! use core::time::Duration;
//! use nameway_fw::sim::{LinkConfig, Sim};
//! use nameway_fw::Config;
//!
//! let mut sim = Sim::new(7);
//! let (a, b) = (sim.add_node(Config::default()), sim.add_node(Config::default()));
//! let link = sim.connect(a, b, LinkConfig::wan(Duration::from_millis(5)));
//! let consumer = sim.add_app(a);
//! let producer = sim.add_app(b);
//! sim.route(a, "/p", link.a_face, 10);
//! sim.route(b, "/p", sim.app_face(producer), 0);
//! sim.serve(producer, 1000);
//! sim.express(consumer, "/p/x", 1);
//! sim.run_for(Duration::from_millis(50));
//! assert_eq!(sim.data_received(consumer).len(), 1);
//! ```

// A test harness: misuse (an unknown node id, a name that does not parse) panics, as an
// assertion in a test would.
#![allow(clippy::expect_used)]

use core::cmp::Reverse;
use core::time::Duration;
use std::collections::BinaryHeap;

use bytes::Bytes;
use nameway_wire::random::SplitMix64;
use nameway_wire::{
    Data, DataView, Interest, InterestView, LpPacket, MetaInfo, NackReason, Name, Packet,
};

use crate::table::face_table::{FaceId, FaceScope, LinkType};
use crate::time::Time;
use crate::{Config, Forwarder};

/// A forwarder of the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeId(pub usize);

/// An application stub of the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AppId(pub usize);

/// A link of the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkId(pub usize);

/// One end of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// A face of a forwarder.
    Node(NodeId, FaceId),
    /// An application.
    App(AppId),
}

/// Properties of a link and of the faces at its ends.
#[derive(Clone, Copy, Debug)]
pub struct LinkConfig {
    /// One-way delay.
    pub delay: Duration,
    /// Probability that a packet is lost, each way.
    pub loss: f64,
    /// Scope of the faces at both ends.
    pub scope: FaceScope,
    /// Link type of the faces at both ends.
    pub link_type: LinkType,
}

impl LinkConfig {
    /// A non-local point-to-point link with `delay` and no loss.
    pub fn wan(delay: Duration) -> Self {
        Self {
            delay,
            loss: 0.0,
            scope: FaceScope::NonLocal,
            link_type: LinkType::PointToPoint,
        }
    }

    /// This link with loss probability `loss`.
    #[must_use]
    pub fn with_loss(mut self, loss: f64) -> Self {
        self.loss = loss;
        self
    }

    /// This link with another link type.
    #[must_use]
    pub fn with_link_type(mut self, link_type: LinkType) -> Self {
        self.link_type = link_type;
        self
    }
}

/// A link made by [`Sim::connect`].
#[derive(Clone, Copy, Debug)]
pub struct Link {
    /// The link.
    pub id: LinkId,
    /// The face at the first node.
    pub a_face: FaceId,
    /// The face at the second node.
    pub b_face: FaceId,
}

/// A packet that crossed (or was lost on) a link.
#[derive(Clone, Debug)]
pub struct TraceEvent {
    /// When it was sent.
    pub at: Time,
    /// The link.
    pub link: LinkId,
    /// Sender.
    pub from: Endpoint,
    /// Receiver.
    pub to: Endpoint,
    /// The packet.
    pub wire: Bytes,
    /// Whether the link lost it (loss or link down).
    pub lost: bool,
}

/// A received packet, decoded for assertions.
#[derive(Clone, Debug)]
pub enum Received {
    /// An Interest.
    Interest {
        /// The Interest.
        interest: InterestView,
        /// Its PitToken, if any.
        pit_token: Option<Bytes>,
    },
    /// A Data.
    Data {
        /// The Data.
        data: DataView,
        /// The PitToken echoed, if any.
        pit_token: Option<Bytes>,
    },
    /// A Nack.
    Nack {
        /// The reason.
        reason: NackReason,
        /// The Interest it refers to.
        interest: InterestView,
        /// The PitToken echoed, if any.
        pit_token: Option<Bytes>,
    },
    /// Anything else (should not happen).
    Other(Bytes),
}

impl Received {
    /// Decodes a packet as a face would deliver it.
    pub fn parse(wire: Bytes) -> Self {
        let other = wire.clone();
        let (fragment, token, nack) = match Packet::classify(wire) {
            Ok(Packet::Interest(w)) | Ok(Packet::Data(w)) => (w, None, None),
            Ok(Packet::Lp(lp)) => match lp.fragment {
                Some(f) => (f, lp.pit_token, lp.nack),
                None => return Self::Other(other),
            },
            Err(_) => return Self::Other(other),
        };
        if let Ok(interest) = InterestView::new_checked(fragment.clone()) {
            return match nack {
                Some(reason) => Self::Nack {
                    reason,
                    interest,
                    pit_token: token,
                },
                None => Self::Interest {
                    interest,
                    pit_token: token,
                },
            };
        }
        match DataView::new_checked(fragment) {
            Ok(data) => Self::Data {
                data,
                pit_token: token,
            },
            Err(_) => Self::Other(other),
        }
    }

    /// The name of the Interest, Data or Nacked Interest.
    pub fn name(&self) -> Option<&Name> {
        match self {
            Self::Interest { interest, .. } | Self::Nack { interest, .. } => Some(interest.name()),
            Self::Data { data, .. } => Some(data.name()),
            Self::Other(_) => None,
        }
    }
}

/// A producer's answer to an Interest: the Data to send back, if any.
pub type Responder = Box<dyn FnMut(&InterestView) -> Option<Bytes>>;

struct App {
    node: NodeId,
    face: FaceId,
    link: LinkId,
    received: Vec<(Time, Received)>,
    responder: Option<Responder>,
}

struct SimLink {
    a: Endpoint,
    b: Endpoint,
    config: LinkConfig,
    up: bool,
}

/// A delivery: `(time, sequence)` orders events; the sequence keeps equal times in order.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    at: Time,
    seq: u64,
    link: usize,
    to_b: bool,
    wire: Bytes,
}

/// The simulated network.
pub struct Sim {
    now: Time,
    nodes: Vec<Forwarder>,
    apps: Vec<App>,
    links: Vec<SimLink>,
    events: BinaryHeap<Reverse<Event>>,
    seq: u64,
    rng: SplitMix64,
    trace: Vec<TraceEvent>,
}

impl Sim {
    /// An empty network whose loss decisions follow `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            now: Time::ZERO,
            nodes: Vec::new(),
            apps: Vec::new(),
            links: Vec::new(),
            events: BinaryHeap::new(),
            seq: 0,
            rng: SplitMix64::new(seed),
            trace: Vec::new(),
        }
    }

    /// The virtual time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Adds a forwarder.
    pub fn add_node(&mut self, config: Config) -> NodeId {
        self.nodes.push(Forwarder::new(config));
        NodeId(self.nodes.len() - 1)
    }

    /// A forwarder.
    ///
    /// # Panics
    /// If `id` is not a node of this simulation (test misuse).
    pub fn node(&self, id: NodeId) -> &Forwarder {
        &self.nodes[id.0]
    }

    /// A forwarder, mutably (management calls).
    ///
    /// # Panics
    /// If `id` is not a node of this simulation.
    pub fn node_mut(&mut self, id: NodeId) -> &mut Forwarder {
        &mut self.nodes[id.0]
    }

    /// Joins two forwarders with a new face on each.
    pub fn connect(&mut self, a: NodeId, b: NodeId, config: LinkConfig) -> Link {
        let a_face = self.node_mut(a).add_face(config.scope, config.link_type);
        let b_face = self.node_mut(b).add_face(config.scope, config.link_type);
        let id = LinkId(self.links.len());
        self.links.push(SimLink {
            a: Endpoint::Node(a, a_face),
            b: Endpoint::Node(b, b_face),
            config,
            up: true,
        });
        Link { id, a_face, b_face }
    }

    /// Attaches an application to `node` through a local point-to-point face, no delay.
    pub fn add_app(&mut self, node: NodeId) -> AppId {
        let config = LinkConfig {
            scope: FaceScope::Local,
            ..LinkConfig::wan(Duration::ZERO)
        };
        self.add_app_with(node, config)
    }

    /// Attaches an application to `node` through a face with the given properties.
    pub fn add_app_with(&mut self, node: NodeId, config: LinkConfig) -> AppId {
        let face = self.node_mut(node).add_face(config.scope, config.link_type);
        let app = AppId(self.apps.len());
        let link = LinkId(self.links.len());
        self.links.push(SimLink {
            a: Endpoint::App(app),
            b: Endpoint::Node(node, face),
            config,
            up: true,
        });
        self.apps.push(App {
            node,
            face,
            link,
            received: Vec::new(),
            responder: None,
        });
        app
    }

    /// The face of `node` an application is attached to.
    ///
    /// # Panics
    /// If `app` is not an application of this simulation.
    pub fn app_face(&self, app: AppId) -> FaceId {
        self.apps[app.0].face
    }

    /// The node an application is attached to.
    ///
    /// # Panics
    /// If `app` is not an application of this simulation.
    pub fn app_node(&self, app: AppId) -> NodeId {
        self.apps[app.0].node
    }

    /// Adds a FIB next hop on `node`.
    ///
    /// # Panics
    /// If the prefix does not parse or the face is unknown (test misuse).
    pub fn route(&mut self, node: NodeId, prefix: &str, face: FaceId, cost: u64) {
        let prefix: Name = prefix.parse().expect("prefix");
        self.node_mut(node)
            .add_nexthop(&prefix, face, cost)
            .expect("route");
    }

    /// Takes a link down or brings it back up; a down link loses everything.
    pub fn set_link_up(&mut self, link: LinkId, up: bool) {
        if let Some(l) = self.links.get_mut(link.0) {
            l.up = up;
        }
    }

    /// Makes `app` a producer that answers each Interest with `responder`.
    pub fn set_responder(&mut self, app: AppId, responder: Responder) {
        if let Some(a) = self.apps.get_mut(app.0) {
            a.responder = Some(responder);
        }
    }

    /// Makes `app` a producer that answers every Interest with a Data of the Interest's name
    /// and the given FreshnessPeriod (milliseconds; 0 leaves it out).
    pub fn serve(&mut self, app: AppId, freshness_ms: u64) {
        self.set_responder(
            app,
            Box::new(move |i: &InterestView| Some(make_data(&i.name().to_string(), freshness_ms))),
        );
    }

    /// Sends raw bytes from an application.
    pub fn app_send(&mut self, app: AppId, wire: Bytes) {
        let link = self.apps[app.0].link;
        self.transmit(link.0, Endpoint::App(app), wire);
    }

    /// Sends an Interest for `name` with `nonce` (lifetime 4 s) from an application.
    pub fn express(&mut self, app: AppId, name: &str, nonce: u32) {
        self.app_send(app, make_interest(name, nonce, |_| {}));
    }

    /// Everything `app` received so far, decoded.
    pub fn received(&self, app: AppId) -> &[(Time, Received)] {
        &self.apps[app.0].received
    }

    /// The Data `app` received.
    pub fn data_received(&self, app: AppId) -> Vec<&DataView> {
        self.received(app)
            .iter()
            .filter_map(|(_, r)| match r {
                Received::Data { data, .. } => Some(data),
                _ => None,
            })
            .collect()
    }

    /// The Interests `app` received.
    pub fn interests_received(&self, app: AppId) -> Vec<&InterestView> {
        self.received(app)
            .iter()
            .filter_map(|(_, r)| match r {
                Received::Interest { interest, .. } => Some(interest),
                _ => None,
            })
            .collect()
    }

    /// The Nack reasons `app` received.
    pub fn nacks_received(&self, app: AppId) -> Vec<NackReason> {
        self.received(app)
            .iter()
            .filter_map(|(_, r)| match r {
                Received::Nack { reason, .. } => Some(*reason),
                _ => None,
            })
            .collect()
    }

    /// Forgets what applications received.
    pub fn clear_received(&mut self) {
        for a in &mut self.apps {
            a.received.clear();
        }
    }

    /// Every packet sent on a link so far.
    pub fn trace(&self) -> &[TraceEvent] {
        &self.trace
    }

    /// Packets sent on `link` by `from` (lost ones included), decoded.
    pub fn sent_on(&self, link: LinkId, from: Endpoint) -> Vec<Received> {
        self.trace
            .iter()
            .filter(|t| t.link == link && t.from == from)
            .map(|t| Received::parse(t.wire.clone()))
            .collect()
    }

    /// Runs the network for `d` of virtual time.
    pub fn run_for(&mut self, d: Duration) {
        let until = self.now + d;
        self.run_until(until);
    }

    /// Runs the network until virtual time `until` (included).
    pub fn run_until(&mut self, until: Time) {
        self.flush_all();
        loop {
            let next_event = self.events.peek().map(|Reverse(e)| e.at);
            let next_timer = self.nodes.iter().filter_map(Forwarder::poll_timeout).min();
            let next = match (next_event, next_timer) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(t) => t,
                    None => break,
                },
            };
            if next > until {
                break;
            }
            self.now = self.now.max(next);
            if next_event == Some(next) {
                if let Some(Reverse(e)) = self.events.pop() {
                    self.deliver(e);
                }
            } else {
                let now = self.now;
                for fw in &mut self.nodes {
                    if fw.poll_timeout().is_some_and(|t| t <= now) {
                        fw.handle_timeout(now);
                    }
                }
            }
            self.flush_all();
        }
        self.now = self.now.max(until);
    }

    fn deliver(&mut self, e: Event) {
        let Some(link) = self.links.get(e.link) else {
            return;
        };
        let to = if e.to_b { link.b } else { link.a };
        match to {
            Endpoint::Node(node, face) => {
                let now = self.now;
                self.nodes[node.0].handle_packet(now, face, e.wire);
            }
            Endpoint::App(app) => self.app_receive(app, e.wire),
        }
    }

    fn app_receive(&mut self, app: AppId, wire: Bytes) {
        let now = self.now;
        let received = Received::parse(wire);
        let a = &mut self.apps[app.0];
        let reply = match (&received, a.responder.as_mut()) {
            (Received::Interest { interest, .. }, Some(r)) => r(interest),
            _ => None,
        };
        a.received.push((now, received));
        if let Some(reply) = reply {
            self.app_send(app, reply);
        }
    }

    fn flush_all(&mut self) {
        for n in 0..self.nodes.len() {
            while let Some(t) = self.nodes[n].poll_transmit() {
                let from = Endpoint::Node(NodeId(n), t.face);
                let link = self.links.iter().position(|l| l.a == from || l.b == from);
                if let Some(link) = link {
                    self.transmit(link, from, t.wire);
                }
            }
        }
    }

    fn transmit(&mut self, link: usize, from: Endpoint, wire: Bytes) {
        let Some(l) = self.links.get(link) else {
            return;
        };
        let to_b = l.a == from;
        let to = if to_b { l.b } else { l.a };
        let (up, loss, delay) = (l.up, l.config.loss, l.config.delay);
        let lost = !up || (loss > 0.0 && self.random_unit() < loss);
        self.trace.push(TraceEvent {
            at: self.now,
            link: LinkId(link),
            from,
            to,
            wire: wire.clone(),
            lost,
        });
        if lost {
            return;
        }
        self.seq += 1;
        self.events.push(Reverse(Event {
            at: self.now + delay,
            seq: self.seq,
            link,
            to_b,
            wire,
        }));
    }

    fn random_unit(&mut self) -> f64 {
        self.rng.next_f64()
    }
}

/// Builds an Interest for `name` with `nonce`, then lets `edit` set other fields.
///
/// # Panics
/// If `name` does not parse (test misuse).
pub fn make_interest(name: &str, nonce: u32, edit: impl FnOnce(&mut Interest)) -> Bytes {
    let mut i = Interest::new(name.parse().expect("name"));
    i.nonce = Some(nonce);
    edit(&mut i);
    i.encode()
}

/// Builds a Data named `name` with FreshnessPeriod `freshness_ms` (absent when 0) and a
/// small content.
///
/// # Panics
/// If `name` does not parse (test misuse).
pub fn make_data(name: &str, freshness_ms: u64) -> Bytes {
    let mut d = Data::new(name.parse().expect("name"), Bytes::from_static(b"content"));
    if freshness_ms > 0 {
        d.meta_info = Some(MetaInfo {
            freshness_period: Some(freshness_ms),
            ..MetaInfo::default()
        });
    }
    d.encode()
}

/// Wraps `fragment` in an LpPacket with `pit_token`.
pub fn with_pit_token(fragment: Bytes, pit_token: &[u8]) -> Bytes {
    let mut lp = LpPacket::wrap(fragment);
    lp.pit_token = Some(Bytes::copy_from_slice(pit_token));
    lp.encode()
}

/// A Nack LpPacket for `interest` with `reason`.
pub fn make_nack(interest: Bytes, reason: NackReason) -> Bytes {
    LpPacket::nack(reason, interest, None).encode()
}
