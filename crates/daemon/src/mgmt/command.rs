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
//! refused with a timestamp window and a per-signer nonce cache; unlike NFD, two commands in
//! the same millisecond are not refused, because every DigestSha256 app shares one "signer".

use std::collections::{HashMap, VecDeque};

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

/// Refuses replayed and stale commands: a timestamp window and the last nonces per signer.
#[derive(Debug)]
pub struct ReplayGuard {
    grace_ms: u64,
    per_signer: HashMap<Vec<u8>, VecDeque<Bytes>>,
}

/// Nonces remembered per signer (NFD keeps 1000).
const NONCES_PER_SIGNER: usize = 1000;
/// Signers remembered (NFD keeps 1000).
const MAX_SIGNERS: usize = 1000;

impl ReplayGuard {
    /// Changes the accepted clock distance, keeping the nonces seen so far.
    pub fn set_grace_ms(&mut self, grace_ms: u64) {
        self.grace_ms = grace_ms;
    }

    /// A guard accepting timestamps within `grace_ms` of the local clock.
    pub fn new(grace_ms: u64) -> Self {
        Self {
            grace_ms,
            per_signer: HashMap::new(),
        }
    }

    /// Accepts or refuses `cmd` at wall-clock time `now_ms`, remembering its nonce.
    ///
    /// # Errors
    /// [`Refusal::Unauthorized`] for an unsigned, stale or replayed command.
    pub fn check(&mut self, now_ms: u64, cmd: &Command) -> Result<(), Refusal> {
        let Some(t) = cmd.time_ms else {
            return Err(Refusal::Unauthorized("unsigned command"));
        };
        if t.abs_diff(now_ms) > self.grace_ms {
            return Err(Refusal::Unauthorized("timestamp outside the grace period"));
        }
        let Some(nonce) = &cmd.nonce else {
            return Ok(());
        };
        if !self.per_signer.contains_key(&cmd.signer) && self.per_signer.len() >= MAX_SIGNERS {
            self.per_signer.clear();
        }
        let seen = self.per_signer.entry(cmd.signer.clone()).or_default();
        if seen.contains(nonce) {
            return Err(Refusal::Unauthorized("replayed nonce"));
        }
        if seen.len() >= NONCES_PER_SIGNER {
            seen.pop_front();
        }
        seen.push_back(nonce.clone());
        Ok(())
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
            assert!(guard.check(t + 1000, &cmd).is_ok());
            assert_eq!(
                guard.check(t + 1000, &cmd),
                Err(Refusal::Unauthorized("replayed nonce"))
            );
            assert!(ReplayGuard::new(120_000).check(t + 200_000, &cmd).is_err());
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
        assert!(ReplayGuard::new(1).check(0, &cmd).is_err());
        let other = Interest::new("/example/nfd/rib/register".parse().unwrap());
        assert_eq!(
            parse(&other, &other.encode()).unwrap_err(),
            Refusal::NotManagement
        );
        let bad = Interest::new("/localhost/nfd/rib/register/%68%01".parse().unwrap());
        assert_eq!(parse(&bad, &bad.encode()).unwrap_err(), Refusal::Malformed);
    }
}
