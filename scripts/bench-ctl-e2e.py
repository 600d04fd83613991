#!/usr/bin/env python3
"""The controller end to end on loopback (docs/controller.md, "Phase 2 figures").

C1: a diamond r1-r2-r3 / r1-r4-r3 with a prefix registered at r3; the r2-r3 link fails (r2
    destroys its face toward r3: face-down detection). Measured: from the failure to every FIB
    that must change having changed (r1 uses r4 only, r2 goes through r1). Then the face is
    made again and the time until the FIBs are back (link up) is measured too.
C1s: the same diamond, the r2-r3 link through a UDP relay of this script's that starts dropping
    every datagram both ways (a silent failure: no face goes down; the agents' hellos find it).
    Measured: from the relay dropping to every FIB that must change having changed; then from
    the relay passing again to the FIBs back (hysteresis: two hellos answered in a row).
C2: a line of N routers (N-1 hops); an application's registration (rib/register, origin app)
    at rN; measured: from the registration command to the prefix routed by the controller at
    r1.

Real processes: namewayctl serve, N namewayd with secure UDP faces, the nameway CLI. Times are
taken by polling `nameway route list --json` (one process per poll, about POLL_MS apart), so
they include up to one poll interval.

    python3 scripts/bench-ctl-e2e.py --bin target/debug --line 10 --rounds 30
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    while True:
        t = socket.socket()
        t.bind(("127.0.0.1", 0))
        port = t.getsockname()[1]
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            u.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
        finally:
            t.close()
            u.close()


class Bench:
    def __init__(self, bindir, work, poll_ms=5):
        self.bin = bindir
        self.work = work
        self.procs = []
        self.poll_ms = poll_ms
        self.http = None

    def run(self, *args):
        out = subprocess.run(args, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"{args}: {out.stderr}")
        return out.stdout

    def ctl(self, *args):
        return self.run(os.path.join(self.bin, "namewayctl"), *args)

    def start_controller(self, http=False, extra_args=()):
        db = os.path.join(self.work, "ctl.db")
        self.db = db
        self.ctl("init", "--domain", "/bench", "--db", db)
        log = open(os.path.join(self.work, "ctl.log"), "w")
        extra = []
        if http:
            self.http = f"127.0.0.1:{free_port()}"
            extra = ["--http", self.http]
        p = subprocess.Popen(
            [os.path.join(self.bin, "namewayctl"), "serve", "--db", db, "--listen", "127.0.0.1:0"]
            + extra + list(extra_args),
            stdout=subprocess.PIPE, stderr=log, text=True)
        self.procs.append(p)
        self.listen = p.stdout.readline().split()[1]
        if http:
            p.stdout.readline()  # "http <addr>"
        self.pin = p.stdout.readline().split()[1]

    def router(self, i):
        name = f"/bench/r{i}"
        d = os.path.join(self.work, f"r{i}")
        os.makedirs(d)
        udp, tcp = free_port(), free_port()
        token = self.ctl("token", "--router", name, "--db", self.db).strip()
        cfg = f"""[faces]
