//! Mutual TLS under the controller channel: the option for operators whose policy names TLS
//! (docs/controller.md, "Mutual TLS"). TLS 1.3 only (rustls with ring), each side presenting
//! an X.509 certificate that the other checks against a CA the operator gives it: the
//! controller the agents' client certificates, the agents the controller's server
//! certificate and its name.
//!
//! TLS decides who may open a session; the domain's identities still come from the channel's
//! proofs ([`super::messages`]): the controller signs with the pinned anchor, the agent with
//! its router key (or presents its enrolment token). Both sign the session's exported keying
//! material (RFC 8446 §7.5, label [`EXPORTER_LABEL`]) in place of the Noise handshake hash,
//! so a proof made on one TLS session does not verify on another, and a client certificate
//! of one machine does not make it another router.

use std::path::Path;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use sha2::Digest as _;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::rustls;

use super::noise::{ChannelError, Session};

/// The exporter label the identity proofs bind to.
pub const EXPORTER_LABEL: &[u8] = b"EXPORTER-nameway-ctl/1";
/// Bytes of exported keying material (the length of a Noise handshake hash).
const BINDING_LEN: usize = 32;

/// Why a TLS configuration cannot be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsConfigError {
    /// A PEM file cannot be read or holds nothing usable.
    #[error("{path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// rustls refused the certificates or the key.
    #[error("{0}")]
    Rustls(String),
}

fn file_error(path: &Path, reason: impl std::fmt::Display) -> TlsConfigError {
    TlsConfigError::File {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

fn certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsConfigError> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| file_error(path, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file_error(path, e))?;
    if certs.is_empty() {
        return Err(file_error(path, "no PEM certificate in it"));
    }
    Ok(certs)
}

fn key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsConfigError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| file_error(path, format!("no private key: {e}")))
}

fn roots(path: &Path) -> Result<rustls::RootCertStore, TlsConfigError> {
    let mut roots = rustls::RootCertStore::empty();
    for c in certs(path)? {
        roots
            .add(c)
            .map_err(|e| file_error(path, format!("not a CA certificate: {e}")))?;
    }
    Ok(roots)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn rustls_error(e: impl std::fmt::Display) -> TlsConfigError {
    TlsConfigError::Rustls(e.to_string())
}

/// The controller's side: its certificate and key, and the CA its agents' client
/// certificates must chain to (a client without one is refused in the handshake).
#[derive(Clone)]
pub struct ServerTls {
    acceptor: tokio_rustls::TlsAcceptor,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls").finish_non_exhaustive()
    }
}

impl ServerTls {
    /// From PEM files: the controller's certificate chain, its private key, and the CA
    /// certificates that sign the agents' client certificates.
    ///
    /// # Errors
    /// A file cannot be read or holds nothing usable; rustls refuses the key or the chain.
    pub fn from_pem(
        cert: &Path,
        key_file: &Path,
        client_ca: &Path,
    ) -> Result<Self, TlsConfigError> {
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots(client_ca)?),
            provider(),
        )
        .build()
        .map_err(rustls_error)?;
        let config = rustls::ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(rustls_error)?
            .with_client_cert_verifier(verifier)
            .with_single_cert(certs(cert)?, key(key_file)?)
            .map_err(rustls_error)?;
        Ok(Self {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        })
    }
}

