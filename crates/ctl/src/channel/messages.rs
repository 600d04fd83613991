//! The messages of the controller channel, TLV-encoded (sans-I/O).
//!
//! ```text
//! ServerHello  = 0xD0 (AnchorCert Signature)          ; controller → agent, first
//! Hello        = 0xD2 (Name [Token RouterKey LinkKey] [RouterCert] Signature AppliedVersion)
//! Welcome      = 0xD6 [RouterCert]                     ; the certificate issued at enrolment
//! Refused      = 0xD7 Reason                           ; then the controller closes
//! Report       = 0xD8 (*Neighbour *Registration *Face)
//! Neighbour    = 0xD9 (LinkKey FaceId Cost Up)
//! Registration = 0xDC (Name FaceId Cost)
//! Face         = 0xDD (FaceId Uri)
//! Ndn          = 0xE5 (Interest / Data)                ; one NDN packet, either way
//! Offer        = 0xE6 Name                             ; a ConfigObject to fetch (versioned)
//! Ack          = 0xDF Version                          ; NonNegativeInteger
//! Renew        = 0xE2 Signature                        ; agent: renew my certificate
//! Renewed      = 0xE3 RouterCert                       ; the renewed certificate
//! CsAck        = 0xE4 Version                          ; the cache policy version applied
//! ```
//!
//! Configuration objects are not pushed: the controller offers an object's versioned name
//! and the agent fetches it with the transport library over `Ndn` messages (0xDE, the
//! earlier push of signed Data, is retired).
//!
//! `Signature` is an Ed25519 signature over a context string and the Noise handshake hash
//! ([`server_proof`], [`router_proof`]): it binds the anchor (or the router's certified key)
//! to this one encrypted session.

use bytes::Bytes;
use nameway_wire::tlv::{put_nni_tlv, put_tlv, Reader};
use nameway_wire::Name;

const SERVER_HELLO: u32 = 0xD0;
const SIGNATURE: u32 = 0xD1;
const HELLO: u32 = 0xD2;
const TOKEN: u32 = 0xD3;
const ROUTER_KEY: u32 = 0xD4;
const ROUTER_CERT: u32 = 0xD5;
const WELCOME: u32 = 0xD6;
const REFUSED: u32 = 0xD7;
const REPORT: u32 = 0xD8;
const NEIGHBOUR: u32 = 0xD9;
const LINK_KEY: u32 = 0xDA;
const UP: u32 = 0xDB;
const REGISTRATION: u32 = 0xDC;
const FACE: u32 = 0xDD;
const ACK: u32 = 0xDF;
const APPLIED: u32 = 0xE0;
const ANCHOR_CERT: u32 = 0xE1;
const RENEW: u32 = 0xE2;
const RENEWED: u32 = 0xE3;
const CS_ACK: u32 = 0xE4;
const NDN: u32 = 0xE5;
const OFFER: u32 = 0xE6;
const NAME: u32 = 0x07;
const FACE_ID: u32 = 0x69;
const COST: u32 = 0x6A;
const URI: u32 = 0x72;

/// What the controller signs with the anchor: context and the handshake hash.
pub fn server_proof(handshake_hash: &[u8]) -> Vec<u8> {
    [b"nameway-ctl/1 controller ".as_slice(), handshake_hash].concat()
}

/// What a router signs with its certified key: context and the handshake hash.
pub fn router_proof(handshake_hash: &[u8]) -> Vec<u8> {
    [b"nameway-ctl/1 router ".as_slice(), handshake_hash].concat()
}

/// How a router proves who it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credential {
    /// First start: a one-time token, the router's Ed25519 key (SubjectPublicKeyInfo DER)
    /// and its secure-link identity (X25519, 32 bytes).
    Enrol {
        /// The token `namewayctl token` printed.
        token: String,
        /// The key to certify.
        key_der: Bytes,
        /// The forwarder's secure-link public key (how its neighbours name it).
        link_key: Bytes,
    },
    /// Later starts: the certificate it was issued.
    Certificate(Bytes),
}

/// The agent's first message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// The router.
    pub router: Name,
    /// Token or certificate.
    pub credential: Credential,
    /// Ed25519 signature of [`router_proof`] by the router's key.
    pub signature: Bytes,
    /// The FIB version it applied last (0: none).
    pub applied: u64,
}

