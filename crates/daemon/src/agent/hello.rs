//! Fast hellos between neighbours on secure links (docs/controller.md, "Fast hellos").
//!
//! Every `hello_interval_ms` the agent sends each secure-link neighbour an Interest
//! `/localhop/nameway/hello/<tag>/seq=<n>` straight out of the face toward it (NextHopFaceId
//! from the internal face [`HELLO_FACE`]); the neighbour's namewayd answers it itself with an
//! empty Data (its route `/localhop/nameway/hello` points at its own [`HELLO_FACE`]). The
//! forwarder's `/localhop` scope keeps hellos to one hop: an Interest under `/localhop` that
//! came from a non-local face never leaves on another non-local face.
//!
//! [`Hellos`] is the sans-I/O part: which faces are probed, which hello is outstanding on each,
//! and whether each neighbour is alive, with hysteresis:
//!
//! - a neighbour is **dead** once no hello sent to it during the last `hello_dead_intervals`
//!   intervals was answered (with the defaults: nothing answered for 1.5 s);
//! - a dead neighbour is **alive** again only after `hello_recover` hellos in a row are
//!   answered (a new neighbour after its first answer), so a link that answers now and then
//!   does not make routes flap.
//!
//! An answer's Content is one byte: 1 when the answering forwarder holds an established
//! secure session on the face the hello came in on, 0 when it holds none (an empty Content,
//! from an older namewayd, says nothing). A neighbour that answers 0 three times in a row
//! while we hold a session with it has lost its side, e.g. by a restart: in per-prefix mode
//! nothing else would tell us (hellos travel in the clear), so the agent asks the link for
//! a new handshake ([`Hellos::take_lost_sessions`]).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bytes::Bytes;
use nameway_fw::FaceId;
use nameway_wire::{Component, Data, Interest, LpPacket, MetaInfo, Name};

/// Answers in a row saying "no session" after which the neighbour is taken to have lost its
/// side of the session.
const NO_SESSION_ANSWERS: u32 = 3;

/// The internal face hellos leave from and arrive at.
pub const HELLO_FACE: FaceId = FaceId(4);

/// The prefix every namewayd with an agent answers.
pub const HELLO_PREFIX: &str = "/localhop/nameway/hello";

/// Timers of the hellos (`[controller] hello_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HelloTimers {
    /// Between two hellos to a neighbour.
    pub interval: Duration,
    /// Intervals without any answer after which a neighbour is dead.
    pub dead_intervals: u32,
    /// Answers in a row that bring a dead neighbour back.
    pub recover: u32,
}

/// What happened to hellos (the agent's counters take them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HelloCounters {
    /// Hellos sent.
    pub sent: u64,
    /// Our hellos answered.
    pub answered: u64,
    /// Neighbours' hellos answered by this forwarder.
    pub received: u64,
    /// Neighbours declared dead.
    pub deaths: u64,
    /// Neighbours declared alive (first time or back).
    pub revivals: u64,
    /// Answers to no outstanding hello (late or unknown).
    pub stray: u64,
}

#[derive(Clone, Debug)]
struct Probe {
    alive: bool,
    /// Ever alive (a new neighbour needs one answer, a dead one `recover`).
    ever: bool,
    /// When the last answered hello was sent.
    last_answered: Option<Instant>,
    /// When probing this face started.
    since: Instant,
    /// Answers in a row.
    streak: u32,
    /// The outstanding hello's sequence number.
    outstanding: Option<u64>,
    /// Answers in a row saying the neighbour holds no session with us.
    no_session: u32,
}

/// See the module documentation.
#[derive(Debug)]
pub struct Hellos {
    timers: HelloTimers,
    base: Name,
    seq: u64,
    probes: BTreeMap<u64, Probe>,
    next_round: Instant,
    /// Set when a neighbour's liveness changed since [`Hellos::take_changed`].
    changed: bool,
    /// Faces whose neighbour said, [`NO_SESSION_ANSWERS`] times in a row, that it holds no
    /// session with us.
    lost_sessions: Vec<u64>,
    /// Counters.
    pub counters: HelloCounters,
}

impl Hellos {
    /// No face probed yet; `tag` tells this run's hellos apart from others'.
    pub fn new(timers: HelloTimers, tag: u64, now: Instant) -> Self {
        let base: Name = HELLO_PREFIX
            .parse::<Name>()
            .and_then(|n| n.append(&Component::generic(format!("{tag:016x}").into_bytes())))
            .unwrap_or_default();
        Self {
            timers,
            base,
            seq: 0,
            probes: BTreeMap::new(),
            next_round: now,
            changed: false,
            lost_sessions: Vec::new(),
            counters: HelloCounters::default(),
        }
    }

