//! Producer side: an object cut into signed segments, answered from a bounded segment store.
//!
//! [`Publication`] is sans-I/O: it turns bytes or a file into Data packets named by the NDN
//! naming conventions (`<prefix>/v=<version>/seg=<n>`, FinalBlockId on every segment), signs
//! each one with the chosen key or, with manifests, signs one manifest per N segments and the
//! segments with DigestSha256, and answers Interests ([`Publication::answer`]). [`serve`]
//! registers the prefix with the forwarder and answers until its connection fails or it is
//! dropped.
//!
//! Besides segments it answers version discovery the two ways NDN fetchers ask: an Interest for
//! `<prefix>` with CanBePrefix gets segment 0, and the Realtime Data Retrieval metadata
//! Interest `<prefix>/32=metadata` gets a Data whose Content is the versioned name (what
//! ndnget and NDNts's segmented-object use).

use std::collections::VecDeque;
use std::fs::File;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use nameway_wire::name::Component;
use nameway_wire::security::DigestSha256;
use nameway_wire::tlv::types;
use nameway_wire::{Data, InterestView, MetaInfo, Name, ParseError, SignError, Signer};

use crate::client::{Client, ClientError, Incoming};
use crate::keys::SigningKey;
use crate::manifest::{implicit_digests, Manifest, MAX_POINTERS};
use crate::naming::{
    ends_in_version, is_keyword, manifest_name, metadata_prefix, segment_name, MANIFEST_KEYWORD,
    METADATA_KEYWORD,
};

/// Largest payload per segment: a segment must stay within the 8800-byte packet limit with
/// its name and an RSA-2048 signature.
pub const MAX_PAYLOAD: usize = 8192;
/// Segments hashed together for the manifests ([`implicit_digests`]).
const DIGEST_BATCH: usize = 32;
/// Default payload per segment (ndnputchunks' default).
pub const DEFAULT_PAYLOAD: usize = 4400;

/// How an object is published.
#[derive(Clone, Debug)]
pub struct PublishOptions {
    /// Payload bytes per segment (1..=[`MAX_PAYLOAD`]).
    pub payload_size: usize,
    /// Digests per manifest (1..=[`crate::manifest::MAX_POINTERS`]); `None` signs every
    /// segment with the key instead.
    pub manifest: Option<usize>,
    /// FreshnessPeriod of segments and manifests.
    pub freshness: Duration,
    /// The version component; `None` takes the current time in milliseconds.
    pub version: Option<u64>,
    /// Segment packets kept in memory; beyond it, segments are rebuilt from the file on demand.
    pub memory_limit: usize,
}

impl Default for PublishOptions {
    fn default() -> Self {
        Self {
            payload_size: DEFAULT_PAYLOAD,
            manifest: None,
            freshness: Duration::from_secs(10),
            version: None,
            memory_limit: 256 << 20,
        }
    }
}

/// Why an object cannot be published.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// An option is out of range.
    #[error("{0}")]
    Options(String),
    /// The name with its version and segment components is too long.
    #[error("name too long: {0}")]
    Name(#[from] ParseError),
    /// The key cannot sign.
    #[error("cannot sign: {0}")]
    Sign(#[from] SignError),
    /// The file cannot be read.
    #[error("cannot read {path}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file changed (size, modification or status-change time) since it was opened to be
    /// published: segments rebuilt from it now would not be those published, so none is.
    #[error(
        "{path} changed since it was published: segments rebuilt from it would mix two \
         contents; publish it again"
    )]
    Changed {
        /// The file.
        path: String,
    },
}

/// Why [`serve`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The registration was refused, or the connection to the forwarder failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A segment could not be rebuilt from the file: it changed, or it cannot be read.
    #[error(transparent)]
    Publication(#[from] PublishError),
}

enum Source {
    Memory(Bytes),
    File {
        file: File,
        path: String,
        stamp: FileStamp,
    },
}

/// What tells a file changed: its size, modification time and (on Unix) status-change time,
/// which every write moves and no user can set back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<SystemTime>,
    status_changed: (i64, i64),
}

impl FileStamp {
    fn of(file: &File) -> std::io::Result<Self> {
        let meta = file.metadata()?;
        #[cfg(unix)]
        let status_changed = {
            use std::os::unix::fs::MetadataExt as _;
            (meta.ctime(), meta.ctime_nsec())
        };
        #[cfg(not(unix))]
        let status_changed = (0, 0);
        Ok(Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            status_changed,
        })
    }
}

