#!/usr/bin/env python3
"""python-ndn applications of self-certifying names, for crates/daemon/tests/routing*.rs.

python-ndn 0.5.2 (ndn.appv2, ndn.encoding) with keys from PyCryptodome, its dependency. Each
mode prints JSON lines on stdout.

  produce --router HEX [--key FILE] [--lifetime MS] [--marker TEXT] [--not-before-ms MS]
          [--segments N]
      The Prefix Announcement recipe: a fresh Ed25519 key (or the PKCS#8 DER in FILE, written
      there when absent) owns /32=sc/<h>, h = SHA-256 of its SubjectPublicKeyInfo; the
      announcement of /32=sc/<h> delegated to /32=sc/<ROUTER> (NwDelegate, NwPublicKey,
      KeyLocator = KeyDigest(h)) goes to the forwarder in a rib/announce command
      (ApplicationParameters, v0.3 signed Interest, DigestSha256), as NFD takes it. Prints
      {"announce": status, "h": hex}, then {"ready": true} and serves every Interest under the
      name with TEXT (default "owner <h>") until killed. --lifetime and --not-before-ms shape
      the announcement (an expired or not yet valid one). With --segments N, an Interest
      whose name ends in a segment number k < N is answered with "TEXT k" and FinalBlockId
      N-1 (a segmented object under any versioned name).
  hijack --router HEX --target HEX
      Announces /32=sc/<TARGET> with its own key (NwPublicKey hashing to another name) and
      serves "hijacker" under it if accepted. Prints {"announce": status}, then
      {"ready": true}.
  plain --prefix /p
      A plain announcement (no Nameway fields, ECDSA, key name) of /p, as an application
      announces any prefix. Prints {"announce": status}, then {"ready": true} and serves.
  register --target HEX|self [--wrong-key]
      rib/register of /32=sc/<h> signed with an Ed25519 key, NwPublicKey in
      ApplicationParameters. With --wrong-key the command is signed by another key than the
      one whose SubjectPublicKeyInfo it carries. Prints {"register": status, "h": hex}.
"""

import argparse
import hashlib
import json
import os
import time

from Cryptodome.PublicKey import ECC

from ndn import appv2
from ndn.app_support import nfd_mgmt
from ndn.encoding import (BytesField, Component, MetaInfo, ModelField, Name, TlvModel,
                          UintField, make_data)
from ndn.security import Ed25519Signer, Sha256WithEcdsaSigner
from ndn.security.signer.sha256_digest_signer import DigestSha256Signer
from ndn.utils import gen_nonce_64, timestamp

PREFIX_ANN = 5
NW_PUBLIC_KEY = 0x8E02


def emit(obj):
    print(json.dumps(obj), flush=True)


class Validity(TlvModel):
    not_before = BytesField(0xFE)
    not_after = BytesField(0xFF)


class Content(TlvModel):
    expiration_period = UintField(0x6D)
    validity_period = ModelField(0xFD, Validity)
    delegate = BytesField(0x8E00)
    public_key = BytesField(NW_PUBLIC_KEY)


class PublicKeyParams(TlvModel):
    public_key = BytesField(NW_PUBLIC_KEY)


class KeyDigestEd25519Signer(Ed25519Signer):
    """Ed25519 with KeyLocator = KeyDigest(h)."""

    def __init__(self, key_der, digest):
        super().__init__("/unused", key_der)
        self.digest = digest

    def write_signature_info(self, signature_info):
        super().write_signature_info(signature_info)
        signature_info.key_locator.name = None
        signature_info.key_locator.key_digest = self.digest


class CommandEd25519Signer(Ed25519Signer):
    """Ed25519 for a command Interest: SignatureTime and SignatureNonce, as NFD requires."""

    def write_signature_info(self, signature_info):
        super().write_signature_info(signature_info)
        signature_info.signature_time = timestamp()
        signature_info.signature_nonce = gen_nonce_64()


def sc_name(h):
    return [Component.from_bytes(b"sc", Component.TYPE_KEYWORD), Component.from_bytes(h)]


