//! The I/O of stream faces (Unix, TCP): a reader that frames TLVs and hands packets up with
//! backpressure, and a writer task that drains the face's send queue with vectored writes.
//!
//! One connection is run by [`run`]; the reader runs in the caller's task, the writer in its
//! own. Whichever side fails first ends the connection for both. When the face itself is
//! closed (destroy, shutdown), the writer flushes what is queued first, for at most
//! [`crate::FaceSystemConfig::shutdown_timeout`].

use std::io::{self, IoSlice};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::error::TrySendError;

use crate::close::CloseSignal;
use crate::counters::{add, bump};
use crate::event::{DownReason, FaceEvent};
use crate::face::{FaceHandle, TxQueue};
use crate::framing::{FramingError, StreamFramer};
use crate::link::{LinkRx, LinkTx, RxDrop, RxOutcome};
use crate::system::Shared;

/// Packets taken from the send queue per write.
const WRITE_BATCH: usize = 64;

type CloseTx = Arc<CloseSignal>;

/// The read half of a stream socket: readiness without a buffer, then a read that does not
/// wait. An idle connection then holds no read buffer (the framer's is given back while the
/// socket is empty and taken again when bytes arrive).
pub(crate) trait StreamRead: Send + 'static {
    /// Waits until the socket has bytes, its end, or an error to report.
    fn readable(&self) -> impl std::future::Future<Output = io::Result<()>> + Send;
    /// Reads what the socket holds now into `buf`; `WouldBlock` when it holds nothing.
    fn try_read_buf(&self, buf: &mut bytes::BytesMut) -> io::Result<usize>;
}

impl StreamRead for tokio::net::unix::OwnedReadHalf {
    fn readable(&self) -> impl std::future::Future<Output = io::Result<()>> + Send {
        self.as_ref().readable()
    }
    fn try_read_buf(&self, buf: &mut bytes::BytesMut) -> io::Result<usize> {
        let stream = self.as_ref();
        read_draining(
            buf,
            |f| stream.try_io(tokio::io::Interest::READABLE, f),
            |b| stream.try_read_buf(b),
        )
    }
}

impl StreamRead for tokio::net::tcp::OwnedReadHalf {
    fn readable(&self) -> impl std::future::Future<Output = io::Result<()>> + Send {
        self.as_ref().readable()
    }
    fn try_read_buf(&self, buf: &mut bytes::BytesMut) -> io::Result<usize> {
        let stream = self.as_ref();
        read_draining(
            buf,
            |f| stream.try_io(tokio::io::Interest::READABLE, f),
            |b| stream.try_read_buf(b),
        )
    }
}

/// One read that also tells the reactor when it emptied the socket. A read that returns fewer
/// bytes than the buffer had room for took everything the stream held, so the socket is
/// marked not readable at once (as tokio's own `poll_read` does), and the next read waits for
/// the next readiness event instead of making a system call only to be told `WouldBlock` (one
/// system call saved per wake-up of a face whose peer sends a packet at a time).
///
/// `try_io` is the socket's `try_io(Interest::READABLE, ..)`: it clears the readiness it saw
/// when its closure returns `WouldBlock`, unless a newer readiness event came meanwhile.
pub(crate) fn read_draining<T, R>(
    buf: &mut bytes::BytesMut,
    try_io: T,
    mut read: R,
) -> io::Result<usize>
where
    T: FnOnce(&mut dyn FnMut() -> io::Result<usize>) -> io::Result<usize>,
    R: FnMut(&mut bytes::BytesMut) -> io::Result<usize>,
{
    let room = buf.capacity() - buf.len();
    read_marking_drained(room, try_io, || read(buf))
}

