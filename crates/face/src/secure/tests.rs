#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use nameway_wire::lp::{LpPacket, SecurityLevel};
use nameway_wire::{Data, Name};

use super::*;
use crate::secure::{Identity, LevelLookup, SecureMode, SecurityContext, SecuritySettings};

#[derive(Debug)]
struct Prefixes(Vec<(Name, SecurityLevel)>);

impl LevelLookup for Prefixes {
    fn level(&self, name: &Name) -> SecurityLevel {
        self.0
            .iter()
            .filter(|(p, _)| p.is_prefix_of(name))
            .max_by_key(|(p, _)| p.len())
            .map_or(SecurityLevel::None, |(_, l)| *l)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn policy(level: SecurityLevel) -> Arc<dyn LevelLookup> {
    Arc::new(Prefixes(vec![
        ("/secret".parse().unwrap(), level),
        ("/public".parse().unwrap(), SecurityLevel::None),
    ]))
}

pub(super) fn ctx(
    id: &Identity,
    trusts: &[&Identity],
    level: SecurityLevel,
    settings: SecuritySettings,
) -> Arc<SecurityContext> {
    Arc::new(SecurityContext::new(
        id.clone(),
        trusts.iter().map(|i| i.public_key()),
        policy(level),
        settings,
    ))
}

pub(super) fn data(name: &str, content: &[u8]) -> Bytes {
    Data::new(name.parse().unwrap(), Bytes::copy_from_slice(content)).encode()
}

/// Runs a handshake between an initiator `a` and a responder `b` to completion.
pub(super) fn handshake(a: &SecureLink, b: &SecureLink, now: u64) {
    let init = a.poll(now).expect("init");
    let resp = b.on_handshake(now, &hs_value(&init)).expect("response");
    let fin = a.on_handshake(now, &hs_value(&resp)).expect("finish");
    let confirm = b.on_handshake(now, &hs_value(&fin)).expect("confirm");
    assert!(a.on_handshake(now, &hs_value(&confirm)).is_none());
    assert_eq!(a.info().state, LinkState::Established);
    assert_eq!(b.info().state, LinkState::Established);
}

fn hs_value(pkt: &Bytes) -> Bytes {
    LpPacket::decode(pkt).unwrap().link_handshake.unwrap()
}

struct Pair {
    a: SecureLink,
    b: SecureLink,
    ida: Identity,
    idb: Identity,
}

fn pair(level: SecurityLevel, mode: SecureMode, settings: SecuritySettings) -> Pair {
    let (ida, idb) = (Identity::generate().unwrap(), Identity::generate().unwrap());
    let a = SecureLink::new(ctx(&ida, &[&idb], level, settings.clone()), Some(mode));
    let b = SecureLink::new(ctx(&idb, &[&ida], level, settings), None);
    handshake(&a, &b, 0);
    Pair { a, b, ida, idb }
}

#[test]
fn every_level_hides_the_secret_content_and_restores_it() {
    for level in SecurityLevel::ALL.into_iter().filter(|l| l.encrypts()) {
        let p = pair(level, SecureMode::PerPrefix, SecuritySettings::default());
        for (from, to) in [(&p.a, &p.b), (&p.b, &p.a)] {
            let plain = data(
                "/secret/doc",
                b"MARKER-the secret payload, quite long enough",
            );
            let sealed = from.seal(1, plain.clone()).unwrap();
            // CPA only permutes bytes: a run of the marker can survive by chance, so it is
            // only required to change the payload.
            if level != SecurityLevel::Cpa {
                assert!(
                    !sealed.windows(6).any(|w| w == b"MARKER"),
                    "{level}: marker in clear"
                );
            }
            assert!(!sealed
                .windows(20)
                .any(|w| w == &b"MARKER-the secret payload"[..20]));
            let lp = LpPacket::decode(&sealed).unwrap();
            assert_eq!(lp.link_security.unwrap().level, level);
            assert_eq!(to.open(1, sealed).unwrap(), plain, "{level}");
            // Public names go in clear, unchanged.
            let public = data("/public/doc", b"MARKER in clear");
            assert_eq!(from.seal(1, public.clone()).unwrap(), public);
            assert_eq!(to.open(1, public.clone()).unwrap(), public);
        }
        let c = p.b.info().counters;
        assert_eq!((c.encrypted, c.decrypted), (1, 1), "{level}");
    }
}

#[test]
fn pit_tokens_and_congestion_marks_survive_and_are_authenticated() {
    let p = pair(
        SecurityLevel::ChaCha20Poly1305,
        SecureMode::PerPrefix,
        SecuritySettings::default(),
    );
    let inner = data("/secret/x", b"payload");
    let wrapped = LpPacket {
        pit_token: Some(Bytes::from_static(b"tok1")),
        congestion_mark: Some(1),
        fragment: Some(inner),
        ..LpPacket::default()
    }
    .encode();
    let sealed = p.a.seal(1, wrapped.clone()).unwrap();
    assert_eq!(
        p.b.open(1, sealed.clone()).map_err(|e| e.0),
        Ok(wrapped.clone())
    );
    // A changed PitToken breaks the tag.
    let sealed = p.a.seal(1, wrapped).unwrap();
    let mut lp = LpPacket::decode(&sealed).unwrap();
    lp.pit_token = Some(Bytes::from_static(b"tok2"));
    assert_eq!(p.b.open(1, lp.encode()).unwrap_err().0, SecureDrop::BadTag);
}

#[test]
fn aead_levels_drop_every_flipped_bit_and_every_replay() {
    for level in [
        SecurityLevel::ChaCha20Poly1305,
        SecurityLevel::XForro14Poly1305,
        SecurityLevel::Aes256Gcm,
    ] {
        let p = pair(level, SecureMode::PerPrefix, SecuritySettings::default());
        let plain = data("/secret/doc", &[7u8; 300]);
        let sealed = p.a.seal(1, plain.clone()).unwrap();
        let mut bad = 0;
        // Flip each bit of the fragment and of the security header's tag and counter.
        for i in 0..sealed.len() * 8 {
            let mut v = sealed.to_vec();
            v[i / 8] ^= 1 << (i % 8);
            match p.b.open(1, Bytes::from(v)) {
                Ok(out) => panic!("{level}: bit {i} flipped and delivered: {out:?}"),
                Err(_) => bad += 1,
            }
        }
        assert_eq!(bad, sealed.len() * 8);
        assert!(p.b.info().counters.bad_tag > 0);
        assert_eq!(p.b.open(1, sealed.clone()).unwrap(), plain);
        assert_eq!(p.b.open(1, sealed).unwrap_err().0, SecureDrop::Replay);
        assert_eq!(p.b.info().counters.replay, 1);
    }
}

#[test]
fn clear_data_for_a_protected_name_is_refused() {
    let p = pair(
        SecurityLevel::XForro14Poly1305,
        SecureMode::PerPrefix,
        SecuritySettings::default(),
    );
    let plain = data("/secret/doc", b"forged");
    assert_eq!(p.b.open(1, plain).unwrap_err().0, SecureDrop::ClearRefused);
    assert_eq!(p.b.info().counters.clear_refused, 1);
}

#[test]
fn link_wide_mode_encrypts_every_packet_whole() {
    let p = pair(
        SecurityLevel::None,
        SecureMode::LinkWide,
        SecuritySettings::default(),
    );
    assert_eq!(p.b.info().mode, Some(SecureMode::LinkWide));
    let interest = nameway_wire::Interest::new("/public/MARKER".parse().unwrap()).encode();
    let sealed = p.a.seal(1, interest.clone()).unwrap();
    assert!(!sealed.windows(6).any(|w| w == b"MARKER"));
    assert!(
        LpPacket::decode(&sealed)
            .unwrap()
            .link_security
            .unwrap()
            .whole_packet
    );
    assert_eq!(p.b.open(1, sealed).unwrap(), interest);
    // The responder answers in link-wide mode too, and refuses clear packets.
    let d = data("/public/x", b"MARKER");
    let back = p.b.seal(1, d.clone()).unwrap();
    assert!(!back.windows(6).any(|w| w == b"MARKER"));
    assert_eq!(p.a.open(1, back).unwrap(), d);
    assert_eq!(p.a.open(1, d).unwrap_err().0, SecureDrop::ClearRefused);
}

#[test]
fn rekeys_lose_nothing_even_reordered_across_the_boundary() {
    let settings = SecuritySettings {
        rekey_packets: 100,
        ..SecuritySettings::default()
    };
    let p = pair(
        SecurityLevel::XForro14Poly1305,
        SecureMode::PerPrefix,
        settings,
    );
    let mut sealed = Vec::new();
    for i in 0..1000u32 {
        let plain = data(&format!("/secret/{i}"), &i.to_be_bytes());
        sealed.push((plain.clone(), p.a.seal(u64::from(i), plain).unwrap()));
    }
    // Swap neighbours so that packets of an epoch arrive after the next epoch's first ones.
    for i in (0..sealed.len() - 1).step_by(2) {
        sealed.swap(i, i + 1);
    }
    for (plain, s) in sealed {
        assert_eq!(p.b.open(10, s).unwrap(), plain);
    }
    let (a, b) = (p.a.info(), p.b.info());
    assert_eq!(a.counters.rekeys, 9);
    assert_eq!(b.counters.decrypted, 1000);
    assert_eq!(a.tx_key_id.unwrap() & 0xffff, 9);
    assert!(b.rx_key_ids.iter().any(|k| k & 0xffff == 9));
}

/// A pair that rekeys every second and keeps the previous epoch for `overlap`.
fn rekeying_pair(overlap: Duration) -> Pair {
    let settings = SecuritySettings {
        rekey_interval: Duration::from_secs(1),
        overlap,
        ..SecuritySettings::default()
    };
    pair(
        SecurityLevel::ChaCha20Poly1305,
        SecureMode::PerPrefix,
        settings,
    )
}

#[test]
fn a_rekey_by_time_is_accepted_and_old_keys_retire_after_the_overlap() {
    let p = rekeying_pair(Duration::from_secs(2));
    let old1 = p.a.seal(10, data("/secret/a", b"1")).unwrap();
    let old2 = p.a.seal(10, data("/secret/b", b"2")).unwrap();
    let new = p.a.seal(1500, data("/secret/c", b"3")).unwrap();
    assert_eq!(p.a.info().counters.rekeys, 1);
    assert!(p.b.open(1600, new).is_ok());
    assert!(
        p.b.open(1700, old1.clone()).is_ok(),
        "late packet of the previous epoch"
    );
    assert_eq!(p.b.open(1700, old1).unwrap_err().0, SecureDrop::Replay);
    // After the overlap the previous epoch's key is gone.
    assert_eq!(p.b.open(9000, old2).unwrap_err().0, SecureDrop::UnknownKey);
}

#[test]
fn an_overlap_too_long_to_count_keeps_the_previous_epoch_instead_of_overflowing() {
    // Duration::MAX: now + overlap overflowed (a panic in a debug build; in release the
    // previous epoch wrapped round and retired at once).
    let p = rekeying_pair(Duration::MAX);
    let old = p.a.seal(10, data("/secret/a", b"1")).unwrap();
    let new = p.a.seal(1500, data("/secret/c", b"3")).unwrap();
    assert_eq!(p.a.info().counters.rekeys, 1);
    assert!(p.b.open(1600, new).is_ok());
    assert!(
        p.b.open(1_000_000_000, old).is_ok(),
        "the previous epoch never retires"
    );
}

#[test]
fn forged_key_ids_do_not_move_the_receiver() {
    let p = pair(
        SecurityLevel::ChaCha20Poly1305,
        SecureMode::PerPrefix,
        SecuritySettings::default(),
    );
    let sealed = p.a.seal(1, data("/secret/a", b"1")).unwrap();
    let mut lp = LpPacket::decode(&sealed).unwrap();
    let mut sec = lp.link_security.unwrap();
    sec.key_id += 3; // three epochs ahead, with a tag that cannot verify
    lp.link_security = Some(sec);
    assert_eq!(p.b.open(1, lp.encode()).unwrap_err().0, SecureDrop::BadTag);
    assert_eq!(
        p.b.info().rx_key_ids.len(),
        1,
        "the current epoch is unchanged"
    );
    assert!(p.b.open(1, sealed).is_ok());
}

#[test]
fn untrusted_peers_are_refused_on_both_sides() {
    let (ida, idb, idc) = (
        Identity::generate().unwrap(),
        Identity::generate().unwrap(),
        Identity::generate().unwrap(),
    );
    let settings = SecuritySettings::default();
    let level = SecurityLevel::ChaCha20Poly1305;
    // The responder does not trust the initiator.
    let a = SecureLink::new(
        ctx(&ida, &[&idb], level, settings.clone()),
        Some(SecureMode::PerPrefix),
    );
    let b = SecureLink::new(ctx(&idb, &[&idc], level, settings.clone()), None);
    let init = a.poll(0).unwrap();
    let resp = b.on_handshake(0, &hs_value(&init)).unwrap();
    let fin = a.on_handshake(0, &hs_value(&resp)).unwrap();
    assert!(b.on_handshake(0, &hs_value(&fin)).is_none());
    assert_eq!(b.info().state, LinkState::Refused);
    assert_eq!(b.info().counters.untrusted_peer, 1);
    // What the initiator then sends is dropped as unknown key, never delivered.
    let sealed = a.seal(1, data("/secret/x", b"MARKER")).unwrap();
    assert_eq!(b.open(1, sealed).unwrap_err().0, SecureDrop::UnknownKey);
    // The initiator does not call that a session: no Confirm came.
    assert_eq!(a.info().state, LinkState::Handshaking);
    assert!(!a.has_session());
    // It sends its Finish again, eight times in all, then gives up: refused, counted, its
    // keys gone; after the back-off it starts again.
    let mut finishes = 1;
    let mut t = 0;
    while a.info().state == LinkState::Handshaking {
        t += 1000;
        match a.poll(t) {
            Some(again) => {
                assert_eq!(again, fin);
                assert!(b.on_handshake(t, &hs_value(&again)).is_none());
                finishes += 1;
            }
            None => break,
        }
    }
    assert_eq!(finishes, 8);
    assert_eq!(a.info().state, LinkState::Refused);
    assert_eq!(a.info().counters.unconfirmed, 1);
    assert!(!a.has_session());
    assert_eq!(
        a.seal(t, data("/secret/x", b"MARKER")).unwrap_err(),
        SecureDrop::NoSession
    );
    assert!(a.poll(t + 1000).is_none(), "no retry before the back-off");
    let init = a.poll(t + 10_000).expect("a new Init after the back-off");
    assert_ne!(init, fin);
    // The initiator does not trust the responder.
    let a = SecureLink::new(
        ctx(&ida, &[&idc], level, settings.clone()),
        Some(SecureMode::PerPrefix),
    );
    let b = SecureLink::new(ctx(&idb, &[&ida], level, settings), None);
    let init = a.poll(0).unwrap();
    let resp = b.on_handshake(0, &hs_value(&init)).unwrap();
    assert!(a.on_handshake(0, &hs_value(&resp)).is_none());
    assert_eq!(a.info().state, LinkState::Refused);
    assert_eq!(a.info().counters.untrusted_peer, 1);
    assert_eq!(
        a.seal(1, data("/secret/x", b"MARKER")).unwrap_err(),
        SecureDrop::NoSession
    );
    // No retry before the back-off.
    assert!(a.poll(1000).is_none());
    assert!(a.poll(20_000).is_some());
}

#[test]
fn lost_handshake_messages_are_retransmitted() {
    let (ida, idb) = (Identity::generate().unwrap(), Identity::generate().unwrap());
    let s = SecuritySettings::default();
    let level = SecurityLevel::ChaCha20Poly1305;
    let a = SecureLink::new(
        ctx(&ida, &[&idb], level, s.clone()),
        Some(SecureMode::PerPrefix),
    );
    let b = SecureLink::new(ctx(&idb, &[&ida], level, s), None);
    let init = a.poll(0).unwrap();
    assert!(a.poll(500).is_none());
    assert_eq!(a.poll(1000).unwrap(), init, "Init again");
    let resp = b.on_handshake(1000, &hs_value(&init)).unwrap();
    // The Response is lost; the Init comes again and gets the same Response.
    assert_eq!(b.on_handshake(2000, &hs_value(&init)).unwrap(), resp);
    let fin = a.on_handshake(2000, &hs_value(&resp)).unwrap();
    // The Finish is lost: A retransmits it and B completes.
    assert_eq!(a.poll(3000).unwrap(), fin);
    let confirm = b.on_handshake(3000, &hs_value(&fin)).unwrap();
    // The Confirm is lost too: the Finish again gets the same Confirm.
    assert_eq!(b.on_handshake(4000, &hs_value(&fin)).unwrap(), confirm);
    a.on_handshake(4000, &hs_value(&confirm));
    assert!(a.poll(10_000).is_none(), "nothing left to retransmit");
    let sealed = a.seal(5000, data("/secret/x", b"y")).unwrap();
    assert!(b.open(5000, sealed).is_ok());
}

/// B of a ChaCha20-Poly1305 pair after a restart: the same identity, no session.
fn restarted_responder(p: &Pair) -> SecureLink {
    SecureLink::new(
        ctx(
            &p.idb,
            &[&p.ida],
            SecurityLevel::ChaCha20Poly1305,
            SecuritySettings::default(),
        ),
        None,
    )
}

#[test]
fn a_peer_that_lost_its_keys_gets_a_new_handshake() {
    let p = pair(
        SecurityLevel::ChaCha20Poly1305,
        SecureMode::PerPrefix,
        SecuritySettings::default(),
    );
    // B restarts: a fresh link with no session.
    let b2 = restarted_responder(&p);
    let sealed = p.a.seal(5000, data("/secret/x", b"y")).unwrap();
    let (why, hint) = b2.open(5000, sealed).unwrap_err();
    assert_eq!(why, SecureDrop::UnknownKey);
    let init = p.a.on_handshake(5000, &hs_value(&hint.unwrap())).unwrap();
    let resp = b2.on_handshake(5000, &hs_value(&init)).unwrap();
    let fin = p.a.on_handshake(5000, &hs_value(&resp)).unwrap();
    b2.on_handshake(5000, &hs_value(&fin)).unwrap();
    let sealed = p.a.seal(5001, data("/secret/x", b"z")).unwrap();
    assert!(b2.open(5001, sealed).is_ok());
}

#[test]
fn a_restarted_responder_that_said_so_gets_a_new_handshake_and_only_then() {
    let p = pair(
        SecurityLevel::ChaCha20Poly1305,
        SecureMode::PerPrefix,
        SecuritySettings::default(),
    );
    // B restarts; with nothing protected to send, A's session looks fine to A.
    let b2 = restarted_responder(&p);
    for t in [1000, 5000, 60_000] {
        assert!(p.a.poll(t).is_none(), "a session: no handshake unasked");
    }
    // The responder cannot start one: the request is refused there.
    assert!(!b2.request_rehandshake());
    // B's hello answers said it holds no session: A's next poll starts one.
    assert!(p.a.request_rehandshake());
    let init = p.a.poll(60_100).expect("a new Init");
    // Until it completes, the old session still seals (nothing is dropped meanwhile).
    assert!(p.a.seal(60_100, data("/secret/x", b"old")).is_ok());
    let resp = b2.on_handshake(60_100, &hs_value(&init)).unwrap();
    let fin = p.a.on_handshake(60_100, &hs_value(&resp)).unwrap();
    let confirm = b2.on_handshake(60_100, &hs_value(&fin)).unwrap();
    assert!(p.a.on_handshake(60_100, &hs_value(&confirm)).is_none());
    let sealed = p.a.seal(60_101, data("/secret/x", b"z")).unwrap();
    assert!(b2.open(60_101, sealed).is_ok(), "the new session works");
    // Asked again at once (spoofed or stale answers): at most one every 5 s.
    assert!(p.a.request_rehandshake());
    assert!(p.a.poll(61_000).is_none());
    assert!(p.a.request_rehandshake());
    assert!(p.a.poll(65_200).is_some());
}

/// Where `secret` shows in `text`, if it does: any run of 8 of its bytes as hexadecimal (either
/// case, with or without separators or padding), as Rust prints a byte slice (`{:?}`, `{:x?}`, pretty or
/// not), or any 12 characters from the middle of its base64 encodings (standard or URL-safe,
/// at each of the three alignments a byte string can start at).
fn shown_at(text: &str, secret: &[u8]) -> Option<String> {
    let lower = text.to_lowercase();
    let bare: String = lower
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == ',')
        .collect();
    let hex_only: String = lower.chars().filter(char::is_ascii_hexdigit).collect();
    for run in secret.windows(8) {
        let hex = hex::encode(run);
        let decimal: Vec<String> = run.iter().map(u8::to_string).collect();
        let short_hex: Vec<String> = run.iter().map(|b| format!("{b:x}")).collect();
        let prefixed: Vec<String> = run.iter().map(|b| format!("0x{b:x}")).collect();
        for (what, needle, hay) in [
            ("hex", hex, &hex_only),
            ("{:?}", decimal.join(","), &bare),
            ("{:x?}", short_hex.join(","), &bare),
            ("{:#x?}", prefixed.join(","), &bare),
        ] {
            if hay.contains(&needle) {
                return Some(format!("{what}: {needle}"));
            }
        }
    }
    for skip in 0..3 {
        let tail = secret.get(skip..).unwrap_or_default();
        for encoding in [&data_encoding::BASE64, &data_encoding::BASE64URL] {
            let b64 = encoding.encode(tail);
            // The first and last characters depend on the bytes around the secret.
            let middle = b64.get(4..16).unwrap_or_default();
            if !middle.is_empty() && text.contains(middle) {
                return Some(format!("base64: {middle}"));
            }
        }
    }
    None
}

#[test]
fn the_key_detector_finds_every_rendering() {
    let key: Vec<u8> = (0..32u8)
        .map(|i| i.wrapping_mul(37).wrapping_add(200))
        .collect();
    let renderings = [
        format!("key {}", hex::encode(&key)),
        format!("key {}", hex::encode_upper(&key)),
        format!("{key:?}"),
        format!("{key:#?}"),
        format!("{key:x?}"),
        format!("{key:#x?}"),
        format!("{:02x?}", &key[3..14]),
        key.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":"),
        data_encoding::BASE64.encode(&key),
        format!("={}", data_encoding::BASE64URL.encode(&key[1..])),
        format!("k:{}", data_encoding::BASE64.encode(&key[2..])),
    ];
    for r in &renderings {
        assert!(shown_at(r, &key).is_some(), "missed: {r}");
    }
    assert_eq!(shown_at(&format!("{:?}", &key[..7]), &key), None);
}

