#!/usr/bin/env python3
"""python-ndn cross-checks for nameway-wire (driven by crates/wire/tests/python_ndn.rs).

Two modes:

``encode``
    Builds packets with python-ndn and prints one JSON document on stdout::

        {"python_ndn": "0.5.2", "keys": {KEY_ID: KEY, ...}, "cases": [CASE, ...]}

    covering every Interest field, every signature type python-ndn signs (DigestSha256,
    HMAC-SHA256, ECDSA P-256, RSA, Ed25519, and its test-only NullSigner), Data with up to
    8000 bytes of content and every MetaInfo field, a legacy v0.2 command Interest, and
    NDNLPv2 Nacks (with ``ndn.encoding.ndnlp_v2``).

``decode``
    Reads the same kind of document, built by Nameway, from stdin; decodes every case with
    python-ndn (``parse_interest``, ``parse_data``, ``parse_lp_packet_v2``), checks every field
    against the expected values, checks the ParametersSha256DigestComponent, and VERIFIES every
    signature with python-ndn's own verifiers (``sha256_digest_checker``, ``verify_hmac``,
    ``verify_ecdsa``, ``verify_rsa``, ``verify_ed25519``). As a control, it also checks that the
    same verifier rejects the packet once one byte of its signature is changed. It prints a JSON
    report and exits 1 on any mismatch.

A CASE is::

    {"kind": "interest" | "data" | "nack", "description": str, "wire": hex,
     # interest
     "name": uri (informational), "name_wire": hex of the Name TLV,
     "can_be_prefix": bool, "must_be_fresh": bool, "nonce": int|null, "lifetime": int|null,
     "hop_limit": int|null, "forwarding_hint": [name_wire hex, ...], "app_params": hex|null,
     "legacy_v02_command": bool,  # v0.2 command Interest: the signature is in the name
     # data
     "content": hex|null, "content_type": int|null, "freshness_period": int|null,
     "final_block_id": hex of the component TLV|null,
     # interest and data
     "signature": null | {"type": int, "key_locator": name_wire hex|null,
                          "key_digest": hex|null, "nonce": int|null, "time": int|null,
                          "seq_num": int|null, "key": KEY_ID|null},
     # nack
     "nack_reason": int|null (null: Nack header without NackReason), "pit_token": hex|null,
     "interest": CASE (the Fragment, kind "interest")}

A KEY is ``{"alg": "hmac", "secret": hex}`` or ``{"alg": "ecdsa"|"rsa"|"ed25519",
"public_der": SubjectPublicKeyInfo hex, "private_pkcs8": hex (encode only), "private_pkcs1":
hex (RSA, encode only)}``.
"""

import asyncio
import hashlib
import json
import sys

import ndn
from Cryptodome.PublicKey import ECC, RSA
from ndn.encoding import (Component, InterestParam, MetaInfo, Name, make_data, make_interest,
                          parse_data, parse_interest)
from ndn.encoding.ndn_format_0_3 import SignatureType
from ndn.encoding.ndnlp_v2 import (LpPacket, LpPacketValue, NetworkNack, make_network_nack,
                                   parse_lp_packet_v2)
from ndn.app_support.nfd_mgmt import make_command
from ndn.security import (DigestSha256Signer, Ed25519Signer, HmacSha256Signer, NullSigner,
                          Sha256WithEcdsaSigner, Sha256WithRsaSigner, params_sha256_checker,
                          sha256_digest_checker, verify_ecdsa, verify_ed25519, verify_hmac,
                          verify_rsa)


def hx(b):
    return None if b is None else bytes(b).hex()


def name_hex(name):
    return Name.to_bytes(name).hex()


# ---------------------------------------------------------------------------------------------
# encode
# ---------------------------------------------------------------------------------------------

