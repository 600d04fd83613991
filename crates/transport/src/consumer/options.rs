//! What a fetch is asked ([`FetchOptions`]) and what it tells: [`Progress`] while it runs, a
//! [`FetchReport`] at the end, a [`FetchError`] when it fails.

use std::time::Duration;

use nameway_wire::{NackReason, Name};

use crate::cc::CcOptions;
use crate::cert::Certificate;
use crate::client::ClientError;
use crate::keys::VerifyKey;

/// How an object is fetched.
#[derive(Debug)]
pub struct FetchOptions {
    /// Congestion control.
    pub cc: CcOptions,
    /// InterestLifetime of segment Interests.
    pub lifetime: Duration,
    /// Retransmissions of one segment after a timeout or a Nack before the fetch fails (early
    /// retransmissions, by RACK or a tail loss probe, are not counted, up to four times this).
    pub max_retries: u32,
    /// Bounds of the retransmission timeout.
    pub min_rto: Duration,
    /// Upper bound of the retransmission timeout.
    pub max_rto: Duration,
    /// The pinned key (the producer's own public key, or an HMAC secret); with neither this
    /// nor [`FetchOptions::anchor`], nothing is verified.
    pub verify: Option<VerifyKey>,
    /// A trust anchor (a self-signed certificate): the producer's key is trusted if a chain
    /// of certificates leads from it to the anchor. Takes precedence over `verify`.
    pub anchor: Option<Certificate>,
    /// How long to wait for each version-discovery attempt (three are made).
    pub discovery_timeout: Duration,
    /// The longest a Nack NoRoute's RetryAfter is waited out in all: by version discovery,
    /// and by each segment or manifest (which is also Nacked so at most
    /// [`FetchOptions::max_retries`] times). Past it the fetch fails with
    /// [`FetchError::NoRouteAfterRetry`].
    pub max_retry_after: Duration,
    /// How often the progress callback is called.
    pub progress_interval: Duration,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self {
            cc: CcOptions::default(),
            lifetime: Duration::from_secs(4),
            max_retries: 15,
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(4),
            verify: None,
            anchor: None,
            discovery_timeout: Duration::from_secs(2),
            max_retry_after: Duration::from_secs(10),
            progress_interval: Duration::from_millis(200),
        }
    }
}

/// Where a fetch is, for a progress display.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Bytes written to the sink.
    pub bytes: u64,
    /// Estimated object size (known once the last segment number is).
    pub total: Option<u64>,
    /// Segments written.
    pub segments: u64,
    /// Current congestion window.
    pub window: usize,
    /// Retransmissions so far.
    pub retransmissions: u64,
    /// Time since the fetch started.
    pub elapsed: Duration,
}

/// The outcome of a fetch, like ndnget's summary.
#[derive(Clone, Debug)]
pub struct FetchReport {
    /// The versioned name fetched.
    pub name: Name,
    /// Bytes written.
    pub bytes: u64,
    /// Segments written.
    pub segments: u64,
    /// Manifests fetched and verified.
    pub manifests: u64,
    /// Interests sent in all (segments and manifests, retransmissions included).
    pub interests: u64,
    /// Retransmissions (after a timeout or a Nack).
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Losses detected early, because later Interests were answered (RACK).
    pub fast_retransmits: u64,
    /// Tail loss probes sent (after two RTTs without any Data).
    pub probes: u64,
    /// Nacks received.
    pub nacks: u64,
    /// Of those, Nacks NoRoute with RetryAfter for a segment or manifest, waited out before it
    /// was asked for again.
    pub retry_after_waits: u64,
    /// Smallest, mean and largest RTT of segments sent once.
    pub rtt_min: Duration,
    /// Mean RTT.
    pub rtt_avg: Duration,
    /// Largest RTT.
    pub rtt_max: Duration,
    /// Congestion-window decreases.
    pub window_decreases: u64,
    /// Of those, decreases for losses judged random (no queue on the path; a smaller cut).
    pub random_losses: u64,
    /// Largest window reached.
    pub peak_window: usize,
    /// How the content was verified: `none`, `packet <kind>` or `manifest <kind>`.
    pub verification: String,
    /// Time from the first Interest to the last segment written.
    pub elapsed: Duration,
}

impl FetchReport {
    /// Goodput in bits per second.
    pub fn goodput_bps(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.bytes as f64 * 8.0 / s
        } else {
            0.0
        }
    }
}

/// Why a fetch failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The connection to the forwarder failed.
    #[error(transparent)]
    Client(Box<ClientError>),
    /// No version of the object answered.
    #[error("no object under {name}: {detail}")]
    NotFound {
        /// The name asked for.
        name: Name,
        /// What was tried.
        detail: String,
    },
    /// An Interest was Nacked with a reason that retrying will not fix.
    #[error("Nack {reason} for {name}")]
    Nack {
        /// The Interest's name.
        name: Name,
        /// Why.
        reason: NackReason,
    },
    /// A segment or manifest was still Nacked NoRoute with RetryAfter once the waits allowed
    /// ([`FetchOptions::max_retry_after`], [`FetchOptions::max_retries`]) were used up.
    #[error("no route to {name} after waiting out RetryAfter {waits} times ({} ms in all)", waited.as_millis())]
    NoRouteAfterRetry {
        /// The packet's name.
        name: Name,
        /// Nacks waited out.
        waits: u32,
        /// The time they asked for in all.
        waited: Duration,
    },
    /// A segment or manifest did not arrive after every retransmission.
    #[error("{name} did not arrive after {retries} retransmissions")]
    Timeout {
        /// The packet's name.
        name: Name,
        /// Retransmissions made.
        retries: u32,
    },
    /// A segment or manifest failed verification.
    #[error("verification failed for segment {segment} ({name}): {detail}")]
    Verification {
        /// The segment number (of the segment, or of the manifest).
        segment: u64,
        /// The packet's name.
        name: Name,
        /// What is wrong.
        detail: String,
    },
    /// The fetch cannot go on: nothing is in flight and nothing may be asked for (a bug, or
    /// an object whose segments and manifests disagree); reported instead of waiting forever.
    #[error("fetch of {name} stalled at segment {segment}")]
    Stalled {
        /// The versioned name.
        name: Name,
        /// The next segment to deliver.
        segment: u64,
    },
    /// A verification worker thread failed (a bug: it panicked); reported instead of waiting
    /// for its results forever.
    #[error("the verification worker of {name} failed: {detail}")]
    Worker {
        /// The versioned name.
        name: Name,
        /// The worker's panic message.
        detail: String,
    },
    /// The sink refused the bytes.
    #[error("cannot write the object: {0}")]
    Sink(#[from] std::io::Error),
    /// The signer's certificate chain does not lead to the trust anchor.
    #[error("untrusted signer of {name}: {detail}")]
    Untrusted {
        /// The packet whose signer was looked for.
        name: Name,
        /// What is wrong with the chain.
        detail: String,
    },
}

impl From<ClientError> for FetchError {
    fn from(e: ClientError) -> Self {
        Self::Client(Box::new(e))
    }
}