/// One secure-link neighbour as the forwarder sees it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NeighbourReport {
    /// The peer's secure-link public key.
    pub link_key: Bytes,
    /// This forwarder's face toward it.
    pub face: u64,
    /// The link's cost.
    pub cost: u64,
    /// Whether the face is up with an established session.
    pub up: bool,
}

/// One local registration (an application's `rib/register`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RegistrationReport {
    /// The prefix.
    pub prefix: Name,
    /// The face toward the application.
    pub face: u64,
    /// The route's cost.
    pub cost: u64,
}

/// A forwarder's whole state as the controller needs it (sent whole each time: idempotent).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Secure-link neighbours.
    pub neighbours: Vec<NeighbourReport>,
    /// Local registrations.
    pub registrations: Vec<RegistrationReport>,
    /// Faces: id and remote URI.
    pub faces: Vec<(u64, String)>,
}

/// A message on the channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// The controller's anchor certificate and its proof over the handshake.
    ServerHello {
        /// The anchor's self-signed certificate (Data).
        anchor_cert: Bytes,
        /// Ed25519 signature of [`server_proof`].
        signature: Bytes,
    },
    /// The agent's credentials.
    Hello(Hello),
    /// Accepted; the certificate issued when the router enrolled.
    Welcome(Option<Bytes>),
    /// Refused, with the reason.
    Refused(String),
    /// The forwarder's neighbours, registrations and faces.
    Report(Report),
    /// A configuration object to fetch: its versioned name (controller → agent).
    Offer(Name),
    /// One NDN packet, an Interest or a Data (the agent's fetch of an offered object).
    Ndn(Bytes),
    /// The forwarder applied this version.
    Ack(u64),
    /// Renew my certificate: an Ed25519 signature by the router key over
    /// [`crate::renew::renew_proof`] of the session's handshake hash.
    Renew(Bytes),
    /// The renewed router certificate.
    Renewed(Bytes),
    /// The forwarder applied this version of its cache policy (`cs` object).
    CsAck(u64),
}

/// A message that does not decode.
#[derive(Debug, thiserror::Error)]
#[error("malformed controller message: {0}")]
pub struct MessageError(pub String);

fn bad(e: impl std::fmt::Display) -> MessageError {
    MessageError(e.to_string())
}

impl Message {
    /// The message's TLV.
    pub fn encode(&self) -> Bytes {
        let mut v = Vec::new();
        let typ = match self {
            Self::ServerHello {
                anchor_cert,
                signature,
            } => {
                put_tlv(&mut v, ANCHOR_CERT, anchor_cert);
                put_tlv(&mut v, SIGNATURE, signature);
                SERVER_HELLO
            }
            Self::Hello(h) => {
                h.router.encode(&mut v);
                match &h.credential {
                    Credential::Enrol {
                        token,
                        key_der,
                        link_key,
                    } => {
                        put_tlv(&mut v, TOKEN, token.as_bytes());
                        put_tlv(&mut v, ROUTER_KEY, key_der);
                        put_tlv(&mut v, LINK_KEY, link_key);
                    }
                    Credential::Certificate(c) => put_tlv(&mut v, ROUTER_CERT, c),
                }
                put_tlv(&mut v, SIGNATURE, &h.signature);
                put_nni_tlv(&mut v, APPLIED, h.applied);
                HELLO
            }
            Self::Welcome(cert) => {
                if let Some(c) = cert {
                    put_tlv(&mut v, ROUTER_CERT, c);
                }
                WELCOME
            }
            Self::Refused(reason) => {
                v.extend_from_slice(reason.as_bytes());
                REFUSED
            }
            Self::Report(r) => {
                encode_report(&mut v, r);
                REPORT
            }
            Self::Offer(name) => {
                name.encode(&mut v);
                OFFER
            }
            Self::Ndn(wire) => {
                v.extend_from_slice(wire);
                NDN
            }
            Self::Ack(n) => {
                nameway_wire::tlv::put_nni(&mut v, *n);
                ACK
            }
            Self::Renew(signature) => {
                put_tlv(&mut v, SIGNATURE, signature);
                RENEW
            }
            Self::Renewed(cert) => {
                put_tlv(&mut v, ROUTER_CERT, cert);
                RENEWED
            }
            Self::CsAck(n) => {
                nameway_wire::tlv::put_nni(&mut v, *n);
                CS_ACK
            }
        };
        let mut out = Vec::with_capacity(v.len() + 8);
        put_tlv(&mut out, typ, &v);
        Bytes::from(out)
    }

