//! The consumer and the producer, each run in a process of its own with a blocking socket.
//!
//! Without batching they behave as ndn-cxx's `ndnget` and `ndnserve` do under the P1
//! benchmark: one packet per `write` and one packet per `read` (every packet of the benchmark
//! has a fixed size, so a read asks for exactly the rest of the packet it is in). With
//! batching, as `nameway bench`: a whole window in one `write`, and reads of all the socket
//! holds. Both check every byte they receive against the packet expected next.
//!
//! A client either blocks in `read` ([`Wait::Blocking`]) or, as ndn-cxx's clients do through
//! Boost.Asio, keeps its socket non-blocking, reads at once, and waits in `epoll_wait` only
//! when a read finds nothing ([`Wait::Epoll`]: registered for reads only, edge-triggered, as
//! Asio registers a socket that never had to wait to write). The difference matters to the
//! relay: a client blocked in `read` is woken again when the relay reads what the client
//! sent (`unix_write_space` wakes every waiter of the socket), one waiting in epoll for reads
//! only is not.

/// How a client waits for its socket.
#[derive(Debug)]
pub enum Wait {
    /// Blocking reads and writes.
    Blocking,
    /// Non-blocking socket; `epoll_wait` on this epoll instance when a read or write would
    /// block.
    Epoll(OwnedFd),
}

impl Wait {
    /// Sets `sock` up for this kind of waiting.
    ///
    /// # Errors
    /// A failed `epoll_create1`, `epoll_ctl` or `fcntl`.
    pub fn new(sock: &UnixStream, epoll: bool) -> Result<Wait> {
        if !epoll {
            return Ok(Wait::Blocking);
        }
        sock.set_nonblocking(true).map_err(io("set_nonblocking"))?;
        // SAFETY: epoll_create1 returns a new descriptor or -1.
        let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if ep < 0 {
            return Err(crate::os_err("epoll_create1"));
        }
        // SAFETY: `ep` is ours from here on.
        let ep = unsafe { OwnedFd::from_raw_fd(ep) };
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLET) as u32,
            u64: 0,
        };
        // SAFETY: `ev` is valid for the call.
        if unsafe {
            libc::epoll_ctl(
                ep.as_raw_fd(),
                libc::EPOLL_CTL_ADD,
                sock.as_raw_fd(),
                &mut ev,
            )
        } < 0
        {
            return Err(crate::os_err("epoll_ctl"));
        }
        Ok(Wait::Epoll(ep))
    }

    /// Waits until the socket may be read again (epoll), after a read found nothing.
    fn readable(&self) -> Result<()> {
        let Wait::Epoll(ep) = self else {
            return Ok(());
        };
        let mut ev = [libc::epoll_event { events: 0, u64: 0 }];
        loop {
            // SAFETY: room for the one event asked for.
            let n = unsafe { libc::epoll_wait(ep.as_raw_fd(), ev.as_mut_ptr(), 1, 10_000) };
            match n {
                1 => return Ok(()),
                0 => return Err(Error::Stalled),
                _ => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(Error::Io("epoll_wait", e));
                    }
                }
            }
        }
    }
}

/// One `read`, waiting as `wait` says when the socket has nothing (never 0 bytes but at the
/// end of the stream).
fn read_some(sock: &mut UnixStream, wait: &Wait, buf: &mut [u8]) -> Result<usize> {
    loop {
        match sock.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => wait.readable()?,
            Err(e) => return Err(Error::Io("read", e)),
        }
    }
}

/// Writes all of `data`; a non-blocking socket that is full is waited for with `poll`.
fn write_all(sock: &mut UnixStream, data: &[u8]) -> Result<()> {
    let mut at = 0;
    while at < data.len() {
        match sock.write(&data[at..]) {
            Ok(n) => at += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let mut p = libc::pollfd {
                    fd: sock.as_raw_fd(),
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                if unsafe { libc::poll(&mut p, 1, 10_000) } < 0 {
                    return Err(crate::os_err("poll"));
                }
            }
            Err(e) => return Err(Error::Io("write", e)),
        }
    }
    Ok(())
}

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use crate::tlv::{self, DATA, DATA_LEN, INTEREST, INTEREST_LEN};
use crate::{Error, Result};

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |e| Error::Io(what, e)
}

