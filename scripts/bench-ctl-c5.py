#!/usr/bin/env python3
"""C5: route changes pushed to a forwarder while it forwards at full rate (docs/controller.md,
"Phase 4: incremental routes in serve").

Two namewayd, r1 (the forwarder under test) and r2, one secure UDP link, `namewayctl serve`.
r2 registers PREFIXES prefixes (/c5/p<i>, `nameway route add`); the controller routes them at
r1 through the link. The churn: r1 and r2 destroy their faces toward each other (the link is
gone: the controller withdraws the PREFIXES routes from r1) and r2 makes its face again (r1's
side is made on demand by the secure handshake; the routes come back):
2 x PREFIXES route changes per flap, each half counted only once r1's RIB shows all the routes
gone / all back (`nameway route list --json`, origin 131 = the controller).

Meanwhile `nameway bench` runs through r1 on a stable prefix of its own (producer and consumer
both local to r1, so the link that flaps carries none of it), run after run, until the churn
has made CHANGES route changes. Before the churn, the same bench alone gives the baseline rate.

Reported: route changes applied at r1, r1's agent counters (FIB objects applied), the
controller's full and incremental computations (/metrics), every bench run's exchanges,
Nacks and timeouts, and r1's drops by reason (forwarder and link layer) before and after.

    python3 scripts/bench-ctl-c5.py --bin target/release --prefixes 250 --changes 100000 \
        --pause-ms 200 --interests 500000
"""

import argparse
import importlib.util
import json
import os
import shutil
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("e2e", os.path.join(HERE, "bench-ctl-e2e.py"))
e2e = importlib.util.module_from_spec(spec)
spec.loader.exec_module(e2e)

CONTROLLER_ORIGIN = 131


def ctl_routes(b, r, prefix):
    """How many prefixes under `prefix` the controller routes at `r`."""
    routes = json.loads(b.nw(r, "route", "list", "--json"))
    return len({x["prefix"] for x in routes
                if x["origin"] == CONTROLLER_ORIGIN and x["prefix"].startswith(prefix)})


def status(b, r):
    return json.loads(b.nw(r, "status", "--json"))


def metrics(b):
    out = {}
    with urllib.request.urlopen(f"http://{b.http}/metrics", timeout=5) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith("namewayctl_") and " " in line:
                k, v = line.rsplit(" ", 1)
                out[k] = v
    return out


def bench_once(b, r, interests):
    out = b.run(os.path.join(b.bin, "nameway"), "--transport", f"unix://{r['sock']}", "bench",
                "--interests", str(interests), "--runs", "1", "--warm-up", "500",
                "--daemon-pid", str(r["pid"]), "--json")
    res = json.loads(out)["results"][0]
    return {k: res[k] for k in ("completed", "nacks", "timeouts", "median_exchanges_per_s")}


