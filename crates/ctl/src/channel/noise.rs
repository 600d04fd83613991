//! The encrypted session under the controller channel: a Noise `XX` handshake
//! (`Noise_XX_25519_ChaChaPoly_SHA256`, fresh static keys per session) over a byte stream,
//! then messages. (The other session kind, mutual TLS, is in [`super::tls`]: the same
//! [`Session`], [`Sender`] and [`Receiver`] over a TLS stream, messages framed in the clear
//! inside it.)
//!
//! On the stream every Noise message is a frame: a 2-byte big-endian length, then the bytes
//! (at most 65,535, Noise's limit). An application message is a 4-byte big-endian length and
//! its bytes, cut into as many transport frames as it needs (at most [`MAX_MESSAGE`]).
//! Identity is not carried by the Noise static keys: each side signs the handshake hash
//! with its long-term Ed25519 key in the first messages (see [`super::messages`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use snow::params::NoiseParams;
use snow::{HandshakeState, StatelessTransportState};
use tokio::io::{
    AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadHalf, WriteHalf,
};

use super::messages::{Message, MessageError};

const PROTOCOL: &str = "Noise_XX_25519_ChaChaPoly_SHA256";
const PROLOGUE: &[u8] = b"nameway-ctl/1";
const NOISE_MAX: usize = 65_535;
const TAG: usize = 16;
/// The largest application message (a FIB snapshot of about 10^5 entries).
pub const MAX_MESSAGE: usize = 16 << 20;

/// Why the channel failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChannelError {
    /// The stream failed or closed.
    #[error("connection: {0}")]
    Io(#[from] std::io::Error),
    /// The handshake or a transport message did not verify (tampered, another protocol).
    #[error("noise: {0}")]
    Noise(String),
    /// The TLS handshake failed (no certificate, one from another CA, another name) or its
    /// keying material could not be exported.
    #[error("tls: {0}")]
    Tls(String),
    /// A message larger than [`MAX_MESSAGE`] was announced.
    #[error("message of {0} bytes is too large")]
    TooLarge(usize),
    /// A message that does not decode.
    #[error(transparent)]
    Message(#[from] MessageError),
}

fn noise(e: snow::Error) -> ChannelError {
    ChannelError::Noise(e.to_string())
}

fn handshake_state(initiator: bool) -> Result<HandshakeState, ChannelError> {
    let params: NoiseParams = PROTOCOL
        .parse()
        .map_err(|_| ChannelError::Noise("bad protocol name".into()))?;
    // X25519 from curve25519-dalek, as in the secure faces (nameway-crypto's `noise`).
    let resolver = nameway_crypto::noise::resolver;
    let keys = snow::Builder::with_resolver(params.clone(), resolver())
        .generate_keypair()
        .map_err(noise)?;
    let b = snow::Builder::with_resolver(params, resolver())
        .prologue(PROLOGUE)
        .and_then(|b| b.local_private_key(&keys.private))
        .map_err(noise)?;
    if initiator {
        b.build_initiator()
    } else {
        b.build_responder()
    }
    .map_err(noise)
}

async fn write_frame<W: AsyncWrite + Unpin>(w: &mut W, frame: &[u8]) -> Result<(), ChannelError> {
    let len = u16::try_from(frame.len()).map_err(|_| ChannelError::TooLarge(frame.len()))?;
    let mut buf = Vec::with_capacity(frame.len() + 2);
    buf.extend_from_slice(&len.to_be_bytes());
    buf.extend_from_slice(frame);
    w.write_all(&buf).await?;
    Ok(())
}

async fn read_frame<R: AsyncRead + Unpin>(r: &mut R) -> Result<Vec<u8>, ChannelError> {
    let mut len = [0u8; 2];
    r.read_exact(&mut len).await?;
    let mut frame = vec![0u8; usize::from(u16::from_be_bytes(len))];
    r.read_exact(&mut frame).await?;
    Ok(frame)
}

async fn hs_write<W: AsyncWrite + Unpin>(
    hs: &mut HandshakeState,
    w: &mut W,
) -> Result<(), ChannelError> {
    let mut buf = vec![0u8; NOISE_MAX];
    let n = hs.write_message(&[], &mut buf).map_err(noise)?;
    write_frame(w, buf.get(..n).unwrap_or_default()).await
}

async fn hs_read<R: AsyncRead + Unpin>(
    hs: &mut HandshakeState,
    r: &mut R,
) -> Result<(), ChannelError> {
    let frame = read_frame(r).await?;
    let mut buf = vec![0u8; NOISE_MAX];
    hs.read_message(&frame, &mut buf).map_err(noise)?;
    Ok(())
}

/// Runs the handshake as the initiator (the agent) over `stream`; returns the two halves
/// and the handshake hash.
///
/// # Errors
/// [`ChannelError`].
pub async fn connect<S>(mut stream: S) -> Result<Session<S>, ChannelError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut hs = handshake_state(true)?;
    hs_write(&mut hs, &mut stream).await?;
    hs_read(&mut hs, &mut stream).await?;
    hs_write(&mut hs, &mut stream).await?;
    Session::new(hs, stream)
}

