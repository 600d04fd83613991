#!/usr/bin/env python3
"""python-ndn's side of crates/routing/tests/interop.rs: Prefix Announcements built and read
with python-ndn's own encoder (ndn.encoding) and keys from PyCryptodome, its dependency.

  make ROUTER_HASH_HEX   prints {"sc": {...}, "plain": {...}}: an announcement of a
                         self-certifying name /32=sc/<h> (h = SHA-256 of a fresh Ed25519 key's
                         SubjectPublicKeyInfo) delegated to /32=sc/<ROUTER_HASH>, with
                         Nameway's NwDelegate and NwPublicKey, signed Ed25519 with
                         KeyLocator = KeyDigest(h); and a plain announcement of /example/pyndn
                         signed ECDSA P-256 with a key name, as an application would send it
  parse PA_HEX           prints the announcement's fields as python-ndn reads them, twice:
                         with a model that knows Nameway's fields and with the plain model
                         (which must skip them), and whether its Ed25519 signature verifies
                         with its NwPublicKey
"""

import hashlib
import json
import sys
import time

from Cryptodome.PublicKey import ECC
from Cryptodome.Signature import eddsa

from ndn.encoding import (BytesField, Component, MetaInfo, ModelField, Name, TlvModel,
                          UintField, make_data, parse_data)
from ndn.security import Ed25519Signer, Sha256WithEcdsaSigner

PREFIX_ANN = 5
EXPIRATION_PERIOD = 0x6D
VALIDITY_PERIOD = 0xFD
NOT_BEFORE = 0xFE
NOT_AFTER = 0xFF
NW_DELEGATE = 0x8E00
NW_PUBLIC_KEY = 0x8E02


class Validity(TlvModel):
    not_before = BytesField(NOT_BEFORE)
    not_after = BytesField(NOT_AFTER)


class PlainContent(TlvModel):
    """The Content of a Prefix Announcement, as NFD defines it."""
    expiration_period = UintField(EXPIRATION_PERIOD)
    validity_period = ModelField(VALIDITY_PERIOD, Validity)


class NamewayContent(TlvModel):
    """The same, with Nameway's non-critical fields after."""
    expiration_period = UintField(EXPIRATION_PERIOD)
    validity_period = ModelField(VALIDITY_PERIOD, Validity)
    delegate = BytesField(NW_DELEGATE)  # a whole Name TLV
    public_key = BytesField(NW_PUBLIC_KEY)  # SubjectPublicKeyInfo DER


class KeyDigestEd25519Signer(Ed25519Signer):
    """Ed25519 with KeyLocator = KeyDigest(sha256(spki)) instead of a key name."""

    def __init__(self, key_der, digest):
        super().__init__("/unused", key_der)
        self.digest = digest

    def write_signature_info(self, signature_info):
        super().write_signature_info(signature_info)
        signature_info.key_locator.name = None
        signature_info.key_locator.key_digest = self.digest


def sc_name(h):
    return [Component.from_bytes(b"sc", Component.TYPE_KEYWORD), Component.from_bytes(h)]


def iso(ms):
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(ms // 1000)).encode()


def pa_name(prefix, version):
    return prefix + [Component.from_bytes(b"PA", Component.TYPE_KEYWORD),
                     Component.from_version(version), Component.from_segment(0)]


def make(router_hex):
    now = int(time.time() * 1000)
    lifetime = 600_000
    key = ECC.generate(curve="ed25519")
    spki = key.public_key().export_key(format="DER")
    h = hashlib.sha256(spki).digest()
    content = NamewayContent()
    content.expiration_period = lifetime
    content.validity_period = Validity()
    content.validity_period.not_before = iso(now)
    content.validity_period.not_after = iso(now + lifetime)
    content.delegate = Name.to_bytes(sc_name(bytes.fromhex(router_hex)))
    content.public_key = spki
    signer = KeyDigestEd25519Signer(key.export_key(format="DER"), h)
    sc = make_data(pa_name(sc_name(h), now), MetaInfo(content_type=PREFIX_ANN),
                   content.encode(), signer)

    app_key = ECC.generate(curve="P-256")
    plain_content = PlainContent()
    plain_content.expiration_period = 3_600_000
    plain = make_data(pa_name(Name.from_str("/example/pyndn"), now),
                      MetaInfo(content_type=PREFIX_ANN), plain_content.encode(),
                      Sha256WithEcdsaSigner("/example/pyndn/KEY/%01", app_key.export_key(format="DER")))
    return {
        "sc": {"wire": bytes(sc).hex(), "h": h.hex(), "spki": spki.hex(), "version": now},
        "plain": {"wire": bytes(plain).hex(), "version": now,
                  "spki": app_key.public_key().export_key(format="DER").hex()},
    }


def parse(pa_hex):
    name, meta, content, sig = parse_data(bytes.fromhex(pa_hex))
    ours = NamewayContent.parse(content)
    plain = PlainContent.parse(content)
    verified = False
    if ours.public_key is not None:
        verifier = eddsa.new(ECC.import_key(bytes(ours.public_key)), "rfc8032")
        try:
            verifier.verify(b"".join(bytes(p) for p in sig.signature_covered_part),
                            bytes(sig.signature_value_buf))
            verified = True
        except ValueError:
            verified = False
    info = sig.signature_info
    vp = ours.validity_period
    return {
        "name": Name.to_bytes(name).hex(),
        "content_type": meta.content_type,
        "expiration": ours.expiration_period,
        "not_before": bytes(vp.not_before).decode() if vp else None,
        "not_after": bytes(vp.not_after).decode() if vp else None,
        "delegate": bytes(ours.delegate).hex() if ours.delegate is not None else None,
        "public_key": bytes(ours.public_key).hex() if ours.public_key is not None else None,
        "plain_expiration": plain.expiration_period,
        "plain_has_validity": plain.validity_period is not None,
        "signature_type": info.signature_type,
        "key_digest": bytes(info.key_locator.key_digest).hex()
        if info.key_locator is not None and info.key_locator.key_digest is not None else None,
        "signature_verified": verified,
    }


def main():
    mode = sys.argv[1]
    if mode == "make":
        out = make(sys.argv[2])
    elif mode == "parse":
        out = parse(sys.argv[2])
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
