//! Parsing and authenticating NFD control commands.
//!
//! Two formats reach `/localhost/nfd/<module>/<verb>/<ControlParameters>` (docs/nfd-interop.md §4):
//! - the **v0.3 signed Interest** (python-ndn `appv2`, NDNts, ndn-cxx): ApplicationParameters,
//!   InterestSignatureInfo with SignatureTime and SignatureNonce, a
//!   ParametersSha256DigestComponent last;
//! - the **v0.2 command Interest** (python-ndn `app`): four more name components, timestamp,
//!   nonce, SignatureInfo and SignatureValue, the signature covering components 0–7.
//!
//! DigestSha256 signatures are checked exactly (it costs one hash). Other signature types are
//! accepted when structurally valid, like NFD with its default `trust-anchor any`. Replay is
//! refused as ndn-cxx refuses it ([`ReplayGuard`]): per key, a timestamp within the grace
//! period and later than the last one accepted, the nonce telling apart commands of one
//! millisecond.

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;
use nameway_wire::mgmt::ControlParameters;
use nameway_wire::security::{verify_interest_wire, DigestSha256};
use nameway_wire::signature::signature_type;
use nameway_wire::tlv::{self, types};
use nameway_wire::{Interest, InterestView, KeyLocator, Name, SignatureInfo, Verifier};
use sha2::{Digest, Sha256};

/// How a command was signed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// No signature at all.
    Unsigned,
    /// v0.2 command Interest (signature in name components).
    CommandInterest,
    /// v0.3 signed Interest.
    SignedInterest,
}

/// A parsed management request.
#[derive(Clone, Debug)]
pub struct Command {
    /// `rib`, `faces`, `fib`, `cs`, `strategy-choice`, `status`.
    pub module: String,
    /// `register`, `list`, `general`, ...
    pub verb: String,
    /// The ControlParameters (empty when the request has none, as dataset requests).
    pub params: ControlParameters,
    /// Whether a ControlParameters component was present.
    pub has_params: bool,
    /// How it was signed.
    pub format: Format,
    /// Signer identity for replay protection (KeyLocator bytes, or empty for DigestSha256).
    signer: Vec<u8>,
    /// Signature time in ms since the Unix epoch.
    time_ms: Option<u64>,
    /// Signature nonce.
    nonce: Option<Bytes>,
    /// Whether the signature has no key (DigestSha256): replay records are then per face.
    keyless: bool,
}

/// Why a management Interest was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not under `/localhost/nfd` or `/localhop/nfd`, or too short: no reply (NFD's behaviour).
    NotManagement,
    /// 400: the ControlParameters component does not decode.
    Malformed,
    /// 403: signature missing, wrong, expired or replayed.
    Unauthorized(&'static str),
}

const PREFIXES: [&[u8]; 2] = [b"localhost", b"localhop"];

/// Splits a management Interest into module, verb and parameters, and checks its signature.
///
/// # Errors
/// [`Refusal`] saying how to answer.
pub fn parse(interest: &Interest, wire: &Bytes) -> Result<Command, Refusal> {
    let name = &interest.name;
    let comp = |i: usize| name.get(i).map(|c| c.value());
    let scope_ok = comp(0).is_some_and(|c| PREFIXES.contains(&c)) && comp(1) == Some(b"nfd");
    if !scope_ok || name.len() < 4 {
        return Err(Refusal::NotManagement);
    }
    let text = |i: usize| String::from_utf8_lossy(comp(i).unwrap_or_default()).into_owned();
    let (module, verb) = (text(2), text(3));
    let params_comp = name
        .get(4)
        .filter(|c| c.typ() == types::GENERIC_NAME_COMPONENT)
        .filter(|c| c.value().first() == Some(&0x68));
    let (params, has_params) = match params_comp {
        Some(c) => (
            ControlParameters::decode(&Bytes::copy_from_slice(c.value()))
                .map_err(|_| Refusal::Malformed)?,
            true,
        ),
        None => (ControlParameters::default(), false),
    };
    let mut cmd = Command {
        module,
        verb,
        params,
        has_params,
        format: Format::Unsigned,
        signer: Vec::new(),
        time_ms: None,
        nonce: None,
        keyless: false,
    };
    if let (Some(info), Some(_)) = (&interest.signature_info, &interest.signature_value) {
        check_signed_interest(wire, info, &mut cmd)?;
    } else if has_params && name.len() == 9 {
        check_command_interest(name, &mut cmd)?;
    }
    Ok(cmd)
}

