//! Portable Forro14: the quarter-round, rounds and block function of spec §5–§7,
//! one block at a time. This is the reference every SIMD path is tested against.

use zeroize::Zeroize;

use super::{BLOCK_LEN, DOUBLE_ROUNDS};

/// The quarter-round Q(a, b, c, d, e) of spec §5, literally. All five words
/// are updated, including the "pollen" word `e`.
#[inline(always)]
pub(crate) fn quarter_round(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize, e: usize) {
    x[d] = x[d].wrapping_add(x[e]);
    x[c] ^= x[d];
    x[b] = x[b].wrapping_add(x[c]).rotate_left(10);
    x[a] = x[a].wrapping_add(x[b]);
    x[e] ^= x[a];
    x[d] = x[d].wrapping_add(x[e]).rotate_left(27);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] ^= x[c];
    x[a] = x[a].wrapping_add(x[b]).rotate_left(8);
}

/// One column round followed by one diagonal round (spec §6), in order.
#[inline(always)]
pub(crate) fn double_round(x: &mut [u32; 16]) {
    macro_rules! qr {
        ($a:literal, $b:literal, $c:literal, $d:literal, $e:literal) => {
            quarter_round(x, $a, $b, $c, $d, $e)
        };
    }
    forro_double_round!(qr);
}

/// The 14 rounds (7 double rounds) without feed-forward.
#[inline]
pub(crate) fn rounds(x: &mut [u32; 16]) {
    for _ in 0..DOUBLE_ROUNDS {
        double_round(x);
    }
}

/// The block function of spec §7: rounds plus feed-forward, as words.
/// `state` must already hold the counter in words 4 and 5.
#[inline]
pub(crate) fn block_words(state: &[u32; 16]) -> [u32; 16] {
    let mut w = *state;
    rounds(&mut w);
    for (o, s) in w.iter_mut().zip(state) {
        *o = o.wrapping_add(*s);
    }
    w
}

/// Two block functions at once, `a` and `b` interleaved quarter-round by
/// quarter-round. Each block is one serial chain (spec §6), so the core runs
/// the two chains side by side: two blocks cost about the latency of one.
#[inline]
pub(crate) fn block_words_x2(a: &[u32; 16], b: &[u32; 16]) -> ([u32; 16], [u32; 16]) {
    let (mut x, mut y) = (*a, *b);
    for _ in 0..DOUBLE_ROUNDS {
        macro_rules! qr2 {
            ($a:literal, $b:literal, $c:literal, $d:literal, $e:literal) => {
                quarter_round(&mut x, $a, $b, $c, $d, $e);
                quarter_round(&mut y, $a, $b, $c, $d, $e);
            };
        }
        forro_double_round!(qr2);
    }
    for ((o, p), (s, t)) in x.iter_mut().zip(y.iter_mut()).zip(a.iter().zip(b)) {
        *o = o.wrapping_add(*s);
        *p = p.wrapping_add(*t);
    }
    (x, y)
}

/// XORs the keystream for consecutive counters starting at `counter` into
/// `buf`, two blocks at a time ([`block_words_x2`]). Words 4 and 5 of `state`
/// are ignored and replaced by the counter. The caller has checked that the
/// counter does not wrap within `buf`.
pub(crate) fn xor_keystream(state: &[u32; 16], counter: u64, buf: &mut [u8]) {
    let (mut s, mut t) = (*state, *state);
    let mut ctr = counter;
    let mut pairs = buf.chunks_exact_mut(2 * BLOCK_LEN);
    for pair in &mut pairs {
        set_counter(&mut s, ctr);
        set_counter(&mut t, ctr.wrapping_add(1));
        let (mut k0, mut k1) = block_words_x2(&s, &t);
        let (b0, b1) = pair.split_at_mut(BLOCK_LEN);
        xor_words(b0, &k0);
        xor_words(b1, &k1);
        k0.zeroize();
        k1.zeroize();
        ctr = ctr.wrapping_add(2);
    }
    let tail = pairs.into_remainder();
    if !tail.is_empty() {
        set_counter(&mut s, ctr);
        set_counter(&mut t, ctr.wrapping_add(1));
        let mut ks = [0u8; 2 * BLOCK_LEN];
        let (ks0, ks1) = ks.split_at_mut(BLOCK_LEN);
        if tail.len() > BLOCK_LEN {
            let (mut k0, mut k1) = block_words_x2(&s, &t);
            write_words(ks0, &k0);
            write_words(ks1, &k1);
            k0.zeroize();
            k1.zeroize();
        } else {
            let mut k0 = block_words(&s);
            write_words(ks0, &k0);
            k0.zeroize();
        }
        for (b, k) in tail.iter_mut().zip(ks.iter()) {
            *b ^= k;
        }
        ks.zeroize();
    }
    s.zeroize();
    t.zeroize();
}

/// Writes one block of keystream words into 64 bytes, little-endian.
#[inline(always)]
fn write_words(bytes: &mut [u8], ks: &[u32; 16]) {
    for (b, k) in bytes.chunks_exact_mut(4).zip(ks) {
        b.copy_from_slice(&k.to_le_bytes());
    }
}

