//! Group keys on the data path: sealing and opening with a group key, refusals by reason,
//! the rotation's overlap.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use nameway_wire::lp::{LpPacket, SecurityLevel};
use zeroize::Zeroizing;

use super::tests::{ctx, data, handshake};
use super::*;
use crate::secure::{GroupKeyError, GroupKeyGrant, Identity, SecureMode, SecuritySettings};

const LEVEL: SecurityLevel = SecurityLevel::XForro14Poly1305;

fn grant(prefix: &str, id: u64, key: u8, not_before_ms: u64) -> GroupKeyGrant {
    GroupKeyGrant {
        prefix: prefix.parse().unwrap(),
        level: LEVEL,
        id,
        label: format!("{prefix}#{id:016x}"),
        key: Zeroizing::new([key; 32]),
        not_before_ms,
        not_after_ms: u64::MAX,
    }
}

/// A (initiator) and b (responder) with a session; the policy protects /secret with
/// chacha20-poly1305 (the group key's level differs, so the tests see which key sealed).
fn pair(settings: SecuritySettings) -> (SecureLink, SecureLink) {
    let (ida, idb) = (Identity::generate().unwrap(), Identity::generate().unwrap());
    let level = SecurityLevel::ChaCha20Poly1305;
    let a = SecureLink::new(
        ctx(&ida, &[&idb], level, settings.clone()),
        Some(SecureMode::PerPrefix),
    );
    let b = SecureLink::new(ctx(&idb, &[&ida], level, settings), None);
    handshake(&a, &b, 0);
    (a, b)
}

fn header(sealed: &Bytes) -> nameway_wire::lp::LinkSecurity {
    LpPacket::decode(sealed).unwrap().link_security.unwrap()
}

fn refused(link: &SecureLink, why: &str) -> u64 {
    link.ctx
        .group_keys()
        .stats()
        .refused
        .into_iter()
        .find(|(r, _)| *r == why)
        .unwrap()
        .1
}

#[test]
fn a_data_under_a_group_prefix_is_sealed_with_the_group_key_and_opens_at_a_member() {
    let (a, b) = pair(SecuritySettings::default());
    for l in [&a, &b] {
        assert!(l
            .ctx
            .group_keys()
            .install(vec![grant("/secret/video", 0xabc, 7, 0)])
            .is_empty());
    }
    let plain = data("/secret/video/seg=1", b"MARKER group-protected payload");
    let sealed = a.seal(1, plain.clone()).unwrap();
    assert!(!sealed.windows(6).any(|w| w == b"MARKER"));
    let h = header(&sealed);
    assert_eq!(h.level, LEVEL, "the group key's level, not the policy's");
    assert_eq!(h.group.unwrap().key_id, 0xabc);
    assert_eq!(b.open(1, sealed).unwrap(), plain);
    // Outside the group prefix: the session key, as before.
    let other = data("/secret/doc", b"session sealed");
    let sealed = a.seal(1, other.clone()).unwrap();
    assert_eq!(header(&sealed).group, None);
    assert_eq!(header(&sealed).level, SecurityLevel::ChaCha20Poly1305);
    assert_eq!(b.open(1, sealed).unwrap(), other);
    let (sa, sb) = (a.ctx.group_keys().stats(), b.ctx.group_keys().stats());
    assert_eq!((sa.sealed, sb.opened), (1, 1));
    assert_eq!(
        sa.keys,
        vec![("/secret/video#0000000000000abc".into(), 1, 0)]
    );
    assert_eq!(
        sb.keys,
        vec![("/secret/video#0000000000000abc".into(), 0, 1)]
    );
    assert_eq!(b.info().counters.decrypted, 2);
}

