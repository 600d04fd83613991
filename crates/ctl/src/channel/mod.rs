//! The channel between the controller and the agents in the forwarders (docs/controller.md,
//! "Phase 2"): TCP, a Noise `XX` session ([`noise`]) carrying TLV [`messages`]; or, where the
//! operator's policy names TLS, a mutual TLS 1.3 session ([`tls`]) carrying the same messages.
//!
//! Authentication is by signatures over the Noise handshake hash, so it is bound to the
//! session: the controller signs with the domain's anchor (the key every agent pins), the
//! agent with its router key (certified by the anchor at enrolment) or, on its first start,
//! presents a one-time token with the key to certify.

pub mod messages;
pub mod noise;
pub mod tls;

use bytes::Bytes;
use nameway_transport::{Certificate, SigningKey};
use nameway_wire::signature::signature_type;

pub use messages::{Credential, Hello, Message, NeighbourReport, RegistrationReport, Report};
pub use noise::{accept, connect, ChannelError, Receiver, Sender, Session};

/// A byte stream the channel runs over: TCP for Noise, TLS over TCP for mutual TLS.
pub trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin> Io for T {}

/// Either stream, boxed, so that both session kinds have one type.
pub type BoxIo = Box<dyn Io>;
/// The sending half of a session over either stream.
pub type BoxSender = Sender<tokio::io::WriteHalf<BoxIo>>;
/// The receiving half of a session over either stream.
pub type BoxReceiver = Receiver<tokio::io::ReadHalf<BoxIo>>;

impl<S: Io + 'static> Session<S> {
    /// The same session over the boxed stream.
    pub fn boxed(self) -> Session<BoxIo> {
        self.map_stream(|s| Box::new(s) as BoxIo)
    }
}

/// The SubjectPublicKeyInfo prefix of an Ed25519 key (RFC 8410): the raw key follows.
const ED25519_SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// Why a peer's proof was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProofError {
    /// The key is not an Ed25519 key.
    #[error("not an Ed25519 key")]
    NotEd25519,
    /// The anchor presented is not the pinned one.
    #[error("the controller's anchor {found} is not the pinned key {pinned}")]
    WrongAnchor {
        /// The pinned key (`ed25519:<hex>`).
        pinned: String,
        /// The key presented.
        found: String,
    },
    /// The signature over the handshake does not verify.
    #[error("the signature over the session does not verify")]
    BadSignature,
    /// Signing failed.
    #[error("cannot sign: {0}")]
    Sign(String),
    /// The certificate does not decode.
    #[error("certificate: {0}")]
    Cert(String),
}

/// The raw 32-byte Ed25519 key of a SubjectPublicKeyInfo DER.
pub fn raw_ed25519(der: &[u8]) -> Option<[u8; 32]> {
    let rest = der.strip_prefix(&ED25519_SPKI_PREFIX[..])?;
    rest.try_into().ok()
}

/// The SubjectPublicKeyInfo DER of a raw Ed25519 key.
pub fn ed25519_der(raw: &[u8; 32]) -> Vec<u8> {
    [&ED25519_SPKI_PREFIX[..], &raw[..]].concat()
}

/// `ed25519:<64 hex digits>`: how operators write a pinned anchor key.
pub fn pin_string(raw: &[u8; 32]) -> String {
    format!("ed25519:{}", hex::encode(raw))
}

/// Parses a pinned key: `ed25519:<64 hex>`, 64 hex digits (the raw key), or the hex of
/// the SubjectPublicKeyInfo DER.
///
/// # Errors
/// A one-line reason.
pub fn parse_pin(text: &str) -> Result<[u8; 32], String> {
    let t = text.trim();
    let hex_part = t.strip_prefix("ed25519:").unwrap_or(t);
    let bytes = hex::decode(hex_part).map_err(|e| format!("not hexadecimal: {e}"))?;
    if let Ok(raw) = <[u8; 32]>::try_from(bytes.as_slice()) {
        return Ok(raw);
    }
    raw_ed25519(&bytes).ok_or_else(|| {
        "expected ed25519:<64 hex digits> (the anchor's public key, `namewayctl keys`)".into()
    })
}

/// Signs `proof` with `key` (Ed25519).
///
/// # Errors
/// [`ProofError::Sign`].
pub fn sign(key: &SigningKey, proof: &[u8]) -> Result<Bytes, ProofError> {
    key.signer()
        .sign(&[proof])
        .map(Bytes::from)
        .map_err(|e| ProofError::Sign(e.to_string()))
}