/// The mechanism of [`read_draining`] for any read that takes at most `room` units (bytes, or
/// a UDP batch's datagram slots): a read that returns fewer than `room` emptied the socket,
/// so it returns `WouldBlock` to `try_io` (which clears the readiness it saw unless a newer
/// event came) and its count to the caller.
pub(crate) fn read_marking_drained<T, R>(room: usize, try_io: T, mut read: R) -> io::Result<usize>
where
    T: FnOnce(&mut dyn FnMut() -> io::Result<usize>) -> io::Result<usize>,
    R: FnMut() -> io::Result<usize>,
{
    let mut drained = 0;
    let result = try_io(&mut || {
        let n = read()?;
        if n > 0 && n < room {
            drained = n;
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    });
    match result {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock && drained > 0 => Ok(drained),
        other => other,
    }
}

/// Runs one connection until it ends; returns why and, unless the writer task died, the send
/// queue (a permanent face reuses it after reconnecting).
pub(crate) async fn run<R, W>(
    shared: &Arc<Shared>,
    face: &Arc<FaceHandle>,
    reader: R,
    writer: W,
    queue: TxQueue,
) -> (DownReason, Option<TxQueue>)
where
    R: StreamRead,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let conn: CloseTx = Arc::new(CloseSignal::default());
    let mut write_task = tokio::spawn(write_loop(
        writer,
        queue,
        face.clone(),
        conn.clone(),
        shared.clone(),
    ));
    let reason = read_loop(reader, shared, face, &conn).await;
    if face.close_reason().is_some() {
        // The face is closing: give the writer time to flush the queue.
        let flush = shared.config.shutdown_timeout;
        // Boxed, as the other rare paths below: the face's task keeps room only for the wait
        // an idle face is in.
        if let Ok(result) = Box::pin(tokio::time::timeout(flush, &mut write_task)).await {
            return (reason, result.ok());
        }
    }
    conn.close(reason.clone());
    (reason, write_task.await.ok())
}

async fn read_loop<R>(reader: R, shared: &Shared, face: &FaceHandle, conn: &CloseTx) -> DownReason
where
    R: StreamRead,
{
    let mut framer = StreamFramer::default();
    let reassembly = shared
        .config
        .stream_reassembly
        .then_some(shared.config.reassembly);
    let mut link = LinkRx::new(reassembly);
    loop {
        // Backpressure: a face this one feeds is congested; the application finds its socket
        // full and waits.
        if face.is_paused() {
            if let Err(reason) = Box::pin(face.wait_resumed()).await {
                return reason;
            }
        }
        // Once waiting, the read completes even if the face is paused meanwhile (as an
        // awaited read would); the pause applies to the next one.
        let read = loop {
            if let Some(buf) = pool_take_for(&framer) {
                framer.install(buf);
            }
            match reader.try_read_buf(framer.read_buffer()) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                read => break read,
            }
            // Nothing to read: unless part of a packet waits for the rest, the buffer goes
            // back while the socket is quiet (an idle face holds none).
            if let Some(buf) = framer.release_idle() {
                pool_put(buf);
            }
            let ready = tokio::select! {
                biased;
                reason = face.closed() => return reason,
                reason = conn.closed() => return reason,
                ready = reader.readable() => ready,
            };
            if let Err(e) = ready {
                return DownReason::Io(e.kind());
            }
        };
        match read {
            Ok(0) => return DownReason::PeerClosed,
            Ok(_) => {}
            Err(e) => return DownReason::Io(e.kind()),
        }
        if let Err(reason) = drain_frames(&mut framer, &mut link, shared, face).await {
            return reason;
        }
        // A read that did not wait takes from the task's budget as an awaited one would, so a
        // peer that never stops sending cannot keep the other faces and the driver waiting.
        tokio::task::consume_budget().await;
        // A face closed meanwhile (e.g. destroyed while the peer keeps sending) stops here.
        if let Some(reason) = face.close_reason().or_else(|| conn.reason()) {
            return reason;
        }
    }
}

/// Read buffers given back by quiet connections, for the next connection that has bytes to
/// read: idle faces hold no buffer, and a busy one going quiet and back does not free and
/// allocate 16 KiB each time (which measured as more daemon CPU per exchange). Per thread, as
/// the face tasks run on the driver's thread by default; at most [`READ_POOL`] buffers.
const READ_POOL: usize = 64;

