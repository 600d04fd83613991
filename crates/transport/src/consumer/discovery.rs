//! Before a fetch: the object's version (RDR metadata or a CanBePrefix Interest) and, with a
//! trust anchor, the certificate chain from the object's signer to the anchor.

use std::time::{Duration, Instant};

use nameway_wire::name::ComponentRef;
use nameway_wire::signature::{signature_type, KeyLocator};
use nameway_wire::{DataView, Interest, InterestView, NackReason, Name};

use super::{FetchError, FetchOptions};
use crate::cert::{CertError, Certificate, MAX_CHAIN};
use crate::client::{later, millis, random_u32, Client, ClientError, Conn, Incoming};
use crate::naming::{ends_in_version, manifest_name, metadata_prefix, segment_name};

/// The certificate whose key signed the object, found from the KeyLocator of its first signed
/// packet (segment 0, or manifest 0 when the segments carry DigestSha256) by fetching
/// certificates until one names `anchor`; each must be in its validity period and within its
/// issuer's identity, and every signature from the anchor down must verify. `None` inside:
/// the anchor signed the object itself.
pub(super) async fn resolve_signer(
    client: &mut Client,
    anchor: &Certificate,
    versioned: &Name,
    first: Option<&DataView>,
    options: &FetchOptions,
) -> Result<Option<Certificate>, FetchError> {
    let untrusted = |name: &Name, detail: String| FetchError::Untrusted {
        name: name.clone(),
        detail,
    };
    let timeout = options.lifetime;
    let segment0 = segment_name(versioned, 0).map_err(ClientError::from)?;
    let mut signed = match first {
        Some(v) if *v.name() == segment0 => v.clone(),
        _ => express_view(client, &segment0, false, timeout).await?,
    };
    if signed.signature_info().signature_type == signature_type::DIGEST_SHA256 {
        let manifest0 = manifest_name(versioned, 0).map_err(ClientError::from)?;
        signed = express_view(client, &manifest0, false, timeout).await?;
    }
    let Some(KeyLocator::Name(mut locator)) = signed.signature_info().key_locator else {
        return Err(untrusted(
            signed.name(),
            "its KeyLocator names no certificate".to_owned(),
        ));
    };
    let cert_err = |name: &Name, e: CertError| untrusted(name, e.to_string());
    let mut subject = signed.name().clone();
    let mut chain: Vec<Certificate> = Vec::new();
    while !anchor.is_named_by(&locator) {
        if chain.len() == MAX_CHAIN {
            return Err(untrusted(
                signed.name(),
                format!(
                    "no certificate within {MAX_CHAIN} links is signed by the anchor {}",
                    anchor.name()
                ),
            ));
        }
        let view = express_view(client, &locator, true, timeout)
            .await
            .map_err(|e| {
                untrusted(
                    &subject,
                    format!("certificate {locator} could not be fetched ({e})"),
                )
            })?;
        let cert = Certificate::decode(view.into_wire()).map_err(|e| cert_err(&subject, e))?;
        if !cert.is_named_by(&locator) {
            return Err(untrusted(
                &subject,
                format!("{locator} was answered with {}", cert.name()),
            ));
        }
        cert.check_validity().map_err(|e| cert_err(&subject, e))?;
        cert.check_scope(&subject)
            .map_err(|e| cert_err(&subject, e))?;
        subject = cert.name().clone();
        locator = cert
            .issuer()
            .cloned()
            .ok_or_else(|| untrusted(&subject, "no issuer in its KeyLocator".to_owned()))?;
        chain.push(cert);
    }
    anchor.check_validity().map_err(|e| cert_err(&subject, e))?;
    anchor
        .check_scope(&subject)
        .map_err(|e| cert_err(&subject, e))?;
    for i in (0..chain.len()).rev() {
        let issuer = chain.get(i + 1).unwrap_or(anchor);
        chain[i]
            .check_issued_by(issuer)
            .map_err(|e| cert_err(signed.name(), e))?;
    }
    Ok(chain.into_iter().next())
}

/// One Interest, its Data as a view.
async fn express_view(
    client: &mut Client,
    name: &Name,
    can_be_prefix: bool,
    timeout: Duration,
) -> Result<DataView, FetchError> {
    let interest = Interest {
        name: name.clone(),
        can_be_prefix,
        nonce: Some(random_u32()),
        lifetime_ms: Some(millis(timeout)),
        ..Interest::default()
    };
    let wire = client.express_wire(&interest, timeout).await?;
    DataView::new_checked(wire).map_err(|e| {
        FetchError::from(ClientError::Malformed {
            name: name.clone(),
            detail: e.to_string(),
        })
    })
}

/// How long discovery waits for the RDR metadata after a CanBePrefix Interest was answered:
/// at least this, and at least four times as long as that answer took.
const METADATA_GRACE: Duration = Duration::from_millis(50);

