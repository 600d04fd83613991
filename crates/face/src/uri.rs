//! NFD's FaceUri: `unix:///run/nfd/nfd.sock`, `fd://17`, `tcp4://127.0.0.1:6363`,
//! `tcp6://[::1]:6363`, `udp4://127.0.0.1:56363`, `udp6://[::1]:6363`, and `null://` (the null
//! face).
//!
//! [`FaceUri`] holds canonical URIs only (IP literals, explicit port, IPv4-mapped IPv6 shown
//! as IPv4), as NFD's `faces/create` requires. Host names go through [`FaceUri::canonize`].

use core::fmt;
use core::str::FromStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;

/// Default NDN port for TCP and UDP (IANA "ndn", 6363).
pub const DEFAULT_PORT: u16 = 6363;

/// A face's local or remote address, as NFD prints it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FaceUri {
    /// `unix:///path`: the listening socket, the local end of a Unix face.
    Unix(PathBuf),
    /// `fd://N`: the remote end of a Unix face (the accepted socket's descriptor), as NFD.
    Fd(u64),
    /// `tcp4://a.b.c.d:port` or `tcp6://[x::y]:port`.
    Tcp(SocketAddr),
    /// `udp4://a.b.c.d:port` or `udp6://[x::y]:port`.
    Udp(SocketAddr),
    /// `null://`: the null face (FaceId 255), which drops everything sent to it.
    Null,
    /// `ws://a.b.c.d:port` or `ws://[x::y]:port`: a WebSocket face (or its listener).
    Ws(SocketAddr),
    /// `wss://...`: a WebSocket face over TLS.
    Wss(SocketAddr),
}

/// Why a string is not a canonical [`FaceUri`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UriError {
    /// Not `scheme://rest`, or the rest does not parse.
    #[error("malformed FaceUri")]
    Syntax,
    /// A scheme other than unix, fd, tcp, tcp4, tcp6, udp, udp4, udp6.
    #[error("unsupported FaceUri scheme {0:?}")]
    UnknownScheme(String),
    /// The host is a name, not an IP literal; use [`FaceUri::canonize`].
    #[error("host {0:?} is not an IP address (not canonical)")]
    NotCanonical(String),
    /// `tcp4`/`udp4` with an IPv6 address or `tcp6`/`udp6` with an IPv4 address.
    #[error("address family does not match the scheme")]
    WrongFamily,
    /// Name resolution failed or found no address of the wanted family.
    #[error("cannot resolve {0:?}")]
    Resolve(String),
}

/// Transport part of a scheme, and the IP family it requires (None: either).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proto {
    Tcp(Option<Family>),
    Udp(Option<Family>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    V4,
    V6,
}

impl FaceUri {
    /// A TCP URI, with an IPv4-mapped IPv6 address turned into IPv4 as NFD does.
    pub fn tcp(addr: SocketAddr) -> Self {
        Self::Tcp(canonical_addr(addr))
    }

    /// A UDP URI, with an IPv4-mapped IPv6 address turned into IPv4 as NFD does.
    pub fn udp(addr: SocketAddr) -> Self {
        Self::Udp(canonical_addr(addr))
    }

    /// The scheme as NFD prints it: `unix`, `fd`, `tcp4`, `tcp6`, `udp4`, `udp6`.
    pub fn scheme(&self) -> &'static str {
        match self {
            Self::Unix(_) => "unix",
            Self::Fd(_) => "fd",
            Self::Tcp(a) if a.is_ipv4() => "tcp4",
            Self::Tcp(_) => "tcp6",
            Self::Udp(a) if a.is_ipv4() => "udp4",
            Self::Udp(_) => "udp6",
            Self::Null => "null",
            Self::Ws(_) => "ws",
            Self::Wss(_) => "wss",
        }
    }

    /// The IP endpoint of a TCP or UDP URI.
    pub fn socket_addr(&self) -> Option<SocketAddr> {
        match self {
            Self::Tcp(a) | Self::Udp(a) | Self::Ws(a) | Self::Wss(a) => Some(*a),
            Self::Unix(_) | Self::Fd(_) | Self::Null => None,
        }
    }

    /// Parses `s`, resolving a host name when there is one (the first address of the family
    /// the scheme asks for; IPv4 first for plain `tcp`/`udp`).
    ///
    /// # Errors
    /// As [`FaceUri::from_str`], and [`UriError::Resolve`].
    pub async fn canonize(s: &str) -> Result<Self, UriError> {
        match s.parse::<Self>() {
            Err(UriError::NotCanonical(_)) => {}
            other => return other,
        }
        let (proto, host, port) = split_ip_uri(s)?;
        let family = match proto {
            Proto::Tcp(f) | Proto::Udp(f) => f,
        };
        let resolved = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|_| UriError::Resolve(host.clone()))?;
        let mut addrs: Vec<SocketAddr> = resolved.map(canonical_addr).collect();
        addrs.sort_by_key(|a| a.is_ipv6());
        let addr = addrs
            .into_iter()
            .find(|a| family_matches(family, a.ip()))
            .ok_or(UriError::Resolve(host))?;
        Ok(match proto {
            Proto::Tcp(_) => Self::Tcp(addr),
            Proto::Udp(_) => Self::Udp(addr),
        })
    }
}

