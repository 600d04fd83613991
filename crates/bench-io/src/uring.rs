//! The io_uring engine: the same relay with its receives kept armed in a ring and its writes
//! submitted as SQEs, so that one `io_uring_enter` per turn both submits the turn's writes
//! (and re-armed receives) and waits for the next completion.
//!
//! Receives are multishot over a ring of provided buffers ([`Recv::Multishot`]: one SQE per
//! socket for the whole run, each completion naming the buffer the kernel filled) or one
//! `recv` SQE per socket, re-armed after each completion, into the side's own buffer
//! ([`Recv::Single`]). Writes are `IORING_OP_WRITEV` with one iovec per packet, one in flight
//! per socket (so the byte stream keeps its order); packets that arrive meanwhile wait for
//! the next one. Both sockets are registered with the ring as fixed files. The ring is set up with `SINGLE_ISSUER | DEFER_TASKRUN` (completions are
//! processed in the relay's own `io_uring_enter`, not by interrupting it), or with `SQPOLL`
//! ([`Options::sqpoll`]), where a kernel thread of this process submits the SQEs; that
//! thread's CPU is the process's CPU (see [`crate::usage`]).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use crate::relay::{sends, Framer, OutQueue, Stats, CONSUMER, PRODUCER};
use crate::{Error, Result};

/// How the relay receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recv {
    /// Multishot `recv` with provided buffers (kernel 6.0 and later).
    Multishot,
    /// One `recv` SQE per socket, re-armed after each completion.
    Single,
}

/// How the ring is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// The receives asked for; [`Recv::Multishot`] falls back to [`Recv::Single`] when the
    /// kernel cannot register a buffer ring.
    pub recv: Recv,
    /// A kernel thread polls the submission queue (`IORING_SETUP_SQPOLL`), going to sleep
    /// after this many milliseconds without work.
    pub sqpoll: Option<u32>,
}

/// Bytes of one receive buffer (provided or per side).
pub const RECV_BUF: usize = 64 * 1024;
/// Provided buffers in the ring (a power of two).
const PROVIDED: u16 = 16;
/// The provided buffers' group id.
const GROUP: u16 = 1;
/// How long one wait lasts before the relay gives up.
const STALL: std::time::Duration = std::time::Duration::from_secs(10);

const OP_RECV: u64 = 0;
const OP_SEND: u64 = 1;

fn user_data(side: usize, op: u64) -> u64 {
    (op << 8) | side as u64
}

/// A ring of provided buffers shared with the kernel.
struct BufRing {
    entries: *mut types::BufRingEntry,
    layout: Layout,
    bufs: *mut u8,
    bufs_layout: Layout,
    tail: u16,
}

impl BufRing {
    fn new() -> Result<Self> {
        let bad = |_| {
            Error::Io(
                "buffer ring layout",
                std::io::ErrorKind::InvalidInput.into(),
            )
        };
        let layout = Layout::from_size_align(
            usize::from(PROVIDED) * std::mem::size_of::<types::BufRingEntry>(),
            4096,
        )
        .map_err(bad)?;
        let bufs_layout =
            Layout::from_size_align(usize::from(PROVIDED) * RECV_BUF, 4096).map_err(bad)?;
        // SAFETY: both layouts have a non-zero size.
        let (entries, bufs) = unsafe { (alloc_zeroed(layout), alloc_zeroed(bufs_layout)) };
        if entries.is_null() || bufs.is_null() {
            return Err(Error::Io(
                "buffer ring",
                std::io::ErrorKind::OutOfMemory.into(),
            ));
        }
        let mut ring = BufRing {
            entries: entries.cast(),
            layout,
            bufs,
            bufs_layout,
            tail: 0,
        };
        for bid in 0..PROVIDED {
            ring.give_back(bid);
        }
        Ok(ring)
    }

    /// Hands buffer `bid` to the kernel again.
    fn give_back(&mut self, bid: u16) {
        let slot = usize::from(self.tail & (PROVIDED - 1));
        // SAFETY: `slot` < PROVIDED entries; `bid` < PROVIDED buffers of RECV_BUF bytes.
        unsafe {
            let entry = &mut *self.entries.add(slot);
            entry.set_addr(self.bufs.add(usize::from(bid) * RECV_BUF) as u64);
            entry.set_len(RECV_BUF as u32);
            entry.set_bid(bid);
        }
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail is a u16 inside the first entry, shared with the kernel.
        unsafe {
            let tail = types::BufRingEntry::tail(self.entries) as *const AtomicU16;
            (*tail).store(self.tail, Ordering::Release);
        }
    }

    /// The first `len` bytes of buffer `bid`, which the kernel has just handed back.
    fn filled(&self, bid: u16, len: usize) -> Option<&[u8]> {
        if bid >= PROVIDED || len > RECV_BUF {
            return None;
        }
        // SAFETY: in bounds (checked); the kernel wrote these bytes and does not touch the
        // buffer until `give_back`.
        Some(unsafe { std::slice::from_raw_parts(self.bufs.add(usize::from(bid) * RECV_BUF), len) })
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with these layouts; the ring that used them is gone.
        unsafe {
            dealloc(self.entries.cast(), self.layout);
            dealloc(self.bufs, self.bufs_layout);
        }
    }
}

