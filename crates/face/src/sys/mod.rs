//! The few system calls the socket crates do not offer. This is the only module with `unsafe`
//! code; each block says why it is sound.
//!
//! quinn-udp sets "don't fragment" on its sockets (QUIC probes the path MTU itself). NDN over
//! UDP relies on IP fragmentation instead: NFD's UDP faces have an 8800-byte MTU and let the
//! kernel fragment datagrams larger than the link MTU. [`allow_ip_fragmentation`] turns path
//! MTU discovery back off so datagrams up to the face MTU leave the host on any link.
//!
//! Why `libc` and not a safe wrapper: socket2 sets none of these options; rustix sets
//! `IP_MTU_DISCOVER` and `IPV6_MTU_DISCOVER` but has no setter for `IPV6_DONTFRAG`, which
//! quinn-udp turns on and which keeps the kernel from fragmenting IPv6 datagrams whatever the
//! discovery mode; and rustix is not among this crate's dependencies (only `tempfile`, a test
//! dependency, brings it into the workspace). One call site with a checked length stays
//! simpler than a new dependency that still leaves the third option to `libc`.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::AsRawFd;

/// Lets the kernel fragment this UDP socket's datagrams (`IP_PMTUDISC_DONT`, and for IPv6
/// `IPV6_PMTUDISC_DONT` with `IPV6_DONTFRAG` off). Does nothing outside Linux.
///
/// # Errors
/// The `setsockopt` error.
pub(crate) fn allow_ip_fragmentation(socket: &impl AsRawFd, ipv6: bool) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let fd = socket.as_raw_fd();
        if ipv6 {
            set_int(
                fd,
                libc::IPPROTO_IPV6,
                libc::IPV6_MTU_DISCOVER,
                libc::IPV6_PMTUDISC_DONT,
            )?;
            set_int(fd, libc::IPPROTO_IPV6, libc::IPV6_DONTFRAG, 0)?;
        } else {
            set_int(
                fd,
                libc::IPPROTO_IP,
                libc::IP_MTU_DISCOVER,
                libc::IP_PMTUDISC_DONT,
            )?;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (socket.as_raw_fd(), ipv6);
    Ok(())
}