thread_local! {
    static READ_BUFFERS: std::cell::RefCell<Vec<bytes::BytesMut>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

fn pool_put(buf: bytes::BytesMut) {
    READ_BUFFERS.with(|pool| {
        let mut pool = pool.borrow_mut();
        if pool.len() < READ_POOL {
            pool.push(buf);
        }
    });
}

/// A pooled buffer when `framer` has none.
fn pool_take_for(framer: &StreamFramer) -> Option<bytes::BytesMut> {
    if framer.has_buffer() {
        return None;
    }
    READ_BUFFERS.with(|pool| pool.borrow_mut().pop())
}

/// Hands up every whole packet in the framer.
async fn drain_frames(
    framer: &mut StreamFramer,
    link: &mut LinkRx,
    shared: &Shared,
    face: &FaceHandle,
) -> Result<(), DownReason> {
    let now = shared.now_ms();
    loop {
        let pkt = match framer.next_packet() {
            Ok(Some(pkt)) => pkt,
            Ok(None) => return Ok(()),
            Err(e) => {
                let counter = match e {
                    FramingError::TooLarge { .. } => &face.counters.drop_too_large,
                    _ => &face.counters.drop_malformed,
                };
                bump(counter);
                tracing::debug!(face = %face.id, drop = %e, "closing stream face");
                return Err(DownReason::Framing(e));
            }
        };
        face.counters.received(pkt.len());
        let mut outcome = link.on_receive(now, pkt);
        // A secure link (TCP faces with `[security]`) opens sealed packets and answers
        // handshakes before anything goes up; its drops are counted by the link.
        if let Some(secure) = &face.secure {
            outcome = match outcome {
                RxOutcome::Deliver(wire) => match secure.open(now, wire) {
                    Ok(plain) => RxOutcome::Deliver(plain),
                    Err((_, reply)) => {
                        if let Some(reply) = reply {
                            let _ = face.send(reply);
                        }
                        continue;
                    }
                },
                RxOutcome::Handshake(value) => {
                    if let Some(reply) = secure.on_handshake(now, &value) {
                        let _ = face.send(reply);
                    }
                    continue;
                }
                other => other,
            };
        }
        // Counters first: whoever sees the event also sees them updated.
        if let Some(c) = link.reassembly_counters() {
            face.counters
                .in_reassembled
                .store(c.reassembled, Ordering::Relaxed);
        }
        add(&face.counters.drop_reassembly, link.take_reassembly_drops());
        match outcome {
            RxOutcome::Deliver(wire) => {
                bump(&face.counters.in_network);
                deliver(shared, face, wire).await?;
            }
            RxOutcome::Idle => bump(&face.counters.in_idle),
            // A handshake on a face without a secure link (Unix, local TCP) is not understood.
            RxOutcome::Handshake(_) => bump(&face.counters.drop_malformed),
            RxOutcome::Fragment => {}
            RxOutcome::Dropped(RxDrop::TooLarge) => bump(&face.counters.drop_too_large),
            RxOutcome::Dropped(_) => bump(&face.counters.drop_malformed),
        }
    }
}

/// Puts a packet on the event queue, waiting for room (backpressure on the stream) unless the
/// face closes meanwhile.
pub(crate) async fn deliver(
    shared: &Shared,
    face: &FaceHandle,
    wire: Bytes,
) -> Result<(), DownReason> {
    let event = FaceEvent::Packet {
        face: face.id,
        wire,
    };
    let events = shared.packet_events(face.id);
    match events.try_send(event) {
        Ok(()) | Err(TrySendError::Closed(_)) => Ok(()),
        Err(TrySendError::Full(event)) => {
            Box::pin(async {
                tokio::select! {
                    _ = events.send(event) => Ok(()),
                    reason = face.closed() => Err(reason),
                }
            })
            .await
        }
    }
}

async fn write_loop<W>(
    mut writer: W,
    mut queue: TxQueue,
    face: Arc<FaceHandle>,
    conn: CloseTx,
    shared: Arc<Shared>,
) -> TxQueue
where
    W: AsyncWrite + Unpin,
{
    let mut link = LinkTx::new(None, 0);
    // Grown only as far as the face's batches have gone (a quiet face's stay small).
    let mut batch: Vec<Bytes> = Vec::new();
    let mut out: Vec<Bytes> = Vec::new();
    // Handshake (re)transmissions of a secure face (no timer on the others).
    let secure = face.secure.clone();
    let mut tick = secure.as_ref().map(|_| {
        let mut tick = tokio::time::interval(crate::udp::HANDSHAKE_TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Box::pin(tick)
    });
    loop {
        // About to wait for the queue: an idle face keeps no batch vectors.
        if queue.is_empty() {
            release(&mut batch);
            release(&mut out);
        }
        tokio::select! {
            biased;
            _ = conn.closed() => return queue,
            _ = face.closed() => break,
            _ = async { if let Some(t) = tick.as_mut() { t.tick().await; } }, if tick.is_some() => {
                if let Some(msg) = secure.as_ref().and_then(|s| s.poll(shared.now_ms())) {
                    batch.push(msg);
                }
            }
            pkt = queue.recv() => {
                let Some(pkt) = pkt else { break };
                batch.push(pkt);
                while batch.len() < WRITE_BATCH {
                    let Ok(pkt) = queue.try_recv() else { break };
                    batch.push(pkt);
                }
            }
        }
        if batch.is_empty() {
            continue;
        }
        let result = tokio::select! {
            result = write_batch(&mut writer, &mut batch, &mut out, &mut link, &face, &shared) => result,
            _ = conn.closed() => return queue,
        };
        if let Err(e) = result {
            bump(&face.counters.drop_send_error);
            conn.close(DownReason::Io(e.kind()));
            return queue;
        }
    }
    // The face is closing: flush what is queued, then close the write side.
    while let Ok(pkt) = queue.try_recv() {
        batch.push(pkt);
    }
    Box::pin(async {
        tokio::select! {
            _ = async {
                if write_batch(&mut writer, &mut batch, &mut out, &mut link, &face, &shared).await.is_ok() {
                    let _ = writer.shutdown().await;
                }
            } => {}
            _ = conn.closed() => {}
        }
    })
    .await;
    queue
}

/// Writes a batch of packets (sealed on a secure face, then passed through the link service,
/// which never fragments on a stream) with as few system calls as possible.
async fn write_batch<W>(
    writer: &mut W,
    batch: &mut Vec<Bytes>,
    out: &mut Vec<Bytes>,
    link: &mut LinkTx,
    face: &FaceHandle,
    shared: &Shared,
) -> io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    out.clear();
    let now = shared.now_ms();
    for pkt in batch.drain(..) {
        // Encrypted per the policy on a secure face; a packet that needs a session not yet
        // there is dropped (counted by the secure link).
        let pkt = match &face.secure {
            Some(secure) => match secure.seal(now, pkt) {
                Ok(p) => p,
                Err(_) => continue,
            },
            None => pkt,
        };
        bump(&face.counters.out_network);
        out.extend(link.on_send(pkt));
    }
    write_all_vectored(writer, out).await?;
    for pkt in out.drain(..) {
        face.counters.sent(pkt.len());
    }
    Ok(())
}

/// Gives a vector's memory back (a quiet face's writer holds none).
fn release(v: &mut Vec<Bytes>) {
    if v.capacity() > 0 {
        *v = Vec::new();
    }
}

/// `write_all` over several buffers, with vectored writes. The slices of each write are built
/// inside the poll, so the writer task's state holds none of them between writes.
async fn write_all_vectored<W>(writer: &mut W, bufs: &[Bytes]) -> io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let (mut index, mut offset) = (0usize, 0usize);
    loop {
        while bufs.get(index).is_some_and(|b| offset >= b.len()) {
            index += 1;
            offset = 0;
        }
        let Some(first) = bufs.get(index) else {
            return Ok(());
        };
        let mut written = std::future::poll_fn(|cx| {
            let mut slices = [IoSlice::new(&[]); WRITE_BATCH];
            let mut n = 0;
            let rest = std::iter::once(first.get(offset..).unwrap_or_default())
                .chain(bufs.iter().skip(index + 1).map(|b| b.as_ref()));
            for (slot, buf) in slices.iter_mut().zip(rest) {
                *slot = IoSlice::new(buf);
                n += 1;
            }
            std::pin::Pin::new(&mut *writer).poll_write_vectored(cx, &slices[..n])
        })
        .await?;
        if written == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        while written > 0 {
            let Some(buf) = bufs.get(index) else { break };
            let rest = buf.len() - offset;
            if written >= rest {
                written -= rest;
                index += 1;
                offset = 0;
            } else {
                offset += written;
                written = 0;
            }
        }
    }
}