struct Side {
    sock: UnixStream,
    framer: Framer,
    /// Packets for this socket that wait for the write in flight.
    filling: OutQueue,
    /// The packets of the write in flight, and its iovecs.
    inflight: OutQueue,
    iov: Vec<libc::iovec>,
    sending: bool,
    /// The receive buffer of [`Recv::Single`].
    rbuf: Box<[u8]>,
    armed: bool,
    eof: bool,
}

struct Engine {
    ring: IoUring,
    provided: Option<BufRing>,
    sides: [Side; 2],
    stats: Stats,
    cqes: Vec<(u64, i32, u32)>,
}

/// Relays between `consumer` and `producer` until the consumer closes its connection;
/// returns the counters and the receives that were used.
///
/// # Errors
/// A failed setup or operation, a bad packet, the producer closing first, or
/// [`Error::Stalled`].
pub fn run(consumer: UnixStream, producer: UnixStream, options: Options) -> Result<(Stats, Recv)> {
    let mut builder = IoUring::builder();
    match options.sqpoll {
        Some(idle) => builder.setup_sqpoll(idle),
        None => builder.setup_single_issuer().setup_defer_taskrun(),
    };
    let ring = builder
        .build(64)
        .map_err(|e| Error::Io("io_uring_setup", e))?;
    // The sockets as fixed files: no descriptor lookup and reference count per operation.
    ring.submitter()
        .register_files(&[consumer.as_raw_fd(), producer.as_raw_fd()])
        .map_err(|e| Error::Io("register the sockets with the ring", e))?;
    let mut provided = None;
    if options.recv == Recv::Multishot {
        let bufs = BufRing::new()?;
        // SAFETY: the entries stay allocated until after the ring is dropped (`Engine`
        // drops `ring` first, and `finish` waits for every operation to end).
        let registered = unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(bufs.entries as u64, PROVIDED, GROUP, 0)
        };
        if registered.is_ok() {
            provided = Some(bufs);
        }
    }
    let recv = if provided.is_some() {
        Recv::Multishot
    } else {
        Recv::Single
    };
    let sides = [consumer, producer].map(|sock| Side {
        sock,
        framer: Framer::new(0),
        filling: OutQueue::default(),
        inflight: OutQueue::default(),
        iov: Vec::with_capacity(crate::relay::MAX_IOV),
        sending: false,
        rbuf: vec![0u8; RECV_BUF].into_boxed_slice(),
        armed: false,
        eof: false,
    });
    let mut engine = Engine {
        ring,
        provided,
        sides,
        stats: Stats::default(),
        cqes: Vec::with_capacity(64),
    };
    for i in [CONSUMER, PRODUCER] {
        engine.sides[i].framer = Framer::new(sends(i));
    }
    let result = engine.relay();
    let finished = engine.finish();
    let stats = result?;
    finished?;
    Ok((stats, recv))
}

