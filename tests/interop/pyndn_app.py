#!/usr/bin/env python3
"""Real python-ndn applications, unmodified API use, for the namewayd end-to-end tests.

Each mode prints one JSON object per line on stdout; producers print {"ready": true} once their
prefix is registered (after python-ndn's own registration step), then serve until killed.

  produce  --api app|appv2 --prefix /p [--freshness MS] [--size N] [--marker TEXT]
  consume  --api app|appv2 --name /p/x [--can-be-prefix] [--must-be-fresh] [--lifetime MS]
  serve-object --prefix /p --size N --segment 4000 [--freshness MS]   (legacy app, segmented, FinalBlockId)
  fetch-object --name /p                               (legacy app, ndn.app_support.segment_fetcher)
  probe-segments --name /p --size N --segment 4000     (each serve-object segment asked once: intact, wrong or missing)
  flood --prefix /p --count N [--lifetime MS] [--hold S]  (raw Interests, never read: an abusive app)
  silent --prefix /p                                   (appv2 producer that never answers)
  command --module rib --verb register [--name /p] [--face-id N]   (ndn.app_support.nfd_mgmt command)
  face-query --uri null://                             (faces/query with a FaceQueryFilter, as nfdc)

The forwarder is chosen the python-ndn way: NDN_CLIENT_TRANSPORT (unix:///path or tcp://h:p).
"""
import argparse
import asyncio
import hashlib
import json
import sys

from ndn import appv2
from ndn.app import NDNApp
from ndn.encoding import Component, Name
from ndn.security import KeychainDigest
from ndn.security.signer.sha256_digest_signer import DigestSha256Signer
from ndn.types import InterestNack, InterestTimeout


def emit(obj):
    print(json.dumps(obj), flush=True)


def run_once(app, body, result):
    """Runs the coroutine function `body` (which fills `result`) once on `app`, then prints
    `result`; a Nack or timeout is recorded as its `error`."""
    async def main():
        try:
            await body()
        except (InterestNack, InterestTimeout) as e:
            result.update(error=repr(e))
        finally:
            app.shutdown()

    app.run_forever(after_start=main())
    emit(result)


def payload(size, seed=b"nameway"):
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
        counter += 1
    return bytes(out[:size])