fn check_signed_interest(
    wire: &Bytes,
    info: &SignatureInfo,
    cmd: &mut Command,
) -> Result<(), Refusal> {
    if info.signature_type == signature_type::DIGEST_SHA256 {
        // Over the bytes as received, not a re-encoding of the decoded fields.
        let view = InterestView::new_checked(wire.clone()).map_err(|_| Refusal::Malformed)?;
        verify_interest_wire(&view, &DigestSha256)
            .map_err(|_| Refusal::Unauthorized("bad digest"))?;
    }
    cmd.format = Format::SignedInterest;
    cmd.signer = signer_id(info);
    cmd.keyless = info.key_locator.is_none();
    cmd.time_ms = info.time;
    cmd.nonce = info.nonce.clone();
    if cmd.time_ms.is_none() {
        return Err(Refusal::Unauthorized(
            "signed Interest without SignatureTime",
        ));
    }
    Ok(())
}

fn check_command_interest(name: &Name, cmd: &mut Command) -> Result<(), Refusal> {
    let get = |i: usize| name.get(i).map(|c| c.value()).unwrap_or_default();
    let info_wire = Bytes::copy_from_slice(get(7));
    let info_el = tlv::read_single(&info_wire).map_err(|_| Refusal::Malformed)?;
    if info_el.typ != types::SIGNATURE_INFO {
        return Err(Refusal::Malformed);
    }
    let info = SignatureInfo::decode(&info_el, &info_wire).map_err(|_| Refusal::Malformed)?;
    let value_wire = get(8);
    let value = tlv::read_single(value_wire).map_err(|_| Refusal::Malformed)?;
    if value.typ != types::SIGNATURE_VALUE {
        return Err(Refusal::Malformed);
    }
    if info.signature_type == signature_type::DIGEST_SHA256 {
        let signed: Vec<&[u8]> = name.iter().take(8).map(|c| c.wire()).collect();
        DigestSha256
            .verify(info.signature_type, &signed, value.value)
            .map_err(|_| Refusal::Unauthorized("bad digest"))?;
    }
    let timestamp: [u8; 8] = get(5).try_into().map_err(|_| Refusal::Malformed)?;
    cmd.format = Format::CommandInterest;
    cmd.signer = signer_id(&info);
    cmd.keyless = info.key_locator.is_none();
    cmd.time_ms = Some(u64::from_be_bytes(timestamp));
    cmd.nonce = Some(Bytes::copy_from_slice(get(6)));
    Ok(())
}

fn signer_id(info: &SignatureInfo) -> Vec<u8> {
    match &info.key_locator {
        Some(KeyLocator::Name(n)) => n.value_bytes().to_vec(),
        Some(KeyLocator::KeyDigest(d)) => d.to_vec(),
        None => Sha256::digest(info.signature_type.to_be_bytes()).to_vec(),
    }
}

/// Refuses replayed and stale commands, as ndn-cxx's `ValidationPolicySignedInterest` does:
/// per signing key, a command's SignatureTime must be within the grace period of the local
/// clock and later than the last one accepted from that key. Two commands with the same
/// timestamp are told apart only by their SignatureNonce (an equal timestamp without one, or
/// with a nonce already seen at that timestamp, is a replay).
///
/// The record is bounded: past [`MAX_SIGNERS`] keys the least recently used one is forgotten,
/// and the newest timestamp ever forgotten becomes a floor that every key without a record must
/// pass, so forgetting a key never reopens its window (a replay of any command older than the
/// floor is refused, whoever signed it).
///
/// DigestSha256 has no key, so every app signing that way would share one record and refuse
/// each other's commands sent in the same millisecond or out of order; those records are kept
/// per signer *and* face (each app has its own connection).
#[derive(Debug)]
pub struct ReplayGuard {
    grace_ms: u64,
    records: HashMap<SignerKey, Record>,
    /// Least recently used first: use tick -> key.
    order: BTreeMap<u64, SignerKey>,
    tick: u64,
    /// The newest timestamp of a forgotten record: a key without a record must be past it.
    floor_ms: u64,
}

