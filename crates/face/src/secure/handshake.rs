//! The neighbour handshake: Noise `XX` (mutual authentication with static keys that each side
//! learns during the handshake and checks against its trust list) through `snow`, with ring
//! for SHA-256 and ChaCha20-Poly1305 and curve25519-dalek for X25519
//! ([`nameway_crypto::noise::resolver`], shared with the controller channel).
//!
//! Messages travel in the LinkHandshake header field of an otherwise empty LpPacket:
//!
//! ```text
//! value = kind(1) handshake-id(4, BE) body
//!   kind 1 Init      body = Noise message 1 (-> e), payload: version(1) mode(1)
//!   kind 2 Response  body = Noise message 2 (<- e, ee, s, es)
//!   kind 3 Finish    body = Noise message 3 (-> s, se)
//!   kind 4 Confirm   body = HMAC-SHA256(responder's first traffic key, "nameway confirm v1" || id)[..16]
//!   kind 5 Unknown   body = empty: "I hold no key for what you send me; handshake again"
//! ```

use snow::params::NoiseParams;
use snow::HandshakeState;
use zeroize::Zeroizing;

use super::identity::{Identity, PublicKey};

/// The Noise protocol name.
pub(crate) const PROTOCOL: &str = "Noise_XX_25519_ChaChaPoly_SHA256";
/// Bound into the handshake hash: both sides must agree on it.
const PROLOGUE: &[u8] = b"nameway secure link v1";
/// Version byte of the Init payload.
pub(crate) const VERSION: u8 = 1;
/// Largest Noise message we produce or accept (XX messages are < 200 bytes).
const MAX_MESSAGE: usize = 1024;

/// Kinds of handshake message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Init = 1,
    Response = 2,
    Finish = 3,
    Confirm = 4,
    Unknown = 5,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Self> {
        Some(match b {
            1 => Self::Init,
            2 => Self::Response,
            3 => Self::Finish,
            4 => Self::Confirm,
            5 => Self::Unknown,
            _ => return None,
        })
    }
}

/// A parsed handshake message.
#[derive(Debug)]
pub(crate) struct Message<'a> {
    pub(crate) kind: Kind,
    pub(crate) id: u32,
    pub(crate) body: &'a [u8],
}

impl<'a> Message<'a> {
    pub(crate) fn parse(value: &'a [u8]) -> Option<Self> {
        let (&kind, rest) = value.split_first()?;
        let id = rest.get(..4)?;
        let body = rest.get(4..)?;
        if body.len() > MAX_MESSAGE {
            return None;
        }
        Some(Self {
            kind: Kind::from_u8(kind)?,
            id: u32::from_be_bytes([id[0], id[1], id[2], id[3]]),
            body,
        })
    }

    pub(crate) fn encode(kind: Kind, id: u32, body: &[u8]) -> Vec<u8> {
        let mut v = Vec::with_capacity(5 + body.len());
        v.push(kind as u8);
        v.extend_from_slice(&id.to_be_bytes());
        v.extend_from_slice(body);
        v
    }
}

/// Why a handshake step failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HandshakeError {
    /// A message that does not verify or decode (tampered, or not for this state).
    Invalid,
    /// The peer's static key is not in the trust list.
    Untrusted(PublicKey),
    /// Noise could not be set up (should not happen).
    Setup,
}

/// Keys a completed handshake gives: the initiator→responder and responder→initiator
/// split keys, and the peer's identity.
pub(crate) struct Completed {
    pub(crate) i_to_r: Zeroizing<[u8; 32]>,
    pub(crate) r_to_i: Zeroizing<[u8; 32]>,
    pub(crate) peer: PublicKey,
}

fn builder_state(identity: &Identity, initiator: bool) -> Result<HandshakeState, HandshakeError> {
    let params: NoiseParams = PROTOCOL.parse().map_err(|_| HandshakeError::Setup)?;
    let builder = snow::Builder::with_resolver(params, nameway_crypto::noise::resolver())
        .prologue(PROLOGUE)
        .and_then(|b| b.local_private_key(identity.secret()))
        .map_err(|_| HandshakeError::Setup)?;
    if initiator {
        builder.build_initiator()
    } else {
        builder.build_responder()
    }
    .map_err(|_| HandshakeError::Setup)
}

fn write(hs: &mut HandshakeState, payload: &[u8]) -> Result<Vec<u8>, HandshakeError> {
    let mut buf = vec![0u8; MAX_MESSAGE];
    let n = hs
        .write_message(payload, &mut buf)
        .map_err(|_| HandshakeError::Setup)?;
    buf.truncate(n);
    Ok(buf)
}

fn read(hs: &mut HandshakeState, msg: &[u8]) -> Result<Vec<u8>, HandshakeError> {
    let mut buf = vec![0u8; MAX_MESSAGE];
    let n = hs
        .read_message(msg, &mut buf)
        .map_err(|_| HandshakeError::Invalid)?;
    buf.truncate(n);
    Ok(buf)
}

fn peer_key(hs: &HandshakeState) -> Result<PublicKey, HandshakeError> {
    let key: [u8; 32] = hs
        .get_remote_static()
        .and_then(|k| k.try_into().ok())
        .ok_or(HandshakeError::Invalid)?;
    Ok(PublicKey(key))
}