#[cfg(target_os = "linux")]
fn set_int(
    fd: libc::c_int,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    let len = libc::socklen_t::try_from(std::mem::size_of::<libc::c_int>())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `fd` is an open socket borrowed from a live socket object for the duration of
    // the call; `optval` points to a `c_int` on our stack that outlives the call, and `len` is
    // exactly its size, so the kernel reads only initialized memory we own.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            std::ptr::from_ref(&value).cast::<libc::c_void>(),
            len,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Copies the bytes waiting on a stream socket into `buf` without taking them from the
/// socket (`recv` with `MSG_PEEK`, never waiting). socket2's `peek` writes into uninitialised
/// memory, which safe code cannot read back; this reads into initialised bytes.
///
/// # Errors
/// The `recv` error (`WouldBlock` when nothing is waiting).
pub(crate) fn peek(socket: &impl AsRawFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is a valid, writable, initialised region of `buf.len()` bytes for the whole
    // call, and `recv` writes at most that many bytes into it.
    let rc = unsafe {
        libc::recv(
            socket.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    usize::try_from(rc).map_err(|_| io::Error::last_os_error())
}

/// Reads what a stream socket holds now into the spare capacity of `buf` (`recv` with
/// `MSG_DONTWAIT`), as tokio's `try_read_buf` does for the sockets it owns: for a socket the
/// reactor watches through an `AsyncFd` (crate::unix_io), whose reads are the caller's.
///
/// # Errors
/// The `recv` error (`WouldBlock` when nothing is waiting).
pub(crate) fn recv_buf(socket: &impl AsRawFd, buf: &mut bytes::BytesMut) -> io::Result<usize> {
    let spare = buf.spare_capacity_mut();
    // SAFETY: `spare` is a valid, writable region of `spare.len()` bytes owned by `buf` for the
    // whole call (uninitialised bytes may be written), and `recv` writes at most that many.
    let rc = unsafe {
        libc::recv(
            socket.as_raw_fd(),
            spare.as_mut_ptr().cast(),
            spare.len(),
            libc::MSG_DONTWAIT,
        )
    };
    let n = usize::try_from(rc).map_err(|_| io::Error::last_os_error())?;
    let len = buf.len() + n;
    // SAFETY: the kernel initialised the first `n` bytes of the spare capacity (`n` is at
    // most its length), so the first `len` bytes of `buf` are initialised.
    unsafe { buf.set_len(len) };
    Ok(n)
}

/// Registers a Unix stream socket with the reactor for `interest` only (tokio's own sockets
/// always register for reads and writes).
///
/// # Errors
/// The registration's error (the socket is closed then).
pub(crate) fn register_unix(
    socket: std::os::unix::net::UnixStream,
    interest: tokio::io::Interest,
) -> io::Result<tokio::io::unix::AsyncFd<std::os::unix::net::UnixStream>> {
    // SAFETY: a `UnixStream` owns its descriptor: it stays open and the same for the stream's
    // whole life, which the `AsyncFd` takes, and `as_raw_fd` always returns it. Nothing in
    // this crate replaces the stream through `AsyncFd::get_mut` (crate::unix_io uses
    // `get_ref` only).
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(socket, interest) }
        .map_err(|e| e.into_parts().1)
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;

    /// Reads an integer socket option back.
    fn get_int(socket: &impl AsRawFd, level: libc::c_int, name: libc::c_int) -> libc::c_int {
        let mut value: libc::c_int = -1;
        let mut len = libc::socklen_t::try_from(std::mem::size_of::<libc::c_int>()).unwrap();
        // SAFETY: the socket is open for the whole call; `optval` points to a `c_int` on our
        // stack and `len` holds its size, so the kernel writes at most that many bytes there.
        let rc = unsafe {
            libc::getsockopt(
                socket.as_raw_fd(),
                level,
                name,
                std::ptr::from_mut(&mut value).cast::<libc::c_void>(),
                &mut len,
            )
        };
        assert_eq!(rc, 0, "getsockopt: {}", io::Error::last_os_error());
        value
    }

    /// A UDP socket as the face system makes one: quinn-udp has forbidden fragmentation.
    fn quinn_socket(domain: socket2::Domain) -> std::net::UdpSocket {
        let socket = socket2::Socket::new(domain, socket2::Type::DGRAM, None).unwrap();
        if domain == socket2::Domain::IPV6 {
            socket.set_only_v6(true).unwrap();
        }
        let socket: std::net::UdpSocket = socket.into();
        quinn_udp::UdpSocketState::new((&socket).into()).unwrap();
        socket
    }

    #[test]
    fn ipv4_datagrams_may_be_fragmented_again() {
        let v4 = quinn_socket(socket2::Domain::IPV4);
        let discover = || get_int(&v4, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER);
        assert_eq!(discover(), libc::IP_PMTUDISC_PROBE, "quinn-udp's setting");
        allow_ip_fragmentation(&v4, false).unwrap();
        assert_eq!(discover(), libc::IP_PMTUDISC_DONT);
    }

    #[test]
    fn ipv6_datagrams_may_be_fragmented_again() {
        let v6 = quinn_socket(socket2::Domain::IPV6);
        let discover = || get_int(&v6, libc::IPPROTO_IPV6, libc::IPV6_MTU_DISCOVER);
        let dont_frag = || get_int(&v6, libc::IPPROTO_IPV6, libc::IPV6_DONTFRAG);
        assert_eq!(
            (discover(), dont_frag()),
            (libc::IPV6_PMTUDISC_PROBE, 1),
            "quinn-udp's settings"
        );
        allow_ip_fragmentation(&v6, true).unwrap();
        assert_eq!((discover(), dont_frag()), (libc::IPV6_PMTUDISC_DONT, 0));
    }
}
