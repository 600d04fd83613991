#!/usr/bin/env python3
"""Partitioned cache placement with real daemons (docs/controller.md, "What placement gains").

A line r1 - r2 - r3 of namewayd under one `namewayctl serve`; a python-ndn producer of
/bench/p at r3 (registered with rib/register: the controller routes it at r1 and r2); a
python-ndn consumer at r1 asks for REQUESTS names, one at a time, drawn from OBJECTS names
with a Zipf(ALPHA) popularity (the same seed in every mode). Every router's in-process
store holds CAPACITY packets, set by the controller's cache policy. Two modes, each on a
fresh network:

  everywhere   every router caches every Data (the default)
  partitioned  one [[partition]] of r1, r2, r3: each name is cached at exactly one of them

Measured per mode: the hit ratio (requests not answered by the producer, counted at the
producer), each router's store hits, and the consumer's round-trip times (median, p99):
what the placement gains and what it costs (a hit found further along the path).

Run it with the repository's venv (python-ndn): scripts/bench-ctl-placement.sh does.

    .venv/bin/python scripts/bench-ctl-placement.py --bin target/release \\
        [--objects 2000] [--requests 10000] [--alpha 0.8] [--capacity 100]
"""

import argparse
import asyncio
import importlib.util
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = "/bench/p"


def load_e2e():
    spec = importlib.util.spec_from_file_location("bench_ctl_e2e", os.path.join(HERE, "bench-ctl-e2e.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def producer():
    """Serves every Interest under PREFIX with 100 bytes; prints one line per Interest."""
    from ndn import appv2
    from ndn.security import DigestSha256Signer

    app = appv2.NDNApp()
    signer = DigestSha256Signer()

    def on_interest(name, _param, reply, _ctx):
        reply(app.make_data(name, b"x" * 100, signer, freshness_period=3_600_000))
        print("i", flush=True)

    async def main():
        app.attach_handler(PREFIX, on_interest)
        ok = await app.register(PREFIX)
        print("ready" if ok else "refused", flush=True)

    app.run_forever(after_start=main())


def consume(names):
    """Expresses each name in turn; returns (round-trip times in ms, failures)."""
    from ndn import appv2
    from ndn.encoding import Name

    app = appv2.NDNApp()
    rtts, failures = [], []

    async def main():
        try:
            for n in names:
                t0 = time.perf_counter()
                try:
                    await app.express(Name.from_str(n), validator=appv2.pass_all, lifetime=2000)
                    rtts.append((time.perf_counter() - t0) * 1000)
                except Exception as e:  # a timeout or Nack: counted, reported
                    failures.append(f"{n}: {e!r}")
        finally:
            app.shutdown()

    app.run_forever(after_start=main())
    return rtts, failures


def zipf_names(objects, requests, alpha, seed):
    rng = random.Random(seed)
    weights = [1.0 / (k ** alpha) for k in range(1, objects + 1)]
    cum, total = [], 0.0
    for w in weights:
        total += w
        cum.append(total)
    ranks = rng.choices(range(objects), cum_weights=cum, k=requests)
    return [f"{PREFIX}/obj/{r}" for r in ranks]


def cs_info(b, r):
    return json.loads(b.nw(r, "cs", "info", "--json"))


def run_mode(e2e, args, mode, names):
    work = tempfile.mkdtemp(prefix=f"nw-place-{mode}-")
    b = e2e.Bench(args.bin, work)
    prod = None
    try:
        policy = os.path.join(work, "cache.toml")
        text = f"capacity = {args.capacity}\n"
        if mode == "partitioned":
            text += '\n[[partition]]\nrouters = ["/bench/r1", "/bench/r2", "/bench/r3"]\n'
        open(policy, "w").write(text)
        b.start_controller(extra_args=["--cache-policy", policy])
        r1, r2, r3 = (b.router(i) for i in (1, 2, 3))
        b.link(r1, r2)
        b.link(r2, r3)
        routers = (r1, r2, r3)
        if b.wait(lambda: all(cs_info(b, r)["capacity"] == args.capacity for r in routers), 30) is None:
            raise SystemExit(f"{mode}: the cache policy did not reach every router")
        env = dict(os.environ, NDN_CLIENT_TRANSPORT=f"unix://{r3['sock']}")
        prod = subprocess.Popen([sys.executable, __file__, "--producer"], env=env,
                                stdout=subprocess.PIPE, text=True)
        if prod.stdout.readline().strip() != "ready":
            raise SystemExit(f"{mode}: the producer's registration was refused")
        if b.wait(lambda: b.ctl_faces(r1, PREFIX) and b.ctl_faces(r2, PREFIX), 30) is None:
            raise SystemExit(f"{mode}: the controller did not route {PREFIX} at r1 and r2")
        before = [cs_info(b, r)["n_hits"] for r in routers]
        os.environ["NDN_CLIENT_TRANSPORT"] = f"unix://{r1['sock']}"
        t0 = time.monotonic()
        rtts, failures = consume(names)
        wall = time.monotonic() - t0
        hits = [cs_info(b, r)["n_hits"] - h for r, h in zip(routers, before)]
        prod.terminate()
        served = sum(1 for line in prod.stdout if line.strip() == "i")
        return {
            "mode": mode, "requests": len(names), "answered": len(rtts), "failures": failures,
            "producer": served, "hit_ratio": 1 - served / len(names), "hits": hits,
            "rtt_median": statistics.median(rtts), "rtt_p99": pct(rtts, 0.99),
            "rtt_mean": statistics.fmean(rtts), "wall_s": wall,
        }
    finally:
        if prod and prod.poll() is None:
            prod.kill()
        b.stop()
        shutil.rmtree(work, ignore_errors=True)


def pct(xs, q):
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def main():
    if "--producer" in sys.argv:
        producer()
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release")
    ap.add_argument("--objects", type=int, default=2000)
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--alpha", type=float, default=0.8)
    ap.add_argument("--capacity", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    e2e = load_e2e()
    names = zipf_names(args.objects, args.requests, args.alpha, args.seed)
    print(f"placement: line r1-r2-r3, {args.objects} objects, {args.requests} requests one at a "
          f"time, Zipf alpha {args.alpha}, capacity {args.capacity} per router")
    results = [run_mode(e2e, args, m, names) for m in ("everywhere", "partitioned")]
    for r in results:
        print(f"placement: {r['mode']:<11} hit ratio {r['hit_ratio']:.3f} (producer answered "
              f"{r['producer']} of {r['requests']}), store hits r1/r2/r3 "
              f"{'/'.join(map(str, r['hits']))}, round trip median {r['rtt_median']:.2f} ms, "
              f"p99 {r['rtt_p99']:.2f} ms, mean {r['rtt_mean']:.2f} ms, "
              f"failures {len(r['failures'])}, {r['wall_s']:.1f} s")
        for f in r["failures"][:5]:
            print(f"placement:   failed {f}")
    e, p = results
    print(f"placement: producer load partitioned / everywhere = {p['producer']} / {e['producer']}"
          f" = {p['producer'] / max(e['producer'], 1):.2f}; mean round trip "
          f"{p['rtt_mean'] / e['rtt_mean']:.2f}x")
    if any(r["failures"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
