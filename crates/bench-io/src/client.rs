//! The consumer and the producer, each run in a process of its own with a blocking socket.
//!
//! Without batching they behave as ndn-cxx's `ndnget` and `ndnserve` do under the P1
//! benchmark: one packet per `write` and one packet per `read` (every packet of the benchmark
//! has a fixed size, so a read asks for exactly the rest of the packet it is in). With
//! batching, as `nameway bench`: a whole window in one `write`, and reads of all the socket
//! holds. Both check every byte they receive against the packet expected next.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use crate::tlv::{self, DATA, DATA_LEN, INTEREST, INTEREST_LEN};
use crate::{Error, Result};

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |e| Error::Io(what, e)
}

/// Reads exactly one packet of `len` bytes into `buf`, with as few reads as the socket
/// allows (one, nearly always). `Ok(false)` at a clean end of stream before the packet.
fn read_packet(sock: &mut UnixStream, buf: &mut [u8]) -> Result<bool> {
    let mut filled = 0;
    while filled < buf.len() {
        match sock.read(&mut buf[filled..]) {
            Ok(0) if filled == 0 => return Ok(false),
            Ok(0) => return Err(Error::Protocol("the stream ended inside a packet".into())),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::Io("read", e)),
        }
    }
    Ok(true)
}

/// Fetches `exchanges` Data, keeping `window` Interests outstanding.
///
/// # Errors
/// A failed read or write, the relay closing early, or a packet that is not the expected one.
pub fn consumer(mut sock: UnixStream, exchanges: u64, window: u64, batching: bool) -> Result<()> {
    let mut next = 0u64; // the next Interest to send
    let mut got = 0u64; // Data received
    let mut out = Vec::with_capacity(INTEREST_LEN * window as usize);
    let first = window.min(exchanges);
    if batching {
        for seq in 0..first {
            tlv::interest(&mut out, seq);
        }
        sock.write_all(&out).map_err(io("write"))?;
        next = first;
        let mut buf = vec![0u8; 64 * 1024];
        let mut filled = 0;
        while got < exchanges {
            let n = sock.read(&mut buf[filled..]).map_err(io("read"))?;
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
                sock.write_all(&out).map_err(io("write"))?;
            }
        }
        return Ok(());
    }
    while next < first {
        out.clear();
        tlv::interest(&mut out, next);
        sock.write_all(&out).map_err(io("write"))?;
        next += 1;
    }
    let mut buf = [0u8; DATA_LEN];
    while got < exchanges {
        if !read_packet(&mut sock, &mut buf)? {
            return Err(Error::Protocol(format!(
                "the relay closed after {got} Data"
            )));
        }
        tlv::check(&buf, DATA, got)?;
        got += 1;
        if next < exchanges {
            out.clear();
            tlv::interest(&mut out, next);
            sock.write_all(&out).map_err(io("write"))?;
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
pub fn producer(mut sock: UnixStream, batching: bool, bad_at: Option<u64>) -> Result<u64> {
    let mut seq = 0u64;
    let mut out = Vec::with_capacity(64 * 1024);
    if batching {
        let mut buf = vec![0u8; 64 * 1024];
        let mut filled = 0;
        loop {
            let n = sock.read(&mut buf[filled..]).map_err(io("read"))?;
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
                sock.write_all(&out).map_err(io("write"))?;
            }
        }
    }
    let mut buf = [0u8; INTEREST_LEN];
    while read_packet(&mut sock, &mut buf)? {
        tlv::check(&buf, INTEREST, seq)?;
        out.clear();
        answer(&mut out, seq, bad_at);
        sock.write_all(&out).map_err(io("write"))?;
        seq += 1;
    }
    Ok(seq)
}