/// Reads exactly one packet of `len` bytes into `buf`, with as few reads as the socket
/// allows (one, nearly always). `Ok(false)` at a clean end of stream before the packet.
fn read_packet(sock: &mut UnixStream, wait: &Wait, buf: &mut [u8]) -> Result<bool> {
    let mut filled = 0;
    while filled < buf.len() {
        match read_some(sock, wait, &mut buf[filled..])? {
            0 if filled == 0 => return Ok(false),
            0 => return Err(Error::Protocol("the stream ended inside a packet".into())),
            n => filled += n,
        }
    }
    Ok(true)
}

/// Fetches `exchanges` Data, keeping `window` Interests outstanding.
///
/// # Errors
/// A failed read or write, the relay closing early, or a packet that is not the expected one.
pub fn consumer(
    mut sock: UnixStream,
    wait: &Wait,
    exchanges: u64,
    window: u64,
    batching: bool,
) -> Result<()> {
    let mut next = 0u64; // the next Interest to send
    let mut got = 0u64; // Data received
    let mut out = Vec::with_capacity(INTEREST_LEN * window as usize);
    let first = window.min(exchanges);
    if batching {
        for seq in 0..first {
            tlv::interest(&mut out, seq);
        }
        write_all(&mut sock, &out)?;
        next = first;
        let mut buf = vec![0u8; 64 * 1024];
        let mut filled = 0;
        while got < exchanges {
            let n = read_some(&mut sock, wait, &mut buf[filled..])?;
            if n == 0 {
                return Err(Error::Protocol(format!(
                    "the relay closed after {got} Data"
                )));
            }
            filled += n;
            let mut at = 0;
            out.clear();
            while let Some(len) = tlv::frame_len(&buf[at..filled], DATA)? {
                tlv::check(&buf[at..at + len], DATA, got)?;
                got += 1;
                at += len;
                if next < exchanges {
                    tlv::interest(&mut out, next);
                    next += 1;
                }
            }
            buf.copy_within(at..filled, 0);
            filled -= at;
            if !out.is_empty() {
                write_all(&mut sock, &out)?;
            }
        }
        return Ok(());
    }
    while next < first {
        out.clear();
        tlv::interest(&mut out, next);
        write_all(&mut sock, &out)?;
        next += 1;
    }
    let mut buf = [0u8; DATA_LEN];
    while got < exchanges {
        if !read_packet(&mut sock, wait, &mut buf)? {
            return Err(Error::Protocol(format!(
                "the relay closed after {got} Data"
            )));
        }
        tlv::check(&buf, DATA, got)?;
        got += 1;
        if next < exchanges {
            out.clear();
            tlv::interest(&mut out, next);
            write_all(&mut sock, &out)?;
            next += 1;
        }
    }
    Ok(())
}

/// Appends the answer to Interest `seq`: its Data, or an Interest where `bad_at` says so.
fn answer(out: &mut Vec<u8>, seq: u64, bad_at: Option<u64>) {
    if bad_at == Some(seq) {
        tlv::interest(out, seq);
    } else {
        tlv::data(out, seq);
    }
}

/// Answers every Interest with its Data until the relay closes the connection; returns how
/// many it answered. With `bad_at`, Interest number `bad_at` is answered with an Interest
/// (a packet the relay must refuse).
///
/// # Errors
/// A failed read or write, or a packet that is not the expected one.
pub fn producer(
    mut sock: UnixStream,
    wait: &Wait,
    batching: bool,
    bad_at: Option<u64>,
) -> Result<u64> {
    let mut seq = 0u64;
    let mut out = Vec::with_capacity(64 * 1024);
    if batching {
        let mut buf = vec![0u8; 64 * 1024];
        let mut filled = 0;
        loop {
            let n = read_some(&mut sock, wait, &mut buf[filled..])?;
            if n == 0 {
                return if filled == 0 {
                    Ok(seq)
                } else {
                    Err(Error::Protocol("the stream ended inside a packet".into()))
                };
            }
            filled += n;
            let mut at = 0;
            out.clear();
            while let Some(len) = tlv::frame_len(&buf[at..filled], INTEREST)? {
                tlv::check(&buf[at..at + len], INTEREST, seq)?;
                answer(&mut out, seq, bad_at);
                seq += 1;
                at += len;
            }
            buf.copy_within(at..filled, 0);
            filled -= at;
            if !out.is_empty() {
                write_all(&mut sock, &out)?;
            }
        }
    }
    let mut buf = [0u8; INTEREST_LEN];
    while read_packet(&mut sock, wait, &mut buf)? {
        tlv::check(&buf, INTEREST, seq)?;
        out.clear();
        answer(&mut out, seq, bad_at);
        write_all(&mut sock, &out)?;
        seq += 1;
    }
    Ok(seq)
}