def drops(st):
    return st.get("drops", {"forwarder": {}, "link": {}})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release")
    p.add_argument("--prefixes", type=int, default=250)
    p.add_argument("--changes", type=int, default=100_000)
    p.add_argument("--interests", type=int, default=500_000, help="exchanges per bench run")
    p.add_argument("--poll-ms", type=int, default=20)
    p.add_argument("--pause-ms", type=int, default=200,
                   help="between the link gone and r2 making its face again")
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="bench-ctl-c5-")
    b = e2e.Bench(os.path.abspath(args.bin), work, args.poll_ms)
    try:
        b.start_controller(http=True)
        r1, r2 = b.router(1), b.router(2)
        f21, _ = b.link(r2, r1)
        t0 = time.monotonic()
        for i in range(args.prefixes):
            b.nw(r2, "route", "add", f"/c5/p{i}", "255", "--origin", "0")
        if b.wait(lambda: ctl_routes(b, r1, "/c5/") == args.prefixes, 120) is None:
            raise SystemExit(f"C5: r1 did not get the {args.prefixes} routes in 120 s")
        print(f"C5 setup: {args.prefixes} prefixes registered at r2 and routed at r1 in "
              f"{time.monotonic() - t0:.1f} s", flush=True)

        alone = bench_once(b, r1, args.interests)
        print(f"   baseline, bench alone through r1: {alone}", flush=True)

        before = status(b, r1)
        m_before = metrics(b)
        done = threading.Event()
        runs = []

        def bench_loop():
            while not done.is_set():
                runs.append(bench_once(b, r1, args.interests))

        th = threading.Thread(target=bench_loop)
        th.start()
        time.sleep(1.0)  # the first bench run under way
        changes, flaps, t0 = 0, 0, time.monotonic()
        half = []
        while changes < args.changes:
            t = time.monotonic()
            # Both ends' faces go (else r1's hellos make r2's side again on demand, without a
            # session, before r2 makes it): r1's face toward r2 carries none of the bench.
            f12 = b.face_to(r1, r2)
            if f12 is not None:
                b.nw(r1, "face", "destroy", str(f12))
            b.nw(r2, "face", "destroy", str(f21))
            if b.wait(lambda: ctl_routes(b, r1, "/c5/") == 0, 30) is None:
                raise SystemExit(f"C5: r1 kept routes after the link went (flap {flaps})")
            changes += args.prefixes
            half.append(time.monotonic() - t)
            time.sleep(args.pause_ms / 1000)
            t = time.monotonic()
            out = json.loads(b.nw(r2, "face", "create", f"udp4://127.0.0.1:{r1['udp']}",
                                  "--secure", "--json"))
            f21 = out.get("face_id")
            if f21 is None:
                raise SystemExit(f"C5: r2 cannot make its face toward r1: {out}")
            if b.wait(lambda: ctl_routes(b, r1, "/c5/") == args.prefixes, 30) is None:
                raise SystemExit(f"C5: r1 did not get the routes back after the link came up "
                                 f"(flap {flaps}: {ctl_routes(b, r1, '/c5/')} prefixes routed)")
            changes += args.prefixes
            half.append(time.monotonic() - t)
            flaps += 1
        churn_s = time.monotonic() - t0
        done.set()
        th.join()
        after = status(b, r1)
        m_after = metrics(b)

        print(f"C5 churn: {flaps} flaps of the r1-r2 link, {changes} route changes applied at r1 "
              f"in {churn_s:.1f} s ({changes / churn_s:.0f} changes/s); each half "
              f"(all {args.prefixes} routes gone or back at r1): median "
              f"{1000 * sorted(half)[len(half) // 2]:.0f} ms", flush=True)
        ca, cb = before.get("controller", {}), after.get("controller", {})
        print(f"   r1 agent before: {json.dumps(ca, sort_keys=True)}")
        print(f"   r1 agent after:  {json.dumps(cb, sort_keys=True)}")
        keys = ("namewayctl_computations_total", "namewayctl_incremental_updates_total",
                "namewayctl_objects_sent_total")
        print("   controller: " + ", ".join(
            f"{k} {m_before.get(k, '?')} -> {m_after.get(k, '?')}" for k in keys))
        total = {k: sum(r[k] for r in runs) for k in ("completed", "nacks", "timeouts")}
        rates = sorted(r["median_exchanges_per_s"] for r in runs)
        print(f"   bench during the churn: {len(runs)} runs, {total['completed']} exchanges, "
              f"{total['nacks']} Nacks, {total['timeouts']} timeouts; exchanges/s median "
              f"{rates[len(rates) // 2]:.0f} (alone {alone['median_exchanges_per_s']:.0f})")
        for r in runs:
            print(f"     run: {r}")
        db, da = drops(before), drops(after)
        for layer in ("forwarder", "link"):
            reasons = sorted(set(db.get(layer, {})) | set(da.get(layer, {})))
            diff = {k: da.get(layer, {}).get(k, 0) - db.get(layer, {}).get(k, 0) for k in reasons}
            print(f"   r1 {layer} drops before {db.get(layer, {})}, after {da.get(layer, {})}, "
                  f"during the churn {diff or 'none'}")
    finally:
        b.stop()
        if not os.environ.get("KEEP"):
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"   kept {work}")


if __name__ == "__main__":
    main()