#[test]
fn a_group_key_id_the_receiver_does_not_hold_is_refused_and_counted_without_a_rehandshake() {
    let (a, b) = pair(SecuritySettings::default());
    a.ctx
        .group_keys()
        .install(vec![grant("/secret/video", 1, 7, 0)]);
    b.ctx
        .group_keys()
        .install(vec![grant("/secret/video", 2, 7, 0)]);
    let sealed = a.seal(1, data("/secret/video/x", b"payload")).unwrap();
    let (why, hint) = b.open(1, sealed).unwrap_err();
    assert_eq!(why, SecureDrop::UnknownGroupKey);
    assert!(hint.is_none(), "the session is fine: no handshake hint");
    assert_eq!(refused(&b, "unknown_key_id"), 1);
    assert_eq!(b.info().counters.unknown_group_key, 1);
    // A forwarder holding no group key at all refuses it the same way.
    b.ctx.group_keys().install(Vec::new());
    let sealed = a.seal(1, data("/secret/video/y", b"payload")).unwrap();
    assert_eq!(
        b.open(1, sealed).unwrap_err().0,
        SecureDrop::UnknownGroupKey
    );
    assert_eq!(refused(&b, "unknown_key_id"), 2);
}

#[test]
fn during_a_rotation_both_keys_open_and_the_new_one_seals_from_the_overlap_s_middle() {
    let now = super::super::group::unix_ms();
    let (a, b) = pair(SecuritySettings::default());
    let key = |id: u64, key: u8, not_before_ms: u64, not_after_ms: u64| GroupKeyGrant {
        not_after_ms,
        ..grant("/secret/video", id, key, not_before_ms)
    };
    // Rotation just made: k2 valid for 100 ms, k1 cut to expire in 10 s. Both open at b; a
    // still seals with k1 (the overlap's middle is 5 s away), and with k1 alone as well.
    b.ctx.group_keys().install(vec![
        key(1, 7, now - 60_000, now + 10_000),
        key(2, 9, now - 100, u64::MAX),
    ]);
    a.ctx
        .group_keys()
        .install(vec![key(1, 7, now - 60_000, u64::MAX)]);
    let s1 = a.seal(1, data("/secret/video/1", b"one")).unwrap();
    assert_eq!(header(&s1).group.unwrap().key_id, 1);
    assert!(b.open(1, s1).is_ok());
    a.ctx.group_keys().install(vec![
        key(1, 7, now - 60_000, now + 10_000),
        key(2, 9, now - 100, u64::MAX),
    ]);
    let s1 = a.seal(1, data("/secret/video/2", b"two")).unwrap();
    assert_eq!(header(&s1).group.unwrap().key_id, 1, "before the middle");
    assert!(b.open(1, s1).is_ok());
    // Past the overlap's middle (k2 valid for 6 s, k1 expires in 1 s): k2 seals, and opens.
    for l in [&a, &b] {
        l.ctx.group_keys().install(vec![
            key(1, 7, now - 60_000, now + 1_000),
            key(2, 9, now - 6_000, u64::MAX),
        ]);
    }
    let s2 = a.seal(1, data("/secret/video/3", b"three")).unwrap();
    assert_eq!(header(&s2).group.unwrap().key_id, 2);
    assert!(b.open(1, s2).is_ok());
    // Each key's use, carried over the snapshots that replaced it.
    let used: Vec<u64> = b
        .ctx
        .group_keys()
        .stats()
        .keys
        .iter()
        .map(|k| k.2)
        .collect();
    assert_eq!(used, vec![2, 1], "k1 opened two packets, k2 one");
    // After the overlap the receiver holds k2 only: a late k1 packet is refused.
    let (late, member) = pair(SecuritySettings::default());
    late.ctx
        .group_keys()
        .install(vec![key(1, 7, now - 60_000, u64::MAX)]);
    member
        .ctx
        .group_keys()
        .install(vec![key(2, 9, now - 6_000, u64::MAX)]);
    let s = late.seal(1, data("/secret/video/4", b"four")).unwrap();
    assert_eq!(
        member.open(1, s).unwrap_err().0,
        SecureDrop::UnknownGroupKey
    );
}