def iso(ms):
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(ms // 1000)).encode()


def key_from(path):
    if path and os.path.exists(path):
        return ECC.import_key(open(path, "rb").read())
    key = ECC.generate(curve="ed25519")
    if path:
        with open(path, "wb") as f:
            f.write(key.export_key(format="DER"))
    return key


def announcement(key, name_hash, router, lifetime, not_before_ms=None):
    now = int(time.time() * 1000)
    spki = key.public_key().export_key(format="DER")
    own = hashlib.sha256(spki).digest()
    content = Content()
    content.expiration_period = lifetime
    content.validity_period = Validity()
    start = now if not_before_ms is None else not_before_ms
    content.validity_period.not_before = iso(start)
    content.validity_period.not_after = iso(start + max(lifetime, 1000))
    content.delegate = Name.to_bytes(sc_name(router))
    content.public_key = spki
    name = sc_name(name_hash) + [Component.from_bytes(b"PA", Component.TYPE_KEYWORD),
                                 Component.from_version(now), Component.from_segment(0)]
    signer = KeyDigestEd25519Signer(key.export_key(format="DER"), own)
    return bytes(make_data(name, MetaInfo(content_type=PREFIX_ANN), content.encode(), signer))


async def announce(app, pa):
    """rib/announce with the announcement in ApplicationParameters; returns the status."""
    _, reply, _ = await app.express(
        Name.from_str("/localhost/nfd/rib/announce"), app_param=pa,
        signer=DigestSha256Signer(for_interest=True), validator=appv2.pass_all, lifetime=4000)
    return nfd_mgmt.parse_response(reply)["status_code"]


def serve(app, prefix, text, segments=None):
    signer = DigestSha256Signer()

    def on_interest(name, _app_param, reply, _context):
        if segments is not None and name and Component.get_type(name[-1]) == Component.TYPE_SEGMENT:
            k = Component.to_number(name[-1])
            if k >= segments:
                return
            reply(app.make_data(name, text + f" {k}".encode(), signer, freshness_period=0,
                                final_block_id=Component.from_segment(segments - 1)))
        else:
            reply(app.make_data(name, text, signer, freshness_period=0))
        emit({"served": Name.to_str(name)})

    app.attach_handler(prefix, on_interest)


def run(app, body):
    async def main():
        try:
            await body()
        except Exception as e:  # reported, not hidden: the test reads it
            emit({"error": repr(e)})
            app.shutdown()

    app.run_forever(after_start=main())


def produce(args):
    app = appv2.NDNApp()
    key = key_from(args.key)
    h = hashlib.sha256(key.public_key().export_key(format="DER")).digest()
    pa = announcement(key, h, bytes.fromhex(args.router), args.lifetime, args.not_before_ms)
    text = (args.marker or f"owner {h.hex()}").encode()

    async def body():
        serve(app, sc_name(h), text, args.segments)
        status = await announce(app, pa)
        emit({"announce": status, "h": h.hex()})
        emit({"ready": True})

    run(app, body)


def hijack(args):
    app = appv2.NDNApp()
    key = ECC.generate(curve="ed25519")
    target = bytes.fromhex(args.target)
    pa = announcement(key, target, bytes.fromhex(args.router), 600_000)

    async def body():
        serve(app, sc_name(target), b"hijacker")
        status = await announce(app, pa)
        emit({"announce": status})
        emit({"ready": True})

    run(app, body)


def plain(args):
    app = appv2.NDNApp()
    key = ECC.generate(curve="P-256")
    now = int(time.time() * 1000)
    content = Content()
    content.expiration_period = 600_000
    prefix = Name.from_str(args.prefix)
    name = prefix + [Component.from_bytes(b"PA", Component.TYPE_KEYWORD),
                     Component.from_version(now), Component.from_segment(0)]
    signer = Sha256WithEcdsaSigner(args.prefix + "/KEY/%01", key.export_key(format="DER"))
    pa = bytes(make_data(name, MetaInfo(content_type=PREFIX_ANN), content.encode(), signer))

    async def body():
        serve(app, prefix, b"plain")
        status = await announce(app, pa)
        emit({"announce": status})
        emit({"ready": True})

    run(app, body)


def register(args):
    app = appv2.NDNApp()
    key = ECC.generate(curve="ed25519")
    spki = key.public_key().export_key(format="DER")
    own = hashlib.sha256(spki).digest()
    h = own if args.target == "self" else bytes.fromhex(args.target)
    signing = ECC.generate(curve="ed25519") if args.wrong_key else key
    params = PublicKeyParams()
    params.public_key = spki
    signer = CommandEd25519Signer("/owner/KEY/%01", signing.export_key(format="DER"))

    async def body():
        name = nfd_mgmt.make_command_v2("rib", "register", None, name=sc_name(h))
        _, reply, _ = await app.express(name, app_param=params.encode(), signer=signer,
                                        validator=appv2.pass_all, lifetime=4000)
        emit({"register": nfd_mgmt.parse_response(reply)["status_code"], "h": h.hex()})
        app.shutdown()

    run(app, body)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="mode", required=True)
    pr = sub.add_parser("produce")
    pr.add_argument("--router", required=True)
    pr.add_argument("--key")
    pr.add_argument("--lifetime", type=int, default=600_000)
    pr.add_argument("--not-before-ms", type=int)
    pr.add_argument("--marker")
    pr.add_argument("--segments", type=int)
    hj = sub.add_parser("hijack")
    hj.add_argument("--router", required=True)
    hj.add_argument("--target", required=True)
    pl = sub.add_parser("plain")
    pl.add_argument("--prefix", required=True)
    rg = sub.add_parser("register")
    rg.add_argument("--target", required=True)
    rg.add_argument("--wrong-key", action="store_true")
    args = p.parse_args()
    {"produce": produce, "hijack": hijack, "plain": plain, "register": register}[args.mode](args)


if __name__ == "__main__":
    main()