fn complete(hs: &mut HandshakeState, peer: PublicKey) -> Completed {
    let (a, b) = hs.dangerously_get_raw_split();
    Completed {
        i_to_r: Zeroizing::new(a),
        r_to_i: Zeroizing::new(b),
        peer,
    }
}

/// The initiator's side, between Init and Finish.
pub(crate) struct Initiator {
    hs: HandshakeState,
}

impl core::fmt::Debug for Initiator {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Initiator")
    }
}

impl Initiator {
    /// Starts a handshake; returns the state and the Init body (Noise message 1).
    pub(crate) fn start(identity: &Identity, mode: u8) -> Result<(Self, Vec<u8>), HandshakeError> {
        let mut hs = builder_state(identity, true)?;
        let msg = write(&mut hs, &[VERSION, mode])?;
        Ok((Self { hs }, msg))
    }

    /// Takes the Response (message 2); checks the responder's key with `trusted`; returns the
    /// Finish body (message 3) and the keys.
    pub(crate) fn on_response(
        mut self,
        msg: &[u8],
        trusted: impl FnOnce(&PublicKey) -> bool,
    ) -> Result<(Vec<u8>, Completed), HandshakeError> {
        read(&mut self.hs, msg)?;
        let peer = peer_key(&self.hs)?;
        if !trusted(&peer) {
            return Err(HandshakeError::Untrusted(peer));
        }
        let finish = write(&mut self.hs, &[])?;
        Ok((finish, complete(&mut self.hs, peer)))
    }
}

/// The responder's side, between Init and Finish.
pub(crate) struct Responder {
    hs: HandshakeState,
    /// The mode the initiator asked for.
    pub(crate) mode: u8,
}

impl core::fmt::Debug for Responder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Responder")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl Responder {
    /// Takes an Init (message 1); returns the state and the Response body (message 2).
    pub(crate) fn on_init(
        identity: &Identity,
        msg: &[u8],
    ) -> Result<(Self, Vec<u8>), HandshakeError> {
        let mut hs = builder_state(identity, false)?;
        let payload = read(&mut hs, msg)?;
        let (version, mode) = match payload[..] {
            [v, m, ..] => (v, m),
            _ => return Err(HandshakeError::Invalid),
        };
        if version != VERSION {
            return Err(HandshakeError::Invalid);
        }
        let response = write(&mut hs, &[])?;
        Ok((Self { hs, mode }, response))
    }

    /// Takes the Finish (message 3); checks the initiator's key with `trusted`.
    pub(crate) fn on_finish(
        mut self,
        msg: &[u8],
        trusted: impl FnOnce(&PublicKey) -> bool,
    ) -> Result<Completed, HandshakeError> {
        read(&mut self.hs, msg)?;
        let peer = peer_key(&self.hs)?;
        if !trusted(&peer) {
            return Err(HandshakeError::Untrusted(peer));
        }
        Ok(complete(&mut self.hs, peer))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn xx_handshake_agrees_on_keys_and_identities() {
        let (a, b) = (Identity::generate().unwrap(), Identity::generate().unwrap());
        let (init, m1) = Initiator::start(&a, 1).unwrap();
        let (resp, m2) = Responder::on_init(&b, &m1).unwrap();
        assert_eq!(resp.mode, 1);
        let (m3, ik) = init.on_response(&m2, |k| *k == b.public_key()).unwrap();
        let rk = resp.on_finish(&m3, |k| *k == a.public_key()).unwrap();
        assert_eq!(*ik.i_to_r, *rk.i_to_r);
        assert_eq!(*ik.r_to_i, *rk.r_to_i);
        assert_ne!(*ik.i_to_r, *ik.r_to_i);
        assert_eq!(ik.peer, b.public_key());
        assert_eq!(rk.peer, a.public_key());
    }

    #[test]
    fn untrusted_keys_and_tampered_messages_are_refused() {
        let (a, b) = (Identity::generate().unwrap(), Identity::generate().unwrap());
        let (init, m1) = Initiator::start(&a, 0).unwrap();
        let (_, m2) = Responder::on_init(&b, &m1).unwrap();
        assert_eq!(
            init.on_response(&m2, |_| false).err(),
            Some(HandshakeError::Untrusted(b.public_key()))
        );
        let (init, m1) = Initiator::start(&a, 0).unwrap();
        let (resp, m2) = Responder::on_init(&b, &m1).unwrap();
        let (mut m3, _) = init.on_response(&m2, |_| true).unwrap();
        let last = m3.len() - 1;
        m3[last] ^= 1;
        assert_eq!(
            resp.on_finish(&m3, |_| true).err(),
            Some(HandshakeError::Invalid)
        );
        let (init, m1) = Initiator::start(&a, 0).unwrap();
        let (_, mut m2) = Responder::on_init(&b, &m1).unwrap();
        m2[40] ^= 1;
        assert_eq!(
            init.on_response(&m2, |_| true).err(),
            Some(HandshakeError::Invalid)
        );
    }

    #[test]
    fn messages_round_trip() {
        let v = Message::encode(Kind::Finish, 0xdead_beef, b"xyz");
        let m = Message::parse(&v).unwrap();
        assert_eq!(
            (m.kind, m.id, m.body),
            (Kind::Finish, 0xdead_beef, &b"xyz"[..])
        );
        assert!(Message::parse(&[9, 0, 0, 0, 0]).is_none());
        assert!(Message::parse(&[1, 0, 0]).is_none());
    }
}