def make_keys():
    ecc = ECC.generate(curve='P-256')
    ed = ECC.generate(curve='Ed25519')
    rsa = RSA.generate(2048)
    secret = bytes(range(1, 33))
    keys = {
        'hmac': {'alg': 'hmac', 'secret': secret.hex()},
        'ecdsa': {'alg': 'ecdsa',
                  'public_der': ecc.public_key().export_key(format='DER').hex(),
                  'private_pkcs8': ecc.export_key(format='DER').hex()},
        'ed25519': {'alg': 'ed25519',
                    'public_der': ed.public_key().export_key(format='DER').hex(),
                    'private_pkcs8': ed.export_key(format='DER').hex()},
        'rsa': {'alg': 'rsa',
                'public_der': rsa.public_key().export_key(format='DER').hex(),
                'private_pkcs8': rsa.export_key(format='DER', pkcs=8).hex(),
                'private_pkcs1': rsa.export_key(format='DER', pkcs=1).hex()},
    }
    signers = {
        'digest': (DigestSha256Signer(), DigestSha256Signer(for_interest=True), None),
        'hmac': (HmacSha256Signer('/hmac/KEY/1', secret),) * 2 + ('/hmac/KEY/1',),
        'ecdsa': (Sha256WithEcdsaSigner('/ecdsa/KEY/2', ecc.export_key(format='DER')),) * 2
        + ('/ecdsa/KEY/2',),
        'rsa': (Sha256WithRsaSigner('/rsa/KEY/3', rsa.export_key(format='DER')),) * 2
        + ('/rsa/KEY/3',),
        'ed25519': (Ed25519Signer('/ed25519/KEY/4', ed.export_key(format='DER')),) * 2
        + ('/ed25519/KEY/4',),
    }
    return keys, signers


SIG_TYPES = {'digest': SignatureType.DIGEST_SHA256, 'hmac': SignatureType.HMAC_WITH_SHA256,
             'ecdsa': SignatureType.SHA256_WITH_ECDSA, 'rsa': SignatureType.SHA256_WITH_RSA,
             'ed25519': SignatureType.ED25519}


def signature_expect(wire_sig_info, key_id, key_name):
    """Expected signature fields; nonce and time come from the packet python just built."""
    info = wire_sig_info
    return {
        'type': SIG_TYPES[key_id],
        'key_locator': None if key_name is None else name_hex(key_name),
        'key_digest': None,
        'nonce': info.signature_nonce,
        'time': info.signature_time,
        'seq_num': info.signature_seq_num,
        'key': None if key_id == 'digest' else key_id,
    }


def interest_case(description, name, param, app_param=None, signer=None, key_id=None,
                  key_name=None):
    wire = make_interest(name, param, app_param=app_param, signer=signer)
    final_name, _, _, sig = parse_interest(wire)
    case = {
        'kind': 'interest',
        'description': description,
        'wire': hx(wire),
        'name': Name.to_str(final_name),
        'name_wire': name_hex(final_name),
        'can_be_prefix': param.can_be_prefix,
        'must_be_fresh': param.must_be_fresh,
        'nonce': param.nonce,
        'lifetime': param.lifetime,
        'hop_limit': param.hop_limit,
        'forwarding_hint': [name_hex(n) for n in param.forwarding_hint],
        'app_params': hx(app_param) if app_param is not None or signer is None else '',
        'legacy_v02_command': False,
        'signature': None,
    }
    if signer is not None:
        case['signature'] = signature_expect(sig.signature_info, key_id, key_name)
    return case


def data_case(description, name, meta, content, signer, key_id, key_name):
    wire = make_data(name, meta, content, signer=signer)
    _, _, _, sig = parse_data(wire)
    case = {
        'kind': 'data',
        'description': description,
        'wire': hx(wire),
        'name': Name.to_str(Name.normalize(name)),
        'name_wire': name_hex(name),
        'content': hx(content),
        'content_type': None if meta is None else meta.content_type,
        'freshness_period': None if meta is None else meta.freshness_period,
        'final_block_id': None if meta is None else hx(meta.final_block_id),
    }
    if key_id == 'null':
        case['signature'] = {'type': SignatureType.NULL, 'key_locator': None, 'key_digest': None,
                             'nonce': None, 'time': None, 'seq_num': None, 'key': None}
    else:
        case['signature'] = signature_expect(sig.signature_info, key_id, key_name)
    return case


