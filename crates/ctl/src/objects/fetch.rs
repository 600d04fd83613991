//! The agent's side of an object's transfer: the offered name fetched with the transport
//! library ([`fetch_object`]), the anchor as the trust anchor, so the verification is the
//! transport's (every manifest's signature by the anchor, every segment's digest), then the
//! Content decoded as one object: applied whole or not at all.

use std::io::{self, Write};
use std::time::Duration;

use nameway_transport::client::Client;
use nameway_transport::naming::ends_in_version;
use nameway_transport::{fetch, Certificate, FetchError, FetchOptions};
use nameway_wire::Name;

use super::ConfigObject;
use crate::ca::CaError;

/// The largest object an agent takes (16 MiB of Content); a larger one is refused before it
/// is all buffered.
pub const MAX_OBJECT: usize = 16 << 20;

/// Why an offered object was not taken. Nothing of it is applied.
#[derive(Debug, thiserror::Error)]
pub enum ObjectFetchError {
    /// A manifest not signed by the anchor, a segment whose digest is not the manifest's,
    /// or a signer that is not the anchor: the transport's verification refused it.
    #[error("object refused by verification: {0}")]
    Verification(FetchError),
    /// The fetch failed otherwise: the channel closed, or a packet never came.
    #[error("object fetch failed: {0}")]
    Fetch(FetchError),
    /// The object is larger than [`MAX_OBJECT`].
    #[error("object {0} is larger than {MAX_OBJECT} octets")]
    TooLarge(Name),
    /// Verified, but not a configuration object of the anchor's domain (or not versioned).
    #[error(transparent)]
    Object(#[from] CaError),
}

/// How an agent fetches an object: the anchor pinned; a few retries (the channel is one
/// reliable stream: a packet that does not come is a controller that stopped answering).
pub fn fetch_options(anchor: Certificate) -> FetchOptions {
    FetchOptions {
        anchor: Some(anchor),
        max_retries: 3,
        lifetime: Duration::from_secs(2),
        ..FetchOptions::default()
    }
}

/// Fetches the object offered as `name` over `client` and decodes it.
///
/// # Errors
/// [`ObjectFetchError`]: refused by the transport's verification, the fetch failed, too
/// large, or not a configuration object.
pub async fn fetch_object(
    client: &mut Client,
    name: &Name,
    anchor: &Certificate,
) -> Result<ConfigObject, ObjectFetchError> {
    if !ends_in_version(name) {
        return Err(CaError::BadObject(format!("offered {name} has no version")).into());
    }
    let pinned = Certificate::decode(anchor.wire().clone())
        .map_err(|e| CaError::BadObject(format!("the anchor: {e}")))?;
    let mut sink = Capped(Vec::new());
    let report = fetch(client, name, &fetch_options(pinned), &mut sink, &mut |_| {})
        .await
        .map_err(|e| match e {
            FetchError::Verification { .. } | FetchError::Untrusted { .. } => {
                ObjectFetchError::Verification(e)
            }
            FetchError::Sink(_) => ObjectFetchError::TooLarge(name.clone()),
            e => ObjectFetchError::Fetch(e),
        })?;
    if report.verification == "none" {
        return Err(CaError::BadObject(format!("{name} arrived unverified")).into());
    }
    Ok(ConfigObject::decode_parts(
        name.clone(),
        sink.0.into(),
        anchor,
    )?)
}

/// A sink that refuses more than [`MAX_OBJECT`] octets.
struct Capped(Vec<u8>);

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.0.len() + buf.len() > MAX_OBJECT {
            return Err(io::Error::other("object too large"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
