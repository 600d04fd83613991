//! Cross-checks against python-ndn, the reference client (tests/interop/pyndn_vectors.py).
//!
//! 1. python-ndn builds Interests, Data and Nacks with every field and every signature type it
//!    can sign; Nameway decodes them, compares every field, re-encodes them byte for byte and
//!    verifies every signature with the public keys python-ndn exported.
//! 2. Nameway builds the same kinds of packets, signed with keys it generated; python-ndn decodes
//!    them, compares every field and verifies every signature with its own verifiers.
//!
//! The Python side runs from `$REPO/.venv` (made by `scripts/setup-python.sh`) or from the
//! interpreter named by `NAMEWAY_PYTHON`. Without it the tests pass with a loud notice, unless
//! `CI` or `NAMEWAY_REQUIRE_INTEROP` is set: then they fail.

// Test helpers outside #[test] functions may unwrap too (clippy.toml covers only the tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use bytes::Bytes;
use nameway_wire::data::content_type;
use nameway_wire::lp::{LpPacket, NackReason};
use nameway_wire::security::{
    DigestSha256, EcdsaP256Signer, EcdsaP256Verifier, Ed25519Signer, Ed25519Verifier, HmacSha256,
    RsaSha256Signer, RsaSha256Verifier,
};
use nameway_wire::signature::{signature_type, ValidityPeriod};
use nameway_wire::tlv::{self, types, Reader};
use nameway_wire::{
    Component, Data, Interest, KeyLocator, MetaInfo, Name, SignatureInfo, Signer, Verifier,
};
use serde_json::{json, Value};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn flag(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The venv interpreter, if it can import python-ndn. Panics when it cannot and interop is
/// required (CI, or NAMEWAY_REQUIRE_INTEROP); otherwise prints a loud notice and returns None.
fn python() -> Option<PathBuf> {
    let python = match std::env::var_os("NAMEWAY_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => repo_root().join(".venv/bin/python"),
    };
    let usable = Command::new(&python)
        .args(["-c", "import ndn.encoding, ndn.security"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if usable {
        return Some(python);
    }
    let msg = format!(
        "python-ndn interop tests need {} with python-ndn installed: run `bash \
         scripts/setup-python.sh` (or set NAMEWAY_PYTHON)",
        python.display()
    );
    if flag("CI") || flag("NAMEWAY_REQUIRE_INTEROP") {
        panic!("{msg}; CI / NAMEWAY_REQUIRE_INTEROP is set, so this is a failure");
    }
    // Straight to the stderr handle: the test harness captures `eprintln!` of passing tests.
    let bar = "!".repeat(100);
    let _ = writeln!(std::io::stderr(), "\n{bar}\n!!! SKIPPED: {msg}\n{bar}\n");
    None
}

fn script() -> PathBuf {
    repo_root().join("tests/interop/pyndn_vectors.py")
}

fn unhex(v: &Value) -> Vec<u8> {
    hex::decode(
        v.as_str()
            .unwrap_or_else(|| panic!("expected a hex string, got {v}")),
    )
    .unwrap()
}

fn opt_hex(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

fn name_hex(n: &Name) -> String {
    hex::encode(n.to_wire())
}

fn component_hex(c: &Component) -> String {
    let mut out = Vec::new();
    tlv::put_tlv(&mut out, c.typ, &c.value);
    hex::encode(out)
}

/// A big-endian byte string (SignatureNonce) as the integer python-ndn decodes it to.
fn be_int(b: &[u8]) -> u64 {
    b.iter().fold(0, |acc, &x| (acc << 8) | u64::from(x))
}

/// Collects mismatches instead of stopping at the first, so one run shows them all.
struct Report {
    errors: Vec<String>,
    verified: BTreeMap<String, usize>,
}

impl Report {
    fn eq<T: PartialEq + std::fmt::Debug>(&mut self, ctx: &str, what: &str, got: T, want: T) {
        if got != want {
            self.errors.push(format!(
                "{ctx}: {what}: Nameway decoded {got:?}, python-ndn set {want:?}"
            ));
        }
    }

    fn verified(&mut self, kind: &str, typ: u64) {
        *self
            .verified
            .entry(format!("{kind} type {typ}"))
            .or_default() += 1;
    }
}

// ---------------------------------------------------------------------------------------------
// 1. python-ndn encodes, Nameway decodes and verifies
// ---------------------------------------------------------------------------------------------

/// The verifiers for python-ndn's keys; also checks that Nameway loads python-ndn's private
/// keys (PKCS#8, and PKCS#1 for RSA) and derives the same public keys.
fn python_keys(keys: &Value) -> BTreeMap<String, Box<dyn Verifier>> {
    let mut out: BTreeMap<String, Box<dyn Verifier>> = BTreeMap::new();
    for (id, key) in keys.as_object().unwrap() {
        let v: Box<dyn Verifier> = match key["alg"].as_str().unwrap() {
            "hmac" => Box::new(HmacSha256::new(&unhex(&key["secret"])).unwrap()),
            "ecdsa" => {
                let public = EcdsaP256Verifier::from_public_key_der(&unhex(&key["public_der"]))
                    .expect("python-ndn's P-256 SubjectPublicKeyInfo");
                let private = EcdsaP256Signer::from_pkcs8_der(&unhex(&key["private_pkcs8"]))
                    .expect("python-ndn's P-256 PKCS#8");
                assert_eq!(private.verifier(), public, "P-256 key pair from python-ndn");
                Box::new(public)
            }
            "ed25519" => {
                let public = Ed25519Verifier::from_public_key_der(&unhex(&key["public_der"]))
                    .expect("python-ndn's Ed25519 SubjectPublicKeyInfo");
                let private = Ed25519Signer::from_pkcs8_der(&unhex(&key["private_pkcs8"]))
                    .expect("python-ndn's Ed25519 PKCS#8");
                assert_eq!(
                    private.verifier(),
                    public,
                    "Ed25519 key pair from python-ndn"
                );
                Box::new(public)
            }
            "rsa" => {
                let public = RsaSha256Verifier::from_public_key_der(&unhex(&key["public_der"]))
                    .expect("python-ndn's RSA SubjectPublicKeyInfo");
                let pkcs8 = RsaSha256Signer::from_pkcs8_der(&unhex(&key["private_pkcs8"]))
                    .expect("python-ndn's RSA PKCS#8");
                let pkcs1 = RsaSha256Signer::from_pkcs1_der(&unhex(&key["private_pkcs1"]))
                    .expect("python-ndn's RSA PKCS#1");
                assert_eq!(
                    pkcs8.verifier(),
                    public,
                    "RSA key pair from python-ndn (PKCS#8)"
                );
                assert_eq!(
                    pkcs1.verifier(),
                    public,
                    "RSA key pair from python-ndn (PKCS#1)"
                );
                Box::new(public)
            }
            other => panic!("unknown key algorithm {other}"),
        };
        out.insert(id.clone(), v);
    }
    out
}

fn check_signature_info(r: &mut Report, ctx: &str, info: Option<&SignatureInfo>, want: &Value) {
    let Some(info) = info else {
        r.eq(ctx, "signed", false, !want.is_null());
        return;
    };
    if want.is_null() {
        r.errors.push(format!(
            "{ctx}: Nameway found a signature python-ndn did not set"
        ));
        return;
    }
    r.eq(
        ctx,
        "signature type",
        Some(info.signature_type),
        want["type"].as_u64(),
    );
    let (kl_name, kl_digest) = match &info.key_locator {
        Some(KeyLocator::Name(n)) => (Some(name_hex(n)), None),
        Some(KeyLocator::KeyDigest(d)) => (None, Some(hex::encode(d))),
        None => (None, None),
    };
    r.eq(
        ctx,
        "key locator name",
        kl_name,
        opt_hex(&want["key_locator"]),
    );
    r.eq(
        ctx,
        "key locator digest",
        kl_digest,
        opt_hex(&want["key_digest"]),
    );
    r.eq(
        ctx,
        "signature nonce",
        info.nonce.as_deref().map(be_int),
        want["nonce"].as_u64(),
    );
    r.eq(ctx, "signature time", info.time, want["time"].as_u64());
    r.eq(
        ctx,
        "signature seq num",
        info.seq_num,
        want["seq_num"].as_u64(),
    );
}

/// The verifier for a case's signature: DigestSha256, the python key it names, or none (NULL).
fn verifier_for<'k>(
    sig: &Value,
    keys: &'k BTreeMap<String, Box<dyn Verifier>>,
) -> Option<&'k dyn Verifier> {
    const DIGEST: &DigestSha256 = &DigestSha256;
    if sig["type"].as_u64() == Some(signature_type::DIGEST_SHA256) {
        return Some(DIGEST);
    }
    sig["key"].as_str().map(|id| keys[id].as_ref())
}

fn check_interest_fields(r: &mut Report, ctx: &str, i: &Interest, c: &Value) {
    r.eq(
        ctx,
        "name",
        name_hex(&i.name),
        c["name_wire"].as_str().unwrap().to_owned(),
    );
    r.eq(
        ctx,
        "can_be_prefix",
        i.can_be_prefix,
        c["can_be_prefix"].as_bool().unwrap(),
    );
    r.eq(
        ctx,
        "must_be_fresh",
        i.must_be_fresh,
        c["must_be_fresh"].as_bool().unwrap(),
    );
    r.eq(ctx, "nonce", i.nonce.map(u64::from), c["nonce"].as_u64());
    r.eq(ctx, "lifetime", i.lifetime_ms, c["lifetime"].as_u64());
    r.eq(
        ctx,
        "hop_limit",
        i.hop_limit.map(u64::from),
        c["hop_limit"].as_u64(),
    );
    let hint: Vec<String> = i.forwarding_hint.iter().map(name_hex).collect();
    let want_hint: Vec<String> = c["forwarding_hint"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap().to_owned())
        .collect();
    r.eq(ctx, "forwarding_hint", hint, want_hint);
    r.eq(
        ctx,
        "app_params",
        i.app_parameters.as_deref().map(hex::encode),
        opt_hex(&c["app_params"]),
    );
    check_signature_info(r, ctx, i.signature_info.as_ref(), &c["signature"]);
}

fn check_python_interest(
    r: &mut Report,
    ctx: &str,
    wire: &Bytes,
    c: &Value,
    keys: &BTreeMap<String, Box<dyn Verifier>>,
) {
    let i = match Interest::decode(wire) {
        Ok(i) => i,
        Err(e) => {
            return r
                .errors
                .push(format!("{ctx}: Interest::decode failed: {e}"))
        }
    };
    check_interest_fields(r, ctx, &i, c);
    r.eq(
        ctx,
        "re-encoding",
        hex::encode(i.encode()),
        hex::encode(wire),
    );
    if c["legacy_v02_command"].as_bool() == Some(true) {
        verify_legacy_command(r, ctx, &i);
    } else if let Some(v) = verifier_for(&c["signature"], keys) {
        match i.verify(v) {
            Ok(()) => r.verified("Interest", c["signature"]["type"].as_u64().unwrap()),
            Err(e) => r
                .errors
                .push(format!("{ctx}: Interest::verify failed: {e}")),
        }
    }
}

/// A v0.2 command Interest: [n-2] is the SignatureInfo TLV, [n-1] the SignatureValue TLV, over
/// the TLVs of components [0] to [n-2] (SignatureInfo included).
fn verify_legacy_command(r: &mut Report, ctx: &str, i: &Interest) {
    let comps: Vec<_> = i.name.iter().collect();
    let n = comps.len();
    let info_bytes = Bytes::copy_from_slice(comps[n - 2].value());
    let info_el = Reader::new(&info_bytes).read_element().unwrap();
    let info = SignatureInfo::decode(&info_el, &info_bytes).unwrap();
    let value = tlv::read_single(comps[n - 1].value()).unwrap();
    r.eq(
        ctx,
        "legacy SignatureValue type",
        value.typ,
        types::SIGNATURE_VALUE,
    );
    let parts: Vec<&[u8]> = comps[..n - 1].iter().map(|c| c.wire()).collect();
    match DigestSha256.verify(info.signature_type, &parts, value.value) {
        Ok(()) => r.verified("legacy v0.2 command", info.signature_type),
        Err(e) => r.errors.push(format!("{ctx}: v0.2 signature failed: {e}")),
    }
}

fn check_python_data(
    r: &mut Report,
    ctx: &str,
    wire: &Bytes,
    c: &Value,
    keys: &BTreeMap<String, Box<dyn Verifier>>,
) {
    let d = match Data::decode(wire) {
        Ok(d) => d,
        Err(e) => return r.errors.push(format!("{ctx}: Data::decode failed: {e}")),
    };
    r.eq(
        ctx,
        "name",
        name_hex(&d.name),
        c["name_wire"].as_str().unwrap().to_owned(),
    );
    r.eq(
        ctx,
        "content",
        d.content.as_deref().map(hex::encode),
        opt_hex(&c["content"]),
    );
    let meta = d.meta_info.clone().unwrap_or_default();
    r.eq(
        ctx,
        "content_type",
        meta.content_type,
        c["content_type"].as_u64(),
    );
    r.eq(
        ctx,
        "freshness_period",
        meta.freshness_period,
        c["freshness_period"].as_u64(),
    );
    r.eq(
        ctx,
        "final_block_id",
        meta.final_block_id.as_ref().map(component_hex),
        opt_hex(&c["final_block_id"]),
    );
    check_signature_info(r, ctx, Some(&d.signature_info), &c["signature"]);
    r.eq(
        ctx,
        "re-encoding",
        hex::encode(d.encode()),
        hex::encode(wire),
    );
    if let Some(v) = verifier_for(&c["signature"], keys) {
        match d.verify(v) {
            Ok(()) => r.verified("Data", c["signature"]["type"].as_u64().unwrap()),
            Err(e) => r.errors.push(format!("{ctx}: Data::verify failed: {e}")),
        }
    }
}

fn check_python_nack(
    r: &mut Report,
    ctx: &str,
    wire: &Bytes,
    c: &Value,
    keys: &BTreeMap<String, Box<dyn Verifier>>,
) {
    let lp = match LpPacket::decode(wire) {
        Ok(lp) => lp,
        Err(e) => {
            return r
                .errors
                .push(format!("{ctx}: LpPacket::decode failed: {e}"))
        }
    };
    // A Nack header without NackReason decodes as NackReason::None, as in ndn-cxx.
    let want = NackReason::from_code(c["nack_reason"].as_u64().unwrap_or(0));
    r.eq(ctx, "nack reason", lp.nack, Some(want));
    r.eq(
        ctx,
        "pit token",
        lp.pit_token.as_deref().map(hex::encode),
        opt_hex(&c["pit_token"]),
    );
    let Some(fragment) = lp.fragment else {
        return r.errors.push(format!("{ctx}: no Fragment"));
    };
    r.eq(
        ctx,
        "fragment",
        hex::encode(&fragment),
        c["interest"]["wire"].as_str().unwrap().into(),
    );
    check_python_interest(
        r,
        &format!("{ctx} (fragment)"),
        &fragment,
        &c["interest"],
        keys,
    );
}

#[test]
fn python_ndn_encodes_nameway_decodes_and_verifies() {
    let Some(python) = python() else { return };
    let out = Command::new(&python)
        .arg(script())
        .arg("encode")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pyndn_vectors.py encode failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys = python_keys(&doc["keys"]);
    let cases = doc["cases"].as_array().unwrap();
    let mut r = Report {
        errors: Vec::new(),
        verified: BTreeMap::new(),
    };
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for c in cases {
        let kind = c["kind"].as_str().unwrap();
        let ctx = format!("[{kind}] {}", c["description"].as_str().unwrap());
        let wire = Bytes::from(unhex(&c["wire"]));
        match kind {
            "interest" => check_python_interest(&mut r, &ctx, &wire, c, &keys),
            "data" => check_python_data(&mut r, &ctx, &wire, c, &keys),
            "nack" => check_python_nack(&mut r, &ctx, &wire, c, &keys),
            other => panic!("unknown case kind {other}"),
        }
        *kinds.entry(kind).or_default() += 1;
    }
    println!(
        "python-ndn {} built {} cases {kinds:?}; Nameway verified {:?}",
        doc["python_ndn"],
        cases.len(),
        r.verified
    );
    assert!(
        r.errors.is_empty(),
        "{} mismatches:\n{}",
        r.errors.len(),
        r.errors.join("\n")
    );
    for typ in [0, 1, 3, 4, 5] {
        for kind in ["Interest", "Data"] {
            assert!(
                r.verified.contains_key(&format!("{kind} type {typ}")),
                "no python-ndn {kind} of signature type {typ} was verified: {:?}",
                r.verified
            );
        }
    }
    assert!(r.verified.contains_key("legacy v0.2 command type 0"));
}

// ---------------------------------------------------------------------------------------------
// 2. Nameway encodes, python-ndn decodes and verifies
// ---------------------------------------------------------------------------------------------

struct RustKeys {
    hmac: HmacSha256,
    ecdsa: EcdsaP256Signer,
    rsa: RsaSha256Signer,
    ed25519: Ed25519Signer,
}

impl RustKeys {
    fn generate() -> Self {
        Self {
            hmac: HmacSha256::generate()
                .unwrap()
                .with_key_name(name("/nameway/hmac/KEY/1")),
            ecdsa: EcdsaP256Signer::generate()
                .unwrap()
                .with_key_name(name("/nameway/ecdsa/KEY/2")),
            rsa: RsaSha256Signer::generate(2048)
                .unwrap()
                .with_key_name(name("/nameway/rsa/KEY/3")),
            ed25519: Ed25519Signer::generate()
                .unwrap()
                .with_key_name(name("/nameway/ed/KEY/4")),
        }
    }

    fn json(&self) -> Value {
        let spki = |der: Vec<u8>| hex::encode(der);
        json!({
            "hmac": {"alg": "hmac", "secret": hex::encode(self.hmac.expose_secret())},
            "ecdsa": {"alg": "ecdsa", "public_der": spki(self.ecdsa.verifier().to_public_key_der().unwrap())},
            "rsa": {"alg": "rsa", "public_der": spki(self.rsa.verifier().to_public_key_der().unwrap())},
            "ed25519": {"alg": "ed25519", "public_der": spki(self.ed25519.verifier().to_public_key_der().unwrap())},
        })
    }

    /// (key id for the JSON, signer): DigestSha256 first.
    fn signers(&self) -> Vec<(Option<&'static str>, &dyn Signer)> {
        vec![
            (None, &DigestSha256),
            (Some("hmac"), &self.hmac),
            (Some("ecdsa"), &self.ecdsa),
            (Some("rsa"), &self.rsa),
            (Some("ed25519"), &self.ed25519),
        ]
    }
}

fn name(uri: &str) -> Name {
    uri.parse().unwrap()
}

fn signature_json(info: Option<&SignatureInfo>, key: Option<&str>) -> Value {
    let Some(info) = info else { return Value::Null };
    let (kl, kd) = match &info.key_locator {
        Some(KeyLocator::Name(n)) => (Some(name_hex(n)), None),
        Some(KeyLocator::KeyDigest(d)) => (None, Some(hex::encode(d))),
        None => (None, None),
    };
    json!({
        "type": info.signature_type,
        "key_locator": kl,
        "key_digest": kd,
        "nonce": info.nonce.as_deref().map(be_int),
        "time": info.time,
        "seq_num": info.seq_num,
        "key": key,
    })
}

fn interest_json(description: &str, i: &Interest, key: Option<&str>) -> Value {
    let wire = i.encode();
    // The final name, with the ParametersSha256DigestComponent `encode` computed.
    let decoded = Interest::decode(&wire).unwrap();
    json!({
        "kind": "interest",
        "description": description,
        "wire": hex::encode(&wire),
        "name": decoded.name.to_string(),
        "name_wire": name_hex(&decoded.name),
        "can_be_prefix": i.can_be_prefix,
        "must_be_fresh": i.must_be_fresh,
        "nonce": i.nonce,
        "lifetime": i.lifetime_ms,
        "hop_limit": i.hop_limit,
        "forwarding_hint": i.forwarding_hint.iter().map(name_hex).collect::<Vec<_>>(),
        "app_params": i.app_parameters.as_deref().map(hex::encode),
        "legacy_v02_command": false,
        "signature": signature_json(i.signature_info.as_ref(), key),
    })
}

fn data_json(description: &str, d: &Data, key: Option<&str>) -> Value {
    let meta = d.meta_info.clone().unwrap_or_default();
    json!({
        "kind": "data",
        "description": description,
        "wire": hex::encode(d.encode()),
        "name": d.name.to_string(),
        "name_wire": name_hex(&d.name),
        "content": d.content.as_deref().map(hex::encode),
        "content_type": meta.content_type,
        "freshness_period": meta.freshness_period,
        "final_block_id": meta.final_block_id.as_ref().map(component_hex),
        "signature": signature_json(Some(&d.signature_info), key),
    })
}

fn nack_json(
    description: &str,
    reason: NackReason,
    token: Option<&[u8]>,
    interest: Value,
) -> Value {
    let fragment = Bytes::from(unhex(&interest["wire"]));
    let lp = LpPacket::nack(reason, fragment, token.map(Bytes::copy_from_slice));
    json!({
        "kind": "nack",
        "description": description,
        "wire": hex::encode(lp.encode()),
        "nack_reason": reason.code(),
        "pit_token": token.map(hex::encode),
        "interest": interest,
    })
}

fn every_field_interest(uri: &str) -> Interest {
    let mut i = Interest::new(name(uri));
    i.can_be_prefix = true;
    i.must_be_fresh = true;
    i.forwarding_hint = vec![name("/fh/one"), name("/fh/two/seg=3")];
    i.nonce = Some(0xdead_beef);
    i.lifetime_ms = Some(0x1_0000_0001);
    i.hop_limit = Some(64);
    i
}

fn interest_sig_info(seq: u64) -> SignatureInfo {
    SignatureInfo {
        nonce: Some(Bytes::from_static(&[0x81, 2, 3, 4, 5, 6, 7, 8])),
        time: Some(1_777_777_777_777),
        seq_num: Some(seq),
        ..SignatureInfo::default()
    }
}

fn rust_cases(keys: &RustKeys) -> Vec<Value> {
    let mut cases = Vec::new();
    let mut plain = Interest::new(name("/a"));
    cases.push(interest_json("name only", &plain, None));
    plain.must_be_fresh = true;
    plain.nonce = Some(0x7e7c_f9ce);
    plain.lifetime_ms = Some(4000);
    let plain_case = interest_json("consumer defaults", &plain, None);
    cases.push(plain_case.clone());

    let mut every = every_field_interest("/every/field");
    every.app_parameters = Some(Bytes::from((0..=255u8).collect::<Vec<_>>()));
    cases.push(interest_json("every field", &every, None));

    let mut zero = Interest::new(name("/zero"));
    (zero.nonce, zero.lifetime_ms, zero.hop_limit) = (Some(0), Some(0), Some(0));
    cases.push(interest_json(
        "HopLimit 0, lifetime 0, nonce 0",
        &zero,
        None,
    ));

    let typed = Name::from_components(&[
        Component::generic(Bytes::from_static(b"a")),
        Component::segment(5),
        Component::version(1 << 40),
        Component::timestamp(1_700_000_000_000_000),
        Component::sequence_num(0),
        Component::byte_offset(65536),
        Component {
            typ: types::KEYWORD_NAME_COMPONENT,
            value: Bytes::from_static(b"\x00\xff /%"),
        },
        Component::generic(Bytes::new()),
        Component::implicit_digest([7; 32]),
        Component {
            typ: 0xfffe,
            value: Bytes::from_static(b"x"),
        },
    ])
    .unwrap();
    let mut typed_i = Interest::new(typed);
    typed_i.nonce = Some(u32::MAX);
    cases.push(interest_json("typed and odd components", &typed_i, None));

    let mut big = Interest::new(name("/params/big"));
    big.app_parameters = Some(Bytes::from(
        (0..4000).map(|i| (i % 253) as u8).collect::<Vec<_>>(),
    ));
    cases.push(interest_json("4000-byte ApplicationParameters", &big, None));
    let mut empty = Interest::new(name("/params/empty"));
    empty.app_parameters = Some(Bytes::new());
    cases.push(interest_json("empty ApplicationParameters", &empty, None));

    let mut signed_digest_case = Value::Null;
    for (seq, (key, signer)) in keys.signers().into_iter().enumerate() {
        let label = key.unwrap_or("digest");
        let mut i = Interest::new(name("/signed/interest"));
        i.must_be_fresh = true;
        i.nonce = Some(0x0a0b_0c0d);
        i.lifetime_ms = Some(1000);
        i.app_parameters = Some(Bytes::from_static(b"params"));
        i.sign(signer, interest_sig_info(seq as u64)).unwrap();
        let c = interest_json(&format!("signed Interest {label}"), &i, key);
        if key.is_none() {
            signed_digest_case = c.clone();
        }
        cases.push(c);

        let mut e = every_field_interest("/signed/every");
        e.sign(signer, SignatureInfo::default()).unwrap();
        cases.push(interest_json(
            &format!("signed Interest {label}, every field"),
            &e,
            key,
        ));
    }

    for len in [None, Some(0), Some(1), Some(100), Some(8000)] {
        let content = len.map(|n| Bytes::from((0..n).map(|i| (i % 251) as u8).collect::<Vec<_>>()));
        let mut d = Data {
            name: name("/data/content"),
            content,
            ..Data::default()
        };
        d.meta_info = Some(MetaInfo {
            content_type: Some(content_type::BLOB),
            freshness_period: Some(10_000),
            final_block_id: Some(Component::segment(0)),
        });
        d.sign(&DigestSha256).unwrap();
        cases.push(data_json(&format!("Data, content {len:?} bytes"), &d, None));
    }
    let mut d = Data::new(name("/data/nometa"), Bytes::from_static(b"hi"));
    d.sign(&DigestSha256).unwrap();
    cases.push(data_json("Data, no MetaInfo", &d, None));
    let mut d = Data::new(name("/data/key/seg=9"), Bytes::from_static(b"\x01\x02"));
    d.meta_info = Some(MetaInfo {
        content_type: Some(content_type::KEY),
        freshness_period: Some(0x1_0000_0000),
        final_block_id: Some(Component::segment(9)),
    });
    d.sign(&DigestSha256).unwrap();
    cases.push(data_json("Data, every MetaInfo field", &d, None));

    for (key, signer) in keys.signers() {
        let label = key.unwrap_or("digest");
        for len in [7, 8000] {
            let content: Vec<u8> = (0..len).map(|i| (i % 7) as u8).collect();
            let mut d = Data::new(name("/signed/data"), Bytes::from(content));
            d.meta_info = Some(MetaInfo {
                freshness_period: Some(1000),
                ..MetaInfo::default()
            });
            d.sign(signer).unwrap();
            cases.push(data_json(
                &format!("Data signed {label}, {len}-byte content"),
                &d,
                key,
            ));
        }
    }
    // A certificate-shaped SignatureInfo: ValidityPeriod (python-ndn skips it, but it is signed).
    let mut cert = Data::new(
        name("/nameway/ecdsa/KEY/2/self/v=1"),
        Bytes::from_static(b"k"),
    );
    cert.meta_info = Some(MetaInfo {
        content_type: Some(content_type::KEY),
        ..MetaInfo::default()
    });
    cert.signature_info.validity_period = Some(ValidityPeriod {
        not_before: Bytes::from_static(b"20250101T000000"),
        not_after: Bytes::from_static(b"20350101T000000"),
    });
    cert.sign(&keys.ecdsa).unwrap();
    cases.push(data_json(
        "Data with ValidityPeriod, ecdsa",
        &cert,
        Some("ecdsa"),
    ));
    // KeyDigest KeyLocator.
    let ed_digest = keys
        .ed25519
        .clone()
        .with_key_locator(KeyLocator::KeyDigest(Bytes::from_static(&[0x5a; 32])));
    let mut d = Data::new(name("/keydigest"), Bytes::from_static(b"z"));
    d.sign(&ed_digest).unwrap();
    cases.push(data_json(
        "Data with KeyDigest KeyLocator, ed25519",
        &d,
        Some("ed25519"),
    ));

    for reason in [
        NackReason::None,
        NackReason::Congestion,
        NackReason::Duplicate,
        NackReason::NoRoute,
    ] {
        cases.push(nack_json(
            &format!("Nack {reason}"),
            reason,
            None,
            plain_case.clone(),
        ));
    }
    cases.push(nack_json(
        "Nack NoRoute with PitToken, signed Interest",
        NackReason::NoRoute,
        Some(&[0x41, 0x67, 0xff, 0xff, 0xff, 0xff]),
        signed_digest_case,
    ));
    cases
}

#[test]
fn nameway_encodes_python_ndn_decodes_and_verifies() {
    let Some(python) = python() else { return };
    let keys = RustKeys::generate();
    let cases = rust_cases(&keys);
    let signed = cases
        .iter()
        .filter(|c| {
            let sig = if c["kind"] == "nack" {
                &c["interest"]["signature"]
            } else {
                &c["signature"]
            };
            !sig.is_null()
        })
        .count();
    let doc = json!({"keys": keys.json(), "cases": cases});

    let mut child = Command::new(&python)
        .arg(script())
        .arg("decode")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(&doc).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();

    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bad report ({e}); stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let reports = report["reports"].as_array().unwrap();
    let failures: Vec<String> = reports
        .iter()
        .filter(|r| r["ok"] != true)
        .map(|r| format!("{}: {}", r["description"], r["errors"]))
        .collect();
    assert!(
        out.status.success() && failures.is_empty(),
        "python-ndn rejected {} of {} Nameway packets:\n{}\nstderr:\n{}",
        failures.len(),
        reports.len(),
        failures.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(reports.len(), doc["cases"].as_array().unwrap().len());
    // python-ndn really verified every signature and rejected a tampered copy of each.
    let verified = reports
        .iter()
        .filter(|r| r["verified"] == true && r["control_rejected"] == true);
    assert_eq!(verified.count(), signed, "signed cases python-ndn verified");
    println!(
        "python-ndn {} decoded {} Nameway packets and verified {signed} signatures",
        report["python_ndn"],
        reports.len()
    );
}

/// What python-ndn 0.5.2 does with Nameway's critical LinkSecurity header (TLV-TYPE 0x0385,
/// low bits 01): its NDNApp parses every LpPacket with `ignore_critical=True`, so it takes the
/// fragment as if the field were not there. The critical bit therefore protects against
/// ndn-cxx, NFD and NDNts peers (which drop the packet), not against a python-ndn app: what
/// keeps ciphertext from apps is that a secure link seals only toward a peer that completed
/// the handshake (docs/secure-forwarding.md). Should python-ndn start honouring the rule, this
/// test fails and the documentation must change with it.
#[test]
fn python_ndn_takes_the_fragment_of_an_lp_packet_with_an_unknown_critical_field() {
    let Some(py) = python() else { return };
    let data = Data::new(name("/secret/item"), Bytes::from_static(b"ciphertext here"));
    let fragment = data.encode();
    let mut lp = LpPacket::wrap(fragment.clone());
    lp.link_security = Some(nameway_wire::lp::LinkSecurity {
        level: "chacha20".parse().unwrap(),
        whole_packet: false,
        key_id: 1,
        counter: 9,
        tag: None,
        group: None,
    });
    let wire = lp.encode();
    // Ours refuses nothing here (it knows the field); an unknown critical field it refuses.
    assert!(LpPacket::decode(&wire).is_ok());
    let out = Command::new(py)
        .arg(repo_root().join("tests/interop/pyndn_lp_critical.py"))
        .arg(hex::encode(&wire))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["delivered"], true, "{v}");
    assert_eq!(v["fragment"], hex::encode(&fragment), "{v}");
}