def nack_case(description, interest, reason, pit_token=None):
    if pit_token is None and reason is not None:
        wire = make_network_nack(bytes.fromhex(interest['wire']), reason)
    else:
        lp = LpPacket()
        lp.lp_packet = LpPacketValue()
        lp.lp_packet.pit_token = pit_token
        lp.lp_packet.nack = NetworkNack()
        lp.lp_packet.nack.nack_reason = reason
        lp.lp_packet.fragment = bytes.fromhex(interest['wire'])
        wire = lp.encode()
    return {'kind': 'nack', 'description': description, 'wire': hx(wire),
            'nack_reason': reason, 'pit_token': hx(pit_token), 'interest': interest}


def encode():
    keys, signers = make_keys()
    cases = []
    every = InterestParam(can_be_prefix=True, must_be_fresh=True, nonce=0x01020304,
                          lifetime=0x1_0000_0001, hop_limit=255,
                          forwarding_hint=['/fh/one', '/fh/two/x'])
    typed = [Component.from_str('a'), Component.from_segment(5), Component.from_version(2 ** 40),
             Component.from_timestamp(1_700_000_000_000_000), Component.from_sequence_num(0),
             Component.from_byte_offset(65536), Component.from_bytes(b'\x00\xff /%', 0x20),
             Component.from_bytes(b'', 0x08), Component.from_bytes(b'\x07' * 32, 0x01),
             Component.from_bytes(b'x', 0xfffe)]
    cases += [
        interest_case('name only: no Nonce, no InterestLifetime', '/a',
                      InterestParam(lifetime=None)),
        interest_case('python consumer defaults', '/example/x',
                      InterestParam(must_be_fresh=True, nonce=0x7e7cf9ce, lifetime=4000)),
        interest_case('every field (8-byte lifetime, HopLimit 255, ForwardingHint x2, params)',
                      '/every/field', every, app_param=bytes(range(256))),
        interest_case('HopLimit 0, lifetime 0, nonce 0', '/zero',
                      InterestParam(nonce=0, lifetime=0, hop_limit=0)),
        interest_case('CanBePrefix only', '/prefix', InterestParam(can_be_prefix=True)),
        interest_case('typed and odd components', typed, InterestParam(nonce=0xffffffff)),
        interest_case('empty ApplicationParameters', '/params/empty',
                      InterestParam(nonce=7), app_param=b''),
        interest_case('4000-byte ApplicationParameters', '/params/big',
                      InterestParam(nonce=8), app_param=bytes(i % 253 for i in range(4000))),
    ]
    for key_id, (data_signer, interest_signer, key_name) in signers.items():
        cases.append(interest_case(f'signed Interest {key_id}', '/signed/interest',
                                   InterestParam(must_be_fresh=True, nonce=0x0a0b0c0d,
                                                 lifetime=1000),
                                   app_param=b'params', signer=interest_signer, key_id=key_id,
                                   key_name=key_name))
        cases.append(interest_case(f'signed Interest {key_id}, no params, every field',
                                   '/signed/every', every, signer=interest_signer,
                                   key_id=key_id, key_name=key_name))
    cp_name = make_command_v2_name()
    cases.append(interest_case('appv2 rib/register (v0.3 signed command)', cp_name,
                               InterestParam(nonce=0x11223344, lifetime=1000), app_param=b'',
                               signer=DigestSha256Signer(for_interest=True), key_id='digest'))
    legacy = make_command('rib', 'register', name='/example')
    legacy_case = interest_case('legacy rib/register (v0.2 command Interest)', legacy,
                                InterestParam(nonce=0x55667788, lifetime=1000))
    legacy_case['legacy_v02_command'] = True
    cases.append(legacy_case)

    for size in (None, 0, 1, 100, 8000):
        content = None if size is None else bytes(i % 251 for i in range(size))
        cases.append(data_case(f'Data, content {size} bytes, DigestSha256', '/data/content',
                               MetaInfo(freshness_period=10000), content,
                               DigestSha256Signer(), 'digest', None))
    cases.append(data_case('Data, no MetaInfo', '/data/nometa', None, b'hi',
                           DigestSha256Signer(), 'digest', None))
    cases.append(data_case('Data, every MetaInfo field', [Component.from_str('data'),
                                                          Component.from_segment(9)],
                           MetaInfo(content_type=2, freshness_period=0x1_0000_0000,
                                    final_block_id=Component.from_segment(9)),
                           b'\x01\x02', DigestSha256Signer(), 'digest', None))
    for key_id, (data_signer, _, key_name) in signers.items():
        cases.append(data_case(f'Data signed {key_id}', '/signed/data',
                               MetaInfo(freshness_period=1000), b'payload', data_signer, key_id,
                               key_name))
        cases.append(data_case(f'Data signed {key_id}, 8000-byte content', '/signed/big',
                               MetaInfo(content_type=0, freshness_period=1),
                               bytes(i % 7 for i in range(8000)), data_signer, key_id,
                               key_name))
    cases.append(data_case('Data with NullSigner (type 200, empty value)', '/null', None, b'x',
                           NullSigner(), 'null', None))

    plain = cases[1]
    signed = next(c for c in cases if c['description'] == 'appv2 rib/register (v0.3 signed command)')
    for reason in (0, 50, 100, 150):
        cases.append(nack_case(f'Nack reason {reason}', plain, reason))
    cases.append(nack_case('Nack NoRoute with PitToken, signed Interest', signed, 150,
                           pit_token=bytes.fromhex('4167ffffffff')))
    cases.append(nack_case('Nack header without NackReason', plain, None))
    cases.append(nack_case('Nack with unknown reason 7', plain, 7))

    json.dump({'python_ndn': ndn.__version__, 'keys': keys, 'cases': cases}, sys.stdout)
    sys.stdout.write('\n')