/// Runs the handshake as the responder (the controller).
///
/// # Errors
/// [`ChannelError`].
pub async fn accept<S>(mut stream: S) -> Result<Session<S>, ChannelError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut hs = handshake_state(false)?;
    hs_read(&mut hs, &mut stream).await?;
    hs_write(&mut hs, &mut stream).await?;
    hs_read(&mut hs, &mut stream).await?;
    Session::new(hs, stream)
}

/// A finished handshake: the stream and the transport keys.
pub struct Session<S> {
    /// The stream.
    pub stream: S,
    /// What the identity proofs sign: the Noise handshake hash, or a TLS session's exported
    /// keying material ([`super::tls`]). Either is unique to the session.
    pub handshake_hash: Vec<u8>,
    /// The Noise transport keys; None on TLS (the stream encrypts).
    keys: Option<Arc<StatelessTransportState>>,
}

impl<S> std::fmt::Debug for Session<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

impl<S> Session<S> {
    fn new(hs: HandshakeState, stream: S) -> Result<Self, ChannelError> {
        let handshake_hash = hs.get_handshake_hash().to_vec();
        let keys = Arc::new(hs.into_stateless_transport_mode().map_err(noise)?);
        Ok(Self {
            stream,
            handshake_hash,
            keys: Some(keys),
        })
    }

    /// A session over a stream that encrypts and authenticates itself (TLS), bound to
    /// `binding`: messages go in the clear inside it, each a 4-byte length and its bytes.
    pub(crate) fn over_tls(stream: S, binding: Vec<u8>) -> Self {
        Self {
            stream,
            handshake_hash: binding,
            keys: None,
        }
    }

    /// The same session over `f(stream)`.
    pub fn map_stream<T>(self, f: impl FnOnce(S) -> T) -> Session<T> {
        Session {
            stream: f(self.stream),
            handshake_hash: self.handshake_hash,
            keys: self.keys,
        }
    }

    /// Splits into the sending and the receiving half.
    pub fn split(self) -> (Sender<WriteHalf<S>>, Receiver<ReadHalf<S>>)
    where
        S: AsyncRead + AsyncWrite,
    {
        let (r, w) = tokio::io::split(self.stream);
        (
            Sender {
                w,
                keys: self.keys.clone(),
                nonce: Arc::new(AtomicU64::new(0)),
            },
            Receiver {
                r,
                keys: self.keys,
                nonce: 0,
            },
        )
    }
}

/// The sending half.
pub struct Sender<W> {
    w: W,
    keys: Option<Arc<StatelessTransportState>>,
    nonce: Arc<AtomicU64>,
}

