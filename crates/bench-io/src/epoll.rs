//! The epoll engine: non-blocking sockets registered for reads only (edge-triggered, as
//! tokio registers them and namewayd's Unix faces now ask), one blocking `epoll_wait` per
//! turn, `read` until a read comes back short (the socket is then empty: the rule namewayd's
//! `read_draining` applies) or `EAGAIN`, and one `writev` per side per turn. A write that
//! finds the socket full adds `EPOLLOUT` to that socket's registration until it drains.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use crate::relay::{sends, Framer, OutQueue, Stats, CONSUMER, PRODUCER};
use crate::{os_err, Error, Result};

/// Bytes one `read` asks for.
pub const READ_BUF: usize = 64 * 1024;
/// How long a turn waits before the relay gives up.
const STALL_MS: i32 = 10_000;

struct Side {
    sock: UnixStream,
    framer: Framer,
    /// Packets for this side's socket.
    out: OutQueue,
    watching_out: bool,
    eof: bool,
}

fn ctl(ep: RawFd, op: i32, fd: RawFd, events: u32, key: u64, stats: &mut Stats) -> Result<()> {
    let mut ev = libc::epoll_event { events, u64: key };
    stats.syscalls += 1;
    // SAFETY: `ev` is a valid epoll_event for the call's duration.
    if unsafe { libc::epoll_ctl(ep, op, fd, &mut ev) } < 0 {
        return Err(os_err("epoll_ctl"));
    }
    Ok(())
}

const READS: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET) as u32;
const READS_WRITES: u32 = READS | libc::EPOLLOUT as u32;

/// Relays between `consumer` and `producer` until the consumer closes its connection.
///
/// # Errors
/// A failed system call, a bad packet, the producer closing first, or [`Error::Stalled`].
pub fn run(consumer: UnixStream, producer: UnixStream) -> Result<Stats> {
    let mut stats = Stats::default();
    let mut sides = [consumer, producer].map(|sock| Side {
        sock,
        framer: Framer::new(0),
        out: OutQueue::default(),
        watching_out: false,
        eof: false,
    });
    for (i, side) in sides.iter_mut().enumerate() {
        side.framer = Framer::new(sends(i));
        side.sock
            .set_nonblocking(true)
            .map_err(|e| Error::Io("set_nonblocking", e))?;
    }
    // SAFETY: epoll_create1 returns a new descriptor or -1.
    let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if ep < 0 {
        return Err(os_err("epoll_create1"));
    }
    // SAFETY: `ep` is a descriptor we own from here on.
    let ep = unsafe { OwnedFd::from_raw_fd(ep) };
    for (i, side) in sides.iter().enumerate() {
        let fd = side.sock.as_raw_fd();
        ctl(
            ep.as_raw_fd(),
            libc::EPOLL_CTL_ADD,
            fd,
            READS,
            i as u64,
            &mut stats,
        )?;
    }
    // The setup's calls are not the relay's per-exchange work.
    stats.syscalls = 0;

    let mut rbuf = vec![0u8; READ_BUF];
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 8];
    let mut iov = Vec::new();
    loop {
        stats.syscalls += 1;
        stats.waits += 1;
        // SAFETY: `events` has room for the 8 events asked for.
        let n = unsafe { libc::epoll_wait(ep.as_raw_fd(), events.as_mut_ptr(), 8, STALL_MS) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(Error::Io("epoll_wait", e));
        }
        if n == 0 {
            return Err(Error::Stalled);
        }
        for ev in &events[..n as usize] {
            let i = ev.u64 as usize;
            let flags = ev.events;
            if flags & !(libc::EPOLLOUT as u32) != 0 {
                read_side(&mut sides, i, &mut rbuf, &mut stats)?;
            }
        }
        for i in [CONSUMER, PRODUCER] {
            flush(&mut sides[i], ep.as_raw_fd(), i, &mut iov, &mut stats)?;
        }
        if sides[CONSUMER].eof {
            return Ok(stats);
        }
        if sides[PRODUCER].eof {
            return Err(Error::Client(
                "the producer closed its connection first".into(),
            ));
        }
    }
}

/// Reads what side `i`'s socket holds and queues its packets for the other side.
fn read_side(sides: &mut [Side; 2], i: usize, rbuf: &mut [u8], stats: &mut Stats) -> Result<()> {
    let [a, b] = sides;
    let (from, to) = if i == CONSUMER { (a, b) } else { (b, a) };
    while !from.eof {
        stats.syscalls += 1;
        stats.reads += 1;
        // SAFETY: `rbuf` is writable for its whole length.
        let n = unsafe { libc::read(from.sock.as_raw_fd(), rbuf.as_mut_ptr().cast(), rbuf.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            match e.kind() {
                std::io::ErrorKind::WouldBlock => return Ok(()),
                std::io::ErrorKind::Interrupted => continue,
                _ => return Err(Error::Io("read", e)),
            }
        }
        let n = n as usize;
        if n == 0 {
            from.eof = true;
            return Ok(());
        }
        stats.bytes_in[i] += n as u64;
        let packets = from.framer.feed(&rbuf[..n], &mut to.out)?;
        if i == CONSUMER {
            stats.interests += packets;
        } else {
            stats.exchanges += packets;
        }
        if n < rbuf.len() {
            // A short read emptied the stream socket: the next edge says when there is more.
            return Ok(());
        }
    }
    Ok(())
}

/// Writes side `i`'s queue with `writev` until it is empty or the socket is full.
fn flush(
    side: &mut Side,
    ep: RawFd,
    i: usize,
    iov: &mut Vec<libc::iovec>,
    stats: &mut Stats,
) -> Result<()> {
    while !side.out.is_empty() {
        side.out.iovecs(iov);
        stats.syscalls += 1;
        stats.writes += 1;
        // SAFETY: the iovecs point into `side.out`, unchanged until the call returns.
        let n = unsafe { libc::writev(side.sock.as_raw_fd(), iov.as_ptr(), iov.len() as i32) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            match e.kind() {
                std::io::ErrorKind::WouldBlock => break,
                std::io::ErrorKind::Interrupted => continue,
                _ => return Err(Error::Io("writev", e)),
            }
        }
        let asked: usize = iov.iter().map(|v| v.iov_len).sum();
        side.out.advance(n as usize);
        if (n as usize) < asked {
            break; // the socket is full
        }
    }
    let want_out = !side.out.is_empty();
    if want_out != side.watching_out {
        let events = if want_out { READS_WRITES } else { READS };
        let fd = side.sock.as_raw_fd();
        ctl(ep, libc::EPOLL_CTL_MOD, fd, events, i as u64, stats)?;
        side.watching_out = want_out;
    }
    Ok(())
}
