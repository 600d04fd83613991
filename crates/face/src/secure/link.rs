//! [`SecureLink`]: the security state of one face toward one neighbour, sans I/O. The face's
//! reader hands it handshake messages ([`SecureLink::on_handshake`]) and every received network
//! packet ([`SecureLink::open`]); the face's writer hands it every packet to send
//! ([`SecureLink::seal`]) and calls [`SecureLink::poll`] on a timer for handshake
//! retransmissions.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::{Bytes, BytesMut};
use nameway_crypto::PayloadCipher;
use nameway_wire::lp::{GroupSeal, LinkSecurity, LpPacket, SecurityLevel, LINK_SECURITY_TAG_LEN};
use nameway_wire::tlv::types;
use nameway_wire::DataView;

use super::group::{unix_ms, GroupKey, GroupRefusal};
use super::handshake::{Completed, HandshakeError, Initiator, Kind, Message, Responder};
use super::keys::{nonce, EpochKeys, ReplayWindow};
use super::{PublicKey, SecureMode, SecurityContext};

/// Handshake retransmission period.
const RETX_MS: u64 = 1000;
/// How long an untrusted peer is left alone before trying again (the trust list may change).
const REFUSED_BACKOFF_MS: u64 = 10_000;
/// Finish messages an initiator sends without a Confirm before it gives the handshake up
/// (the responder refused its identity, or every Confirm was lost).
const FINISH_TRIES: u32 = 8;
/// Responder handshakes waiting for their Finish, at most.
const MAX_PENDING: usize = 4;
/// A responder state without its Finish is forgotten after this long.
const PENDING_LIFETIME_MS: u64 = 10_000;
/// How far ahead of the current key epoch a packet may be (epochs skipped by loss).
const MAX_EPOCHS_AHEAD: u16 = 16;
/// Unknown-key hints sent at most this often.
const HINT_INTERVAL_MS: u64 = 1000;
/// Handshakes started because the neighbour said it holds no session with us
/// ([`SecureLink::request_rehandshake`]) at most this often.
const REHANDSHAKE_INTERVAL_MS: u64 = 5000;

/// Where a link stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkState {
    /// No handshake yet (a face that is not secure, or a responder waiting for its peer).
    Idle,
    /// A handshake is under way and no session exists yet.
    Handshaking,
    /// Traffic keys are in place.
    Established,
    /// The peer's identity is not trusted.
    Refused,
}

impl LinkState {
    /// A short name for listings.
    pub const fn as_str(self) -> &'static str {
        match self {
            LinkState::Idle => "idle",
            LinkState::Handshaking => "handshaking",
            LinkState::Established => "established",
            LinkState::Refused => "refused",
        }
    }
}

/// Why a packet was dropped by the security layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SecureDrop {
    /// The authentication tag did not verify (tampered, or wrong key).
    BadTag,
    /// A counter seen before, or too old for the replay window.
    Replay,
    /// No key for the packet's key id (no session with that peer, or a retired key).
    UnknownKey,
    /// The packet needs protection and no session exists yet (sending side).
    NoSession,
    /// A packet in clear where the policy (or link-wide mode) requires encryption.
    ClearRefused,
    /// A malformed encrypted packet.
    Malformed,
    /// A group-sealed packet under a group key id this forwarder does not hold (not a
    /// member, or an expired key).
    UnknownGroupKey,
    /// A Data under a group prefix not sealed with that prefix's group key (sealed with a
    /// session key, or with another prefix's key).
    GroupRequired,
}

impl SecureDrop {
    /// A short kebab-case name, stable for logs and metrics.
    pub const fn as_str(self) -> &'static str {
        match self {
            SecureDrop::BadTag => "bad-tag",
            SecureDrop::Replay => "replay",
            SecureDrop::UnknownKey => "unknown-key",
            SecureDrop::NoSession => "no-session",
            SecureDrop::ClearRefused => "clear-refused",
            SecureDrop::Malformed => "malformed",
            SecureDrop::UnknownGroupKey => "unknown-group-key",
            SecureDrop::GroupRequired => "group-required",
        }
    }
}

/// Counters of one secure link.
#[derive(Debug, Default)]
pub(crate) struct LinkCounters {
    encrypted: AtomicU64,
    decrypted: AtomicU64,
    bad_tag: AtomicU64,
    replay: AtomicU64,
    unknown_key: AtomicU64,
    no_session: AtomicU64,
    clear_refused: AtomicU64,
    malformed: AtomicU64,
    unknown_group_key: AtomicU64,
    group_required: AtomicU64,
    untrusted_peer: AtomicU64,
    unconfirmed: AtomicU64,
    handshakes_started: AtomicU64,
    handshakes_completed: AtomicU64,
    handshakes_invalid: AtomicU64,
    rekeys: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// A snapshot of a link's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SecureCounters {
    /// Packets encrypted (sent).
    pub encrypted: u64,
    /// Packets decrypted (received and verified).
    pub decrypted: u64,
    /// Dropped: tag did not verify.
    pub bad_tag: u64,
    /// Dropped: replayed or too old.
    pub replay: u64,
    /// Dropped: no key for the key id.
    pub unknown_key: u64,
    /// Dropped before sending: no session yet.
    pub no_session: u64,
    /// Dropped: received in clear where encryption is required.
    pub clear_refused: u64,
    /// Dropped: malformed encrypted packets.
    pub malformed: u64,
    /// Dropped: group-sealed under a group key id not held.
    pub unknown_group_key: u64,
    /// Dropped: a Data under a group prefix not sealed with its group key.
    pub group_required: u64,
    /// Handshakes refused because the peer's identity is not trusted.
    pub untrusted_peer: u64,
    /// Handshakes this side started and gave up after its Finish was never confirmed (the
    /// neighbour refused this side's identity, or every Confirm was lost).
    pub unconfirmed: u64,
    /// Handshakes this side started.
    pub handshakes_started: u64,
    /// Handshakes completed (either role).
    pub handshakes_completed: u64,
    /// Handshake messages that did not verify or parse.
    pub handshakes_invalid: u64,
    /// Key epochs advanced by the sender (rekeys).
    pub rekeys: u64,
}

