#!/usr/bin/env python3
"""Holds COUNT idle connections to a forwarder's Unix socket (used by bench-idle-faces.sh).

Each connection sends one Interest for a name nobody serves (as an application does once when
it starts: a registration, a first request), reads whatever comes back within a moment, and
then stays open and silent. Prints "ready N" once every connection is open and has been
answered or waited for, then sleeps until killed. Standard library only.
"""

import os
import resource
import select
import socket
import sys
import time


def tlv(t: int, value: bytes) -> bytes:
    def num(n: int) -> bytes:
        if n < 253:
            return bytes([n])
        if n < 1 << 16:
            return b"\xfd" + n.to_bytes(2, "big")
        return b"\xfe" + n.to_bytes(4, "big")

    return num(t) + num(len(value)) + value


def interest(i: int) -> bytes:
    name = tlv(7, tlv(8, b"idle") + tlv(8, str(i).encode()))
    return tlv(5, name + tlv(10, os.urandom(4)) + tlv(12, (1000).to_bytes(2, "big")))


def main() -> None:
    path, count = sys.argv[1], int(sys.argv[2])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = count + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    conns = []
    for i in range(count):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        s.sendall(interest(i))
        conns.append(s)
    # Give every face the chance to answer (Nack NoRoute, or nothing) and drain it.
    deadline = time.time() + 5
    poller = select.poll()
    by_fd = {s.fileno(): s for s in conns}
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    pending = len(by_fd)
    while pending and time.time() < deadline:
        for fd, _ in poller.poll(200):
            by_fd[fd].recv(65536)
            poller.unregister(fd)
            pending -= 1
    print(f"ready {len(conns)}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