unix = "{d}/nfd.sock"
tcp = ["127.0.0.1:{tcp}"]
udp = ["127.0.0.1:{udp}"]
[log]
level = "warn"
[security]
identity = "{d}/link.key"
[controller]
uri = "tcp://{self.listen}"
key = "{self.pin}"
name = "{name}"
token = "{token}"
state_dir = "{d}/state"
"""
        open(f"{d}/namewayd.toml", "w").write(cfg)
        log = open(f"{d}/namewayd.log", "w")
        p = subprocess.Popen([os.path.join(self.bin, "namewayd"), "-c", f"{d}/namewayd.toml"],
                             stdout=subprocess.DEVNULL, stderr=log)
        self.procs.append(p)
        sock = f"{d}/nfd.sock"
        deadline = time.time() + 30
        while not os.path.exists(sock):
            if time.time() > deadline:
                raise SystemExit(f"{name} did not start")
            time.sleep(0.02)
        r = {"name": name, "udp": udp, "sock": sock, "pid": p.pid}
        r["key"] = self.nw(r, "identity", "show").strip()
        return r

    def nw(self, r, *args):
        return self.run(os.path.join(self.bin, "nameway"), "--transport", f"unix://{r['sock']}", *args)

    def link(self, a, b):
        """A secure UDP face from a to b (b's side is made on demand); both faces' ids."""
        self.nw(a, "neighbour", "trust", b["key"])
        self.nw(b, "neighbour", "trust", a["key"])
        fa = self.face(a, b)
        deadline = time.time() + 20
        while True:
            fb = self.face_to(b, a)
            if fb is not None:
                return fa, fb
            if time.time() > deadline:
                raise SystemExit(f"no face at {b['name']} toward {a['name']}")
            time.sleep(0.05)

    def face_to(self, a, b):
        faces = json.loads(self.nw(a, "face", "list", "--json"))
        uri = f"udp4://127.0.0.1:{b['udp']}"
        return next((f["face_id"] for f in faces if f["uri"] == uri), None)

    def face(self, a, b):
        out = self.nw(a, "face", "create", f"udp4://127.0.0.1:{b['udp']}", "--secure", "--json")
        return json.loads(out)["face_id"]

    def ctl_faces(self, r, prefix):
        routes = json.loads(self.nw(r, "route", "list", "--json"))
        return sorted(x["face_id"] for x in routes if x["prefix"] == prefix and x["origin"] == 131)

    def wait(self, cond, timeout=30.0):
        start = time.monotonic()
        while True:
            if cond():
                return time.monotonic() - start
            if time.monotonic() - start > timeout:
                return None
            time.sleep(self.poll_ms / 1000)

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()


class Relay:
    """Forwards UDP datagrams between a face pointed at `a_port` and `b_port`; `drop` silences it."""

    def __init__(self, b_port):
        self.a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.a.bind(("127.0.0.1", 0))
        self.b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.b.bind(("127.0.0.1", 0))
        self.a_port = self.a.getsockname()[1]
        self.b_addr = ("127.0.0.1", b_port)
        self.a_src = None
        self.drop = False
        for f in (self.a_to_b, self.b_to_a):
            threading.Thread(target=f, daemon=True).start()

    def a_to_b(self):
        while True:
            data, src = self.a.recvfrom(65536)
            self.a_src = src
            if not self.drop:
                self.b.sendto(data, self.b_addr)

    def b_to_a(self):
        while True:
            data, _ = self.b.recvfrom(65536)
            if not self.drop and self.a_src is not None:
                self.a.sendto(data, self.a_src)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def show(label, xs):
    ms = [x * 1000 for x in xs]
    print(f"{label}: n={len(ms)} median {statistics.median(ms):.0f} ms, p99 {pct(ms, 0.99):.0f} ms, "
          f"min {min(ms):.0f} ms, max {max(ms):.0f} ms", flush=True)


def c2(b, n, rounds):
    rs = [b.router(i + 1) for i in range(n)]
    for a, c in zip(rs, rs[1:]):
        b.link(a, c)
    first, last = rs[0], rs[-1]
    b.nw(last, "route", "add", "/bench/warm", "255", "--origin", "0")
    if b.wait(lambda: b.ctl_faces(first, "/bench/warm"), 60) is None:
        raise SystemExit("C2: the line did not converge in 60 s")
    samples = []
    for k in range(rounds):
        prefix = f"/bench/c2/{k}"
        t0 = time.monotonic()
        b.nw(last, "route", "add", prefix, "255", "--origin", "0")
        if b.wait(lambda: b.ctl_faces(first, prefix), 10) is None:
            raise SystemExit(f"C2: {prefix} not routed at r1 in 10 s")
        samples.append(time.monotonic() - t0)
    show(f"C2 registration at r{n} -> routed at r1 ({n - 1} hops)", samples)
    polls = []
    for _ in range(20):
        t0 = time.monotonic()
        b.ctl_faces(first, prefix)
        polls.append(time.monotonic() - t0)
    show("   baseline: one poll (nameway route list --json)", polls)


def c1(b, rounds):
    r1, r2, r3, r4 = (b.router(i) for i in range(1, 5))
    f12, f21 = b.link(r1, r2)
    f23, _ = b.link(r2, r3)
    f14, _ = b.link(r1, r4)
    b.link(r4, r3)
    prefix = "/bench/c1"
    b.nw(r3, "route", "add", prefix, "255", "--origin", "0")
    both = sorted([f12, f14])
    if b.wait(lambda: b.ctl_faces(r1, prefix) == both and b.ctl_faces(r2, prefix) == [f23], 60) is None:
        raise SystemExit("C1: the diamond did not converge in 60 s")
    down, up = [], []
    for _ in range(rounds):
        t0 = time.monotonic()
        b.nw(r2, "face", "destroy", str(f23))
        if b.wait(lambda: b.ctl_faces(r1, prefix) == [f14] and b.ctl_faces(r2, prefix) == [f21], 10) is None:
            raise SystemExit("C1: FIBs not updated after the link failed")
        down.append(time.monotonic() - t0)
        t0 = time.monotonic()
        f23 = b.face(r2, r3)
        if b.wait(lambda: b.ctl_faces(r1, prefix) == both and b.ctl_faces(r2, prefix) == [f23], 20) is None:
            raise SystemExit("C1: FIBs not back after the link came up")
        up.append(time.monotonic() - t0)
    show("C1 link r2-r3 down -> r1 and r2 FIBs updated", down)
    show("   link r2-r3 up (secure handshake included) -> FIBs back", up)


def c1_silent(b, rounds):
    r1, r2, r3, r4 = (b.router(i) for i in range(1, 5))
    f12, f21 = b.link(r1, r2)
    relay = Relay(r3["udp"])
    b.nw(r2, "neighbour", "trust", r3["key"])
    b.nw(r3, "neighbour", "trust", r2["key"])
    out = b.nw(r2, "face", "create", f"udp4://127.0.0.1:{relay.a_port}", "--secure", "--json")
    f23 = json.loads(out)["face_id"]
    f14, _ = b.link(r1, r4)
    b.link(r4, r3)
    prefix = "/bench/c1s"
    b.nw(r3, "route", "add", prefix, "255", "--origin", "0")
    both = sorted([f12, f14])
    if b.wait(lambda: b.ctl_faces(r1, prefix) == both and b.ctl_faces(r2, prefix) == [f23], 60) is None:
        raise SystemExit("C1s: the diamond did not converge in 60 s")
    down, up = [], []
    for _ in range(rounds):
        # A random phase against the hello rounds.
        time.sleep(0.5 + (time.monotonic_ns() % 500) / 1000)
        t0 = time.monotonic()
        relay.drop = True
        if b.wait(lambda: b.ctl_faces(r1, prefix) == [f14] and b.ctl_faces(r2, prefix) == [f21], 10) is None:
            raise SystemExit("C1s: FIBs not updated after the link went silent")
        down.append(time.monotonic() - t0)
        time.sleep(0.2)
        t0 = time.monotonic()
        relay.drop = False
        if b.wait(lambda: b.ctl_faces(r1, prefix) == both and b.ctl_faces(r2, prefix) == [f23], 20) is None:
            raise SystemExit("C1s: FIBs not back after the link answered again")
        up.append(time.monotonic() - t0)
    show("C1s link r2-r3 silent (relay drops all) -> r1 and r2 FIBs updated", down)
    show("   link r2-r3 passes again -> FIBs back (2 hellos answered)", up)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/debug")
    parser.add_argument("--line", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--poll-ms", type=int, default=5)
    parser.add_argument("--only", choices=["c1", "c1s", "c2"], help="run one scenario")
    args = parser.parse_args()

    for which in [args.only] if args.only else ("c1", "c1s", "c2"):
        work = tempfile.mkdtemp(prefix=f"bench-ctl-{which}-")
        b = Bench(os.path.abspath(args.bin), work, args.poll_ms)
        try:
            b.start_controller()
            if which == "c1":
                c1(b, args.rounds)
            elif which == "c1s":
                c1_silent(b, args.rounds)
            else:
                c2(b, args.line, args.rounds)
        finally:
            b.stop()
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
