//! A Unix stream face's socket, watched by the reactor for reads only.
//!
//! tokio registers its sockets for reads and writes at once (`EPOLLIN | EPOLLOUT`, edge
//! triggered). On a Unix stream the kernel signals "writable" again every time the peer reads
//! what was written to it (`unix_write_space`, each time the peer frees a packet it took),
//! and with `EPOLLOUT` registered that wakes the forwarder's thread from `epoll_wait` with
//! nothing to do: the client that was just sent a packet reads it, and the forwarder wakes up
//! only to go back to sleep. A face's socket almost always has room, so [`UnixIo`] registers
//! the socket for reads only and writes without waiting; when a write does find the socket
//! full, a second descriptor of the same socket (`dup`) is registered for writes until a
//! write goes through again ([`UnixWriter`]).

use std::io::{self, IoSlice, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncWrite, Interest};

use crate::stream::{read_draining, StreamRead};

type Socket = std::os::unix::net::UnixStream;

/// The read side: the socket, registered for reads only.
pub(crate) struct UnixIo {
    fd: Arc<AsyncFd<Socket>>,
}

/// The write side: writes straight to the socket; waits for room through a registration of
/// its own, made only while the socket is full.
pub(crate) struct UnixWriter {
    fd: Arc<AsyncFd<Socket>>,
    /// A duplicate of the socket's descriptor, registered for writes while a write waits
    /// (boxed: the writer task of an idle face keeps one word for it).
    room: Option<Box<AsyncFd<Socket>>>,
}

/// Takes `stream` from tokio's reactor and registers it again for reads only.
///
/// # Errors
/// The registration's error.
pub(crate) fn split(stream: tokio::net::UnixStream) -> io::Result<(UnixIo, UnixWriter)> {
    let socket = stream.into_std()?;
    // `into_std` leaves the socket non-blocking, as the writes below need.
    let fd = Arc::new(crate::sys::register_unix(socket, Interest::READABLE)?);
    Ok((UnixIo { fd: fd.clone() }, UnixWriter { fd, room: None }))
}

impl StreamRead for UnixIo {
    async fn readable(&self) -> io::Result<()> {
        // The guard is dropped without clearing: the read that follows clears the readiness
        // when it finds the socket empty.
        self.fd.readable().await.map(drop)
    }

    fn try_read_buf(&self, buf: &mut bytes::BytesMut) -> io::Result<usize> {
        let fd = &self.fd;
        read_draining(
            buf,
            |f| fd.try_io(Interest::READABLE, |_| f()),
            |b| crate::sys::recv_buf(fd.get_ref(), b),
        )
    }
}

impl UnixWriter {
    /// The registration that says when the socket has room again, made on first need.
    fn room(&mut self) -> io::Result<&AsyncFd<Socket>> {
        if self.room.is_none() {
            let dup = self.fd.get_ref().try_clone()?;
            self.room = Some(Box::new(crate::sys::register_unix(
                dup,
                Interest::WRITABLE,
            )?));
        }
        self.room
            .as_deref()
            .ok_or_else(|| io::ErrorKind::Other.into())
    }
}

impl AsyncWrite for UnixWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.room.is_none() {
            // The usual case: the socket has room.
            match this.fd.get_ref().write_vectored(bufs) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                result => return Poll::Ready(result),
            }
        }
        let room = match this.room() {
            Ok(room) => room,
            Err(e) => return Poll::Ready(Err(e)),
        };
        let result = loop {
            let mut guard = match room.poll_write_ready(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(guard)) => guard,
            };
            // A write that finds the socket full clears the readiness and waits again.
            if let Ok(result) = guard.try_io(|room| room.get_ref().write_vectored(bufs)) {
                break result;
            }
        };
        // Room again (or an error): the extra registration goes until the next time.
        this.room = None;
        Poll::Ready(result)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.fd.get_ref().shutdown(std::net::Shutdown::Write))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use tokio::io::AsyncWriteExt;

    fn pair() -> (UnixIo, UnixWriter, Socket) {
        let (ours, theirs) = Socket::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let (r, w) = split(tokio::net::UnixStream::from_std(ours).unwrap()).unwrap();
        (r, w, theirs)
    }

    #[tokio::test]
    async fn reads_what_the_peer_sent_and_waits_for_more() {
        let (reader, _writer, mut peer) = pair();
        let mut buf = bytes::BytesMut::with_capacity(64);
        let empty = reader.try_read_buf(&mut buf).unwrap_err();
        assert_eq!(empty.kind(), io::ErrorKind::WouldBlock);
        peer.write_all(b"hello").unwrap();
        reader.readable().await.unwrap();
        assert_eq!(reader.try_read_buf(&mut buf).unwrap(), 5);
        assert_eq!(&buf[..], b"hello");
        // The short read said the socket is empty: the next wait is for new bytes.
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), reader.readable());
        assert!(waiting.await.is_err(), "readable with nothing sent");
        peer.write_all(b"!").unwrap();
        reader.readable().await.unwrap();
        assert_eq!(reader.try_read_buf(&mut buf).unwrap(), 1);
        drop(peer);
        reader.readable().await.unwrap();
        assert_eq!(reader.try_read_buf(&mut buf).unwrap(), 0, "the peer's end");
    }

    #[tokio::test]
    async fn a_full_socket_waits_for_room_then_writes_everything() {
        let (_reader, mut writer, mut peer) = pair();
        // Far more than the socket holds: the writer must wait for the peer to read.
        let data: Vec<u8> = (0..4_000_000u32).map(|i| (i % 251) as u8).collect();
        let sent = data.clone();
        let reading = std::thread::spawn(move || {
            let mut got = Vec::new();
            peer.read_to_end(&mut got).unwrap();
            got
        });
        writer.write_all(&sent).await.unwrap();
        assert!(
            writer.room.is_none(),
            "the extra registration went once there was room"
        );
        writer.shutdown().await.unwrap();
        assert_eq!(reading.join().unwrap(), data);
    }
}