/// Verifies an Ed25519 `signature` of `proof` by the key `der` (SubjectPublicKeyInfo).
///
/// # Errors
/// [`ProofError::NotEd25519`], [`ProofError::BadSignature`].
pub fn verify(der: &[u8], proof: &[u8], signature: &[u8]) -> Result<(), ProofError> {
    let key = nameway_transport::VerifyKey::from_public_der(der).ok_or(ProofError::NotEd25519)?;
    if key.kind() != nameway_transport::SignatureKind::Ed25519 {
        return Err(ProofError::NotEd25519);
    }
    key.verifier()
        .verify(signature_type::ED25519, &[proof], signature)
        .map_err(|_| ProofError::BadSignature)
}

/// The agent's check of the controller: the anchor certificate holds the pinned key and
/// signed this session. Returns the anchor certificate (to verify objects with).
///
/// # Errors
/// [`ProofError`].
pub fn check_server(
    pinned: &[u8; 32],
    anchor_cert: Bytes,
    signature: &[u8],
    handshake_hash: &[u8],
) -> Result<Certificate, ProofError> {
    let cert = Certificate::decode(anchor_cert).map_err(|e| ProofError::Cert(e.to_string()))?;
    let found = raw_ed25519(cert.key_der()).ok_or(ProofError::NotEd25519)?;
    if &found != pinned {
        return Err(ProofError::WrongAnchor {
            pinned: pin_string(pinned),
            found: pin_string(&found),
        });
    }
    verify(
        cert.key_der(),
        &messages::server_proof(handshake_hash),
        signature,
    )?;
    Ok(cert)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_parse_in_every_form() {
        let raw = [7u8; 32];
        assert_eq!(parse_pin(&pin_string(&raw)).unwrap(), raw);
        assert_eq!(parse_pin(&hex::encode(raw)).unwrap(), raw);
        assert_eq!(parse_pin(&hex::encode(ed25519_der(&raw))).unwrap(), raw);
        assert!(parse_pin("ed25519:zz").is_err());
        assert!(parse_pin("ed25519:0011").is_err());
    }

    #[tokio::test]
    async fn a_session_carries_messages_both_ways_and_big_ones_in_pieces() {
        let (a, b) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(accept(b));
        let client = connect(a).await.unwrap();
        let server = server.await.unwrap().unwrap();
        assert_eq!(client.handshake_hash, server.handshake_hash);
        exchange(client.boxed(), server.boxed()).await;
    }

    /// A 300 KB message from `client` to `server`, a small one back.
    pub(super) async fn exchange(client: Session<BoxIo>, server: Session<BoxIo>) {
        let (mut cs, mut cr) = client.split();
        let (mut ss, mut sr) = server.split();
        let big = Message::Ndn(Bytes::from(vec![0x5a; 300_000]));
        let sent = big.clone();
        let t = tokio::spawn(async move { cs.send(&sent).await.unwrap() });
        assert_eq!(sr.recv().await.unwrap(), big);
        t.await.unwrap();
        ss.send(&Message::Ack(9)).await.unwrap();
        assert_eq!(cr.recv().await.unwrap(), Message::Ack(9));
    }

    #[tokio::test]
    async fn a_tampered_frame_is_refused() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let (a, b) = tokio::io::duplex(1 << 16);
        // A man in the middle that flips one bit of the first transport frame.
        let (mut mid_a, mid_b) = tokio::io::duplex(1 << 16);
        let server = tokio::spawn(accept(mid_b));
        let relay = tokio::spawn(async move {
            let (mut ar, mut aw) = tokio::io::split(b);
            let (mut mr, mut mw) = tokio::io::split(&mut mid_a);
            let mut seen = 0usize;
            let mut buf = vec![0u8; 1 << 16];
            let mut back = vec![0u8; 1 << 16];
            loop {
                tokio::select! {
                    n = ar.read(&mut buf) => {
                        let n = n.unwrap();
                        if n == 0 { break }
                        // Handshake frames are 32+, 96+ and 64+ bytes: flip a byte after them.
                        if seen <= 240 && seen + n > 240 { buf[240 - seen] ^= 1; }
                        seen += n;
                        mw.write_all(&buf[..n]).await.unwrap();
                    }
                    n = mr.read(&mut back) => {
                        let n = n.unwrap();
                        if n == 0 { break }
                        aw.write_all(&back[..n]).await.unwrap();
                    }
                }
            }
        });
        let client = connect(a).await.unwrap();
        let server = server.await.unwrap().unwrap();
        let (mut cs, _cr) = client.split();
        let (_ss, mut sr) = server.split();
        cs.send(&Message::Ndn(Bytes::from(vec![1u8; 400])))
            .await
            .unwrap();
        assert!(matches!(sr.recv().await, Err(ChannelError::Noise(_))));
        relay.abort();
    }
}