/// XORs one block of keystream words into 64 bytes, little-endian.
#[inline(always)]
fn xor_words(bytes: &mut [u8], ks: &[u32; 16]) {
    for (b, k) in bytes.chunks_exact_mut(4).zip(ks) {
        let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) ^ k;
        b.copy_from_slice(&v.to_le_bytes());
    }
}

/// Writes a 64-bit block counter into words 4 (low) and 5 (high).
#[inline(always)]
pub(crate) fn set_counter(s: &mut [u32; 16], counter: u64) {
    s[4] = counter as u32;
    s[5] = (counter >> 32) as u32;
}

/// Little-endian serialisation of 16 words.
#[inline]
pub(crate) fn serialize(w: &[u32; 16]) -> [u8; BLOCK_LEN] {
    let mut out = [0u8; BLOCK_LEN];
    for (o, v) in out.chunks_exact_mut(4).zip(w) {
        o.copy_from_slice(&v.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forro14::{initial_state, le_words};

    fn vectors() -> serde_json::Value {
        serde_json::from_str(include_str!("../../tests/vectors/forro14.json")).unwrap()
    }

    fn word(v: &serde_json::Value) -> u32 {
        u32::from_str_radix(v.as_str().unwrap(), 16).unwrap()
    }

    fn words(v: &serde_json::Value) -> [u32; 16] {
        let list: Vec<u32> = v.as_array().unwrap().iter().map(word).collect();
        list.try_into().unwrap()
    }

    #[test]
    fn quarter_round_vector() {
        let v = vectors();
        let q = &v["quarter_round"];
        let mut x = [0u32; 16];
        // Place (a, b, c, d, e) at positions (0, 4, 8, 12, 3), as Q(0,4,8,12,3).
        for (pos, name) in [(0, "a"), (4, "b"), (8, "c"), (12, "d"), (3, "e")] {
            x[pos] = word(&q["input"][name]);
        }
        quarter_round(&mut x, 0, 4, 8, 12, 3);
        for (pos, name) in [(0, "a"), (4, "b"), (8, "c"), (12, "d"), (3, "e")] {
            assert_eq!(x[pos], word(&q["output"][name]), "word {name}");
        }
    }

    #[test]
    fn block_trace_intermediate_states() {
        let v = vectors();
        let t = &v["block_trace"];
        let key: [u8; 32] = hex::decode(t["key"].as_str().unwrap())
            .unwrap()
            .try_into()
            .unwrap();
        let nonce = hex::decode(t["nonce"].as_str().unwrap()).unwrap();
        let ctr = t["counter"].as_u64().unwrap();
        let [n0, n1] = le_words::<2>(&nonce);
        let s = initial_state(&le_words::<8>(&key), ctr as u32, (ctr >> 32) as u32, n0, n1);
        assert_eq!(s, words(&t["state_initial"]));

        let mut x = s;
        quarter_round(&mut x, 0, 4, 8, 12, 3);
        assert_eq!(
            x,
            words(&t["state_after_first_quarter_round_Q(0,4,8,12,3)"])
        );

        let mut x = s;
        quarter_round(&mut x, 0, 4, 8, 12, 3);
        quarter_round(&mut x, 1, 5, 9, 13, 0);
        quarter_round(&mut x, 2, 6, 10, 14, 1);
        quarter_round(&mut x, 3, 7, 11, 15, 2);
        assert_eq!(x, words(&t["state_after_first_column_round"]));

        let mut x = s;
        double_round(&mut x);
        assert_eq!(x, words(&t["state_after_first_double_round"]));

        let mut x = s;
        rounds(&mut x);
        assert_eq!(x, words(&t["state_after_14_rounds_before_feed_forward"]));

        let out = block_words(&s);
        assert_eq!(out, words(&t["state_after_feed_forward"]));
        assert_eq!(
            hex::encode(serialize(&out)),
            t["serialized_block"].as_str().unwrap()
        );
    }

    #[test]
    fn two_interleaved_blocks_equal_two_single_blocks() {
        let v = vectors();
        let t = &v["block_trace"];
        let s = words(&t["state_initial"]);
        for delta in [0u32, 1, 0xffff_ffff] {
            let mut u = s;
            u[4] = u[4].wrapping_add(delta);
            u[9] ^= delta.rotate_left(7);
            assert_eq!(block_words_x2(&s, &u), (block_words(&s), block_words(&u)));
        }
    }

    /// CryptDances' Forro12 vector (6 double rounds), with a counter whose
    /// high word is non-zero: checks the round function and word 5 at
    /// another round count.
    #[test]
    fn cryptdances_forro12_block() {
        let v = vectors();
        let t = &v["cryptdances_forro12_vector"];
        assert_eq!(t["rounds"].as_u64(), Some(12));
        let key = hex::decode(t["key"].as_str().unwrap()).unwrap();
        let nonce = hex::decode(t["nonce"].as_str().unwrap()).unwrap();
        let ctr = t["counter"].as_u64().unwrap();
        let [n0, n1] = le_words::<2>(&nonce);
        let s = initial_state(&le_words::<8>(&key), ctr as u32, (ctr >> 32) as u32, n0, n1);
        let mut x = s;
        for _ in 0..6 {
            double_round(&mut x);
        }
        for (o, i) in x.iter_mut().zip(s) {
            *o = o.wrapping_add(i);
        }
        assert_eq!(hex::encode(serialize(&x)), t["block"].as_str().unwrap());
    }
}