def make_command_v2_name():
    from ndn.app_support.nfd_mgmt import make_command_v2
    return make_command_v2('rib', 'register', name='/example')


# ---------------------------------------------------------------------------------------------
# decode
# ---------------------------------------------------------------------------------------------

class Checker:
    def __init__(self, description):
        self.description = description
        self.errors = []
        self.verified = None
        self.control_rejected = None

    def eq(self, what, got, want):
        if got != want:
            self.errors.append(f'{what}: python-ndn decoded {got!r}, expected {want!r}')

    def report(self):
        return {'description': self.description, 'ok': not self.errors, 'errors': self.errors,
                'verified': self.verified, 'control_rejected': self.control_rejected}


def load_verifier(key):
    """A function (sig_ptrs) -> bool that runs python-ndn's own verifier for this key."""
    alg = key['alg']
    if alg == 'hmac':
        secret = bytes.fromhex(key['secret'])
        return lambda ptrs: verify_hmac(secret, ptrs)
    der = bytes.fromhex(key['public_der'])
    if alg == 'ecdsa':
        pub = ECC.import_key(der)
        return lambda ptrs: verify_ecdsa(pub, ptrs)
    if alg == 'rsa':
        pub = RSA.import_key(der)
        return lambda ptrs: verify_rsa(pub, ptrs)
    if alg == 'ed25519':
        pub = ECC.import_key(der)
        return lambda ptrs: verify_ed25519(pub, ptrs)
    raise ValueError(f'unknown key algorithm {alg}')


def digest_verifier(ptrs):
    return asyncio.run(sha256_digest_checker([], ptrs))


def check_signature(chk, sig, expect, keys):
    """Checks the SignatureInfo fields and verifies the signature, then a tampered copy."""
    info = sig.signature_info
    if expect is None:
        chk.eq('signature', info, None)
        return
    if info is None:
        chk.errors.append('no SignatureInfo decoded')
        return
    chk.eq('signature type', info.signature_type, expect['type'])
    kl = info.key_locator
    chk.eq('key locator name',
           None if kl is None or kl.name is None else name_hex(kl.name), expect['key_locator'])
    chk.eq('key locator digest',
           None if kl is None or kl.key_digest is None else hx(kl.key_digest),
           expect['key_digest'])
    chk.eq('signature nonce', info.signature_nonce, expect['nonce'])
    chk.eq('signature time', info.signature_time, expect['time'])
    chk.eq('signature seq num', info.signature_seq_num, expect['seq_num'])
    if expect['type'] == SignatureType.DIGEST_SHA256:
        verify = digest_verifier
    elif expect['key'] is not None:
        verify = load_verifier(keys[expect['key']])
    else:
        return  # e.g. NullSigner: nothing to verify
    chk.verified = bool(verify(sig))
    if not chk.verified:
        chk.errors.append(f'python-ndn did NOT verify the signature (type {expect["type"]})')
    # Control: the same verifier must reject a changed signature.
    tampered = bytearray(sig.signature_value_buf)
    tampered[-1] ^= 0x01
    original = sig.signature_value_buf
    sig.signature_value_buf = memoryview(tampered)
    chk.control_rejected = not verify(sig)
    sig.signature_value_buf = original
    if not chk.control_rejected:
        chk.errors.append('python-ndn accepted a tampered signature: the check is vacuous')


