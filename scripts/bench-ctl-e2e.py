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
GRID: an R x C grid of routers (--grid 2x5: 10, --grid 4x5: 20) with r1 at a corner; a 16 MiB
    object put at the far corner and a prefix registered at r1. During a `nameway get` of the
    object at r1, the link of r1 that carries it goes silent (both links of r1 cross relays of
    this script); measured: from the failure to EVERY router's FIB holding exactly the next
    hops of the shortest paths without that link (computed here by breadth-first search), for
    both prefixes; the get must complete with the right bytes. Then the link passes again and
    the time to every FIB back is measured.
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
        self.passed = 0
        for f in (self.a_to_b, self.b_to_a):
            threading.Thread(target=f, daemon=True).start()

    def a_to_b(self):
        while True:
            data, src = self.a.recvfrom(65536)
            self.a_src = src
            if not self.drop:
                self.b.sendto(data, self.b_addr)
                self.passed += 1

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


def shortest_next_hops(n, edges, dest):
    """For every node, the set of neighbours on a shortest path to dest (unit costs)."""
    adj = {i: set() for i in range(n)}
    for a, c in edges:
        adj[a].add(c)
        adj[c].add(a)
    dist = {dest: 0}
    queue = [dest]
    for x in queue:
        for y in adj[x]:
            if y not in dist:
                dist[y] = dist[x] + 1
                queue.append(y)
    return {i: {y for y in adj[i] if dist.get(y, 1 << 30) == dist.get(i, 1 << 30) - 1}
            for i in range(n) if i != dest}


def grid(b, rows, cols, rounds):
    n = rows * cols
    rs = [b.router(i + 1) for i in range(n)]
    edges = []
    for i in range(rows):
        for j in range(cols):
            k = i * cols + j
            if j + 1 < cols:
                edges.append((k, k + 1))
            if i + 1 < rows:
                edges.append((k, k + cols))
    face = {}  # (a, c) -> a's face toward c
    relays = {}
    for a, c in edges:
        if a == 0:
            # r1's links cross a relay, so that either can go silent.
            relay = Relay(rs[c]["udp"])
            b.nw(rs[a], "neighbour", "trust", rs[c]["key"])
            b.nw(rs[c], "neighbour", "trust", rs[a]["key"])
            out = b.nw(rs[a], "face", "create", f"udp4://127.0.0.1:{relay.a_port}", "--secure", "--json")
            face[(a, c)] = json.loads(out)["face_id"]
            port = relay.b.getsockname()[1]
            fc = b.wait(lambda: b.face_to(rs[c], {"udp": port}), 20)
            if fc is None:
                raise SystemExit(f"GRID: no face at r{c + 1} toward r1's relay")
            face[(c, a)] = b.face_to(rs[c], {"udp": port})
            relays[c] = relay
        else:
            face[(a, c)], face[(c, a)] = b.link(rs[a], rs[c])
    far = n - 1
    body = os.urandom(16 << 20)
    path = os.path.join(b.work, "object")
    open(path, "wb").write(body)
    obj = "/bench/grid/object"
    home = "/bench/grid/home"
    put = subprocess.Popen([os.path.join(b.bin, "nameway"), "--transport", f"unix://{rs[far]['sock']}",
                            "put", "--json", path, obj], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
    b.procs.append(put)
    put.stdout.readline()
    b.nw(rs[0], "route", "add", home, "255", "--origin", "0")

    def expected(without):
        es = [e for e in edges if e not in without]
        want = {}
        for prefix, dest in ((obj, far), (home, 0)):
            for i, hops in shortest_next_hops(n, es, dest).items():
                want[(i, prefix)] = sorted(face[(i, y)] for y in hops)
        return want

    def fibs():
        keys = [(i, p) for i in range(n) for p in (obj, home) if not (i == far and p == obj)
                and not (i == 0 and p == home)]
        out = {}
        lists = {}

        def read(i):
            lists[i] = json.loads(b.nw(rs[i], "route", "list", "--json"))

        threads = [threading.Thread(target=read, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i, p in keys:
            out[(i, p)] = sorted(x["face_id"] for x in lists[i] if x["prefix"] == p and x["origin"] == 131)
        return out

    def matches(want):
        got = fibs()
        return all(got.get(k) == v for k, v in want.items())

    full = expected([])
    if b.wait(lambda: matches(full), 120) is None:
        raise SystemExit("GRID: the controller's routes did not converge in 120 s")
    polls = []
    for _ in range(10):
        t0 = time.monotonic()
        fibs()
        polls.append(time.monotonic() - t0)
    down, up, gets, early = [], [], [], 0
    for k in range(rounds):
        out = os.path.join(b.work, f"got-{k}")
        before = {c: r.passed for c, r in relays.items()}
        get = subprocess.Popen([os.path.join(b.bin, "nameway"), "--transport", f"unix://{rs[0]['sock']}",
                                "get", "-q", "--cc", "fixed", "-w", "2", "-o", out, obj],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        t_get = time.monotonic()
        time.sleep(0.05)
        # The link of r1 the transfer uses now.
        c = max(relays, key=lambda c: relays[c].passed - before[c])
        running = get.poll() is None
        t0 = time.monotonic()
        relays[c].drop = True
        want = expected([(0, c)])
        if b.wait(lambda: matches(want), 10) is None:
            raise SystemExit(f"GRID: FIBs not updated 10 s after r1-r{c + 1} went silent")
        down.append(time.monotonic() - t0)
        rc = get.wait(timeout=120)
        gets.append(time.monotonic() - t_get)
        if rc != 0 or open(out, "rb").read() != body:
            raise SystemExit(f"GRID: the 16 MiB get failed or returned other bytes: {get.stderr.read()}")
        if not running:
            early += 1
            print(f"GRID round {k}: the get had ended before the failure (it took under 50 ms)")
        os.remove(out)
        time.sleep(0.2)
        t0 = time.monotonic()
        relays[c].drop = False
        if b.wait(lambda: matches(full), 20) is None:
            raise SystemExit("GRID: FIBs not back after the link answered again")
        up.append(time.monotonic() - t0)
        time.sleep(0.5 + (time.monotonic_ns() % 500) / 1000)
    label = f"GRID {rows}x{cols} ({n} routers)"
    show(f"{label}: a link of r1 silent during a 16 MiB get -> every FIB updated", down)
    show(f"{label}:    the 16 MiB get (completed, bytes checked; {len(gets) - early} of {len(gets)} "
         f"running at the failure) took", gets)
    show(f"{label}:    the link passes again -> every FIB back", up)
    show(f"{label}:    baseline: one reading of all {n} FIBs (nameway route list, in parallel)", polls)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/debug")
    parser.add_argument("--line", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--poll-ms", type=int, default=5)
    parser.add_argument("--grid", default="4x5", help="rows x columns of the GRID scenario")
    parser.add_argument("--only", choices=["c1", "c1s", "c2", "grid"], help="run one scenario")
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
            elif which == "grid":
                rows, cols = (int(x) for x in args.grid.split("x"))
                grid(b, rows, cols, args.rounds)
            else:
                c2(b, args.line, args.rounds)
        finally:
            b.stop()
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