/// Whose record a command is checked against.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SignerKey {
    signer: Vec<u8>,
    /// The requesting face, for keyless (DigestSha256) signatures only.
    face: Option<u64>,
}

/// What is remembered of one key.
#[derive(Debug)]
struct Record {
    /// The last timestamp accepted.
    last_ms: u64,
    /// The nonces accepted with that timestamp.
    nonces: Vec<Bytes>,
    /// Position in `order`.
    used: u64,
}

/// Commands with one timestamp accepted from one key (each needs a nonce of its own).
const NONCES_PER_TIMESTAMP: usize = 1000;
/// Keys remembered (NFD keeps 1000 records).
pub const MAX_SIGNERS: usize = 1000;

impl ReplayGuard {
    /// Changes the accepted clock distance, keeping the records.
    pub fn set_grace_ms(&mut self, grace_ms: u64) {
        self.grace_ms = grace_ms;
    }

    /// A guard accepting timestamps within `grace_ms` of the local clock.
    pub fn new(grace_ms: u64) -> Self {
        Self {
            grace_ms,
            records: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
            floor_ms: 0,
        }
    }

    /// Keys with a record now.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether no key has a record.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Accepts or refuses `cmd`, received on `face` at wall-clock time `now_ms`, and records it.
    ///
    /// # Errors
    /// [`Refusal::Unauthorized`] for an unsigned, stale or replayed command.
    pub fn check(&mut self, now_ms: u64, face: u64, cmd: &Command) -> Result<(), Refusal> {
        let Some(t) = cmd.time_ms else {
            return Err(Refusal::Unauthorized("unsigned command"));
        };
        if t.abs_diff(now_ms) > self.grace_ms {
            return Err(Refusal::Unauthorized("timestamp outside the grace period"));
        }
        let key = SignerKey {
            signer: cmd.signer.clone(),
            face: cmd.keyless.then_some(face),
        };
        self.tick += 1;
        let tick = self.tick;
        match self.records.get_mut(&key) {
            Some(r) => {
                if t < r.last_ms {
                    return Err(Refusal::Unauthorized(
                        "timestamp older than the last command accepted from this key",
                    ));
                }
                if t == r.last_ms {
                    let Some(nonce) = &cmd.nonce else {
                        return Err(Refusal::Unauthorized(
                            "timestamp not after the last command accepted from this key",
                        ));
                    };
                    if r.nonces.contains(nonce) {
                        return Err(Refusal::Unauthorized("replayed nonce"));
                    }
                    if r.nonces.len() >= NONCES_PER_TIMESTAMP {
                        return Err(Refusal::Unauthorized(
                            "too many commands from this key in one millisecond",
                        ));
                    }
                    r.nonces.push(nonce.clone());
                } else {
                    r.last_ms = t;
                    r.nonces.clear();
                    r.nonces.extend(cmd.nonce.clone());
                }
                self.order.remove(&r.used);
                r.used = tick;
                self.order.insert(tick, key);
            }
            None => {
                if t <= self.floor_ms {
                    return Err(Refusal::Unauthorized(
                        "timestamp not after the commands of forgotten keys",
                    ));
                }
                if self.records.len() >= MAX_SIGNERS {
                    self.forget_least_recent();
                }
                let record = Record {
                    last_ms: t,
                    nonces: cmd.nonce.clone().into_iter().collect(),
                    used: tick,
                };
                self.records.insert(key.clone(), record);
                self.order.insert(tick, key);
            }
        }
        Ok(())
    }