/// An object cut into segments (and manifests), ready to answer Interests.
pub struct Publication {
    prefix: Name,
    versioned: Name,
    key: SigningKey,
    options: PublishOptions,
    source: Source,
    size: u64,
    last_segment: u64,
    resident: Vec<Option<Bytes>>,
    fifo: VecDeque<u64>,
    resident_bytes: usize,
    manifests: Vec<Bytes>,
    metadata: Bytes,
    /// Set once every segment has been built: later builds are rebuilds.
    built: bool,
    /// The first segment that could not be rebuilt since [`Publication::take_failure`].
    failure: Option<PublishError>,
    stats: ServeStats,
    /// Certificates answered besides the object (the signer's chain), as (name, TLV).
    certificates: Vec<(Name, Bytes)>,
}

/// What a producer has answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServeStats {
    /// Interests received.
    pub interests: u64,
    /// Segments sent.
    pub segments: u64,
    /// Manifests sent.
    pub manifests: u64,
    /// Metadata (version discovery) answers sent.
    pub metadata: u64,
    /// Interests not answered (not ours, or beyond the last segment).
    pub unanswered: u64,
    /// Certificates sent.
    pub certificates: u64,
    /// Segments rebuilt from the file because they were not resident.
    pub rebuilt: u64,
}

impl std::fmt::Debug for Publication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publication")
            .field("name", &self.versioned.to_string())
            .field("size", &self.size)
            .field("segments", &(self.last_segment + 1))
            .field("manifests", &self.manifests.len())
            .finish_non_exhaustive()
    }
}

impl Publication {
    /// Publishes `bytes` under `prefix`.
    ///
    /// # Errors
    /// Options out of range, a name too long, or a key that cannot sign.
    pub fn from_bytes(
        prefix: Name,
        bytes: Bytes,
        key: SigningKey,
        options: PublishOptions,
    ) -> Result<Self, PublishError> {
        let size = bytes.len() as u64;
        Self::build(prefix, Source::Memory(bytes), size, key, options)
    }

