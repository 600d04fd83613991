//! A software prefetch hint: the one place this crate uses `unsafe`.
//!
//! A content store larger than the last-level cache makes each eviction read a node that was
//! written one whole store ago, from memory. LRU knows its next victim one eviction in
//! advance, so the store asks for that node (and the list link it will touch) while the rest
//! of the exchange runs.

/// Asks the processor to bring the cache line holding `r` closer; a no-op where we have no
/// prefetch instruction.
#[inline(always)]
pub(crate) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: PREFETCHT0 is a hint: it never faults, whatever the address, and changes no
    // architectural state. `r` is a live reference anyway. SSE is part of the x86_64
    // baseline, so the target feature `_mm_prefetch` requires is always present.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(core::ptr::from_ref(r).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
