#!/usr/bin/env bash
# C1 and C2 of the controller in the lab (docs/controller.md, "C1 and C2 in the lab"): real
# namewayd in network namespaces joined by veth links, `namewayctl serve` on the lab's
# management network, driven through `nameway lab`.
#
#   sudo bash scripts/bench-ctl-lab.sh crates/lab/topologies/ctl10.toml [options]
#
# Options: --bin DIR (nameway, namewayd, namewayctl; default target/debug), --c1-rounds N
# (default 10), --c2-rounds N (default 30), --c2-at NODE (where the app registers; default the
# node that hosts the server app), --c2-watch NODE (where the route must appear; default the
# first node), --consumer NODE (where the 16 MiB get runs; default the first node),
# --dir DIR (the labs' folder; default a fresh one under /tmp).
#
# C1: the topology's server app has put a 16 MiB object under /lab/object. A `nameway get` of
# it runs at the consumer (fixed window of 2, so that it is still running when the link
# fails); once one of the consumer's links has received 64 KiB since the get started, that
# link fails silently: `ip link set DEV down` on both veth ends (no face goes down; the
# agents' hellos find it). Measured: from the failure to EVERY forwarder's FIB (polled
# through its Unix socket from the root namespace, `nameway route list --json`, all in
# parallel) holding exactly the next hops of the shortest paths without that link (breadth-
# first search here). The get must end with the right bytes (SHA-256 against the server's
# file). Then the link comes up and the time until every FIB is back is measured too.
# C2: an application's registration (`nameway route add PREFIX 255 --origin 0`, origin app)
# at --c2-at; measured: until --c2-watch's FIB has the controller's route (origin 131) for it.
# Baselines: one poll of --c2-watch's FIB, and one parallel reading of every FIB.
# --failure crash: instead of a silent link, a router crashes (`nameway lab kill`, SIGKILL)
# during the get: each round a transit router on a shortest path from the consumer to the
# producer whose loss leaves the network connected; measured: until every surviving FIB
# holds the shortest paths without it; then `nameway lab restart` and until every FIB
# (the restarted router's included) is back.
# --link-delay-ms N: every link of the topology delays each packet N ms each way (the faces'
# fault injector: `delay_ms` in the topology; netem is not needed), run on a copy of the file.
set -euo pipefail

topology=""
bin="target/debug"
dir=""
delay_ms=""
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --link-delay-ms) delay_ms="$2"; shift 2 ;;
    --c1-rounds|--c2-rounds|--c2-at|--c2-watch|--consumer|--failure) args+=("$1" "$2"); shift 2 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) topology="$1"; shift ;;
  esac
done
[[ -n "$topology" ]] || { echo "usage: $0 TOPOLOGY.toml [options]" >&2; exit 2; }
bin="$(cd "$bin" && pwd)"
for b in nameway namewayd namewayctl; do
  [[ -x "$bin/$b" ]] || { echo "$bin/$b is missing (cargo build -p nameway -p namewayd -p nameway-ctl)" >&2; exit 1; }
done
if [[ -z "$dir" ]]; then
  dir="$(mktemp -d /tmp/bench-ctl-lab.XXXXXX)"
fi
if [[ -n "$delay_ms" ]]; then
  [[ "$delay_ms" =~ ^[0-9]+$ ]] || { echo "--link-delay-ms takes whole milliseconds" >&2; exit 2; }
  delayed="$dir/$(basename "$topology" .toml)-delay$delay_ms.toml"
  python3 - "$topology" "$delayed" "$delay_ms" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
if re.search(r"^delay_ms\s*=", text, re.M):
    raise SystemExit(f"{sys.argv[1]} already sets delay_ms")
open(sys.argv[2], "w").write(re.sub(r"^\[\[link\]\]\n", f"[[link]]\ndelay_ms = {sys.argv[3]}\n", text, flags=re.M))
PY
  topology="$delayed"
fi
lab_name="$(python3 -c 'import sys, tomllib, os; t = tomllib.load(open(sys.argv[1], "rb")); print(t.get("name") or os.path.splitext(os.path.basename(sys.argv[1]))[0])' "$topology")"