    /// Publishes the file at `path` under `prefix`. The file is read once now (to sign and,
    /// with manifests, to digest every segment); segments that do not fit in
    /// [`PublishOptions::memory_limit`] are read again when asked for, so the file must not
    /// change while it is served (a consumer's verification would then fail).
    ///
    /// # Errors
    /// As [`Publication::from_bytes`], or the file cannot be read.
    pub fn from_file(
        prefix: Name,
        path: &Path,
        key: SigningKey,
        options: PublishOptions,
    ) -> Result<Self, PublishError> {
        let io = |source| PublishError::Io {
            path: path.display().to_string(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let stamp = FileStamp::of(&file).map_err(io)?;
        let source = Source::File {
            file,
            path: path.display().to_string(),
            stamp,
        };
        Self::build(prefix, source, stamp.len, key, options)
    }

    fn build(
        prefix: Name,
        source: Source,
        size: u64,
        key: SigningKey,
        options: PublishOptions,
    ) -> Result<Self, PublishError> {
        if options.payload_size == 0 || options.payload_size > MAX_PAYLOAD {
            return Err(PublishError::Options(format!(
                "payload size {} is out of range 1..={MAX_PAYLOAD}",
                options.payload_size
            )));
        }
        if let Some(n) = options.manifest {
            if n == 0 || n > MAX_POINTERS {
                return Err(PublishError::Options(format!(
                    "manifest size {n} is out of range 1..={MAX_POINTERS}"
                )));
            }
        }
        let versioned = if ends_in_version(&prefix) {
            prefix.clone()
        } else {
            let version = options.version.unwrap_or_else(now_ms);
            prefix.append(&Component::version(version))?
        };
        let last_segment = size.div_ceil(options.payload_size as u64).max(1) - 1;
        let segments = usize::try_from(last_segment + 1)
            .map_err(|_| PublishError::Options("object too large".to_owned()))?;
        let mut publication = Self {
            prefix,
            versioned,
            key,
            options,
            source,
            size,
            last_segment,
            resident: vec![None; segments],
            fifo: VecDeque::new(),
            resident_bytes: 0,
            manifests: Vec::new(),
            metadata: Bytes::new(),
            built: false,
            failure: None,
            stats: ServeStats::default(),
            certificates: Vec::new(),
        };
        // One pass over the object: every segment is built (signed) once; with manifests
        // its digest is kept for the manifest that covers it (hashed a batch at a time).
        let mut digests = Vec::new();
        let mut batch = Vec::new();
        for n in 0..=last_segment {
            let wire = publication.segment(n)?;
            if publication.options.manifest.is_some() {
                batch.push(wire);
                if batch.len() == DIGEST_BATCH || n == last_segment {
                    let packets: Vec<&[u8]> = batch.iter().map(|w| &w[..]).collect();
                    digests.extend(implicit_digests(&packets));
                    batch.clear();
                }
            }
        }
        if let Some(per) = publication.options.manifest {
            publication.manifests = publication.build_manifests(&digests, per)?;
        }
        publication.metadata = publication.build_metadata()?;
        // Written to while it was read: what was signed may be two contents already.
        publication.check_unchanged()?;
        publication.built = true;
        Ok(publication)
    }

    fn build_manifests(
        &self,
        digests: &[[u8; 32]],
        per: usize,
    ) -> Result<Vec<Bytes>, PublishError> {
        let chunks = digests.chunks(per);
        let last = chunks.len().saturating_sub(1) as u64;
        chunks
            .enumerate()
            .map(|(k, chunk)| {
                let start = (k * per) as u64;
                let covered_end = ((k * per + chunk.len()) as u64
                    * self.options.payload_size as u64)
                    .min(self.size);
                let manifest = Manifest {
                    start_segment: start,
                    leaf_size: covered_end - start * self.options.payload_size as u64,
                    digests: chunk.to_vec(),
                };
                let mut data =
                    Data::new(manifest_name(&self.versioned, k as u64)?, manifest.encode());
                data.meta_info = Some(self.meta_info(last));
                data.sign(self.key.signer())?;
                Ok(data.encode())
            })
            .collect()
    }

    /// RDR metadata: `<prefix>/32=metadata/v=<version>/seg=0`, Content = the versioned Name.
    fn build_metadata(&self) -> Result<Bytes, PublishError> {
        let version = self
            .versioned
            .last()
            .and_then(|c| c.as_version())
            .unwrap_or(0);
        let name = metadata_prefix(&self.prefix)?
            .append(&Component::version(version))?
            .append(&Component::segment(0))?;
        let mut data = Data::new(name, self.versioned.to_wire());
        data.meta_info = Some(MetaInfo {
            freshness_period: Some(1000),
            ..MetaInfo::default()
        });
        data.sign(self.key.signer())?;
        Ok(data.encode())
    }

    fn meta_info(&self, last: u64) -> MetaInfo {
        MetaInfo {
            content_type: None,
            freshness_period: Some(crate::client::millis(self.options.freshness)),
            final_block_id: Some(Component::segment(last)),
        }
    }

    /// Also answers Interests for these certificates (the signer's and its issuers', so that
    /// a consumer holding only the trust anchor can fetch the chain): an Interest matches a
    /// certificate whose name it is, or with CanBePrefix its key name or longer.
    #[must_use]
    pub fn with_certificates(mut self, certs: &[crate::cert::Certificate]) -> Self {
        self.certificates = certs
            .iter()
            .map(|c| (c.name().clone(), c.wire().clone()))
            .collect();
        self
    }

    /// The prefixes to register for [`Publication::with_certificates`]: each certificate's
    /// `<identity>/KEY`.
    pub fn certificate_prefixes(&self) -> Vec<Name> {
        let mut out: Vec<Name> = Vec::new();
        for (name, _) in &self.certificates {
            let p = name.prefix(name.len().saturating_sub(3));
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// The prefix the object is registered under (without the version).
    pub fn prefix(&self) -> &Name {
        &self.prefix
    }

    /// The versioned name consumers fetch (`<prefix>/v=<version>`).
    pub fn name(&self) -> &Name {
        &self.versioned
    }

    /// Object size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Number of segments.
    pub fn segment_count(&self) -> u64 {
        self.last_segment + 1
    }

    /// Number of manifests (0 without manifests).
    pub fn manifest_count(&self) -> usize {
        self.manifests.len()
    }

    /// What has been answered so far.
    pub fn stats(&self) -> ServeStats {
        self.stats
    }

    /// Segment `n`'s packet, from memory or rebuilt from the source.
    ///
    /// # Errors
    /// The file cannot be read, or signing failed.
    pub fn segment(&mut self, n: u64) -> Result<Bytes, PublishError> {
        let i = usize::try_from(n).unwrap_or(usize::MAX);
        if let Some(Some(wire)) = self.resident.get(i) {
            return Ok(wire.clone());
        }
        if self.built {
            self.stats.rebuilt += 1;
        }
        let payload = self.payload(n)?;
        let mut data = Data::new(segment_name(&self.versioned, n)?, payload);
        data.meta_info = Some(self.meta_info(self.last_segment));
        let signer: &dyn Signer = if self.options.manifest.is_some() {
            &DigestSha256
        } else {
            self.key.signer()
        };
        data.sign(signer)?;
        let wire = data.encode();
        self.keep(i, wire.clone());
        Ok(wire)
    }

    /// Replaces segment `n`'s packet by `wire` (a test's tampered copy, say); it is then
    /// served as is and never evicted.
    pub fn replace_segment(&mut self, n: u64, wire: Bytes) {
        if let Some(slot) = usize::try_from(n)
            .ok()
            .and_then(|i| self.resident.get_mut(i))
        {
            *slot = Some(wire);
            self.fifo.retain(|&s| s != n);
        }
    }

    fn keep(&mut self, i: usize, wire: Bytes) {
        let Some(slot) = self.resident.get_mut(i) else {
            return;
        };
        self.resident_bytes += wire.len();
        *slot = Some(wire);
        self.fifo.push_back(i as u64);
        while self.resident_bytes > self.options.memory_limit && self.fifo.len() > 1 {
            let Some(old) = self.fifo.pop_front() else {
                break;
            };
            if let Some(slot) = self.resident.get_mut(old as usize) {
                if let Some(w) = slot.take() {
                    self.resident_bytes -= w.len();
                }
            }
        }
    }

    /// Fails with [`PublishError::Changed`] if the file is no longer as it was opened.
    fn check_unchanged(&self) -> Result<(), PublishError> {
        let Source::File { file, path, stamp } = &self.source else {
            return Ok(());
        };
        let now = FileStamp::of(file).map_err(|source| PublishError::Io {
            path: path.clone(),
            source,
        })?;
        if now == *stamp {
            Ok(())
        } else {
            Err(PublishError::Changed { path: path.clone() })
        }
    }

    fn payload(&mut self, n: u64) -> Result<Bytes, PublishError> {
        let size = self.options.payload_size as u64;
        let start = n.saturating_mul(size).min(self.size);
        let end = start.saturating_add(size).min(self.size);
        match &self.source {
            Source::Memory(b) => Ok(b.slice(start as usize..end as usize)),
            Source::File { file, path, .. } => {
                let mut buf = vec![0; (end - start) as usize];
                read_exact_at(file, &mut buf, start).map_err(|source| PublishError::Io {
                    path: path.clone(),
                    source,
                })?;
                if self.built {
                    // A rebuild after publication: from the same bytes, or not at all. Checked
                    // after the read, so a write before or during it is caught.
                    self.check_unchanged()?;
                }
                Ok(Bytes::from(buf))
            }
        }
    }

    /// The packet answering `interest`, if this publication has one: a segment, a manifest,
    /// the metadata, or segment 0 for a CanBePrefix Interest naming the prefix or the
    /// versioned name. Counts it in [`Publication::stats`].
    pub fn answer(&mut self, interest: &InterestView) -> Option<Bytes> {
        self.stats.interests += 1;
        let answer = self.lookup(interest);
        if answer.is_none() {
            self.stats.unanswered += 1;
        }
        answer
    }

    fn lookup(&mut self, interest: &InterestView) -> Option<Bytes> {
        let name = interest.name();
        let cert = self.certificates.iter().find(|(n, _)| {
            // With CanBePrefix, the key name `<identity>/KEY/<key-id>` at least.
            *name == *n
                || (interest.can_be_prefix() && name.len() + 2 >= n.len() && name.is_prefix_of(n))
        });
        if let Some((_, wire)) = cert {
            self.stats.certificates += 1;
            return Some(wire.clone());
        }
        // A trailing implicit digest is the forwarder's to check: look up the name without it.
        let digest = name
            .last()
            .is_some_and(|c| c.typ() == types::IMPLICIT_SHA256_DIGEST_COMPONENT);
        let len = name.len() - usize::from(digest);
        let v = self.versioned.len();
        if len >= v && self.versioned.is_prefix_of(name) {
            return match len - v {
                0 if interest.can_be_prefix() => self.serve_segment(0),
                1 => self.serve_segment(name.get(v)?.as_segment()?),
                2 if is_keyword(&name.get(v)?, MANIFEST_KEYWORD) => {
                    let k = usize::try_from(name.get(v + 1)?.as_segment()?).ok()?;
                    let wire = self.manifests.get(k)?.clone();
                    self.stats.manifests += 1;
                    Some(wire)
                }
                _ => None,
            };
        }
        let p = self.prefix.len();
        if len < p || !self.prefix.is_prefix_of(name) || !interest.can_be_prefix() {
            return None;
        }
        match len - p {
            0 => self.serve_segment(0),
            1 if is_keyword(&name.get(p)?, METADATA_KEYWORD) => {
                self.stats.metadata += 1;
                Some(self.metadata.clone())
            }
            _ => None,
        }
    }

    fn serve_segment(&mut self, n: u64) -> Option<Bytes> {
        if n > self.last_segment {
            return None;
        }
        match self.segment(n) {
            Ok(wire) => {
                self.stats.segments += 1;
                Some(wire)
            }
            Err(e) => {
                self.failure.get_or_insert(e);
                None
            }
        }
    }

    /// Why a segment could not be rebuilt (the file changed or cannot be read), once, if one
    /// could not since the last call; [`serve`] stops with it.
    pub fn take_failure(&mut self) -> Option<PublishError> {
        self.failure.take()
    }
}

/// Registers `publication`'s prefix with the forwarder over `client` and answers Interests
/// until the connection fails (or the future is dropped). Interests are answered in batches:
/// every Interest already received is answered before one write.
///
/// # Errors
/// The registration is refused, the connection fails, or a segment cannot be rebuilt from the
/// file ([`PublishError::Changed`]: serving stops rather than send a mix of two contents).
pub async fn serve(client: &mut Client, publication: &mut Publication) -> Result<(), ServeError> {
    client.register(publication.prefix()).await?;
    serve_registered(client, publication).await
}

/// As [`serve`], for a prefix already registered toward `client`.
///
/// # Errors
/// The connection fails, or a segment cannot be rebuilt from the file.
pub async fn serve_registered(
    client: &mut Client,
    publication: &mut Publication,
) -> Result<(), ServeError> {
    let conn = client.conn();
    loop {
        let mut next = Some(conn.recv().await?);
        while let Some(incoming) = next {
            if let Incoming::Interest(wire) = incoming {
                if let Ok(view) = InterestView::new_checked(wire) {
                    if let Some(data) = publication.answer(&view) {
                        conn.queue(&data);
                    }
                }
            }
            next = conn.try_recv()?;
        }
        conn.flush().await?;
        if let Some(e) = publication.take_failure() {
            return Err(e.into());
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut f = file.try_clone()?;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A 20 000-byte file published with no memory to keep segments in (every one is then
    /// rebuilt from the file when asked for).
    fn unkept(dir: &Path) -> (std::path::PathBuf, Publication) {
        let path = dir.join("obj");
        std::fs::write(&path, vec![7u8; 20_000]).unwrap();
        let options = PublishOptions {
            payload_size: 1000,
            memory_limit: 0,
            version: Some(1),
            ..PublishOptions::default()
        };
        let p = Publication::from_file("/f".parse().unwrap(), &path, SigningKey::Digest, options)
            .unwrap();
        (path, p)
    }

    #[test]
    fn segments_rebuilt_from_an_unchanged_file_are_those_published() {
        let dir = tempfile::tempdir().unwrap();
        let (_, mut p) = unkept(dir.path());
        let first = p.segment(3).unwrap();
        assert_eq!(p.segment(3).unwrap(), first);
        assert!(p.take_failure().is_none());
    }

    #[test]
    fn a_file_written_to_after_publication_is_not_served() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut p) = unkept(dir.path());
        // The same size, other bytes, written in place (as `dd conv=notrunc` or an editor
        // saving in place would). The coarse file clock ticks every few milliseconds.
        std::thread::sleep(Duration::from_millis(50));
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, &[9u8; 10], 3000).unwrap();
        drop(f);
        let err = p.segment(3).unwrap_err();
        assert!(matches!(err, PublishError::Changed { .. }), "{err}");
        assert!(
            err.to_string().contains("changed since it was published"),
            "{err}"
        );
        // Asked for by an Interest: no answer, and the failure is kept for `serve`.
        let name = segment_name(&"/f/v=1".parse().unwrap(), 3).unwrap();
        let interest = nameway_wire::Interest::new(name).encode();
        let view = InterestView::new_checked(interest).unwrap();
        assert!(p.answer(&view).is_none());
        assert!(matches!(
            p.take_failure(),
            Some(PublishError::Changed { .. })
        ));
        assert!(p.take_failure().is_none());
    }
}