#[test]
fn management_output_never_shows_key_material() {
    let p = pair(
        SecurityLevel::ChaCha20Poly1305,
        SecureMode::PerPrefix,
        SecuritySettings::default(),
    );
    let context = ctx(
        &p.ida,
        &[&p.idb],
        SecurityLevel::ChaCha20Poly1305,
        SecuritySettings::default(),
    );
    let (info_a, info_b) = (p.a.info(), p.b.info());
    let shown = [
        format!("{:?}\n{:#?}", p.a, p.b),
        format!("{info_a:?}\n{info_b:#?}"),
        format!("{:?}\n{:#?}", p.ida, p.idb),
        format!("{context:?}\n{context:#?}"),
        info_a.peer.map(|k| k.to_string()).unwrap_or_default(),
    ]
    .join("\n");
    // What management is meant to show is found: the peer's public key.
    assert!(shown_at(&shown, &p.idb.public_key().0).is_some(), "{shown}");
    let mut secrets = vec![
        ("identity A", p.ida.secret().to_vec()),
        ("identity B", p.idb.secret().to_vec()),
    ];
    secrets.extend(p.a.secrets().into_iter().map(|s| ("link A", s)));
    secrets.extend(p.b.secrets().into_iter().map(|s| ("link B", s)));
    // Both directions, base and level keys, on both sides.
    assert!(secrets.len() >= 2 + 2 * 2 * 2, "{} secrets", secrets.len());
    for (whose, secret) in &secrets {
        if let Some(at) = shown_at(&shown, secret) {
            panic!("{whose} secret shown ({at}) in:\n{shown}");
        }
    }
}