down() { "$bin/nameway" lab --dir "$dir" down "$lab_name" >/dev/null 2>&1 || true; }
trap down EXIT
echo "lab $lab_name: up ($(uptime | sed 's/.*load/load/'))"
t0=$(date +%s.%N)
"$bin/nameway" lab --dir "$dir" --bin-dir "$bin" up "$topology" --detach >/dev/null
echo "lab $lab_name: up in $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)") s"

python3 - "$topology" "$dir" "$bin" "$lab_name" "${args[@]}" <<'PY'
import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import tomllib

parser = argparse.ArgumentParser()
parser.add_argument("topology")
parser.add_argument("dir")
parser.add_argument("bin")
parser.add_argument("lab")
parser.add_argument("--c1-rounds", type=int, default=10)
parser.add_argument("--c2-rounds", type=int, default=30)
parser.add_argument("--c2-at")
parser.add_argument("--c2-watch")
parser.add_argument("--consumer")
parser.add_argument("--failure", choices=["silent", "crash"], default="silent")
a = parser.parse_args()

topo = tomllib.load(open(a.topology, "rb"))
nodes = [n["name"] for n in topo["node"] if n.get("kind", "nameway") != "app"]
server = next(n for n in topo["node"] if n.get("kind") == "app")
producer = server["on"]
consumer = a.consumer or nodes[0]
c2_at = a.c2_at or producer
c2_watch = a.c2_watch or nodes[0]
links = [(l["a"], l["b"]) for l in topo["link"]]
OBJ = "/lab/object"

# The lab's plan (crates/lab/src/plan.rs): link i is 10.0.0.0/8's i-th /30 (a .1, b .2), its
# ends are eth<k> on each node (the node's k-th link in file order).
iface = {}
count = {n: 0 for n in nodes}
addr = {}
for i, (x, y) in enumerate(links):
    base = 0x0A000000 + 4 * i
    for end, k in ((x, 1), (y, 2)):
        iface[(i, end)] = f"eth{count[end]}"
        count[end] += 1
        v = base + k
        addr[(i, end)] = f"{v >> 24}.{(v >> 16) & 255}.{(v >> 8) & 255}.{v & 255}"


def sock(n):
    return os.path.join(a.dir, a.lab, "nodes", n, "nfd.sock")


def netns(n):
    return f"nwl-{a.lab}-{n}"


def run(*args):
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{args}: {out.stderr.strip()}")
    return out.stdout


def nw(n, *args):
    return run(os.path.join(a.bin, "nameway"), "--transport", f"unix://{sock(n)}", *args)


def face_ids(n):
    return {f["uri"]: f["face_id"] for f in json.loads(nw(n, "face", "list", "--json"))}


# Each node's face toward each neighbour, by link.
faces = {n: face_ids(n) for n in nodes}
face_of = {}
for i, (x, y) in enumerate(links):
    for me, other in ((x, y), (y, x)):
        uri = f"udp4://{addr[(i, other)]}:6363"
        if uri not in faces[me]:
            raise SystemExit(f"{me} has no face {uri}")
        face_of[(me, i)] = faces[me][uri]


def expected(dest, without=(), dead=()):
    """Every node's next hops (face ids) on the shortest paths to dest, without some links
    and some (dead) nodes."""
    adj = {n: [] for n in nodes if n not in dead}
    for i, (x, y) in enumerate(links):
        if i not in without and x not in dead and y not in dead:
            adj[x].append((y, i))
            adj[y].append((x, i))
    dist = {dest: 0}
    queue = [dest]
    for x in queue:
        for y, _ in adj[x]:
            if y not in dist:
                dist[y] = dist[x] + 1
                queue.append(y)
    return {n: sorted(face_of[(n, i)] for y, i in adj[n] if dist.get(y, 1 << 30) == dist[n] - 1)
            for n in nodes if n != dest and n in dist}


def fibs(prefix, dead=()):
    got = {}

    def read(n):
        routes = json.loads(nw(n, "route", "list", "--json"))
        got[n] = sorted(r["face_id"] for r in routes if r["prefix"] == prefix and r["origin"] == 131)

    threads = [threading.Thread(target=read, args=(n,)) for n in nodes if n not in dead]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return got


def matches(prefix, want, dead=()):
    got = fibs(prefix, dead)
    return all(got.get(n) == v for n, v in want.items())