def check_interest(chk, wire, case, keys):
    name, param, app_param, sig = parse_interest(wire)
    chk.eq('name', name_hex(name), case['name_wire'])
    chk.eq('can_be_prefix', bool(param.can_be_prefix), case['can_be_prefix'])
    chk.eq('must_be_fresh', bool(param.must_be_fresh), case['must_be_fresh'])
    chk.eq('nonce', param.nonce, case['nonce'])
    chk.eq('lifetime', param.lifetime, case['lifetime'])
    chk.eq('hop_limit', param.hop_limit, case['hop_limit'])
    chk.eq('forwarding_hint', [name_hex(n) for n in param.forwarding_hint],
           case['forwarding_hint'])
    chk.eq('app_params', hx(app_param), case['app_params'])
    if app_param is not None:
        ok = asyncio.run(params_sha256_checker(name, sig))
        if not ok:
            chk.errors.append('ParametersSha256DigestComponent does not match (python-ndn)')
    check_signature(chk, sig, case['signature'], keys)


def check_data(chk, wire, case, keys):
    name, meta, content, sig = parse_data(wire)
    chk.eq('name', name_hex(name), case['name_wire'])
    chk.eq('content', hx(content), case['content'])
    # python-ndn substitutes MetaInfo() (ContentType BLOB) when MetaInfo is absent.
    chk.eq('content_type', meta.content_type or 0, case['content_type'] or 0)
    chk.eq('freshness_period', meta.freshness_period, case['freshness_period'])
    chk.eq('final_block_id', hx(meta.final_block_id), case['final_block_id'])
    check_signature(chk, sig, case['signature'], keys)


def check_nack(chk, wire, case, keys):
    lp = parse_lp_packet_v2(wire)
    if lp.nack is None:
        chk.errors.append('python-ndn found no Nack header')
        return
    chk.eq('nack_reason', lp.nack.nack_reason, case['nack_reason'])
    chk.eq('pit_token', hx(lp.pit_token), case['pit_token'])
    chk.eq('fragment', hx(lp.fragment), case['interest']['wire'])
    inner = Checker('fragment')
    check_interest(inner, bytes(lp.fragment), case['interest'], keys)
    chk.errors += [f'fragment {e}' for e in inner.errors]
    chk.verified, chk.control_rejected = inner.verified, inner.control_rejected


def decode():
    doc = json.load(sys.stdin)
    keys = doc['keys']
    reports = []
    for case in doc['cases']:
        chk = Checker(case['description'])
        wire = bytes.fromhex(case['wire'])
        try:
            {'interest': check_interest, 'data': check_data, 'nack': check_nack}[case['kind']](
                chk, wire, case, keys)
        except Exception as e:  # a decode failure is a mismatch, reported with the others
            chk.errors.append(f'python-ndn raised {type(e).__name__}: {e}')
        reports.append(chk.report())
    failed = [r for r in reports if not r['ok']]
    json.dump({'python_ndn': ndn.__version__, 'cases': len(reports), 'failed': len(failed),
               'reports': reports}, sys.stdout, indent=1)
    sys.stdout.write('\n')
    return 1 if failed else 0


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ('encode', 'decode'):
        sys.stderr.write('usage: pyndn_vectors.py encode|decode\n')
        return 2
    if sys.argv[1] == 'encode':
        encode()
        return 0
    return decode()


if __name__ == '__main__':
    sys.exit(main())