    /// The faces probed.
    pub fn faces(&self) -> impl Iterator<Item = u64> + '_ {
        self.probes.keys().copied()
    }

    /// Whether `face` is probed.
    pub fn is_probed(&self, face: u64) -> bool {
        self.probes.contains_key(&face)
    }

    /// Starts probing `face` (at the next round; at once when `now` is given).
    pub fn add(&mut self, face: u64, now: Instant) {
        self.probes.entry(face).or_insert(Probe {
            alive: false,
            ever: false,
            last_answered: None,
            since: now,
            streak: 0,
            outstanding: None,
            no_session: 0,
        });
        self.next_round = self.next_round.min(now);
    }

    /// Stops probing `face` (it is gone).
    pub fn remove(&mut self, face: u64) {
        if let Some(p) = self.probes.remove(&face) {
            self.changed |= p.alive;
        }
    }

    /// Whether the neighbour behind `face` is alive.
    pub fn alive(&self, face: u64) -> bool {
        self.probes.get(&face).is_some_and(|p| p.alive)
    }

    /// The faces whose neighbour keeps saying it holds no session with us, since the last
    /// call.
    pub fn take_lost_sessions(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.lost_sessions)
    }

    /// Whether a neighbour's liveness changed since the last call (and clears it).
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// When [`Hellos::poll`] has work.
    pub fn next_deadline(&self) -> Instant {
        self.next_round
    }

    /// At `now`: declares dead the neighbours silent for too long and returns the hellos to
    /// send, one per probed face: (face, the Interest with NextHopFaceId, to be handed to the
    /// forwarder from [`HELLO_FACE`]).
    pub fn poll(&mut self, now: Instant) -> Vec<(u64, Bytes)> {
        if now < self.next_round || self.probes.is_empty() {
            if self.probes.is_empty() {
                self.next_round = now + self.timers.interval;
            }
            return Vec::new();
        }
        self.next_round = now + self.timers.interval;
        let window = self.timers.interval * self.timers.dead_intervals.max(1);
        let mut out = Vec::with_capacity(self.probes.len());
        for (&face, p) in &mut self.probes {
            if p.outstanding.take().is_some() {
                p.streak = 0;
            }
            let heard = p.last_answered.unwrap_or(p.since);
            if p.alive && now.saturating_duration_since(heard) >= window {
                p.alive = false;
                self.changed = true;
                self.counters.deaths += 1;
                tracing::info!(face, "neighbour silent: hellos unanswered");
            }
            self.seq = self.seq.wrapping_add(1);
            p.outstanding = Some(self.seq);
            let Ok(name) = self.base.append(&Component::sequence_num(self.seq)) else {
                continue;
            };
            let mut interest = Interest::new(name);
            interest.must_be_fresh = true;
            interest.nonce = Some(nameway_wire::random::u32());
            interest.lifetime_ms = u64::try_from(self.timers.interval.as_millis()).ok();
            let mut lp = LpPacket::wrap(interest.encode());
            lp.next_hop_face_id = Some(face);
            self.counters.sent += 1;
            tracing::trace!(face, seq = self.seq, "hello sent");
            out.push((face, lp.encode()));
        }
        out
    }

    /// What the forwarder sent to [`HELLO_FACE`]: a neighbour's hello (returns the Data
    /// answering it, to be handed back from [`HELLO_FACE`]; `has_session` tells whether this
    /// forwarder holds an established secure session on a face) or the answer to one of
    /// ours. Returns also the face a neighbour's hello came in on when it is not probed yet.
    pub fn on_transmit(
        &mut self,
        now: Instant,
        wire: Bytes,
        has_session: impl Fn(u64) -> bool,
    ) -> (Option<Bytes>, Option<u64>) {
        let (incoming, fragment) = match nameway_wire::Packet::classify(wire) {
            Ok(nameway_wire::Packet::Lp(lp)) if lp.nack.is_none() => {
                (lp.incoming_face_id, lp.fragment)
            }
            Ok(nameway_wire::Packet::Interest(w) | nameway_wire::Packet::Data(w)) => {
                (None, Some(w))
            }
            _ => return (None, None),
        };
        let Some(fragment) = fragment else {
            return (None, None);
        };
        if let Ok(interest) = Interest::decode(&fragment) {
            let session = incoming.is_some_and(has_session);
            return self.answer(&interest, incoming, session);
        }
        if let Ok(data) = Data::decode(&fragment) {
            self.on_answer(now, &data.name, data.content.as_deref().unwrap_or_default());
        }
        (None, None)
    }

    fn answer(
        &mut self,
        interest: &Interest,
        incoming: Option<u64>,
        session: bool,
    ) -> (Option<Bytes>, Option<u64>) {
        self.counters.received += 1;
        let mut data = Data::new(
            interest.name.clone(),
            Bytes::from_static(if session { &[1] } else { &[0] }),
        );
        data.meta_info = Some(MetaInfo {
            freshness_period: Some(0),
            ..MetaInfo::default()
        });
        let _ = data.sign(&nameway_wire::security::DigestSha256);
        let unknown = incoming.filter(|f| !self.probes.contains_key(f));
        (Some(data.encode()), unknown)
    }

    fn on_answer(&mut self, now: Instant, name: &Name, content: &[u8]) {
        let seq = (self.base.is_prefix_of(name) && name.len() == self.base.len() + 1)
            .then(|| name.last().and_then(|c| c.as_number()))
            .flatten();
        let Some((face, p)) = seq.and_then(|s| {
            self.probes
                .iter_mut()
                .find(|(_, p)| p.outstanding == Some(s))
        }) else {
            self.counters.stray += 1;
            return;
        };
        p.outstanding = None;
        p.streak += 1;
        match content {
            [0] => {
                p.no_session += 1;
                if p.no_session >= NO_SESSION_ANSWERS {
                    p.no_session = 0;
                    self.lost_sessions.push(*face);
                }
            }
            _ => p.no_session = 0,
        }
        // The hello was sent at the last round.
        p.last_answered = Some(
            self.next_round
                .checked_sub(self.timers.interval)
                .unwrap_or(now)
                .min(now),
        );
        self.counters.answered += 1;
        let need = if p.ever {
            self.timers.recover.max(1)
        } else {
            1
        };
        if !p.alive && p.streak >= need {
            p.alive = true;
            p.ever = true;
            self.changed = true;
            self.counters.revivals += 1;
            tracing::info!(face = *face, "neighbour answers hellos");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn timers() -> HelloTimers {
        HelloTimers {
            interval: 500 * MS,
            dead_intervals: 3,
            recover: 2,
        }
    }

    /// The neighbour's side: answers `hello` as namewayd does.
    fn neighbour_answers(hello: &Bytes) -> Bytes {
        let mut n = Hellos::new(timers(), 99, Instant::now());
        let lp = LpPacket::decode(hello).unwrap();
        assert!(lp.next_hop_face_id.is_some());
        // What the neighbour's forwarder hands its HELLO_FACE: the bare Interest.
        let (answer, _) = n.on_transmit(Instant::now(), lp.fragment.unwrap(), |_| true);
        assert_eq!(n.counters.received, 1);
        answer.unwrap()
    }

    #[test]
    fn a_silent_neighbour_is_dead_after_the_window_and_back_only_after_two_answers() {
        let t0 = Instant::now();
        let mut h = Hellos::new(timers(), 1, t0);
        h.add(7, t0);
        // Round 0: one hello, answered: alive at once (a new neighbour).
        let sent = h.poll(t0);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].0, 7);
        h.on_transmit(t0 + MS, neighbour_answers(&sent[0].1), |_| true);
        assert!(h.alive(7));
        assert!(h.take_changed());
        // Answered rounds keep it alive.
        let mut now = t0;
        for _ in 0..4 {
            now += 500 * MS;
            let s = h.poll(now);
            h.on_transmit(now + MS, neighbour_answers(&s[0].1), |_| true);
        }
        assert!(h.alive(7));
        assert!(!h.take_changed());
        let last_answered_round = now;
        // The link goes silent: rounds at +0.5 and +1.0 s leave it alive, +1.5 s kills it.
        for k in 1..=3u32 {
            now = last_answered_round + 500 * MS * k;
            assert_eq!(h.poll(now).len(), 1);
            assert_eq!(h.alive(7), k < 3, "round {k}");
        }
        assert!(h.take_changed());
        assert_eq!(h.counters.deaths, 1);
        // One answer is not enough to come back; two in a row are.
        now += 500 * MS;
        let s = h.poll(now);
        h.on_transmit(now + MS, neighbour_answers(&s[0].1), |_| true);
        assert!(!h.alive(7));
        now += 500 * MS;
        let s = h.poll(now);
        h.on_transmit(now + MS, neighbour_answers(&s[0].1), |_| true);
        assert!(h.alive(7));
        assert_eq!(h.counters.revivals, 2);
        // An answer every other round never brings it back once dead again.
        for k in 1..=3u32 {
            h.poll(now + 500 * MS * k);
        }
        assert!(!h.alive(7));
        now += 1500 * MS;
        for k in 1..=10u32 {
            let s = h.poll(now + 500 * MS * k);
            if k % 2 == 0 {
                h.on_transmit(now, neighbour_answers(&s[0].1), |_| true);
            }
        }
        assert!(!h.alive(7));
    }

    #[test]
    fn answers_to_another_run_or_a_late_answer_are_stray() {
        let t0 = Instant::now();
        let mut h = Hellos::new(timers(), 1, t0);
        h.add(7, t0);
        let first = h.poll(t0);
        let late = neighbour_answers(&first[0].1);
        h.poll(t0 + 500 * MS);
        h.on_transmit(t0 + 501 * MS, late, |_| true);
        assert_eq!(h.counters.stray, 1);
        assert!(!h.alive(7));
        let mut other = Hellos::new(timers(), 2, t0);
        other.add(7, t0);
        let theirs = other.poll(t0);
        h.on_transmit(t0, neighbour_answers(&theirs[0].1), |_| true);
        assert_eq!(h.counters.stray, 2);
    }

    /// The neighbour's answer when it holds (`Some(true)`), does not hold (`Some(false)`) a
    /// session on the face the hello came in on, or is an older namewayd (`None`: empty).
    fn answer_saying(hello: &Bytes, session: Option<bool>) -> Bytes {
        let mut n = Hellos::new(timers(), 99, Instant::now());
        let mut lp = LpPacket::decode(hello).unwrap();
        lp.next_hop_face_id = None;
        lp.incoming_face_id = Some(40);
        let (answer, _) = n.on_transmit(Instant::now(), lp.encode(), |f| {
            f == 40 && session == Some(true)
        });
        let answer = answer.unwrap();
        match session {
            Some(_) => answer,
            None => {
                let mut d = Data::decode(&answer).unwrap();
                d.content = Some(Bytes::new());
                d.encode()
            }
        }
    }

    #[test]
    fn a_neighbour_that_keeps_saying_it_holds_no_session_is_reported_after_three_answers() {
        let t0 = Instant::now();
        let mut h = Hellos::new(timers(), 1, t0);
        h.add(7, t0);
        let mut now = t0;
        let mut round = |h: &mut Hellos, session: Option<bool>| {
            let s = h.poll(now);
            h.on_transmit(now + MS, answer_saying(&s[0].1, session), |_| true);
            now += 500 * MS;
            h.take_lost_sessions()
        };
        // Two "no session", then one "session": nothing.
        assert!(round(&mut h, Some(false)).is_empty());
        assert!(round(&mut h, Some(false)).is_empty());
        assert!(round(&mut h, Some(true)).is_empty());
        // Answers from an older namewayd say nothing either way.
        for _ in 0..4 {
            assert!(round(&mut h, None).is_empty());
        }
        // Three in a row: the face is named, once, and again after three more.
        assert!(round(&mut h, Some(false)).is_empty());
        assert!(round(&mut h, Some(false)).is_empty());
        assert_eq!(round(&mut h, Some(false)), vec![7]);
        assert!(round(&mut h, Some(false)).is_empty());
        assert!(round(&mut h, Some(false)).is_empty());
        assert_eq!(round(&mut h, Some(false)), vec![7]);
        assert!(
            h.alive(7),
            "answers keep the neighbour alive whatever they say"
        );
    }

    #[test]
    fn a_hello_from_a_face_not_probed_names_it() {
        let t0 = Instant::now();
        let mut h = Hellos::new(timers(), 1, t0);
        let mut other = Hellos::new(timers(), 2, t0);
        other.add(3, t0);
        let hello = other.poll(t0).remove(0).1;
        let mut lp = LpPacket::decode(&hello).unwrap();
        lp.next_hop_face_id = None;
        lp.incoming_face_id = Some(12);
        let (answer, unknown) = h.on_transmit(t0, lp.encode(), |_| true);
        assert!(answer.is_some());
        assert_eq!(unknown, Some(12));
        h.add(12, t0);
        let (_, unknown) = h.on_transmit(t0, lp.encode(), |_| true);
        assert_eq!(unknown, None);
    }
}