#[test]
fn a_non_member_s_data_of_a_group_prefix_is_refused_and_counted() {
    // The sender is not a member: the policy protects the prefix, it has no group key, so it
    // seals with the session key. The member refuses it.
    let (a, b) = pair(SecuritySettings::default());
    b.ctx
        .group_keys()
        .install(vec![grant("/secret/video", 1, 7, 0)]);
    let sealed = a.seal(1, data("/secret/video/x", b"payload")).unwrap();
    assert_eq!(header(&sealed).group, None);
    assert_eq!(b.open(1, sealed).unwrap_err().0, SecureDrop::GroupRequired);
    assert_eq!(refused(&b, "not_group_sealed"), 1);
    assert_eq!(b.info().counters.group_required, 1);
    // A sender that guessed the key id but not the key: the tag does not verify.
    a.ctx
        .group_keys()
        .install(vec![grant("/secret/video", 1, 8, 0)]);
    let sealed = a.seal(1, data("/secret/video/y", b"payload")).unwrap();
    assert_eq!(b.open(1, sealed).unwrap_err().0, SecureDrop::BadTag);
    assert_eq!(refused(&b, "bad_tag"), 1);
    // A member's key of a shorter prefix for a Data under a longer group prefix.
    a.ctx.group_keys().install(vec![grant("/secret", 3, 5, 0)]);
    b.ctx.group_keys().install(vec![
        grant("/secret", 3, 5, 0),
        grant("/secret/video", 1, 7, 0),
    ]);
    let sealed = a.seal(1, data("/secret/video/z", b"payload")).unwrap();
    assert_eq!(b.open(1, sealed).unwrap_err().0, SecureDrop::GroupRequired);
    assert_eq!(refused(&b, "wrong_prefix"), 1);
    assert_eq!(b.ctx.group_keys().stats().opened, 0);
}

#[test]
fn a_replayed_group_sealed_packet_is_refused_and_rekeys_change_the_salt() {
    let (a, b) = pair(SecuritySettings {
        rekey_packets: 2,
        ..SecuritySettings::default()
    });
    for l in [&a, &b] {
        l.ctx
            .group_keys()
            .install(vec![grant("/secret/video", 1, 7, 0)]);
    }
    let sealed = a.seal(1, data("/secret/video/x", b"payload")).unwrap();
    assert!(b.open(1, sealed.clone()).is_ok());
    assert_eq!(b.open(1, sealed).unwrap_err().0, SecureDrop::Replay);
    assert_eq!(refused(&b, "replay"), 1);
    // Five packets over three epochs: each epoch its own salt (the counter, which is the
    // nonce, starts again), and every packet opens.
    let mut salts = Vec::new();
    for i in 0..5 {
        let s = a
            .seal(1, data(&format!("/secret/video/{i}"), b"payload"))
            .unwrap();
        salts.push(header(&s).group.unwrap().salt);
        assert!(b.open(1, s).is_ok(), "{i}");
    }
    salts.dedup();
    assert_eq!(salts.len(), 3, "one salt per epoch");
    assert_eq!(b.ctx.group_keys().stats().opened, 6);
}

#[test]
fn keys_without_integrity_stay_on_the_session_keys() {
    let (a, b) = pair(SecuritySettings::default());
    let mut g = grant("/secret/video", 1, 7, 0);
    g.level = SecurityLevel::ChaCha20;
    let errors = a.ctx.group_keys().install(vec![g]);
    assert!(
        matches!(errors[..], [GroupKeyError::NotAead(..)]),
        "{errors:?}"
    );
    assert!(a.ctx.group_keys().is_empty());
    let plain = data("/secret/video/x", b"payload");
    let sealed = a.seal(1, plain.clone()).unwrap();
    assert_eq!(header(&sealed).group, None);
    assert_eq!(b.open(1, sealed).unwrap(), plain);
}
