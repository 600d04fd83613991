#!/usr/bin/env python3
"""Two fetches at once over bench-wan.sh's bottleneck: how they share it.

Each flow is a `nameway get --cc CC` or an `ndnget -p PIPELINE` of its own object (different
names, so A's PIT never aggregates them). Goodputs printed by the tools cover different spans
(the flow that ends first leaves the other the whole link), so the shares are measured at A,
past the bottleneck, instead: every 50 ms the bytes A has sent to each consumer's face (`face
list`), over the span where both flows run. Prints one line per run: each flow's Mbit/s in that span, their
sum against the link rate, and Jain's fairness index (1: equal shares, 0.5: one takes all).

Called by scripts/bench-wan.sh with its environment (not meant to be run alone).
"""

import filecmp
import json
import os
import subprocess
import sys
import time

nameway, a_sock, _b_sock, obj, rate, x, y = sys.argv[1:8]
names = {"/wan/nw": sys.argv[8], "/wan/nw2": sys.argv[9], "/wan/ndn": "/wan/ndn"}
workdir = os.path.dirname(obj)


def faces_out():
    """Bytes A has sent on each face, by face id."""
    out = subprocess.run(
        [nameway, "--transport", f"unix://{a_sock}", "face", "list", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    return {f["face_id"]: f["n_out_bytes"] for f in json.loads(out)}


def command(spec, prefix, out):
    if spec.startswith("ndnget:"):
        env = dict(os.environ, NDN_CLIENT_TRANSPORT=f"unix://{a_sock}")
        return ["ndnget", "-p", spec.split(":", 1)[1], "/wan/ndn"], env, out
    return (
        [nameway, "--transport", f"unix://{a_sock}", "get", names[prefix], "--cc", spec,
         "-o", out, "-q"],
        os.environ,
        None,
    )


def main():
    flows = []
    taken = set()
    for n, spec in enumerate((x, y)):
        prefix = "/wan/ndn" if spec.startswith("ndnget:") else ("/wan/nw" if n == 0 else "/wan/nw2")
        if prefix in taken:
            sys.exit(f"bench-wan: {x} + {y}: two flows of one object")
        taken.add(prefix)
        flows.append((spec, prefix, os.path.join(workdir, f"pair-{n}.got")))
    # Each consumer's face on A is the one that appears when it starts.
    procs, ids = [], []
    for spec, prefix, out in flows:
        before = set(faces_out())
        argv, env, stdout_file = command(spec, prefix, out)
        stdout = open(stdout_file, "wb") if stdout_file else subprocess.DEVNULL
        procs.append(subprocess.Popen(argv, env=env, stdout=stdout, stderr=subprocess.DEVNULL))
        # A face new in two listings in a row (each listing is a connection, and a face, of
        # its own, gone by the next one).
        deadline = time.monotonic() + 5
        seen = set()
        while True:
            new = set(faces_out()) - before - set(ids)
            if stable := new & seen:
                break
            seen = new
            if time.monotonic() > deadline:
                sys.exit(f"bench-wan: {spec} did not connect to A")
            time.sleep(0.01)
        ids.append(min(stable))

    def sent():
        by_face = faces_out()
        return [by_face.get(i, 0) for i in ids]

    samples = []
    while all(p.poll() is None for p in procs):
        samples.append((time.monotonic(), sent()))
        time.sleep(0.05)
    for p in procs:
        if p.wait() != 0:
            sys.exit(f"bench-wan: a flow of {x} + {y} failed")
    for spec, _, out in flows:
        if not filecmp.cmp(obj, out, shallow=False):
            sys.exit(f"bench-wan: {spec} fetched a different object")
    # A face gone (its consumer ended between two checks) reads 0: stop before that.
    for i in range(1, len(samples)):
        if any(v < u for v, u in zip(samples[i][1], samples[i - 1][1])):
            samples = samples[:i]
            break
    # Both running: from the first sample where each (a new face) has received something.
    both = [i for i, (_, b) in enumerate(samples) if all(v > 0 for v in b)]
    if len(both) < 2:
        sys.exit(f"bench-wan: {x} + {y} overlapped too briefly to measure")
    (t0, b0), (t1, b1) = samples[both[0]], samples[-1]
    mbps = [(v1 - v0) * 8 / (t1 - t0) / 1e6 for v0, v1 in zip(b0, b1)]
    total = sum(mbps)
    jain = total * total / (2 * sum(m * m for m in mbps)) if total > 0 else 0.0
    print(f"{mbps[0]:.1f} {mbps[1]:.1f} {100 * total / float(rate):.0f} {jain:.3f} {t1 - t0:.2f}")


main()