impl LinkCounters {
    fn snapshot(&self) -> SecureCounters {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        SecureCounters {
            encrypted: g(&self.encrypted),
            decrypted: g(&self.decrypted),
            bad_tag: g(&self.bad_tag),
            replay: g(&self.replay),
            unknown_key: g(&self.unknown_key),
            no_session: g(&self.no_session),
            clear_refused: g(&self.clear_refused),
            malformed: g(&self.malformed),
            unknown_group_key: g(&self.unknown_group_key),
            group_required: g(&self.group_required),
            untrusted_peer: g(&self.untrusted_peer),
            unconfirmed: g(&self.unconfirmed),
            handshakes_started: g(&self.handshakes_started),
            handshakes_completed: g(&self.handshakes_completed),
            handshakes_invalid: g(&self.handshakes_invalid),
            rekeys: g(&self.rekeys),
        }
    }

    fn drop(&self, why: SecureDrop) {
        bump(match why {
            SecureDrop::BadTag => &self.bad_tag,
            SecureDrop::Replay => &self.replay,
            SecureDrop::UnknownKey => &self.unknown_key,
            SecureDrop::NoSession => &self.no_session,
            SecureDrop::ClearRefused => &self.clear_refused,
            SecureDrop::Malformed => &self.malformed,
            SecureDrop::UnknownGroupKey => &self.unknown_group_key,
            SecureDrop::GroupRequired => &self.group_required,
        });
    }
}

impl SecureCounters {
    /// Adds `other` into `self` (forwarder-wide totals).
    pub fn add(&mut self, other: &SecureCounters) {
        self.encrypted += other.encrypted;
        self.decrypted += other.decrypted;
        self.bad_tag += other.bad_tag;
        self.replay += other.replay;
        self.unknown_key += other.unknown_key;
        self.no_session += other.no_session;
        self.clear_refused += other.clear_refused;
        self.malformed += other.malformed;
        self.unknown_group_key += other.unknown_group_key;
        self.group_required += other.group_required;
        self.untrusted_peer += other.untrusted_peer;
        self.unconfirmed += other.unconfirmed;
        self.handshakes_started += other.handshakes_started;
        self.handshakes_completed += other.handshakes_completed;
        self.handshakes_invalid += other.handshakes_invalid;
        self.rekeys += other.rekeys;
    }
}

/// What management shows of a secure link (never key material).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeighbourInfo {
    /// The peer's identity, once a handshake told it.
    pub peer: Option<PublicKey>,
    /// Where the link stands.
    pub state: LinkState,
    /// The session's mode, once established.
    pub mode: Option<SecureMode>,
    /// Whether this side starts handshakes (the face was created secure).
    pub initiator: bool,
    /// Key id packets are sent with.
    pub tx_key_id: Option<u32>,
    /// Key ids packets are accepted with (current and overlapping ones).
    pub rx_key_ids: Vec<u32>,
    /// Counters.
    pub counters: SecureCounters,
}

enum Phase {
    AwaitResponse(Option<Box<Initiator>>),
    AwaitConfirm([u8; 16]),
}

struct Initiating {
    id: u32,
    phase: Phase,
    /// The message to retransmit until the next step.
    msg: Bytes,
    next_ms: u64,
    /// Finish messages sent so far (in [`Phase::AwaitConfirm`]).
    finishes: u32,
}

struct Pending {
    id: u32,
    responder: Responder,
    response: Bytes,
    created_ms: u64,
}

#[derive(Default)]
struct HsState {
    initiating: Option<Initiating>,
    pending: Vec<Pending>,
    /// Recent handshakes completed as responder: id and the Confirm to resend.
    confirmed: Vec<(u32, Bytes)>,
    peer: Option<PublicKey>,
    state: Option<LinkState>,
    last_start_ms: Option<u64>,
    refused_until_ms: u64,
    last_hint_ms: Option<u64>,
    /// The neighbour said it holds no session with us: start one at the next poll.
    rehandshake: bool,
    last_rehandshake_ms: Option<u64>,
}

struct TxSession {
    tag: u16,
    keys: EpochKeys,
    counter: u64,
    epoch_start_ms: u64,
    mode: SecureMode,
    /// Salt of the group keys derived for this epoch (drawn again at each epoch: the
    /// counter, which is the nonce, starts again at 0).
    salt: [u8; 16],
    /// The group cipher last derived (key id, cipher) for this epoch's salt.
    group: Option<(u64, Arc<dyn PayloadCipher>)>,
}

fn random_salt() -> [u8; 16] {
    let mut salt = [0u8; 16];
    nameway_wire::random::fill(&mut salt);
    salt
}

struct RxEpoch {
    keys: EpochKeys,
    window: ReplayWindow,
}

/// A group cipher derived for a peer's salt: (group key id, salt, cipher).
type GroupCipher = (u64, [u8; 16], Arc<dyn PayloadCipher>);
/// Group ciphers kept per received session (a rotation's overlap, an epoch's new salt).
const GROUP_CIPHERS: usize = 4;