    /// Forgets the least recently used key, raising the floor to its last timestamp.
    fn forget_least_recent(&mut self) {
        let Some((_, key)) = self.order.pop_first() else {
            return;
        };
        if let Some(r) = self.records.remove(&key) {
            self.floor_ms = self.floor_ms.max(r.last_ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(hex_str: &str) -> Bytes {
        let clean: String = hex_str.split_whitespace().collect();
        Bytes::from(hex::decode(clean).unwrap())
    }

    // docs/nfd-interop.md §4.1
    const APPV2: &str = "0599075008096c6f63616c686f737408036e6664080372696208087265676973746572080d680b070908076578616d706c65
02205388a7740003e4e3f8f064137f530cc278fdc25a63f754706b09b761feda420e0a04c892b7b40c0203e8
24002c171b01002608e5f8c7c792645cd82808000001a1ff7ade8c2e20af32d7091b4ae52a2b55c35fa668fb83fbd8d85e9ae4879b002ca4b896dcc8c8";
    const LEGACY: &str = "0579076d08096c6f63616c686f737408036e6664080372696208087265676973746572080d680b070908076578616d706c65
0808000001a1ff7b0d3d080874dbb8bcddd2397e080516031b0100082217207585aa52b2300f1bdf0a8e4a6ac2048cd19c45
2ed3af9f3894a824c2a7247e7e0a0433abfeb50c0203e8";

    #[test]
    fn both_formats_parse_and_verify() {
        for (hex_str, format) in [
            (APPV2, Format::SignedInterest),
            (LEGACY, Format::CommandInterest),
        ] {
            let wire = b(hex_str);
            let i = Interest::decode(&wire).unwrap();
            let cmd = parse(&i, &wire).unwrap();
            assert_eq!(
                (cmd.module.as_str(), cmd.verb.as_str()),
                ("rib", "register")
            );
            assert_eq!(cmd.params.name.as_ref().unwrap().to_string(), "/example");
            assert_eq!(cmd.format, format);
            let t = cmd.time_ms.unwrap();
            let mut guard = ReplayGuard::new(120_000);
            assert!(guard.check(t + 1000, 300, &cmd).is_ok());
            assert_eq!(
                guard.check(t + 1000, 300, &cmd),
                Err(Refusal::Unauthorized("replayed nonce"))
            );
            assert!(ReplayGuard::new(120_000)
                .check(t + 200_000, 300, &cmd)
                .is_err());
        }
    }

    #[test]
    fn tampered_legacy_digest_is_refused() {
        let mut wire = b(LEGACY).to_vec();
        // flip a bit of the timestamp component (covered by the signature)
        let pos = wire
            .windows(3)
            .position(|w| w == [0x08, 0x08, 0x00])
            .unwrap()
            + 5;
        wire[pos] ^= 1;
        let wire = Bytes::from(wire);
        let i = Interest::decode(&wire).unwrap();
        assert_eq!(
            parse(&i, &wire).unwrap_err(),
            Refusal::Unauthorized("bad digest")
        );
    }

    #[test]
    fn unsigned_and_foreign_names() {
        let i = Interest::new("/localhost/nfd/faces/list".parse().unwrap());
        let cmd = parse(&i, &i.encode()).unwrap();
        assert_eq!(cmd.format, Format::Unsigned);
        assert!(!cmd.has_params);
        assert!(ReplayGuard::new(1).check(0, 300, &cmd).is_err());
        let other = Interest::new("/example/nfd/rib/register".parse().unwrap());
        assert_eq!(
            parse(&other, &other.encode()).unwrap_err(),
            Refusal::NotManagement
        );
        let bad = Interest::new("/localhost/nfd/rib/register/%68%01".parse().unwrap());
        assert_eq!(parse(&bad, &bad.encode()).unwrap_err(), Refusal::Malformed);
    }

    /// A signed command as [`parse`] leaves it.
    fn signed(signer: &[u8], keyless: bool, time_ms: u64, nonce: Option<&[u8]>) -> Command {
        Command {
            module: "rib".into(),
            verb: "register".into(),
            params: ControlParameters::default(),
            has_params: true,
            format: Format::SignedInterest,
            signer: signer.to_vec(),
            time_ms: Some(time_ms),
            nonce: nonce.map(Bytes::copy_from_slice),
            keyless,
        }
    }

    const NOW: u64 = 1_800_000_000_000;

    #[test]
    fn a_replayed_command_is_refused_with_or_without_a_nonce() {
        let mut guard = ReplayGuard::new(120_000);
        let without = signed(b"/op/KEY/1", false, NOW, None);
        assert_eq!(guard.check(NOW, 300, &without), Ok(()));
        // Before, a command without SignatureNonce could be replayed for the whole grace period.
        assert!(guard.check(NOW + 5, 300, &without).is_err());
        assert!(guard.check(NOW + 5, 301, &without).is_err(), "another face");
        let with = signed(b"/op/KEY/2", false, NOW, Some(b"n1"));
        assert_eq!(guard.check(NOW, 300, &with), Ok(()));
        assert_eq!(
            guard.check(NOW, 300, &with),
            Err(Refusal::Unauthorized("replayed nonce"))
        );
        // Same millisecond, a nonce of its own: a new command.
        let next = signed(b"/op/KEY/2", false, NOW, Some(b"n2"));
        assert_eq!(guard.check(NOW, 300, &next), Ok(()));
        // Keyless (DigestSha256) commands: the same, per face.
        let digest = signed(b"digest", true, NOW, Some(b"n1"));
        assert_eq!(guard.check(NOW, 400, &digest), Ok(()));
        assert!(guard.check(NOW, 400, &digest).is_err());
        let digest = signed(b"digest", true, NOW, None);
        assert_eq!(guard.check(NOW, 401, &digest), Ok(()));
        assert!(guard.check(NOW, 401, &digest).is_err());
    }

    #[test]
    fn a_timestamp_older_than_the_last_accepted_is_refused() {
        let mut guard = ReplayGuard::new(120_000);
        assert_eq!(
            guard.check(NOW, 300, &signed(b"k", false, NOW, Some(b"a"))),
            Ok(())
        );
        let older = signed(b"k", false, NOW - 1, Some(b"b"));
        assert_eq!(
            guard.check(NOW, 300, &older),
            Err(Refusal::Unauthorized(
                "timestamp older than the last command accepted from this key"
            ))
        );
        assert_eq!(
            guard.check(NOW, 300, &signed(b"k", false, NOW + 1, Some(b"a"))),
            Ok(())
        );
        // Apps signing with DigestSha256 do not share a clock: one app's older timestamp on
        // its own face is not the other's replay.
        assert_eq!(
            guard.check(NOW, 500, &signed(b"digest", true, NOW + 3, None)),
            Ok(())
        );
        assert_eq!(
            guard.check(NOW, 501, &signed(b"digest", true, NOW + 2, None)),
            Ok(())
        );
    }

    #[test]
    fn ten_thousand_signers_do_not_reopen_the_window_of_the_first() {
        let mut guard = ReplayGuard::new(120_000);
        let first = signed(b"first", false, NOW, Some(b"n"));
        assert_eq!(guard.check(NOW, 300, &first), Ok(()));
        for i in 0..10_000u64 {
            let key = i.to_be_bytes();
            let t = NOW + 1 + i / 100;
            assert_eq!(
                guard.check(t, 300, &signed(&key, false, t, Some(b"n"))),
                Ok(()),
                "signer {i}"
            );
        }
        assert!(guard.len() <= MAX_SIGNERS);
        // The first key's record is gone, but its command still cannot be replayed.
        assert!(guard.check(NOW + 200, 300, &first).is_err());
        // Nor can any forgotten key's.
        let forgotten = signed(&5u64.to_be_bytes(), false, NOW + 1, Some(b"n"));
        assert!(guard.check(NOW + 200, 300, &forgotten).is_err());
        // A new command from the first key is accepted.
        let fresh = signed(b"first", false, NOW + 200, Some(b"m"));
        assert_eq!(guard.check(NOW + 200, 300, &fresh), Ok(()));
    }
}