#[test]
fn sealed_packets_survive_fragmentation_and_reassembly() {
    use crate::link::{LinkRx, LinkTx, RxOutcome};
    use nameway_wire::lp::ReassemblerConfig;
    for mode in [SecureMode::PerPrefix, SecureMode::LinkWide] {
        let p = pair(
            SecurityLevel::XForro14Poly1305,
            mode,
            SecuritySettings::default(),
        );
        let plain = data("/secret/big", &[0x42; 5000]);
        let sealed = p.a.seal(1, plain.clone()).unwrap();
        let mut tx = LinkTx::new(Some(1200), 77);
        let frags = tx.on_send(sealed);
        assert!(frags.len() >= 5, "{mode:?}: {} fragments", frags.len());
        let mut rx = LinkRx::new(Some(ReassemblerConfig::default()));
        let mut whole = None;
        // Out of order, as UDP may deliver them.
        for f in frags.iter().rev() {
            if let RxOutcome::Deliver(w) = rx.on_receive(1, f.clone()) {
                whole = Some(w);
            }
        }
        let whole = whole.expect("reassembled");
        assert_eq!(p.b.open(1, whole).map_err(|e| e.0), Ok(plain), "{mode:?}");
    }
}

#[test]
fn simultaneous_initiations_end_in_one_session_used_both_ways() {
    let (ida, idb) = (Identity::generate().unwrap(), Identity::generate().unwrap());
    let s = SecuritySettings::default();
    let level = SecurityLevel::ChaCha20Poly1305;
    let a = SecureLink::new(
        ctx(&ida, &[&idb], level, s.clone()),
        Some(SecureMode::PerPrefix),
    );
    let b = SecureLink::new(ctx(&idb, &[&ida], level, s), Some(SecureMode::PerPrefix));
    // Both send Init; each gets the other's; deliver everything until nothing is left.
    let mut to_b = vec![a.poll(0).unwrap()];
    let mut to_a = vec![b.poll(0).unwrap()];
    for _ in 0..10 {
        let next_a: Vec<Bytes> = to_b
            .drain(..)
            .filter_map(|m| b.on_handshake(0, &hs_value(&m)))
            .collect();
        let next_b: Vec<Bytes> = to_a
            .drain(..)
            .filter_map(|m| a.on_handshake(0, &hs_value(&m)))
            .collect();
        to_a = next_a;
        to_b = next_b;
    }
    let (ia, ib) = (a.info(), b.info());
    assert_eq!(ia.state, LinkState::Established);
    assert_eq!(ib.state, LinkState::Established);
    assert_eq!(ia.tx_key_id, ib.tx_key_id, "one session, used both ways");
    assert_eq!(ia.counters.handshakes_completed, 1);
    assert_eq!(ib.counters.handshakes_completed, 1);
    // Long after any overlap, both directions still open.
    let d = data("/secret/x", b"1");
    assert_eq!(
        b.open(60_000, a.seal(60_000, d.clone()).unwrap())
            .map_err(|e| e.0),
        Ok(d.clone())
    );
    assert_eq!(
        a.open(60_000, b.seal(60_000, d.clone()).unwrap())
            .map_err(|e| e.0),
        Ok(d)
    );
}