impl<W> std::fmt::Debug for Sender<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl<W: AsyncWrite + Unpin> Sender<W> {
    /// Encrypts and sends `msg`.
    ///
    /// # Errors
    /// [`ChannelError`].
    pub async fn send(&mut self, msg: &Message) -> Result<(), ChannelError> {
        let body = msg.encode();
        if body.len() > MAX_MESSAGE {
            return Err(ChannelError::TooLarge(body.len()));
        }
        let len = u32::try_from(body.len()).map_err(|_| ChannelError::TooLarge(body.len()))?;
        let mut plain = Vec::with_capacity(body.len() + 4);
        plain.extend_from_slice(&len.to_be_bytes());
        plain.extend_from_slice(&body);
        let Some(keys) = &self.keys else {
            self.w.write_all(&plain).await?;
            self.w.flush().await?;
            return Ok(());
        };
        let mut out = Vec::with_capacity(plain.len() + plain.len() / 1000 + 64);
        let mut buf = vec![0u8; NOISE_MAX];
        for chunk in plain.chunks(NOISE_MAX - TAG) {
            let nonce = self.nonce.fetch_add(1, Ordering::Relaxed);
            let n = keys.write_message(nonce, chunk, &mut buf).map_err(noise)?;
            let len = u16::try_from(n).map_err(|_| ChannelError::TooLarge(n))?;
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(buf.get(..n).unwrap_or_default());
        }
        self.w.write_all(&out).await?;
        self.w.flush().await?;
        Ok(())
    }
}

/// The receiving half.
pub struct Receiver<R> {
    r: R,
    keys: Option<Arc<StatelessTransportState>>,
    nonce: u64,
}

impl<R> std::fmt::Debug for Receiver<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver").finish_non_exhaustive()
    }
}

impl<R: AsyncRead + Unpin> Receiver<R> {
    async fn frame(&mut self, keys: &StatelessTransportState) -> Result<Vec<u8>, ChannelError> {
        let frame = read_frame(&mut self.r).await?;
        let mut buf = vec![0u8; frame.len()];
        let n = keys
            .read_message(self.nonce, &frame, &mut buf)
            .map_err(noise)?;
        self.nonce += 1;
        buf.truncate(n);
        Ok(buf)
    }

    /// Receives and decrypts the next message's bytes.
    ///
    /// # Errors
    /// [`ChannelError`]: a closed stream, a frame that does not decrypt, a message too large.
    pub async fn recv_bytes(&mut self) -> Result<Bytes, ChannelError> {
        let Some(keys) = self.keys.clone() else {
            return self.recv_plain().await;
        };
        let mut plain = self.frame(&keys).await?;
        let len = plain
            .get(..4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_be_bytes)
            .ok_or_else(|| ChannelError::Noise("short first frame".into()))?;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > MAX_MESSAGE {
            return Err(ChannelError::TooLarge(len));
        }
        let mut body = plain.split_off(4);
        while body.len() < len {
            body.extend_from_slice(&self.frame(&keys).await?);
        }
        if body.len() != len {
            return Err(ChannelError::Noise("message longer than announced".into()));
        }
        Ok(Bytes::from(body))
    }

    /// A message inside TLS: a 4-byte length, then its bytes.
    async fn recv_plain(&mut self) -> Result<Bytes, ChannelError> {
        let mut len = [0u8; 4];
        self.r.read_exact(&mut len).await?;
        let len = usize::try_from(u32::from_be_bytes(len)).unwrap_or(usize::MAX);
        if len > MAX_MESSAGE {
            return Err(ChannelError::TooLarge(len));
        }
        let mut body = vec![0u8; len];
        self.r.read_exact(&mut body).await?;
        Ok(Bytes::from(body))
    }

    /// Receives the next message.
    ///
    /// # Errors
    /// As [`Receiver::recv_bytes`], and a message that does not decode.
    pub async fn recv(&mut self) -> Result<Message, ChannelError> {
        let b = self.recv_bytes().await?;
        Ok(Message::decode(&b)?)
    }
}