struct RxSession {
    tag: u16,
    current: RxEpoch,
    previous: Option<(RxEpoch, u64)>,
    mode: SecureMode,
    /// When an older session stops being accepted (set when a newer one is installed).
    retire_ms: Option<u64>,
    /// Group ciphers derived for the peer's salts, newest last.
    group: Vec<GroupCipher>,
}

/// The security state of one face.
pub struct SecureLink {
    ctx: Arc<SecurityContext>,
    initiate: Option<SecureMode>,
    /// A handshake was started here or a session exists: only then does the link touch
    /// packets (a plain face with a `SecureLink` stays on the fast path).
    engaged: AtomicBool,
    hs: Mutex<HsState>,
    tx: Mutex<Option<TxSession>>,
    rx: Mutex<Vec<RxSession>>,
    counters: LinkCounters,
}

impl core::fmt::Debug for SecureLink {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SecureLink")
            .field("initiate", &self.initiate)
            .field("engaged", &self.engaged.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn handshake_packet(kind: Kind, id: u32, body: &[u8]) -> Bytes {
    LpPacket {
        link_handshake: Some(Bytes::from(Message::encode(kind, id, body))),
        ..LpPacket::default()
    }
    .encode()
}

fn key_id(tag: u16, epoch: u16) -> u32 {
    (u32::from(tag) << 16) | u32::from(epoch)
}

fn random_id() -> u32 {
    nameway_wire::random::u32()
}

/// The network-layer header fields of `lp` (what the forwarder gave or wants), without the
/// security header, fragmentation fields or Fragment.
fn network_headers(lp: &LpPacket) -> LpPacket {
    LpPacket {
        link_security: None,
        ..crate::link::network_headers(lp)
    }
}

/// Associated data of a Content-only packet: the LinkSecurity header (without tag), the other
/// header fields, and the whole Data outside its Content value.
fn content_aad(
    sec: &LinkSecurity,
    headers: &LpPacket,
    data: &[u8],
    content: &core::ops::Range<usize>,
) -> Vec<u8> {
    let has_headers = *headers != LpPacket::default();
    let mut aad = Vec::with_capacity(64 + data.len() - content.len());
    aad.extend_from_slice(&sec.header_bytes());
    if has_headers {
        aad.extend_from_slice(&headers.encode());
    }
    aad.extend_from_slice(data.get(..content.start).unwrap_or_default());
    aad.extend_from_slice(data.get(content.end..).unwrap_or_default());
    aad
}

/// The Data inside a packet to send or received in clear: (network headers, Data wire).
/// The Data a packet carries: `wire` itself when bare, or the Fragment of its already decoded
/// LpPacket `lp` (not a Nack).
fn data_in<'a>(wire: &'a Bytes, lp: Option<&'a LpPacket>) -> Option<&'a Bytes> {
    let is_data = |b: &Bytes| b.first().map(|&t| u32::from(t)) == Some(types::DATA);
    match lp {
        None => Some(wire).filter(|w| is_data(w)),
        Some(lp) if lp.nack.is_none() => lp.fragment.as_ref().filter(|f| is_data(f)),
        Some(_) => None,
    }
}

/// The group counter a drop goes to: every drop of a group-sealed packet, and a Data under a
/// group prefix not group-sealed.
fn group_refusal(why: SecureDrop, group_sealed: bool) -> Option<GroupRefusal> {
    Some(match why {
        SecureDrop::GroupRequired if group_sealed => GroupRefusal::WrongPrefix,
        SecureDrop::GroupRequired => GroupRefusal::NotGroupSealed,
        _ if !group_sealed => return None,
        SecureDrop::UnknownGroupKey => GroupRefusal::UnknownKeyId,
        SecureDrop::BadTag => GroupRefusal::BadTag,
        SecureDrop::Replay => GroupRefusal::Replay,
        SecureDrop::UnknownKey => GroupRefusal::NoSession,
        _ => return None,
    })
}

fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl SecureLink {
    /// A link on a face. `initiate`: this side starts handshakes in that mode (a face created
    /// `--secure`); `None`: it answers handshakes only and stays plain until one completes.
    pub fn new(ctx: Arc<SecurityContext>, initiate: Option<SecureMode>) -> Self {
        Self {
            ctx,
            initiate,
            engaged: AtomicBool::new(false),
            hs: Mutex::new(HsState::default()),
            tx: Mutex::new(None),
            rx: Mutex::new(Vec::new()),
            counters: LinkCounters::default(),
        }
    }

    /// Whether the link takes part in sending and receiving (a handshake was started here, or
    /// a session exists).
    pub fn is_engaged(&self) -> bool {
        self.engaged.load(Ordering::Acquire)
    }

    /// Handshake work due at `now_ms`: the first Init, or a retransmission. Call it every few
    /// hundred milliseconds; send what it returns.
    pub fn poll(&self, now_ms: u64) -> Option<Bytes> {
        let mode = self.initiate?;
        let mut hs = lock(&self.hs);
        hs.pending
            .retain(|p| now_ms.saturating_sub(p.created_ms) < PENDING_LIFETIME_MS);
        if let Some(i) = hs.initiating.as_mut() {
            if now_ms < i.next_ms {
                return None;
            }
            if matches!(i.phase, Phase::AwaitConfirm(_)) {
                if i.finishes >= FINISH_TRIES {
                    let id = i.id;
                    self.unconfirmed(&mut hs, now_ms, id);
                    return None;
                }
                i.finishes += 1;
            }
            i.next_ms = now_ms + RETX_MS;
            return Some(i.msg.clone());
        }
        if now_ms < hs.refused_until_ms {
            return None;
        }
        if lock(&self.tx).is_some() {
            // A session: a new handshake only when the neighbour lost its side of it (a
            // restarted responder holds no session, and in per-prefix mode, with nothing
            // protected to send, nothing else would tell us).
            let recent = hs
                .last_rehandshake_ms
                .is_some_and(|t| now_ms.saturating_sub(t) < REHANDSHAKE_INTERVAL_MS);
            if !std::mem::take(&mut hs.rehandshake) || recent {
                return None;
            }
            hs.last_rehandshake_ms = Some(now_ms);
            tracing::info!(peer = ?hs.peer, "neighbour holds no session with us; handshaking again");
        }
        self.start(&mut hs, now_ms, mode)
    }

    /// Whether a session is established on this link now.
    pub fn has_session(&self) -> bool {
        lock(&self.hs).state == Some(LinkState::Established) && lock(&self.tx).is_some()
    }

    /// The neighbour says it holds no session with us (its answers to the agents' hellos):
    /// if this side starts the handshakes, the next [`SecureLink::poll`] starts a new one
    /// (at most one every 5 s), the current session staying in use until it completes.
    /// Returns whether one will be started.
    pub fn request_rehandshake(&self) -> bool {
        if self.initiate.is_none() {
            return false;
        }
        let mut hs = lock(&self.hs);
        if hs.initiating.is_some() {
            return false;
        }
        hs.rehandshake = true;
        true
    }

    fn start(&self, hs: &mut HsState, now_ms: u64, mode: SecureMode) -> Option<Bytes> {
        let (init, body) = match Initiator::start(self.ctx.identity(), mode.code()) {
            Ok(x) => x,
            Err(_) => return None,
        };
        let id = random_id();
        let msg = handshake_packet(Kind::Init, id, &body);
        hs.initiating = Some(Initiating {
            id,
            phase: Phase::AwaitResponse(Some(Box::new(init))),
            msg: msg.clone(),
            next_ms: now_ms + RETX_MS,
            finishes: 0,
        });
        hs.last_start_ms = Some(now_ms);
        if hs.state != Some(LinkState::Established) {
            hs.state = Some(LinkState::Handshaking);
        }
        bump(&self.counters.handshakes_started);
        self.engaged.store(true, Ordering::Release);
        Some(msg)
    }

    /// Takes a received LinkHandshake value; returns the reply to send, if any.
    pub fn on_handshake(&self, now_ms: u64, value: &[u8]) -> Option<Bytes> {
        let Some(msg) = Message::parse(value) else {
            bump(&self.counters.handshakes_invalid);
            return None;
        };
        let mut hs = lock(&self.hs);
        match msg.kind {
            Kind::Init => self.on_init(&mut hs, now_ms, msg),
            Kind::Response => self.on_response(&mut hs, now_ms, msg),
            Kind::Finish => self.on_finish(&mut hs, now_ms, msg),
            Kind::Confirm => {
                if let Some(i) = &hs.initiating {
                    if let Phase::AwaitConfirm(expected) = &i.phase {
                        if i.id == msg.id && ct_eq(expected, msg.body) {
                            hs.initiating = None;
                            hs.state = Some(LinkState::Established);
                        }
                    }
                }
                None
            }
            Kind::Unknown => {
                let mode = self.initiate?;
                let recent = hs
                    .last_start_ms
                    .is_some_and(|t| now_ms.saturating_sub(t) < 2 * RETX_MS);
                if hs.initiating.is_some() || recent || now_ms < hs.refused_until_ms {
                    return None;
                }
                tracing::info!(peer = ?hs.peer, "neighbour lost our keys; handshaking again");
                self.start(&mut hs, now_ms, mode)
            }
        }
    }

    fn on_init(&self, hs: &mut HsState, now_ms: u64, msg: Message<'_>) -> Option<Bytes> {
        if let Some(p) = hs.pending.iter().find(|p| p.id == msg.id) {
            return Some(p.response.clone());
        }
        // Both sides initiating at once: the lower handshake id wins on both sides, so exactly
        // one session results. Ours is lower: ignore theirs (they give up theirs when ours
        // arrives). Theirs is lower: give up ours and answer.
        if let Some(i) = &hs.initiating {
            if matches!(i.phase, Phase::AwaitResponse(_)) {
                if msg.id > i.id {
                    return None;
                }
                hs.initiating = None;
            }
        }
        if hs.confirmed.iter().any(|(id, _)| *id == msg.id) {
            return None; // a stale copy of a finished handshake
        }
        match Responder::on_init(self.ctx.identity(), msg.body) {
            Ok((responder, body)) => {
                let response = handshake_packet(Kind::Response, msg.id, &body);
                if hs.pending.len() >= MAX_PENDING {
                    hs.pending.remove(0);
                }
                hs.pending.push(Pending {
                    id: msg.id,
                    responder,
                    response: response.clone(),
                    created_ms: now_ms,
                });
                Some(response)
            }
            Err(_) => {
                bump(&self.counters.handshakes_invalid);
                None
            }
        }
    }

    fn on_response(&self, hs: &mut HsState, now_ms: u64, msg: Message<'_>) -> Option<Bytes> {
        let mode = self.initiate?;
        let i = hs.initiating.as_mut().filter(|i| i.id == msg.id)?;
        let init = match &mut i.phase {
            Phase::AwaitResponse(init) => init.take()?,
            // Our Finish was lost and the peer sent its Response again: resend the Finish.
            Phase::AwaitConfirm(_) => return Some(i.msg.clone()),
        };
        let ctx = &self.ctx;
        match init.on_response(msg.body, |k| ctx.is_trusted(k)) {
            Ok((body, keys)) => {
                let confirm = EpochKeys::first(&keys.r_to_i).confirm_tag(msg.id);
                let finish = handshake_packet(Kind::Finish, msg.id, &body);
                i.phase = Phase::AwaitConfirm(confirm);
                i.msg = finish.clone();
                i.next_ms = now_ms + RETX_MS;
                i.finishes = 1;
                let had_session = hs.state == Some(LinkState::Established);
                self.install(hs, now_ms, keys, true, mode, msg.id);
                // The keys are in use at once (Noise lets the initiator send after its
                // Finish), but a first session counts as established only once the responder
                // confirms it: it may yet refuse this side's identity.
                if !had_session {
                    hs.state = Some(LinkState::Handshaking);
                }
                Some(finish)
            }
            Err(e) => {
                hs.initiating = None;
                self.refuse(hs, now_ms, e);
                None
            }
        }
    }

    fn on_finish(&self, hs: &mut HsState, now_ms: u64, msg: Message<'_>) -> Option<Bytes> {
        if let Some((_, confirm)) = hs.confirmed.iter().find(|(id, _)| *id == msg.id) {
            return Some(confirm.clone());
        }
        let at = hs.pending.iter().position(|p| p.id == msg.id)?;
        let pending = hs.pending.remove(at);
        let mode = SecureMode::from_code(pending.responder.mode).unwrap_or(SecureMode::PerPrefix);
        let ctx = &self.ctx;
        match pending.responder.on_finish(msg.body, |k| ctx.is_trusted(k)) {
            Ok(keys) => {
                let tag = EpochKeys::first(&keys.r_to_i).confirm_tag(msg.id);
                let confirm = handshake_packet(Kind::Confirm, msg.id, &tag);
                if hs.confirmed.len() >= MAX_PENDING {
                    hs.confirmed.remove(0);
                }
                hs.confirmed.push((msg.id, confirm.clone()));
                self.install(hs, now_ms, keys, false, mode, msg.id);
                Some(confirm)
            }
            Err(e) => {
                self.refuse(hs, now_ms, e);
                None
            }
        }
    }

    /// Gives up handshake `id`, whose Finish was never confirmed: its keys are removed, and
    /// the link counts as refused until the back-off ends (then a new handshake starts).
    fn unconfirmed(&self, hs: &mut HsState, now_ms: u64, id: u32) {
        let tag = (id & 0xffff) as u16;
        hs.initiating = None;
        lock(&self.rx).retain(|s| s.tag != tag);
        {
            let mut tx = lock(&self.tx);
            if tx.as_ref().is_some_and(|t| t.tag == tag) {
                *tx = None;
            }
        }
        hs.state = Some(LinkState::Refused);
        hs.refused_until_ms = now_ms + REFUSED_BACKOFF_MS;
        bump(&self.counters.unconfirmed);
        tracing::warn!(peer = ?hs.peer, "secure neighbour never confirmed our handshake (does it trust this forwarder's identity?); trying again later");
    }

    fn refuse(&self, hs: &mut HsState, now_ms: u64, e: HandshakeError) {
        match e {
            HandshakeError::Untrusted(peer) => {
                bump(&self.counters.untrusted_peer);
                tracing::warn!(%peer, "secure neighbour refused: its identity is not trusted (nameway neighbour trust KEY)");
                if hs.state != Some(LinkState::Established) {
                    hs.state = Some(LinkState::Refused);
                    hs.peer = Some(peer);
                }
                hs.refused_until_ms = now_ms + REFUSED_BACKOFF_MS;
            }
            HandshakeError::Invalid | HandshakeError::Setup => {
                bump(&self.counters.handshakes_invalid);
            }
        }
    }

    fn install(
        &self,
        hs: &mut HsState,
        now_ms: u64,
        keys: Completed,
        initiator: bool,
        mode: SecureMode,
        id: u32,
    ) {
        let tag = (id & 0xffff) as u16;
        let (tx_key, rx_key) = if initiator {
            (&keys.i_to_r, &keys.r_to_i)
        } else {
            (&keys.r_to_i, &keys.i_to_r)
        };
        let overlap = self.ctx.overlap_ms();
        {
            let mut rx = lock(&self.rx);
            rx.retain(|s| s.tag != tag);
            for s in rx.iter_mut() {
                s.retire_ms.get_or_insert(now_ms.saturating_add(overlap));
            }
            if rx.len() >= 2 {
                rx.remove(0);
            }
            rx.push(RxSession {
                tag,
                current: RxEpoch {
                    keys: EpochKeys::first(rx_key),
                    window: ReplayWindow::default(),
                },
                previous: None,
                mode,
                retire_ms: None,
                group: Vec::new(),
            });
        }
        *lock(&self.tx) = Some(TxSession {
            tag,
            keys: EpochKeys::first(tx_key),
            counter: 0,
            epoch_start_ms: now_ms,
            mode,
            salt: random_salt(),
            group: None,
        });
        hs.peer = Some(keys.peer);
        hs.state = Some(LinkState::Established);
        bump(&self.counters.handshakes_completed);
        self.engaged.store(true, Ordering::Release);
        tracing::info!(peer = %keys.peer, initiator, mode = mode.as_str(), "secure neighbour established");
    }

    /// Ends every session with `peer` (its trust was withdrawn). Returns whether one existed.
    pub fn revoke(&self, peer: &PublicKey) -> bool {
        let mut hs = lock(&self.hs);
        if hs.peer.as_ref() != Some(peer) {
            return false;
        }
        lock(&self.rx).clear();
        *lock(&self.tx) = None;
        hs.initiating = None;
        hs.pending.clear();
        hs.state = Some(LinkState::Refused);
        true
    }

    /// The level a Data named `data` needs under the policy.
    fn level_of(&self, data: &Bytes) -> Option<SecurityLevel> {
        if self.ctx.policy().is_empty() {
            return Some(SecurityLevel::None);
        }
        let view = DataView::new_checked(data.clone()).ok()?;
        Some(self.ctx.policy().level(view.name()))
    }

    /// Takes a packet the forwarder sends on this face; returns what goes on the wire
    /// (unchanged, or encrypted), or why it must not be sent.
    ///
    /// The packet is copied once, into the LpPacket that carries it, and encrypted there.
    ///
    /// # Errors
    /// [`SecureDrop::NoSession`] when the packet needs protection and no session exists yet.
    pub fn seal(&self, now_ms: u64, wire: Bytes) -> Result<Bytes, SecureDrop> {
        if !self.is_engaged() {
            return Ok(wire);
        }
        let lp = if wire.first().map(|&b| u32::from(b)) == Some(types::LP_PACKET) {
            let lp = LpPacket::decode(&wire).map_err(|_| SecureDrop::Malformed)?;
            if lp.link_handshake.is_some() {
                return Ok(wire);
            }
            Some(lp)
        } else {
            None
        };
        let groups = self.ctx.group_keys();
        let mut tx = lock(&self.tx);
        let mode = tx.as_ref().map(|s| s.mode).or(self.initiate);
        // What to seal: (level, the Data and its Content range for Content-only sealing, the
        // group key when the Data falls under a group prefix).
        let mut group_key: Option<Arc<GroupKey>> = None;
        let (level, content) = if mode == Some(SecureMode::LinkWide) {
            (self.ctx.link_level(), None)
        } else {
            match data_in(&wire, lp.as_ref()) {
                Some(data) if !self.ctx.policy().is_empty() || !groups.is_empty() => {
                    let view =
                        DataView::new_checked(data.clone()).map_err(|_| SecureDrop::Malformed)?;
                    let content = view.content_range().map(|r| (data.clone(), r));
                    group_key = content.as_ref().and_then(|_| {
                        groups
                            .snapshot()
                            .sending_key(view.name(), unix_ms())
                            .cloned()
                    });
                    let level = group_key
                        .as_ref()
                        .map_or_else(|| self.ctx.policy().level(view.name()), |k| k.level);
                    (level, content)
                }
                _ => (SecurityLevel::None, None),
            }
        };
        if !level.encrypts() {
            return Ok(wire);
        }
        let Some(session) = tx.as_mut() else {
            self.counters.drop(SecureDrop::NoSession);
            return Err(SecureDrop::NoSession);
        };
        if session.counter >= self.ctx.rekey_packets()
            || now_ms.saturating_sub(session.epoch_start_ms) >= self.ctx.rekey_ms()
        {
            if let Some(next) = session.keys.next() {
                session.keys = next;
                session.counter = 0;
                session.epoch_start_ms = now_ms;
                session.salt = random_salt();
                session.group = None;
                bump(&self.counters.rekeys);
            }
        }
        let counter = session.counter;
        session.counter += 1;
        let id = key_id(session.tag, session.keys.epoch);
        let (cipher, group) = match &group_key {
            Some(k) => {
                let cipher = match &session.group {
                    Some((gid, c)) if *gid == k.id => c.clone(),
                    _ => {
                        let c = k.derive(&session.salt).ok_or(SecureDrop::Malformed)?;
                        session.group = Some((k.id, c.clone()));
                        c
                    }
                };
                let seal = GroupSeal {
                    key_id: k.id,
                    salt: session.salt,
                };
                (cipher, Some(seal))
            }
            None => (
                session.keys.cipher(level).ok_or(SecureDrop::Malformed)?,
                None,
            ),
        };
        drop(tx);
        let sec = LinkSecurity {
            level,
            whole_packet: content.is_none(),
            key_id: id,
            counter,
            // A placeholder of the right size, filled in after encryption.
            tag: level.authenticates().then_some([0; LINK_SECURITY_TAG_LEN]),
            group,
        };
        let mut n = [0u8; 24];
        let nonce = nonce(counter, cipher.suite().nonce_len(), &mut n);
        // The packet as it goes out, with the payload still in clear: encrypted in place.
        let (out, payload, range, aad) = match content {
            Some((data, range)) => {
                let headers = lp.as_ref().map(network_headers).unwrap_or_default();
                let aad = content_aad(&sec, &headers, &data, &range);
                let out = LpPacket {
                    link_security: Some(sec),
                    fragment: Some(data.clone()),
                    ..headers
                }
                .encode();
                (out, data, range, aad)
            }
            // Link-wide mode, or a Data without Content: the whole packet.
            None => {
                let out = LpPacket {
                    link_security: Some(sec),
                    fragment: Some(wire.clone()),
                    ..LpPacket::default()
                }
                .encode();
                let range = 0..wire.len();
                (out, wire, range, sec.header_bytes().to_vec())
            }
        };
        let mut buf = BytesMut::from(out);
        // The Fragment is last: its value is the final `payload.len()` bytes; LinkSecurity
        // (and its tag) ends right before the Fragment's TLV header.
        let frag_start = buf.len() - payload.len();
        let frag_header =
            nameway_wire::tlv::tlv_len(types::FRAGMENT, payload.len()) - payload.len();
        let body = buf
            .get_mut(frag_start + range.start..frag_start + range.end)
            .ok_or(SecureDrop::Malformed)?;
        let tag = cipher
            .seal_in_place_detached(nonce, &aad, body)
            .map_err(|_| SecureDrop::Malformed)?;
        if level.authenticates() {
            let tag_end = frag_start - frag_header;
            let slot = buf
                .get_mut(tag_end - LINK_SECURITY_TAG_LEN..tag_end)
                .ok_or(SecureDrop::Malformed)?;
            slot.copy_from_slice(tag.as_bytes());
        }
        bump(&self.counters.encrypted);
        if let Some(k) = &group_key {
            k.count_sealed();
            groups.count_sealed();
        }
        Ok(buf.freeze())
    }

    /// Takes a whole received network packet (after reassembly); returns the packet for the
    /// forwarder (decrypted, or unchanged when in clear and allowed), or why it was dropped
    /// and, for an unknown key, a hint to send back so that the peer handshakes again.
    ///
    /// # Errors
    /// The drop reason (counted here) and an optional reply.
    pub fn open(&self, now_ms: u64, wire: Bytes) -> Result<Bytes, (SecureDrop, Option<Bytes>)> {
        let first = wire.first().map(|&b| u32::from(b));
        let lp = if first == Some(types::LP_PACKET) {
            match LpPacket::decode(&wire) {
                Ok(lp) => Some(lp),
                Err(_) if self.is_engaged() => {
                    self.counters.drop(SecureDrop::Malformed);
                    return Err((SecureDrop::Malformed, None));
                }
                Err(_) => None,
            }
        } else {
            if self.is_engaged() && first != Some(types::INTEREST) && first != Some(types::DATA) {
                self.counters.drop(SecureDrop::Malformed);
                return Err((SecureDrop::Malformed, None));
            }
            None
        };
        let Some(sec) = lp.as_ref().and_then(|lp| lp.link_security) else {
            return self.check_clear(wire, lp.as_ref()).map_err(|e| (e, None));
        };
        let lp = lp.unwrap_or_default();
        match self.decrypt(now_ms, &lp, sec) {
            Ok(plain) => {
                bump(&self.counters.decrypted);
                Ok(plain)
            }
            Err(why) => {
                self.counters.drop(why);
                if let Some(r) = group_refusal(why, sec.group.is_some()) {
                    self.ctx.group_keys().refuse(r);
                }
                let hint = (why == SecureDrop::UnknownKey)
                    .then(|| self.unknown_key_hint(now_ms, sec.key_id))
                    .flatten();
                Err((why, hint))
            }
        }
    }

    fn unknown_key_hint(&self, now_ms: u64, key_id: u32) -> Option<Bytes> {
        let mut hs = lock(&self.hs);
        if hs
            .last_hint_ms
            .is_some_and(|t| now_ms.saturating_sub(t) < HINT_INTERVAL_MS)
        {
            return None;
        }
        hs.last_hint_ms = Some(now_ms);
        Some(handshake_packet(Kind::Unknown, key_id, &[]))
    }

    /// A packet in clear: refused where the session is link-wide, or where it is a Data whose
    /// name the policy protects; passed on otherwise.
    fn check_clear(&self, wire: Bytes, lp: Option<&LpPacket>) -> Result<Bytes, SecureDrop> {
        if !self.is_engaged() {
            return Ok(wire);
        }
        let link_wide = lock(&self.rx)
            .last()
            .is_some_and(|s| s.mode == SecureMode::LinkWide);
        let refused = if link_wide {
            true
        } else if let Some(data) = data_in(&wire, lp) {
            self.level_of(data).is_none_or(|l| l.encrypts())
        } else {
            false
        };
        if refused {
            self.counters.drop(SecureDrop::ClearRefused);
            return Err(SecureDrop::ClearRefused);
        }
        Ok(wire)
    }

    fn decrypt(&self, now_ms: u64, lp: &LpPacket, sec: LinkSecurity) -> Result<Bytes, SecureDrop> {
        let fragment = lp.fragment.clone().ok_or(SecureDrop::Malformed)?;
        // The Data's view, when the group check parsed it (not parsed twice).
        let (group_key, checked_view) = self.group_check(&sec, &fragment)?;
        let tag = (sec.key_id >> 16) as u16;
        let epoch = (sec.key_id & 0xffff) as u16;
        let mut rx = lock(&self.rx);
        let session = rx
            .iter_mut()
            .find(|s| s.tag == tag && s.retire_ms.is_none_or(|t| now_ms < t))
            .ok_or(SecureDrop::UnknownKey)?;
        // Which epoch: current, the previous one during its overlap, or one ahead (verified
        // before it replaces the current one, so that forged key ids cannot move it).
        let ahead = epoch.wrapping_sub(session.current.keys.epoch);
        let mut candidate = None;
        let target: &mut RxEpoch = if ahead == 0 {
            &mut session.current
        } else if (1..=MAX_EPOCHS_AHEAD).contains(&ahead) {
            let keys = session
                .current
                .keys
                .ahead(ahead)
                .ok_or(SecureDrop::UnknownKey)?;
            candidate.insert(RxEpoch {
                keys,
                window: ReplayWindow::default(),
            })
        } else {
            match session.previous.as_mut() {
                Some((prev, expires)) if prev.keys.epoch == epoch && now_ms < *expires => prev,
                _ => return Err(SecureDrop::UnknownKey),
            }
        };
        if !target.window.check(sec.counter) {
            return Err(SecureDrop::Replay);
        }
        // A group-sealed packet: the cipher derived from the group key and the sender's salt
        // (kept once the packet verified, so that forged salts cannot evict the good ones).
        let mut derived = None;
        let cipher = match (&group_key, sec.group) {
            (Some(k), Some(g)) => match session
                .group
                .iter()
                .find(|(id, salt, _)| *id == g.key_id && *salt == g.salt)
            {
                Some((_, _, c)) => c.clone(),
                None => {
                    let c = k.derive(&g.salt).ok_or(SecureDrop::Malformed)?;
                    derived = Some((g.key_id, g.salt, c.clone()));
                    c
                }
            },
            _ => target.keys.cipher(sec.level).ok_or(SecureDrop::Malformed)?,
        };
        let mut n = [0u8; 24];
        let nonce = nonce(sec.counter, cipher.suite().nonce_len(), &mut n);
        let tag_bytes: &[u8] = sec.tag.as_ref().map_or(&[], |t| &t[..]);
        let plain = if sec.whole_packet {
            if network_headers(lp) != LpPacket::default() {
                return Err(SecureDrop::Malformed);
            }
            let mut buf = BytesMut::from(&fragment[..]);
            cipher
                .open_in_place_detached(nonce, &sec.header_bytes(), &mut buf, tag_bytes)
                .map_err(|_| SecureDrop::BadTag)?;
            buf.freeze()
        } else {
            let view = match checked_view {
                Some(v) => v,
                None => {
                    DataView::new_checked(fragment.clone()).map_err(|_| SecureDrop::Malformed)?
                }
            };
            let range = view.content_range().ok_or(SecureDrop::Malformed)?;
            let headers = network_headers(lp);
            let aad = content_aad(&sec, &headers, &fragment, &range);
            let mut buf = BytesMut::from(&fragment[..]);
            let body = buf.get_mut(range).ok_or(SecureDrop::Malformed)?;
            cipher
                .open_in_place_detached(nonce, &aad, body, tag_bytes)
                .map_err(|_| SecureDrop::BadTag)?;
            let data = buf.freeze();
            if headers == LpPacket::default() {
                data
            } else {
                LpPacket {
                    fragment: Some(data),
                    ..headers
                }
                .encode()
            }
        };
        target.window.mark(sec.counter);
        if let Some(d) = derived {
            if session.group.len() >= GROUP_CIPHERS {
                session.group.remove(0);
            }
            session.group.push(d);
        }
        if let Some(k) = &group_key {
            k.count_opened();
            self.ctx.group_keys().count_opened();
        }
        if let Some(new) = candidate {
            let old = core::mem::replace(&mut session.current, new);
            session.previous = Some((old, now_ms.saturating_add(self.ctx.overlap_ms())));
        }
        let tag_of_newest = rx.last().map(|s| s.tag);
        drop(rx);
        // Any packet the peer sealed under our newest session proves it has the keys.
        if tag_of_newest == Some(tag) {
            let mut hs = lock(&self.hs);
            if let Some(i) = &hs.initiating {
                if matches!(i.phase, Phase::AwaitConfirm(_)) && (i.id & 0xffff) as u16 == tag {
                    hs.initiating = None;
                    hs.state = Some(LinkState::Established);
                }
            }
        }
        Ok(plain)
    }

    /// The group rules of a received packet, checked before any key is looked for: a
    /// group-sealed packet names a key this forwarder holds, of the longest group prefix of
    /// the Data's name (returned); a Content-only packet whose Data falls under a group
    /// prefix is group-sealed. Also returns the Data's view when it was parsed for the check.
    fn group_check(
        &self,
        sec: &LinkSecurity,
        fragment: &Bytes,
    ) -> Result<(Option<Arc<GroupKey>>, Option<DataView>), SecureDrop> {
        let groups = self.ctx.group_keys();
        if sec.whole_packet || (sec.group.is_none() && groups.is_empty()) {
            return Ok((None, None));
        }
        let view = DataView::new_checked(fragment.clone()).map_err(|_| SecureDrop::Malformed)?;
        let set = groups.snapshot();
        let covering = set.covers(view.name());
        match sec.group {
            Some(g) => {
                let k = set
                    .opening_key(g.key_id, unix_ms())
                    .ok_or(SecureDrop::UnknownGroupKey)?;
                if covering != Some(&k.prefix) {
                    return Err(SecureDrop::GroupRequired);
                }
                Ok((Some(k.clone()), Some(view)))
            }
            None if covering.is_some() => Err(SecureDrop::GroupRequired),
            None => Ok((None, Some(view))),
        }
    }

    /// What management shows.
    pub fn info(&self) -> NeighbourInfo {
        let hs = lock(&self.hs);
        let tx = lock(&self.tx);
        let rx = lock(&self.rx);
        let mut rx_key_ids = Vec::new();
        for s in rx.iter() {
            rx_key_ids.push(key_id(s.tag, s.current.keys.epoch));
            if let Some((p, _)) = &s.previous {
                rx_key_ids.push(key_id(s.tag, p.keys.epoch));
            }
        }
        NeighbourInfo {
            peer: hs.peer,
            state: hs.state.unwrap_or(LinkState::Idle),
            mode: tx.as_ref().map(|s| s.mode),
            initiator: self.initiate.is_some(),
            tx_key_id: tx.as_ref().map(|s| key_id(s.tag, s.keys.epoch)),
            rx_key_ids,
            counters: self.counters.snapshot(),
        }
    }
}

#[cfg(test)]
impl SecureLink {
    /// Every traffic secret the link holds: both directions, every epoch kept (for the test
    /// that nothing prints them).
    pub(crate) fn secrets(&self) -> Vec<Vec<u8>> {
        let mut all = Vec::new();
        if let Some(tx) = lock(&self.tx).as_ref() {
            all.extend(tx.keys.secrets());
        }
        for s in lock(&self.rx).iter() {
            all.extend(s.current.keys.secrets());
            if let Some((p, _)) = &s.previous {
                all.extend(p.keys.secrets());
            }
        }
        all
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

#[cfg(test)]
#[path = "group_tests.rs"]
mod group_tests;