def content_of(args):
    if args.marker:
        text = args.marker.encode()
        return (text * (args.size // len(text) + 1))[:args.size]
    return payload(args.size)


def produce_app(args):
    app = NDNApp(keychain=KeychainDigest())
    content = content_of(args)

    @app.route(args.prefix)
    def on_interest(name, _param, _app_param):
        app.put_data(name, content=content, freshness_period=args.freshness)
        emit({"served": Name.to_str(name)})

    async def ready():
        emit({"ready": True})

    app.run_forever(after_start=ready())


def produce_appv2(args):
    app = appv2.NDNApp()
    content = content_of(args)
    signer = DigestSha256Signer()

    @app.route(args.prefix)
    def on_interest(name, _app_param, reply, _context):
        reply(app.make_data(name, content, signer, freshness_period=args.freshness))
        emit({"served": Name.to_str(name)})

    async def ready():
        emit({"ready": True})

    app.run_forever(after_start=ready())


def silent(args):
    """Registers the prefix and takes every Interest without answering: a producer that never
    answers, so each Interest stays pending until its lifetime ends."""
    app = appv2.NDNApp()

    @app.route(args.prefix)
    def on_interest(_name, _app_param, _reply, _context):
        pass

    async def ready():
        emit({"ready": True})

    app.run_forever(after_start=ready())


def consume(args):
    result = {}
    if args.api == "app":
        app = NDNApp(keychain=KeychainDigest())

        async def main():
            try:
                name, _meta, content = await app.express_interest(
                    args.name, must_be_fresh=args.must_be_fresh,
                    can_be_prefix=args.can_be_prefix, lifetime=args.lifetime)
                result.update(name=Name.to_str(name), sha256=hashlib.sha256(bytes(content or b"")).hexdigest(),
                              size=len(content or b""))
            except InterestNack as e:
                result.update(nack=e.reason)
            except InterestTimeout:
                result.update(timeout=True)
            finally:
                app.shutdown()
    else:
        app = appv2.NDNApp()

        async def main():
            try:
                name, content, _ctx = await app.express(
                    args.name, validator=appv2.pass_all, must_be_fresh=args.must_be_fresh,
                    can_be_prefix=args.can_be_prefix, lifetime=args.lifetime)
                result.update(name=Name.to_str(name), sha256=hashlib.sha256(bytes(content or b"")).hexdigest(),
                              size=len(content or b""))
            except InterestNack as e:
                result.update(nack=e.reason)
            except InterestTimeout:
                result.update(timeout=True)
            finally:
                app.shutdown()

    app.run_forever(after_start=main())
    emit(result)


def serve_object(args):
    app = NDNApp(keychain=KeychainDigest())
    data = payload(args.size, seed=b"object")
    seg = args.segment
    count = max(1, (len(data) + seg - 1) // seg)
    prefix = Name.from_str(args.prefix)

    @app.route(args.prefix)
    def on_interest(name, _param, _app_param):
        if len(name) == len(prefix):
            index = 0
        else:
            last = name[len(prefix)]
            if Component.get_type(last) != Component.TYPE_SEGMENT:
                return
            index = Component.to_number(last)
        if index >= count:
            return
        seg_name = prefix + [Component.from_segment(index)]
        app.put_data(seg_name, content=data[index * seg:(index + 1) * seg], freshness_period=args.freshness,
                     final_block_id=Component.from_segment(count - 1))

    async def ready():
        emit({"ready": True, "sha256": hashlib.sha256(data).hexdigest(), "segments": count})

    app.run_forever(after_start=ready())


def fetch_object(args):
    from ndn.app_support.segment_fetcher import segment_fetcher
    app = NDNApp(keychain=KeychainDigest())
    result = {}

    async def main():
        buf = bytearray()
        n = 0
        async for chunk in segment_fetcher(app, args.name, timeout=4000, retry_times=3):
            buf += bytes(chunk)
            n += 1
        result.update(size=len(buf), segments=n, sha256=hashlib.sha256(buf).hexdigest())

    run_once(app, main, result)


def probe_segments(args):
    """Asks once for every segment serve-object would publish under `name` and compares each
    answer with what serve-object publishes: prints counts of intact, wrong (a Data whose
    content differs: corrupt) and missing (Nack or timeout) segments."""
    import asyncio
    from ndn.types import InterestCanceled, ValidationFailure

    app = NDNApp(keychain=KeychainDigest())
    data = payload(args.size, seed=b"object")
    seg = args.segment
    count = max(1, (len(data) + seg - 1) // seg)
    prefix = Name.from_str(args.name)
    result = {"intact": 0, "wrong": 0, "missing": 0}
    window = asyncio.Semaphore(32)

    async def one(i):
        async with window:
            try:
                _, _, content = await app.express_interest(
                    prefix + [Component.from_segment(i)], lifetime=1000)
            except (InterestNack, InterestTimeout, InterestCanceled, ValidationFailure):
                result["missing"] += 1
                return
            want = data[i * seg:(i + 1) * seg]
            result["intact" if bytes(content or b"") == want else "wrong"] += 1

    async def main():
        try:
            await asyncio.gather(*(one(i) for i in range(count)))
        finally:
            app.shutdown()

    app.run_forever(after_start=main())
    emit(result)


def flood(args):
    """Writes `count` distinct Interests as fast as the socket takes them, never reading: what
    a misbehaving application does. Encoded with python-ndn's own encoder, written to the
    forwarder's socket directly (NDNApp would wait for every answer)."""
    import os
    import socket
    import time
    import urllib.parse

    from ndn.encoding import InterestParam, make_interest

    uri = os.environ.get("NDN_CLIENT_TRANSPORT", "unix:///run/nfd/nfd.sock")
    u = urllib.parse.urlparse(uri)
    if u.scheme == "unix":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(u.path)
    else:
        sock = socket.create_connection((u.hostname, u.port or 6363))
    # Encoded first, then written in one go: the whole flood reaches the forwarder at once.
    wires = []
    for i in range(args.count):
        param = InterestParam(lifetime=args.lifetime, nonce=(i * 2654435761) & 0xffffffff)
        wires.append(bytes(make_interest(Name.from_str(f"{args.prefix}/{i}"), param)))
    start = time.monotonic()
    for k in range(0, len(wires), 512):
        sock.sendall(b"".join(wires[k:k + 512]))
    emit({"sent": args.count, "seconds": time.monotonic() - start})
    # Keep the connection (and so the face and its PIT entries) until killed.
    time.sleep(args.hold)
    sock.close()


def command(args):
    """One signed management command made by python-ndn's nfd_mgmt.make_command (as
    NDNApp.register does); prints the ControlResponse's code and text."""
    from ndn.app_support.nfd_mgmt import make_command, parse_response
    app = NDNApp(keychain=KeychainDigest())
    result = {}
    params = {}
    if args.name is not None:
        params["name"] = args.name
    if args.face_id is not None:
        params["face_id"] = args.face_id

    async def main():
        _name, _meta, content = await app.express_interest(
            make_command(args.module, args.verb, **params), lifetime=2000)
        response = parse_response(content)
        result.update(status_code=response["status_code"], status_text=response["status_text"])

    run_once(app, main, result)


def num(v):
    """An Enum field of nfd_mgmt as its number."""
    return v.value if hasattr(v, "value") else v


def face_query(args):
    """faces/query with a FaceQueryFilter on the remote URI, as nfdc resolves a FaceUri to a
    FaceId; prints the matching FaceStatus entries."""
    from ndn.app_support.nfd_mgmt import FaceQueryFilter, FaceQueryFilterValue, FaceStatusMsg
    app = NDNApp(keychain=KeychainDigest())
    result = {}
    query = FaceQueryFilter()
    query.face_query_filter = FaceQueryFilterValue()
    query.face_query_filter.uri = args.uri
    name = Name.from_str("/localhost/nfd/faces/query") + [Component.from_bytes(query.encode())]

    async def main():
        _name, _meta, content = await app.express_interest(
            name, lifetime=2000, can_be_prefix=True, must_be_fresh=True)
        msg = FaceStatusMsg.parse(content)
        result["faces"] = [{
            "face_id": f.face_id, "uri": f.uri, "local_uri": f.local_uri,
            "face_scope": num(f.face_scope), "face_persistency": num(f.face_persistency),
            "link_type": num(f.link_type), "n_out_interests": f.n_out_interests,
            "n_out_data": f.n_out_data, "n_out_nacks": f.n_out_nacks,
            "n_out_bytes": f.n_out_bytes, "n_in_interests": f.n_in_interests,
        } for f in msg.face_status]

    run_once(app, main, result)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="mode", required=True)
    pr = sub.add_parser("produce")
    pr.add_argument("--api", choices=["app", "appv2"], default="app")
    pr.add_argument("--prefix", required=True)
    pr.add_argument("--freshness", type=int, default=10000)
    pr.add_argument("--size", type=int, default=100)
    pr.add_argument("--marker", help="content: this text repeated to --size bytes")
    co = sub.add_parser("consume")
    co.add_argument("--api", choices=["app", "appv2"], default="app")
    co.add_argument("--name", required=True)
    co.add_argument("--can-be-prefix", action="store_true")
    co.add_argument("--must-be-fresh", action="store_true")
    co.add_argument("--lifetime", type=int, default=4000)
    so = sub.add_parser("serve-object")
    so.add_argument("--prefix", required=True)
    so.add_argument("--size", type=int, required=True)
    so.add_argument("--segment", type=int, default=4000)
    so.add_argument("--freshness", type=int, default=10000)
    fo = sub.add_parser("fetch-object")
    fo.add_argument("--name", required=True)
    ps = sub.add_parser("probe-segments")
    ps.add_argument("--name", required=True)
    ps.add_argument("--size", type=int, required=True)
    ps.add_argument("--segment", type=int, default=4000)
    si = sub.add_parser("silent")
    si.add_argument("--prefix", required=True)
    fl = sub.add_parser("flood")
    fl.add_argument("--prefix", required=True)
    fl.add_argument("--count", type=int, required=True)
    fl.add_argument("--lifetime", type=int, default=60000)
    fl.add_argument("--hold", type=float, default=0.0)
    cm = sub.add_parser("command")
    cm.add_argument("--module", required=True)
    cm.add_argument("--verb", required=True)
    cm.add_argument("--name")
    cm.add_argument("--face-id", type=int)
    fq = sub.add_parser("face-query")
    fq.add_argument("--uri", required=True)
    args = p.parse_args()
    if args.mode == "produce":
        (produce_app if args.api == "app" else produce_appv2)(args)
    elif args.mode == "consume":
        consume(args)
    elif args.mode == "serve-object":
        serve_object(args)
    elif args.mode == "flood":
        flood(args)
    elif args.mode == "silent":
        silent(args)
    elif args.mode == "command":
        command(args)
    elif args.mode == "face-query":
        face_query(args)
    elif args.mode == "probe-segments":
        probe_segments(args)
    else:
        fetch_object(args)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