def wait(cond, timeout):
    start = time.monotonic()
    while True:
        if cond():
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            return None
        time.sleep(0.005)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def show(label, xs):
    ms = [x * 1000 for x in xs]
    print(f"{label}: n={len(ms)} median {statistics.median(ms):.0f} ms, p99 {pct(ms, 0.99):.0f} ms, "
          f"min {min(ms):.0f} ms, max {max(ms):.0f} ms", flush=True)


def rx_bytes(n):
    out = json.loads(run("ip", "-n", netns(n), "-j", "-s", "link", "show"))
    return {d["ifname"]: d["stats64"]["rx"]["bytes"] for d in out}


def set_link(i, state):
    for end in links[i]:
        run("ip", "-n", netns(end), "link", "set", iface[(i, end)], state)


def lab_cmd(action, node):
    return run(os.path.join(a.bin, "nameway"), "lab", "--dir", a.dir, action, a.lab, node)


def connected_without(dead):
    rest = [n for n in nodes if n != dead]
    seen = {rest[0]}
    queue = [rest[0]]
    for x in queue:
        for (p, q) in links:
            for u, v in ((p, q), (q, p)):
                if u == x and v != dead and v not in seen:
                    seen.add(v)
                    queue.append(v)
    return len(seen) == len(rest)


def on_shortest_path(n, src, dst):
    def dist_from(s):
        d = {s: 0}
        queue = [s]
        for x in queue:
            for (p, q) in links:
                for u, v in ((p, q), (q, p)):
                    if u == x and v not in d:
                        d[v] = d[x] + 1
                        queue.append(v)
        return d
    ds, dt = dist_from(src), dist_from(dst)
    return ds[n] + dt[n] == ds[dst]


full = expected(producer)
t = wait(lambda: matches(OBJ, full), 120)
if t is None:
    raise SystemExit(f"the controller's routes to {OBJ} did not converge in 120 s: {fibs(OBJ)}")
print(f"every FIB routes {OBJ} along the shortest paths ({t:.1f} s after the lab was up)")
reads = []
for _ in range(10):
    t0 = time.monotonic()
    fibs(OBJ)
    reads.append(time.monotonic() - t0)

body = os.path.join(a.dir, a.lab, "nodes", producer, "object.bin")
digest = hashlib.sha256(open(body, "rb").read()).hexdigest()
mine = [i for i, l in enumerate(links) if consumer in l]