/// The agent's side: the CA the controller's certificate must chain to, the name it must
/// carry, and the agent's own client certificate and key.
#[derive(Clone)]
pub struct ClientTls {
    connector: tokio_rustls::TlsConnector,
    server_name: ServerName<'static>,
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTls")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

impl ClientTls {
    /// From PEM files: the CA certificates that sign the controller's certificate, this
    /// agent's certificate chain and private key; `server_name` is the DNS name or IP address
    /// the controller's certificate must hold.
    ///
    /// # Errors
    /// A file cannot be read or holds nothing usable; a bad server name; rustls refuses the
    /// key or the chain.
    pub fn from_pem(
        ca: &Path,
        cert: &Path,
        key_file: &Path,
        server_name: &str,
    ) -> Result<Self, TlsConfigError> {
        let server_name = ServerName::try_from(server_name.to_owned())
            .map_err(|e| TlsConfigError::Rustls(format!("server name {server_name:?}: {e}")))?;
        let config = rustls::ClientConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(rustls_error)?
            .with_root_certificates(roots(ca)?)
            .with_client_auth_cert(certs(cert)?, key(key_file)?)
            .map_err(rustls_error)?;
        Ok(Self {
            connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
            server_name,
        })
    }
}

/// A session's binding: keying material exported from it.
fn binding<D>(conn: &rustls::ConnectionCommon<D>) -> Result<Vec<u8>, ChannelError> {
    conn.export_keying_material(vec![0u8; BINDING_LEN], EXPORTER_LABEL, None)
        .map_err(|e| ChannelError::Tls(format!("exporter: {e}")))
}

/// The controller's side of a TLS session over `stream`; also returns the SHA-256
/// fingerprint (hex) of the client certificate, for the log.
///
/// # Errors
/// [`ChannelError::Tls`]: the handshake failed (no client certificate, one from another CA,
/// not TLS at all), or the stream did.
pub async fn accept<S>(
    stream: S,
    tls: &ServerTls,
) -> Result<(Session<tokio_rustls::server::TlsStream<S>>, String), ChannelError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let stream = tls
        .acceptor
        .accept(stream)
        .await
        .map_err(|e| ChannelError::Tls(e.to_string()))?;
    let (_, conn) = stream.get_ref();
    let fingerprint = conn
        .peer_certificates()
        .and_then(<[_]>::first)
        .map(|c| hex::encode(sha2::Sha256::digest(c.as_ref())))
        .unwrap_or_default();
    let bound = binding(conn)?;
    Ok((Session::over_tls(stream, bound), fingerprint))
}