impl FromStr for FaceUri {
    type Err = UriError;

    /// Parses a canonical URI. `tcp://` and `udp://` are accepted and printed back as
    /// `tcp4`/`tcp6`/`udp4`/`udp6`; a missing port means 6363.
    fn from_str(s: &str) -> Result<Self, UriError> {
        let (scheme, rest) = s.split_once("://").ok_or(UriError::Syntax)?;
        match scheme {
            "unix" => {
                if !rest.starts_with('/') {
                    return Err(UriError::Syntax);
                }
                Ok(Self::Unix(PathBuf::from(rest)))
            }
            "fd" => rest.parse().map(Self::Fd).map_err(|_| UriError::Syntax),
            "null" if rest.is_empty() || rest == "/" => Ok(Self::Null),
            "null" => Err(UriError::Syntax),
            "ws" | "wss" => {
                let addr: SocketAddr = rest
                    .strip_suffix('/')
                    .unwrap_or(rest)
                    .parse()
                    .map_err(|_| UriError::Syntax)?;
                let addr = canonical_addr(addr);
                Ok(if scheme == "ws" {
                    Self::Ws(addr)
                } else {
                    Self::Wss(addr)
                })
            }
            _ => {
                let (proto, host, port) = split_ip_uri(s)?;
                let ip = parse_host(&host)?;
                let (Proto::Tcp(family) | Proto::Udp(family)) = proto;
                if !family_matches(family, ip) {
                    return Err(UriError::WrongFamily);
                }
                let addr = canonical_addr(SocketAddr::new(ip, port));
                Ok(match proto {
                    Proto::Tcp(_) => Self::Tcp(addr),
                    Proto::Udp(_) => Self::Udp(addr),
                })
            }
        }
    }
}

impl fmt::Display for FaceUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unix(path) => write!(f, "unix://{}", path.display()),
            Self::Fd(fd) => write!(f, "fd://{fd}"),
            Self::Tcp(a) | Self::Udp(a) => write!(f, "{}://{a}", self.scheme()),
            Self::Null => f.write_str("null://"),
            Self::Ws(a) | Self::Wss(a) => write!(f, "{}://{a}", self.scheme()),
        }
    }
}

/// Splits `scheme://host[:port]` for the IP schemes; `host` keeps no brackets.
fn split_ip_uri(s: &str) -> Result<(Proto, String, u16), UriError> {
    let (scheme, rest) = s.split_once("://").ok_or(UriError::Syntax)?;
    let proto = match scheme {
        "tcp" => Proto::Tcp(None),
        "tcp4" => Proto::Tcp(Some(Family::V4)),
        "tcp6" => Proto::Tcp(Some(Family::V6)),
        "udp" => Proto::Udp(None),
        "udp4" => Proto::Udp(Some(Family::V4)),
        "udp6" => Proto::Udp(Some(Family::V6)),
        other => return Err(UriError::UnknownScheme(other.to_owned())),
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = if let Some(bracketed) = rest.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']').ok_or(UriError::Syntax)?;
        (host, after.strip_prefix(':'))
    } else {
        match rest.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => (host, Some(port)),
            Some(_) => return Err(UriError::Syntax), // an unbracketed IPv6 address
            None => (rest, None),
        }
    };
    if host.is_empty() {
        return Err(UriError::Syntax);
    }
    let port = match port {
        Some(p) => p.parse().map_err(|_| UriError::Syntax)?,
        None => DEFAULT_PORT,
    };
    Ok((proto, host.to_owned(), port))
}