    /// Decodes one message (the whole buffer).
    ///
    /// # Errors
    /// [`MessageError`]: truncated, unknown type, missing or malformed field.
    pub fn decode(wire: &Bytes) -> Result<Self, MessageError> {
        let mut r = Reader::new(wire);
        let e = r.read_element().map_err(bad)?;
        if !r.is_empty() {
            return Err(bad("trailing bytes"));
        }
        let value = wire.slice(e.value_range());
        Ok(match e.typ {
            SERVER_HELLO => {
                let f = Fields::read(&value)?;
                Self::ServerHello {
                    anchor_cert: f.need(ANCHOR_CERT)?,
                    signature: f.need(SIGNATURE)?,
                }
            }
            HELLO => Self::Hello(decode_hello(&value)?),
            WELCOME => Self::Welcome(Fields::read(&value)?.get(ROUTER_CERT)),
            REFUSED => Self::Refused(String::from_utf8_lossy(&value).into_owned()),
            REPORT => Self::Report(decode_report(&value)?),
            OFFER => Self::Offer(Name::decode(&value).map_err(bad)?),
            NDN => Self::Ndn(value),
            ACK => Self::Ack(e.nni().map_err(bad)?),
            RENEW => Self::Renew(Fields::read(&value)?.need(SIGNATURE)?),
            RENEWED => Self::Renewed(Fields::read(&value)?.need(ROUTER_CERT)?),
            CS_ACK => Self::CsAck(e.nni().map_err(bad)?),
            t => return Err(bad(format!("unknown message type {t:#x}"))),
        })
    }
}

/// The direct children of a value, by type (the last of a type wins).
struct Fields(Vec<(u32, Bytes)>);

impl Fields {
    fn read(value: &Bytes) -> Result<Self, MessageError> {
        let mut r = Reader::new(value);
        let mut out = Vec::new();
        while let Some(e) = r.read().map_err(bad)? {
            let whole = if e.typ == NAME {
                value.slice(e.range())
            } else {
                value.slice(e.value_range())
            };
            out.push((e.typ, whole));
        }
        Ok(Self(out))
    }

    fn get(&self, typ: u32) -> Option<Bytes> {
        self.0
            .iter()
            .rev()
            .find(|(t, _)| *t == typ)
            .map(|(_, v)| v.clone())
    }

    fn need(&self, typ: u32) -> Result<Bytes, MessageError> {
        self.get(typ)
            .ok_or_else(|| bad(format!("missing element {typ:#x}")))
    }

    fn nni(&self, typ: u32) -> Result<u64, MessageError> {
        let v = self.need(typ)?;
        nameway_wire::tlv::read_nni(&v).map_err(|k| bad(format!("{k:?}")))
    }

    fn name(&self) -> Result<Name, MessageError> {
        Name::decode(&self.need(NAME)?).map_err(bad)
    }
}

fn decode_hello(value: &Bytes) -> Result<Hello, MessageError> {
    let f = Fields::read(value)?;
    let credential = match (f.get(TOKEN), f.get(ROUTER_CERT)) {
        (Some(token), None) => Credential::Enrol {
            token: String::from_utf8(token.to_vec()).map_err(bad)?,
            key_der: f.need(ROUTER_KEY)?,
            link_key: f.need(LINK_KEY)?,
        },
        (None, Some(cert)) => Credential::Certificate(cert),
        _ => return Err(bad("a Hello carries a token or a certificate")),
    };
    Ok(Hello {
        router: f.name()?,
        credential,
        signature: f.need(SIGNATURE)?,
        applied: f.nni(APPLIED)?,
    })
}