/// The agent's side of a TLS session over `stream`.
///
/// # Errors
/// [`ChannelError::Tls`]: the handshake failed (the controller's certificate from another CA
/// or for another name, the controller refused this agent's), or the stream did.
pub async fn connect<S>(
    stream: S,
    tls: &ClientTls,
) -> Result<Session<tokio_rustls::client::TlsStream<S>>, ChannelError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let stream = tls
        .connector
        .connect(tls.server_name.clone(), stream)
        .await
        .map_err(|e| ChannelError::Tls(e.to_string()))?;
    let (_, conn) = stream.get_ref();
    let bound = binding(conn)?;
    Ok(Session::over_tls(stream, bound))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::channel::Session;
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};

    /// A CA in `dir/<name>-ca.pem`; returns its issuer.
    fn ca(dir: &Path, name: &str) -> Issuer<'static, KeyPair> {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        std::fs::write(dir.join(format!("{name}-ca.pem")), cert.pem()).unwrap();
        Issuer::new(params, key)
    }

    /// A certificate for `names` signed by `issuer`, in `dir/<file>.pem` and `dir/<file>.key`.
    fn leaf(dir: &Path, file: &str, names: &[&str], issuer: &Issuer<'_, KeyPair>) {
        let params =
            CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
                .unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, issuer).unwrap();
        std::fs::write(dir.join(format!("{file}.pem")), cert.pem()).unwrap();
        std::fs::write(dir.join(format!("{file}.key")), key.serialize_pem()).unwrap();
    }

    struct Pki {
        dir: tempfile::TempDir,
    }

    impl Pki {
        /// Two CAs, `ops` and `rogue`; `ops` signs the controller's certificate (for
        /// `ctl.example` and 127.0.0.1) and `agent`, `rogue` signs `stranger` and
        /// `fake-ctl`.
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let ops = ca(dir.path(), "ops");
            let rogue = ca(dir.path(), "rogue");
            leaf(dir.path(), "ctl", &["ctl.example", "127.0.0.1"], &ops);
            leaf(dir.path(), "agent", &["r1.example"], &ops);
            leaf(dir.path(), "stranger", &["r9.example"], &rogue);
            leaf(dir.path(), "fake-ctl", &["ctl.example"], &rogue);
            Self { dir }
        }

        fn p(&self, f: &str) -> std::path::PathBuf {
            self.dir.path().join(f)
        }

        fn server(&self, cert: &str) -> ServerTls {
            ServerTls::from_pem(
                &self.p(&format!("{cert}.pem")),
                &self.p(&format!("{cert}.key")),
                &self.p("ops-ca.pem"),
            )
            .unwrap()
        }

        fn client(&self, cert: &str, name: &str) -> ClientTls {
            ClientTls::from_pem(
                &self.p("ops-ca.pem"),
                &self.p(&format!("{cert}.pem")),
                &self.p(&format!("{cert}.key")),
                name,
            )
            .unwrap()
        }
    }

    type Ends = (
        Result<Session<crate::channel::BoxIo>, ChannelError>,
        Result<(Session<crate::channel::BoxIo>, String), ChannelError>,
    );

    async fn handshake(server: &ServerTls, client: &ClientTls) -> Ends {
        let (a, b) = tokio::io::duplex(1 << 16);
        let server = server.clone();
        let s =
            tokio::spawn(async move { accept(b, &server).await.map(|(s, fp)| (s.boxed(), fp)) });
        let c = connect(a, client).await.map(Session::boxed);
        (c, s.await.unwrap())
    }

    #[tokio::test]
    async fn a_mutual_tls_session_is_bound_on_both_ends_and_carries_messages() {
        let pki = Pki::new();
        let (c, s) = handshake(&pki.server("ctl"), &pki.client("agent", "ctl.example")).await;
        let (client, (server, fingerprint)) = (c.unwrap(), s.unwrap());
        assert_eq!(fingerprint.len(), 64, "the client certificate's SHA-256");
        assert_eq!(client.handshake_hash.len(), BINDING_LEN);
        assert_eq!(client.handshake_hash, server.handshake_hash);
        let first = server.handshake_hash.clone();
        crate::channel::tests::exchange(client, server).await;
        // Another session has another binding: a proof made on one does not verify on the
        // other.
        let (c2, _) = handshake(&pki.server("ctl"), &pki.client("agent", "127.0.0.1")).await;
        assert_ne!(c2.unwrap().handshake_hash, first);
    }

    #[tokio::test]
    async fn a_client_certificate_from_another_ca_is_refused_by_the_controller() {
        let pki = Pki::new();
        let stranger = ClientTls::from_pem(
            &pki.p("ops-ca.pem"),
            &pki.p("stranger.pem"),
            &pki.p("stranger.key"),
            "ctl.example",
        )
        .unwrap();
        let (_, s) = handshake(&pki.server("ctl"), &stranger).await;
        let e = s.unwrap_err().to_string();
        assert!(e.starts_with("tls: "), "{e}");
    }

    #[tokio::test]
    async fn the_agent_refuses_a_controller_from_another_ca_or_of_another_name() {
        let pki = Pki::new();
        let (c, _) = handshake(&pki.server("fake-ctl"), &pki.client("agent", "ctl.example")).await;
        assert!(matches!(c, Err(ChannelError::Tls(_))), "{c:?}");
        let (c, _) = handshake(&pki.server("ctl"), &pki.client("agent", "other.example")).await;
        let e = c.unwrap_err().to_string();
        assert!(
            e.starts_with("tls: ") && e.contains("not valid for name"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn a_client_without_a_certificate_is_refused() {
        let pki = Pki::new();
        let config = rustls::ClientConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_root_certificates(roots(&pki.p("ops-ca.pem")).unwrap())
            .with_no_client_auth();
        let anonymous = ClientTls {
            connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
            server_name: ServerName::try_from("ctl.example").unwrap(),
        };
        let (_, s) = handshake(&pki.server("ctl"), &anonymous).await;
        let e = s.unwrap_err().to_string();
        assert!(e.contains("tls: "), "{e}");
    }

    #[test]
    fn bad_files_are_named_in_one_line() {
        let pki = Pki::new();
        let missing = pki.p("nope.pem");
        let e = ServerTls::from_pem(&missing, &pki.p("ctl.key"), &pki.p("ops-ca.pem"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&missing.display().to_string()), "{e}");
        // A key file given as the certificate.
        let e = ClientTls::from_pem(
            &pki.p("ops-ca.pem"),
            &pki.p("agent.key"),
            &pki.p("agent.key"),
            "ctl.example",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no PEM certificate"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
