//! Portable Forro14: the quarter-round, rounds and block function of spec §5–§7,
//! one block at a time. This is the reference every SIMD path is tested against.

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

/// XORs the keystream for consecutive counters starting at `counter` into
/// `buf`. Words 4 and 5 of `state` are ignored and replaced by the counter.
/// The caller has checked that the counter does not wrap within `buf`.
pub(crate) fn xor_keystream(state: &[u32; 16], counter: u64, buf: &mut [u8]) {
    let mut s = *state;
    let mut ctr = counter;
    let mut chunks = buf.chunks_exact_mut(BLOCK_LEN);
    for chunk in &mut chunks {
        set_counter(&mut s, ctr);
        let ks = block_words(&s);
        for (bytes, k) in chunk.chunks_exact_mut(4).zip(ks) {
            let v = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) ^ k;
            bytes.copy_from_slice(&v.to_le_bytes());
        }
        ctr = ctr.wrapping_add(1);
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        set_counter(&mut s, ctr);
        let mut ks = serialize(&block_words(&s));
        for (b, k) in tail.iter_mut().zip(ks.iter()) {
            *b ^= k;
        }
        zeroize::Zeroize::zeroize(&mut ks);
    }
    zeroize::Zeroize::zeroize(&mut s);
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