def start_get(k):
    """The 16 MiB get at the consumer (window 2: still running when the failure comes)."""
    out = os.path.join(a.dir, f"got-{k}")
    get = subprocess.Popen([os.path.join(a.bin, "nameway"), "--transport", f"unix://{sock(consumer)}",
                            "get", "-q", "--cc", "fixed", "-w", "2", "-o", out, OBJ],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return out, get


def finish_get(out, get):
    """Waits for a get of start_get, checks its bytes, removes them; returns when it ended."""
    rc = get.wait(timeout=300)
    ended = time.monotonic()
    got = hashlib.sha256(open(out, "rb").read()).hexdigest() if os.path.exists(out) else None
    if rc != 0 or got != digest:
        raise SystemExit(f"C1: the 16 MiB get failed (exit {rc}) or returned other bytes: {get.stderr.read()}")
    os.remove(out)
    return ended


down, up, gets, early = [], [], [], 0
victims = [n for n in nodes if n not in (consumer, producer)
           and connected_without(n) and on_shortest_path(n, consumer, producer)]
if a.failure == "crash" and not victims:
    raise SystemExit(f"no router between {consumer} and {producer} can crash without cutting the network")
restarts = []
for k in range(a.c1_rounds if a.failure == "crash" else 0):
    victim = victims[k % len(victims)]
    out, get = start_get(k)
    t_get = time.monotonic()
    time.sleep(0.3 + random.random() * 0.5)
    running = get.poll() is None
    t0 = time.monotonic()
    lab_cmd("kill", victim)
    want = expected(producer, dead={victim})
    if wait(lambda: matches(OBJ, want, {victim}), 20) is None:
        raise SystemExit(f"C1: FIBs not updated 20 s after {victim} crashed: {fibs(OBJ, {victim})}")
    down.append(time.monotonic() - t0)
    gets.append(finish_get(out, get) - t_get)
    if not running:
        early += 1
    t0 = time.monotonic()
    lab_cmd("restart", victim)
    restarts.append(time.monotonic() - t0)
    if wait(lambda: matches(OBJ, full), 60) is None:
        raise SystemExit(f"C1: FIBs not back 60 s after {victim} restarted: {fibs(OBJ)}")
    up.append(time.monotonic() - t0)
    time.sleep(0.5 + random.random() * 0.5)
for k in range(a.c1_rounds if a.failure == "silent" else 0):
    out, get = start_get(k)
    t_get = time.monotonic()
    # The consumer's link that carries the get: the first to receive 64 KiB since it started.
    before = rx_bytes(consumer)
    failed = None
    while failed is None and time.monotonic() - t_get < 20 and get.poll() is None:
        time.sleep(0.02)
        now = rx_bytes(consumer)
        seen = {i: now[iface[(i, consumer)]] - before[iface[(i, consumer)]] for i in mine}
        best = max(mine, key=lambda i: seen[i])
        if seen[best] >= 64 * 1024:
            failed = best
    if failed is None:
        raise SystemExit(f"C1 round {k}: the get received nothing on a link of {consumer} "
                         f"(exit {get.poll()}): {get.stderr.read() if get.poll() is not None else ''}")
    running = get.poll() is None
    t0 = time.monotonic()
    set_link(failed, "down")
    want = expected(producer, {failed})
    if wait(lambda: matches(OBJ, want), 20) is None:
        raise SystemExit(f"C1: FIBs not updated 20 s after link {links[failed]} failed: {fibs(OBJ)}")
    down.append(time.monotonic() - t0)
    gets.append(finish_get(out, get) - t_get)
    if not running:
        early += 1
    t0 = time.monotonic()
    set_link(failed, "up")
    if wait(lambda: matches(OBJ, full), 30) is None:
        raise SystemExit(f"C1: FIBs not back 30 s after link {links[failed]} came up: {fibs(OBJ)}")
    up.append(time.monotonic() - t0)
    # A random phase against the hello rounds.
    time.sleep(0.5 + random.random() * 0.5)
n = len(nodes)
label = f"C1 {a.lab} ({n} forwarders)"
if a.failure == "crash":
    show(f"{label}: a router ({', '.join(victims)} in turn) crashed during a 16 MiB get -> every "
         f"surviving FIB updated", down)
else:
    show(f"{label}: a link of {consumer} silent during a 16 MiB get -> every FIB updated", down)
show(f"{label}:    the 16 MiB get (completed, SHA-256 checked; {len(gets) - early} of {len(gets)} "
     f"running at the failure) took", gets)
if a.failure == "crash":
    show(f"{label}:    `nameway lab restart` of the router (until it answers)", restarts)
    show(f"{label}:    the router restarted -> every FIB back (restart included)", up)
else:
    show(f"{label}:    the link up again -> every FIB back", up)
show(f"{label}:    baseline: one reading of all {n} FIBs (nameway route list, in parallel)", reads)


def watch_routes(prefix):
    routes = json.loads(nw(c2_watch, "route", "list", "--json"))
    return [r for r in routes if r["prefix"] == prefix and r["origin"] == 131]


dist = {c2_at: 0}
queue = [c2_at]
for x in queue:
    for i, l in enumerate(links):
        if x in l:
            y = l[1] if l[0] == x else l[0]
            if y not in dist:
                dist[y] = dist[x] + 1
                queue.append(y)
samples = []
for k in range(a.c2_rounds):
    prefix = f"/lab/c2/{k}"
    t0 = time.monotonic()
    nw(c2_at, "route", "add", prefix, "255", "--origin", "0")
    if wait(lambda: watch_routes(prefix), 10) is None:
        raise SystemExit(f"C2: {prefix} registered at {c2_at} not routed at {c2_watch} in 10 s")
    samples.append(time.monotonic() - t0)
show(f"C2 {a.lab}: registration at {c2_at} -> routed at {c2_watch} ({dist[c2_watch]} hops)", samples)
polls = []
for _ in range(20):
    t0 = time.monotonic()
    watch_routes(prefix)
    polls.append(time.monotonic() - t0)
show(f"C2 {a.lab}:    baseline: one poll of {c2_watch} (nameway route list --json)", polls)
PY
echo "lab $lab_name: done ($(uptime | sed 's/.*load/load/'))"