fn parse_host(host: &str) -> Result<IpAddr, UriError> {
    host.parse::<IpAddr>().map_err(|_| {
        if host.contains('%') {
            UriError::Syntax // zone ids are not supported yet
        } else {
            UriError::NotCanonical(host.to_owned())
        }
    })
}

fn family_matches(family: Option<Family>, ip: IpAddr) -> bool {
    match family {
        None => true,
        Some(Family::V4) => ip.is_ipv4(),
        Some(Family::V6) => ip.is_ipv6(),
    }
}

/// `::ffff:a.b.c.d` becomes `a.b.c.d`, as NFD prints accepted IPv4 peers of dual-stack sockets.
pub(crate) fn canonical_addr(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(addr.ip().to_canonical(), addr.port())
}

/// The unspecified address (`0.0.0.0` or `::`) of `ip`'s family.
pub(crate) fn unspecified_like(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        IpAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_nfd_forms() {
        for s in [
            "unix:///run/nfd/nfd.sock",
            "fd://17",
            "tcp4://127.0.0.1:6363",
            "tcp6://[::1]:6363",
            "udp4://127.0.0.1:56363",
            "udp6://[::1]:6363",
        ] {
            let uri: FaceUri = s.parse().unwrap();
            assert_eq!(uri.to_string(), s);
        }
    }

    #[test]
    fn generic_schemes_and_default_port() {
        assert_eq!(
            "tcp://127.0.0.1".parse::<FaceUri>().unwrap().to_string(),
            "tcp4://127.0.0.1:6363"
        );
        assert_eq!(
            "udp://[::1]:7".parse::<FaceUri>().unwrap().to_string(),
            "udp6://[::1]:7"
        );
        assert_eq!(
            "tcp6://[::ffff:127.0.0.1]:1"
                .parse::<FaceUri>()
                .unwrap()
                .to_string(),
            "tcp4://127.0.0.1:1"
        );
    }

    #[test]
    fn rejects() {
        let cases: &[(&str, UriError)] = &[
            ("tcp4://[::1]:6363", UriError::WrongFamily),
            ("udp6://127.0.0.1:6363", UriError::WrongFamily),
            (
                "tcp4://localhost:6363",
                UriError::NotCanonical("localhost".into()),
            ),
            (
                "ether://[01:00:5e:00:17:aa]",
                UriError::UnknownScheme("ether".into()),
            ),
            ("ws://localhost:9696", UriError::Syntax),
            ("null://x", UriError::Syntax),
            ("tcp4://127.0.0.1:99999", UriError::Syntax),
            ("tcp6://::1:6363", UriError::Syntax),
            ("unix://run/nfd.sock", UriError::Syntax),
            ("127.0.0.1:6363", UriError::Syntax),
            ("fd://x", UriError::Syntax),
        ];
        for (s, err) in cases {
            assert_eq!(s.parse::<FaceUri>().unwrap_err(), *err, "{s}");
        }
    }

    #[test]
    fn websocket_and_null_uris_round_trip() {
        for s in ["ws://127.0.0.1:9696", "wss://[::1]:443", "null://"] {
            assert_eq!(s.parse::<FaceUri>().unwrap().to_string(), s);
        }
        assert_eq!("null://".parse::<FaceUri>().unwrap().scheme(), "null");
        assert_eq!(
            "ws://[::ffff:127.0.0.1]:9696"
                .parse::<FaceUri>()
                .unwrap()
                .to_string(),
            "ws://127.0.0.1:9696"
        );
    }

    #[tokio::test]
    async fn canonize_resolves_localhost() {
        let uri = FaceUri::canonize("tcp4://localhost:6363").await.unwrap();
        assert_eq!(uri.to_string(), "tcp4://127.0.0.1:6363");
        let uri = FaceUri::canonize("udp4://127.0.0.1").await.unwrap();
        assert_eq!(uri.to_string(), "udp4://127.0.0.1:6363");
    }
}