fn encode_report(v: &mut Vec<u8>, r: &Report) {
    for n in &r.neighbours {
        let mut e = Vec::new();
        put_tlv(&mut e, LINK_KEY, &n.link_key);
        put_nni_tlv(&mut e, FACE_ID, n.face);
        put_nni_tlv(&mut e, COST, n.cost);
        put_nni_tlv(&mut e, UP, u64::from(n.up));
        put_tlv(v, NEIGHBOUR, &e);
    }
    for g in &r.registrations {
        let mut e = Vec::new();
        g.prefix.encode(&mut e);
        put_nni_tlv(&mut e, FACE_ID, g.face);
        put_nni_tlv(&mut e, COST, g.cost);
        put_tlv(v, REGISTRATION, &e);
    }
    for (id, uri) in &r.faces {
        let mut e = Vec::new();
        put_nni_tlv(&mut e, FACE_ID, *id);
        put_tlv(&mut e, URI, uri.as_bytes());
        put_tlv(v, FACE, &e);
    }
}

fn decode_report(value: &Bytes) -> Result<Report, MessageError> {
    let mut r = Reader::new(value);
    let mut report = Report::default();
    while let Some(e) = r.read().map_err(bad)? {
        let f = Fields::read(&value.slice(e.value_range()))?;
        match e.typ {
            NEIGHBOUR => report.neighbours.push(NeighbourReport {
                link_key: f.need(LINK_KEY)?,
                face: f.nni(FACE_ID)?,
                cost: f.nni(COST)?,
                up: f.nni(UP)? != 0,
            }),
            REGISTRATION => report.registrations.push(RegistrationReport {
                prefix: f.name()?,
                face: f.nni(FACE_ID)?,
                cost: f.nni(COST)?,
            }),
            FACE => report.faces.push((
                f.nni(FACE_ID)?,
                String::from_utf8_lossy(&f.need(URI)?).into_owned(),
            )),
            t => return Err(bad(format!("unexpected element {t:#x} in a Report"))),
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(m: Message) {
        assert_eq!(Message::decode(&m.encode()).unwrap(), m);
    }

    #[test]
    fn every_message_round_trips() {
        let name: Name = "/example/r1".parse().unwrap();
        round_trip(Message::ServerHello {
            anchor_cert: Bytes::from_static(b"\x06\x00"),
            signature: Bytes::from_static(&[7; 64]),
        });
        round_trip(Message::Hello(Hello {
            router: name.clone(),
            credential: Credential::Enrol {
                token: "abc".into(),
                key_der: Bytes::from_static(&[1; 44]),
                link_key: Bytes::from_static(&[2; 32]),
            },
            signature: Bytes::from_static(&[3; 64]),
            applied: 0,
        }));
        round_trip(Message::Hello(Hello {
            router: name.clone(),
            credential: Credential::Certificate(Bytes::from_static(b"cert")),
            signature: Bytes::from_static(&[3; 64]),
            applied: 42,
        }));
        round_trip(Message::Welcome(None));
        round_trip(Message::Welcome(Some(Bytes::from_static(b"cert"))));
        round_trip(Message::Refused("denied".into()));
        round_trip(Message::Report(Report {
            neighbours: vec![NeighbourReport {
                link_key: Bytes::from_static(&[9; 32]),
                face: 257,
                cost: 10,
                up: true,
            }],
            registrations: vec![RegistrationReport {
                prefix: name,
                face: 300,
                cost: 0,
            }],
            faces: vec![(257, "udp4://127.0.0.1:6363".into())],
        }));
        round_trip(Message::Offer(
            "/example/32=ctl/r1/fib/v=3".parse().unwrap(),
        ));
        round_trip(Message::Ndn(Bytes::from_static(b"\x06\x02\x07\x00")));
        round_trip(Message::Ack(1 << 40));
        round_trip(Message::Renew(Bytes::from_static(&[5u8; 64])));
        round_trip(Message::Renewed(Bytes::from_static(b"\x06\x01\x00")));
        round_trip(Message::CsAck(7));
    }

    #[test]
    fn bad_messages_are_errors() {
        for wire in [
            &b""[..],
            b"\xD8",
            b"\xD8\x05\x01",
            b"\x99\x00",
            b"\xD2\x00",
            b"\xDF\x00\x00",
            b"\xD8\x02\xD9\x00",
        ] {
            assert!(
                Message::decode(&Bytes::copy_from_slice(wire)).is_err(),
                "{wire:?}"
            );
        }
    }
}
