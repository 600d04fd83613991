//! The tables, one per file as in NFD: faces, FIB, PIT, content store, dead-nonce list,
//! straggler list, strategy choice, security policy, and the hashed name-prefix table the FIB,
//! strategy choice and security policy share.

pub(crate) mod cs;
pub(crate) mod cs_filter;
pub(crate) mod cs_policy;
pub(crate) mod dead_nonce_list;
pub(crate) mod face_table;
pub(crate) mod fib;
pub(crate) mod name_table;
pub(crate) mod pit;
pub(crate) mod security_policy;
pub(crate) mod straggler_list;
pub(crate) mod strategy_choice;

/// Whether two names' TLV-VALUEs are equal: the confirmation after every hash hit in the
/// tables.
///
/// Names of up to 16 octets a prefix (most prefixes, and most whole names a forwarder sees
/// have few short components) compare with two overlapping word loads each, inline; longer
/// ones go to the library's `memcmp`. Calling it for the short ones cost more than the
/// comparison: the call, and the registers the caller saved around it.
#[inline(always)]
pub(crate) fn same_name_value(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match (a, b) {
        _ if n > 16 => a == b,
        _ if n >= 8 => word64(a, 0) == word64(b, 0) && word64(a, n - 8) == word64(b, n - 8),
        _ if n >= 4 => word32(a, 0) == word32(b, 0) && word32(a, n - 4) == word32(b, n - 4),
        _ => a == b,
    }
}

#[inline(always)]
fn word64(s: &[u8], at: usize) -> u64 {
    s.get(at..at + 8)
        .and_then(|w| <[u8; 8]>::try_from(w).ok())
        .map_or(0, u64::from_ne_bytes)
}

#[inline(always)]
fn word32(s: &[u8], at: usize) -> u32 {
    s.get(at..at + 4)
        .and_then(|w| <[u8; 4]>::try_from(w).ok())
        .map_or(0, u32::from_ne_bytes)
}

#[cfg(test)]
mod tests {
    use super::same_name_value;

    #[test]
    fn name_values_compare_as_byte_strings() {
        // Every length around the word sizes, equal and differing at each position.
        for n in 0..40usize {
            let a: Vec<u8> = (0..n).map(|i| (i * 7 + 1) as u8).collect();
            assert!(same_name_value(&a, &a.clone()), "len {n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x10;
                assert!(!same_name_value(&a, &b), "len {n}, differing at {at}");
            }
            if n > 0 {
                assert!(!same_name_value(&a, &a[..n - 1]), "len {n} vs {}", n - 1);
            }
        }
    }
}