/// The size of a Unix face's writer future (the tests keep it small).
#[cfg(test)]
pub(crate) fn writer_future_size() -> usize {
    fn size<A, F: std::future::Future>(_: impl FnOnce(A) -> F) -> usize {
        std::mem::size_of::<F>()
    }
    size(
        |(w, q, f, c, s): (
            tokio::net::unix::OwnedWriteHalf,
            TxQueue,
            Arc<FaceHandle>,
            CloseTx,
            Arc<Shared>,
        )| write_loop(w, q, f, c, s),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that accepts at most 3 bytes per call.
    struct Trickle(Vec<u8>);

    impl AsyncWrite for Trickle {
        fn poll_write(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<io::Result<usize>> {
            let n = buf.len().min(3);
            self.0.extend_from_slice(&buf[..n]);
            std::task::Poll::Ready(Ok(n))
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    /// Runs `read_draining` with a stand-in for `try_io` that records whether the read told
    /// the reactor the socket is now empty (returned `WouldBlock` to it).
    fn drain_once(room: usize, got: io::Result<usize>) -> (io::Result<usize>, bool) {
        let mut buf = bytes::BytesMut::with_capacity(room);
        let room = buf.capacity();
        let mut cleared = false;
        let got = got.map(|n| if n == usize::MAX { room } else { n });
        let mut got = Some(got);
        let result = read_draining(
            &mut buf,
            |f| {
                let r = f();
                cleared = matches!(&r, Err(e) if e.kind() == io::ErrorKind::WouldBlock);
                r
            },
            |_| got.take().unwrap(),
        );
        (result, cleared)
    }

    #[test]
    fn a_short_read_marks_the_socket_empty_and_keeps_its_bytes() {
        // Fewer bytes than the room: the socket was emptied; the bytes are still returned.
        let (r, cleared) = drain_once(4096, Ok(100));
        assert_eq!(r.unwrap(), 100);
        assert!(cleared);
        // A read that filled the buffer may have left more: the next one goes to the socket.
        let (r, cleared) = drain_once(4096, Ok(usize::MAX));
        assert!(r.unwrap() > 0);
        assert!(!cleared);
        // The peer's end stays an end (0), and a real WouldBlock stays one.
        let (r, cleared) = drain_once(4096, Ok(0));
        assert_eq!(r.unwrap(), 0);
        assert!(!cleared);
        let (r, cleared) = drain_once(4096, Err(io::ErrorKind::WouldBlock.into()));
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::WouldBlock);
        assert!(cleared);
    }

    #[tokio::test]
    async fn vectored_writes_survive_short_writes() {
        let bufs: Vec<Bytes> = vec![
            Bytes::from_static(b"abcde"),
            Bytes::new(),
            Bytes::from_static(b"f"),
            Bytes::from_static(b"ghijklmnop"),
        ];
        let mut w = Trickle(Vec::new());
        write_all_vectored(&mut w, &bufs).await.unwrap();
        assert_eq!(w.0, b"abcdefghijklmnop");
        let mut v = tokio::io::sink();
        write_all_vectored(&mut v, &[]).await.unwrap();
    }
}
