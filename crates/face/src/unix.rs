//! The Unix stream listener (NFD `UnixStreamChannel`): `/run/nfd/nfd.sock` by default, where
//! python-ndn and NDNts connect first. Faces from it are local, on-demand, and named
//! `fd://N` (remote) / `unix:///path` (local) as NFD names them.

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::{UnixListener, UnixStream};

use crate::accept::AcceptFailures;
use crate::counters::bump;
use crate::error::FaceError;
use crate::face::FaceParams;
use crate::id::{FaceId, FaceKind, FaceScope, Persistency};
use crate::placement::{self, Accepted};
use crate::stream;
use crate::system::{path_string, Shared};
use crate::uri::FaceUri;

/// The socket file this face system created; removed on shutdown only if it is still the
/// same file (another daemon may have replaced it since).
#[derive(Debug)]
pub(crate) struct UnixSocketFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl UnixSocketFile {
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the socket file if it is still ours.
    pub(crate) fn remove(&self) {
        let Ok(meta) = std::fs::symlink_metadata(&self.path) else {
            return;
        };
        if meta.dev() == self.dev && meta.ino() == self.ino {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Binds the listener: creates the parent directory, replaces a stale socket file (one that
/// nobody accepts on), and makes the socket mode 0666 so any user's apps can connect.
///
/// # Errors
/// [`FaceError::UnixPathInUse`] when a process accepts on `path`; [`FaceError::Listen`]
/// when `path` exists and is not a socket, or on any I/O error.
pub(crate) fn bind(path: &Path) -> Result<(UnixListener, UnixSocketFile), FaceError> {
    let fail = |source: io::Error| FaceError::Listen {
        addr: path_string(path),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(fail(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "not a socket",
            )));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(FaceError::UnixPathInUse(path.to_owned()));
        }
        std::fs::remove_file(path).map_err(fail)?;
    }
    let listener = UnixListener::bind(path).map_err(fail)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666)).map_err(fail)?;
    let meta = std::fs::symlink_metadata(path).map_err(fail)?;
    let file = UnixSocketFile {
        path: path.to_owned(),
        dev: meta.dev(),
        ino: meta.ino(),
    };
    Ok((listener, file))
}

/// Accepts connections until shutdown.
pub(crate) async fn accept_loop(shared: Arc<Shared>, listener: UnixListener, path: PathBuf) {
    let mut stop = shared.shutdown_signal();
    let mut failures = AcceptFailures::new(FaceUri::Unix(path.clone()));
    loop {
        let accepted = tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                let (s, p) = (shared.clone(), path.clone());
                placement::accept(&shared, stream, move |id, st| run_face(s, id, st, p));
            }
            Err(e) => failures.failed(&shared.counters, &e).await,
        }
    }
}

async fn run_face(shared: Arc<Shared>, id: FaceId, stream: Accepted<UnixStream>, path: PathBuf) {
    let Ok(stream) = stream.adopt() else {
        bump(&shared.counters.accept_errors);
        return;
    };
    let fd = u64::try_from(stream.as_raw_fd()).unwrap_or(0);
    // Registered for reads only: no wake-up each time the client reads what it was sent.
    let Ok((reader, writer)) = crate::unix_io::split(stream) else {
        bump(&shared.counters.accept_errors);
        return;
    };
    let params = FaceParams {
        kind: FaceKind::Unix,
        remote: FaceUri::Fd(fd),
        local: FaceUri::Unix(path),
        scope: FaceScope::Local,
        persistency: Persistency::OnDemand,
        mtu: None,
        secure: None,
    };
    let Ok((face, queue)) = shared.register_face_as(id, params, None) else {
        return; // shutting down
    };
    shared.announce_up(&face).await;
    let (reason, _) = stream::run(&shared, &face, reader, writer, queue).await;
    shared.face_closed(&face, reason).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size of the future `f` returns (without calling it).
    fn future_size<A, F: std::future::Future>(_: impl FnOnce(A) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    /// An idle Unix face costs two tasks; their futures are part of its memory.
    #[test]
    fn idle_face_futures_are_small() {
        let reader = future_size(|(s, st, p): (Arc<Shared>, Accepted<UnixStream>, PathBuf)| {
            run_face(s, FaceId(0), st, p)
        });
        let writer = stream::writer_future_size();
        println!("run_face future: {reader} B, write_loop future: {writer} B");
        // Measured 888 B and 608 B (tokio 1.54; 1008 B and 736 B while the close signals were
        // tokio `watch` channels, crate::close): the waits of a busy or closing face (event
        // queue full, paused, flushing) are boxed, the reassembler too.
        assert!(reader <= 928, "run_face future grew to {reader} B");
        assert!(writer <= 640, "write_loop future grew to {writer} B");
    }
}
