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
use std::time::Duration;

use bytes::Bytes;
use tokio::io::Interest;

use crate::counters::bump;
use crate::framing::StreamFramer;
use crate::id::FaceId;
use crate::system::Shared;

/// Names the shard a connection's first packet belongs to (`None`: no preference). Given by
/// the daemon ([`crate::FaceSystem::set_placement`]); it must not block.
#[derive(Clone)]
pub struct Placer(Arc<PlaceFn>);

/// The function inside a [`Placer`].
type PlaceFn = dyn Fn(&Bytes) -> Option<usize> + Send + Sync;

impl Placer {
    /// A placer that asks `f`.
    pub fn new(f: impl Fn(&Bytes) -> Option<usize> + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// The shard `first` (a connection's first packet) asks for.
    pub fn place(&self, first: &Bytes) -> Option<usize> {
        (self.0)(first)
    }
}

impl std::fmt::Debug for Placer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Placer")
    }
}

/// How long a new connection is kept unregistered waiting for its first packet when placing
/// by traffic; past it the face is placed by id. Applications send at once (an Interest, or
/// a prefix registration), so this only delays the face of one that stays silent.
pub const PLACE_WAIT: Duration = Duration::from_millis(100);

/// Bytes looked at for the first packet (an Interest or a command is far shorter; a first
/// packet longer than this is placed by id).
const PEEK_BYTES: usize = 2048;

/// A tokio socket that can leave one runtime's reactor and join another's.
pub(crate) trait Adopt: Sized + Send + Sync + 'static {
    /// The same socket outside any runtime.
    type Std: Send + 'static;
    /// Takes the socket off the current runtime's reactor.
    fn into_std(self) -> io::Result<Self::Std>;
    /// Registers the socket with the current runtime's reactor.
    fn from_std(s: Self::Std) -> io::Result<Self>;
    /// Waits until the socket may have bytes to read.
    fn readable(&self) -> impl Future<Output = io::Result<()>> + Send;
    /// Copies the bytes waiting on the socket into `buf` without taking them (`MSG_PEEK`).
    ///
    /// # Errors
    /// `WouldBlock` when none are waiting (the readiness is then cleared).
    fn try_peek(&self, buf: &mut [u8]) -> io::Result<usize>;
}

impl Adopt for tokio::net::UnixStream {
    type Std = std::os::unix::net::UnixStream;
    fn into_std(self) -> io::Result<Self::Std> {
        tokio::net::UnixStream::into_std(self)
    }
    fn from_std(s: Self::Std) -> io::Result<Self> {
        tokio::net::UnixStream::from_std(s)
    }
    fn readable(&self) -> impl Future<Output = io::Result<()>> + Send {
        tokio::net::UnixStream::readable(self)
    }
    fn try_peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.try_io(Interest::READABLE, || crate::sys::peek(self, buf))
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
    fn readable(&self) -> impl Future<Output = io::Result<()>> + Send {
        tokio::net::TcpStream::readable(self)
    }
    fn try_peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.try_io(Interest::READABLE, || crate::sys::peek(self, buf))
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

/// Starts the face of a connection just accepted: its id chosen by its first packet when the
/// daemon gave a [`Placer`] and there are several shards (the wait runs as its own task, so
/// the listener keeps accepting), else the next id; then [`spawn_face`]. `run` gets the id.
pub(crate) fn accept<T, F, Fut>(shared: &Arc<Shared>, stream: T, run: F)
where
    T: Adopt,
    F: FnOnce(FaceId, Accepted<T>) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let placer = match shared.placer.get() {
        Some(p) if shared.shard_count() > 1 => p.clone(),
        _ => {
            let id = shared.next_face_id();
            spawn_face(shared, id, stream, move |st| run(id, st));
            return;
        }
    };
    let s = shared.clone();
    shared.spawn(async move {
        let first = tokio::time::timeout(PLACE_WAIT, first_packet(&stream))
            .await
            .ok()
            .flatten();
        let shard = first.as_ref().and_then(|p| placer.place(p));
        let id = match shard {
            Some(shard) if shard < s.shard_count() => {
                bump(&s.counters.placed_by_traffic);
                s.next_face_id_on(shard)
            }
            _ => s.next_face_id(),
        };
        spawn_face(&s, id, stream, move |st| run(id, st));
    });
}

/// The first whole packet waiting on `stream`, looked at without being read; `None` when the
/// peer closes, an error occurs, or the first bytes are not one packet of at most
/// [`PEEK_BYTES`].
async fn first_packet<T: Adopt>(stream: &T) -> Option<Bytes> {
    let mut buf = vec![0u8; PEEK_BYTES];
    loop {
        stream.readable().await.ok()?;
        let n = match stream.try_peek(&mut buf) {
            Ok(0) => return None,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(_) => return None,
        };
        let mut framer = StreamFramer::default();
        framer.extend(buf.get(..n)?);
        match framer.next_packet() {
            Ok(Some(p)) => return Some(p),
            // Part of the first packet: look again shortly unless the window is full (the
            // socket stays readable while the bytes wait, so `readable` would not wait).
            Ok(None) if n < PEEK_BYTES => {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            _ => return None,
        }
    }
}
