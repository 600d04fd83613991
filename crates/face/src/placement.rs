//! Where an accepted connection's I/O runs with a sharded forwarder.
//!
//! A face's packets go to its home shard ([`crate::home_shard`]). When the daemon gives the
//! face system the runtimes of shards 1.. ([`crate::FaceSystem::set_shard_runtimes`]), an
//! accepted stream connection (Unix, TCP) whose home shard is `s > 0` leaves the listener's
//! runtime: the socket is taken off its reactor ([`Adopt::into_std`]) and the face's tasks
//! (reader, writer) are spawned on shard `s`'s runtime, which registers the socket with its own
//! reactor ([`Adopt::from_std`]). A burst then stays on one thread: the reader wakes the
//! shard's loop, which forwards and queues the output for the writer, all on the thread that
//! owns the face. Shard 0's faces, and every face of a forwarder with one thread, are run
//! where they are accepted, as before.
//!
//! The same holds for every other face that owns a connection: WebSocket connections
//! (accepted, the TLS and WebSocket handshakes included) and TCP faces made by `faces/create`
//! (the connection and every reconnection of a permanent face). A UDP face shares its
//! channel's socket with the channel's other peers, so its datagrams are still read by the
//! channel's receive task; its writer ([`spawn_home`]) runs on its home shard's runtime and
//! sends on the shared socket from there (a send does not wait on the reactor unless the
//! socket's buffer is full).

use std::future::Future;
use std::io;
use std::sync::Arc;

use crate::counters::bump;
use crate::id::FaceId;
use crate::system::Shared;

/// A tokio socket that can leave one runtime's reactor and join another's.
pub(crate) trait Adopt: Sized + Send + 'static {
    /// The same socket outside any runtime.
    type Std: Send + 'static;
    /// Takes the socket off the current runtime's reactor.
    fn into_std(self) -> io::Result<Self::Std>;
    /// Registers the socket with the current runtime's reactor.
    fn from_std(s: Self::Std) -> io::Result<Self>;
}

impl Adopt for tokio::net::UnixStream {
    type Std = std::os::unix::net::UnixStream;
    fn into_std(self) -> io::Result<Self::Std> {
        tokio::net::UnixStream::into_std(self)
    }
    fn from_std(s: Self::Std) -> io::Result<Self> {
        tokio::net::UnixStream::from_std(s)
    }
}

impl Adopt for tokio::net::TcpStream {
    type Std = std::net::TcpStream;
    fn into_std(self) -> io::Result<Self::Std> {
        tokio::net::TcpStream::into_std(self)
    }
    fn from_std(s: Self::Std) -> io::Result<Self> {
        tokio::net::TcpStream::from_std(s)
    }
}

/// An accepted connection: still on the runtime that accepted it, or on its way to another.
pub(crate) enum Accepted<T: Adopt> {
    /// Registered with the current runtime.
    Here(T),
    /// Taken off the accepting runtime; [`Accepted::adopt`] registers it where it runs.
    Moved(T::Std),
}

impl<T: Adopt> Accepted<T> {
    /// The socket, registered with the runtime this is called on.
    ///
    /// # Errors
    /// The reactor refuses the socket (the connection is then dropped).
    pub(crate) fn adopt(self) -> io::Result<T> {
        match self {
            Self::Here(s) => Ok(s),
            Self::Moved(s) => T::from_std(s),
        }
    }
}

/// Runs `fut`, a task of the face `id` that holds no socket of its own, on the face's home
/// shard's runtime, or here when that is shard 0 or no shard runtimes were given.
pub(crate) fn spawn_home<Fut>(shared: &Arc<Shared>, id: FaceId, fut: Fut)
where
    Fut: Future<Output = ()> + Send + 'static,
{
    match shared.home_runtime(id) {
        None => shared.spawn(fut),
        Some(rt) => shared.spawn_on(&rt, fut),
    }
}

/// Runs the face `id` on `stream`: `run` builds its task, spawned on the face's home shard's
/// runtime, or here when that is shard 0 or no shard runtimes were given. A connection that
/// cannot leave this runtime is dropped and counted as a failed accept.
pub(crate) fn spawn_face<T, F, Fut>(shared: &Arc<Shared>, id: FaceId, stream: T, run: F)
where
    T: Adopt,
    F: FnOnce(Accepted<T>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    match shared.home_runtime(id) {
        None => shared.spawn(run(Accepted::Here(stream))),
        Some(rt) => match stream.into_std() {
            Ok(s) => shared.spawn_on(&rt, run(Accepted::Moved(s))),
            Err(e) => {
                bump(&shared.counters.accept_errors);
                tracing::debug!(face = %id, error = %e, "cannot move a connection to its shard");
            }
        },
    }
}