impl Engine {
    fn push(&mut self, entry: &squeue::Entry) -> Result<()> {
        loop {
            // SAFETY: every buffer an entry points to lives in `self.sides` or
            // `self.provided` and stays untouched until its completion.
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                return Ok(());
            }
            self.stats.syscalls += 1;
            self.stats.waits += 1;
            self.ring
                .submit()
                .map_err(|e| Error::Io("io_uring_enter", e))?;
        }
    }

    fn arm(&mut self, i: usize) -> Result<()> {
        let side = &mut self.sides[i];
        if side.armed || side.eof {
            return Ok(());
        }
        let fd = types::Fixed(i as u32);
        let entry = if self.provided.is_some() {
            opcode::RecvMulti::new(fd, GROUP).build()
        } else {
            opcode::Recv::new(fd, side.rbuf.as_mut_ptr(), side.rbuf.len() as u32).build()
        };
        side.armed = true;
        self.push(&entry.user_data(user_data(i, OP_RECV)))
    }

    /// Starts a write of side `i`'s waiting packets if none is in flight.
    fn send(&mut self, i: usize) -> Result<()> {
        let side = &mut self.sides[i];
        if side.sending || (side.filling.is_empty() && side.inflight.is_empty()) {
            return Ok(());
        }
        if side.inflight.is_empty() {
            std::mem::swap(&mut side.filling, &mut side.inflight);
        }
        side.inflight.iovecs(&mut side.iov);
        let fd = types::Fixed(i as u32);
        let entry = opcode::Writev::new(fd, side.iov.as_ptr(), side.iov.len() as u32)
            .build()
            .user_data(user_data(i, OP_SEND));
        side.sending = true;
        self.push(&entry)
    }

    fn relay(&mut self) -> Result<Stats> {
        self.arm(CONSUMER)?;
        self.arm(PRODUCER)?;
        // Only the turns count, as with epoll.
        self.stats.syscalls = 0;
        self.stats.waits = 0;
        let timeout = types::Timespec::from(STALL);
        loop {
            self.stats.syscalls += 1;
            self.stats.waits += 1;
            let args = types::SubmitArgs::new().timespec(&timeout);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ETIME) => {
                    if self.ring.completion().is_empty() {
                        return Err(Error::Stalled);
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => return Err(Error::Io("io_uring_enter", e)),
            }
            self.complete()?;
            for i in [CONSUMER, PRODUCER] {
                self.arm(i)?;
                self.send(i)?;
            }
            if self.sides[CONSUMER].eof {
                return Ok(self.stats);
            }
            if self.sides[PRODUCER].eof {
                return Err(Error::Client(
                    "the producer closed its connection first".into(),
                ));
            }
        }
    }

    /// Handles every completion in the queue.
    fn complete(&mut self) -> Result<()> {
        let mut cqes = std::mem::take(&mut self.cqes);
        cqes.clear();
        cqes.extend(
            self.ring
                .completion()
                .map(|c| (c.user_data(), c.result(), c.flags())),
        );
        let mut result = Ok(());
        for &(ud, res, flags) in &cqes {
            let i = (ud & 0xff) as usize;
            if result.is_err() {
                // Only the bookkeeping, so that `finish` knows what is still in flight.
                self.settle(ud, flags);
                continue;
            }
            result = match ud >> 8 {
                OP_RECV => self.received(i, res, flags),
                _ => self.sent(i, res),
            };
        }
        self.cqes = cqes;
        result
    }

    fn received(&mut self, i: usize, res: i32, flags: u32) -> Result<()> {
        if i > PRODUCER {
            return Err(Error::Protocol(format!("completion for side {i}")));
        }
        if !cqueue::more(flags) {
            self.sides[i].armed = false;
        }
        let bid = cqueue::buffer_select(flags);
        if res < 0 {
            if res == -libc::ENOBUFS {
                return Ok(()); // re-armed at the end of the turn, once buffers are back
            }
            return Err(Error::Io("recv", std::io::Error::from_raw_os_error(-res)));
        }
        let n = res as usize;
        if n == 0 {
            self.sides[i].eof = true;
            return Ok(());
        }
        self.stats.reads += 1;
        self.stats.bytes_in[i] += n as u64;
        let [a, b] = &mut self.sides;
        let (from, to) = if i == CONSUMER { (a, b) } else { (b, a) };
        let packets = match (&mut self.provided, bid) {
            (Some(ring), Some(bid)) => {
                let data = ring
                    .filled(bid, n)
                    .ok_or_else(|| Error::Protocol(format!("buffer {bid} of {n} bytes")))?;
                let packets = from.framer.feed(data, &mut to.filling);
                ring.give_back(bid);
                packets?
            }
            (None, _) => from.framer.feed(&from.rbuf[..n], &mut to.filling)?,
            (Some(_), None) => {
                return Err(Error::Protocol("a receive without a buffer".into()));
            }
        };
        if i == CONSUMER {
            self.stats.interests += packets;
        } else {
            self.stats.exchanges += packets;
        }
        Ok(())
    }

    fn sent(&mut self, i: usize, res: i32) -> Result<()> {
        let Some(side) = self.sides.get_mut(i) else {
            return Err(Error::Protocol(format!("completion for side {i}")));
        };
        side.sending = false;
        self.stats.writes += 1;
        if res < 0 {
            return Err(Error::Io("writev", std::io::Error::from_raw_os_error(-res)));
        }
        // A short write leaves the rest in `inflight`: `send` writes it next.
        side.inflight.advance(res as usize);
        Ok(())
    }

    /// Records that an operation completed, without using its result: clears the flags of
    /// what is in flight and gives a provided buffer back.
    fn settle(&mut self, ud: u64, flags: u32) {
        let Some(side) = self.sides.get_mut((ud & 0xff) as usize) else {
            return;
        };
        if ud >> 8 == OP_RECV {
            if !cqueue::more(flags) {
                side.armed = false;
            }
            if let (Some(ring), Some(bid)) = (&mut self.provided, cqueue::buffer_select(flags)) {
                ring.give_back(bid);
            }
        } else {
            side.sending = false;
        }
    }

    /// Ends every operation in flight, so that no buffer is still the kernel's when the
    /// engine is dropped: shuts both sockets down (armed receives complete with 0) and waits
    /// for the writes.
    fn finish(&mut self) -> Result<()> {
        for side in &self.sides {
            let _ = side.sock.shutdown(std::net::Shutdown::Both);
        }
        let timeout = types::Timespec::from(STALL);
        while self.sides.iter().any(|s| s.armed || s.sending) {
            let args = types::SubmitArgs::new().timespec(&timeout);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ETIME) => {
                    if self.ring.completion().is_empty() {
                        return Err(Error::Stalled);
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Err(Error::Io("io_uring_enter", e)),
            }
            let cqes: Vec<(u64, u32)> = self
                .ring
                .completion()
                .map(|c| (c.user_data(), c.flags()))
                .collect();
            for (ud, flags) in cqes {
                self.settle(ud, flags);
            }
        }
        if self.provided.is_some() {
            self.ring
                .submitter()
                .unregister_buf_ring(GROUP)
                .map_err(|e| Error::Io("unregister the buffer ring", e))?;
        }
        Ok(())
    }
}