/// Finds the versioned name: `name` itself if it ends in a version; otherwise RDR metadata
/// (`<name>/32=metadata`) and a CanBePrefix Interest for `name` are sent together. The
/// metadata, which the producer answers with its current version, is preferred: a segment that
/// answers the CanBePrefix Interest first may come from a cache holding an earlier version that
/// is still fresh (a file published again under the same prefix), so it is taken only when the
/// metadata is Nacked or does not come within [`METADATA_GRACE`] (producers that serve no
/// metadata, as python-ndn's and NDNts's segmented producers). Returns the segment the
/// CanBePrefix answer carried when it is of the version chosen.
pub(super) async fn discover(
    conn: &mut Conn,
    name: &Name,
    options: &FetchOptions,
) -> Result<(Name, Option<DataView>), FetchError> {
    if ends_in_version(name) {
        return Ok((name.clone(), None));
    }
    let metadata_name = metadata_prefix(name).map_err(ClientError::from)?;
    let lifetime = millis(options.discovery_timeout);
    let mut nacks = Vec::new();
    // Nacks NoRoute with RetryAfter (a forwarder resolving the name) are waited out, up to
    // `max_retry_after` in all, without using up an attempt.
    let mut retry_after_waited = Duration::ZERO;
    let mut attempt = 0;
    while attempt < 3 {
        attempt += 1;
        let mut retry_after: Option<u64> = None;
        let sent = Instant::now();
        for n in [&metadata_name, name] {
            let interest = Interest {
                name: n.clone(),
                can_be_prefix: true,
                must_be_fresh: true,
                nonce: Some(random_u32()),
                lifetime_ms: Some(lifetime),
                ..Interest::default()
            };
            conn.queue(&interest.encode());
        }
        conn.flush().await?;
        nacks.clear();
        let mut nacked: Vec<usize> = Vec::with_capacity(2);
        // The CanBePrefix answer, held while the metadata may still come, and until when.
        let mut candidate: Option<(Name, DataView, tokio::time::Instant)> = None;
        let deadline =
            tokio::time::Instant::from_std(later(Instant::now(), options.discovery_timeout));
        while nacks.len() < 2 {
            let until = candidate.as_ref().map_or(deadline, |c| c.2.min(deadline));
            let Ok(packet) = tokio::time::timeout_at(until, conn.recv()).await else {
                if let Some((found, view, _)) = candidate {
                    return Ok((found, Some(view)));
                }
                break;
            };
            match packet? {
                Incoming::Data(wire) => {
                    let Ok(view) = DataView::new_checked(wire) else {
                        continue;
                    };
                    if metadata_name.is_prefix_of(view.name()) {
                        if let Ok(versioned) = Name::decode(&view.content()) {
                            if name.is_prefix_of(&versioned) && versioned.len() > name.len() {
                                let first = candidate.and_then(|(found, view, _)| {
                                    (found == versioned).then_some(view)
                                });
                                return Ok((versioned, first));
                            }
                        }
                        continue;
                    }
                    if candidate.is_none() {
                        if let Some(found) = versioned_from_segment(name, view.name()) {
                            if nacked.contains(&0) {
                                return Ok((found, Some(view)));
                            }
                            let grace = METADATA_GRACE.max(sent.elapsed().saturating_mul(4));
                            let until = tokio::time::Instant::now() + grace;
                            candidate = Some((found, view, until));
                        }
                    }
                }
                Incoming::Nack {
                    reason,
                    interest,
                    retry_after: after,
                } => {
                    if reason == NackReason::NoRoute {
                        retry_after = retry_after.max(after);
                    }
                    // One per Interest: a second Nack for the same one (a forwarder that
                    // repeats itself) must not end discovery before the other is answered.
                    let which = InterestView::new_checked(interest).ok().and_then(|v| {
                        [&metadata_name, name]
                            .into_iter()
                            .position(|n| v.name() == n)
                    });
                    if let Some(which) = which {
                        if !nacked.contains(&which) {
                            nacked.push(which);
                            nacks.push(reason);
                        }
                        // No metadata is coming: the segment held is the answer.
                        if which == 0 {
                            if let Some((found, view, _)) = candidate {
                                return Ok((found, Some(view)));
                            }
                        }
                    }
                }
                Incoming::Interest(_) => {}
            }
        }
        if let Some(ms) = retry_after.filter(|_| nacks.len() == 2) {
            let wait = Duration::from_millis(ms.max(1));
            if retry_after_waited.saturating_add(wait) <= options.max_retry_after {
                retry_after_waited += wait;
                attempt -= 1;
                tokio::time::sleep(wait).await;
                continue;
            }
        }
        if nacks.len() == 2 {
            if let Some(reason) = nacks.iter().find(|r| **r != NackReason::Duplicate) {
                return Err(FetchError::Nack {
                    name: name.clone(),
                    reason: *reason,
                });
            }
        }
    }
    Err(FetchError::NotFound {
        name: name.clone(),
        detail: format!(
            "neither {metadata_name} nor a CanBePrefix Interest for it was answered \
             (3 tries, {} ms each)",
            lifetime
        ),
    })
}

/// `<name>/v=X` from a segment named `<name>/v=X/seg=N`, or `<name>` from `<name>/seg=N`.
fn versioned_from_segment(name: &Name, data_name: &Name) -> Option<Name> {
    if !name.is_prefix_of(data_name) {
        return None;
    }
    let rest: Vec<ComponentRef<'_>> = data_name.iter().skip(name.len()).collect();
    match rest.as_slice() {
        [seg] if seg.as_segment().is_some() => Some(name.clone()),
        [v, seg] if v.as_version().is_some() && seg.as_segment().is_some() => {
            Some(data_name.prefix(name.len() + 1))
        }
        _ => None,
    }
}
