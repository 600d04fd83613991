//! Architecture-specific code: the x86-64 SIMD kernels of Forro14 and the
//! time-stamp counter used by [`crate::bench`](mod@crate::bench).
//!
//! This is the only module of the crate that may use `unsafe`, and only to
//! call `#[target_feature]` functions after runtime detection, for unaligned
//! SIMD loads and stores, and for `RDTSC`. The arithmetic intrinsics inside
//! the kernels are safe calls (Rust 1.87+ target-feature rules).
#![allow(unsafe_code)]

use crate::forro14::{scalar, Forro14Backend};

#[cfg(target_arch = "x86_64")]
mod forro14_asm;
#[cfg(target_arch = "x86_64")]
mod forro14_avx2;
#[cfg(target_arch = "x86_64")]
mod forro14_avx512;
#[cfg(target_arch = "x86_64")]
mod poly1305_avx2;
#[cfg(target_arch = "x86_64")]
mod poly1305_ifma;

/// Whether the CPU can run `backend`.
pub(crate) fn forro14_available(backend: Forro14Backend) -> bool {
    match backend {
        Forro14Backend::Scalar => true,
        #[cfg(target_arch = "x86_64")]
        Forro14Backend::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
        #[cfg(target_arch = "x86_64")]
        Forro14Backend::Avx512 => {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vl")
        }
        #[cfg(not(target_arch = "x86_64"))]
        _ => false,
    }
}

/// XORs Forro14 keystream into `buf` with the SIMD `backend`, falling back to
/// the scalar code if the CPU lacks it (callers check availability when they
/// build a cipher, so the fallback is never taken in practice; it keeps this
/// function sound for any `backend` value).
pub(crate) fn forro14_xor_keystream(
    backend: Forro14Backend,
    state: &[u32; 16],
    counter: u64,
    buf: &mut [u8],
) {
    #[cfg(target_arch = "x86_64")]
    match backend {
        Forro14Backend::Avx512 if forro14_available(Forro14Backend::Avx512) => {
            // SAFETY: the CPU supports AVX-512F and AVX-512VL, the features
            // the kernel enables (checked on the line above).
            unsafe { forro14_avx512::xor_keystream(state, counter, buf) };
            return;
        }
        Forro14Backend::Avx2 if std::arch::is_x86_feature_detected!("avx2") => {
            // SAFETY: the CPU supports AVX2, the only feature the kernel
            // enables (checked on the line above).
            unsafe { forro14_avx2::xor_keystream(state, counter, buf) };
            return;
        }
        _ => {}
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = backend;
    scalar::xor_keystream(state, counter, buf);
}

/// With AVX-512 or AVX2: keystream block `counter` into `head` and blocks `counter + 1, ...`
/// XORed into `buf`, the first pass yielding both. Returns `false` (and does nothing) where the
/// CPU or `backend` has no such kernel.
pub(crate) fn forro14_head_and_xor_keystream(
    backend: Forro14Backend,
    state: &[u32; 16],
    counter: u64,
    head: &mut [u8; 64],
    buf: &mut [u8],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if backend == Forro14Backend::Avx512 && forro14_available(Forro14Backend::Avx512) {
        // SAFETY: the CPU supports AVX-512F and AVX-512VL, the features the kernel enables
        // (checked on the line above).
        unsafe { forro14_avx512::head_and_xor_keystream(state, counter, head, buf) };
        return true;
    }
    #[cfg(target_arch = "x86_64")]
    if backend == Forro14Backend::Avx2 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, the only feature the kernel enables (checked on the
        // line above).
        unsafe { forro14_avx2::head_and_xor_keystream(state, counter, head, buf) };
        return true;
    }
    let _ = (backend, state, counter, head, buf);
    false
}

/// Whether the CPU has the AVX-512 IFMA Poly1305 kernel's features (F and IFMA).
pub(crate) fn poly1305_ifma_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512ifma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the CPU runs one of the vector Poly1305 kernels (AVX-512 IFMA or AVX2).
pub(crate) fn poly1305_vector_available() -> bool {
    poly1305_vector_min().is_some()
}

/// Bytes of input from which [`poly1305_blocks_vector`] beats the scalar Poly1305 on this
/// CPU (its set-up computes r^2 .. r^8), or `None` without a vector kernel. Measured: the
/// IFMA kernel from 256 bytes (Zen 4); the AVX2 one from about 600 (Zen 3: 195 ns scalar
/// against 190 at 640 bytes, 158 against 171 at 512).
pub(crate) fn poly1305_vector_min() -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        if poly1305_ifma_available() {
            return Some(256);
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return Some(640);
        }
    }
    None
}

/// Absorbs the longest run of whole groups of `data` (128 bytes with AVX-512 IFMA, 64 with
/// AVX2) into the Poly1305 accumulator `h` under the clamped `r` with the best vector kernel
/// the CPU has, and returns its length in bytes (0, doing nothing, without such a CPU or for
/// less than one group).
pub(crate) fn poly1305_blocks_vector(h: &mut [u64; 3], r: [u64; 2], data: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        if poly1305_ifma_available() {
            // SAFETY: the CPU supports AVX-512F and AVX-512 IFMA, the features the kernel
            // enables (checked on the line above).
            return unsafe { poly1305_ifma::blocks(h, r, data) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, the feature the kernel enables (checked above).
            return unsafe { poly1305_avx2::blocks(h, r, data) };
        }
    }
    let _ = (h, r, data);
    0
}

/// Overwrites `buf` with zeros through volatile stores the compiler cannot remove, eight
/// bytes per store where aligned: `zeroize` on a byte slice stores byte by byte, which cost
/// about 140 ns for the 2 KiB an XForro14-Poly1305 open stages.
pub(crate) fn wipe(buf: &mut [u8]) {
    use zeroize::Zeroize;
    // SAFETY: every bit pattern is a valid u64, so viewing the aligned middle of a byte slice
    // as u64s is sound; the three parts cover `buf` exactly.
    let (head, words, tail) = unsafe { buf.align_to_mut::<u64>() };
    head.zeroize();
    words.zeroize();
    tail.zeroize();
}

/// What this CPU lacks that the build was compiled to assume, if anything: with
/// `-C target-cpu=x86-64-v3` (the workspace default, `.cargo/config.toml`) any function may
/// use AVX2, so a CPU or OS without it would stop at the first such instruction with
/// SIGILL. `is_x86_feature_detected!` cannot answer here (it folds to `true` when the
/// feature is enabled at compile time), so this asks CPUID and XCR0 directly.
pub(crate) fn cpu_unsupported() -> Option<&'static str> {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        use core::arch::x86_64::{__cpuid, __cpuid_count};
        // SAFETY: CPUID exists on every x86-64 CPU and only reads identification registers.
        #[allow(unused_unsafe)]
        let (leaf1, leaf7) = unsafe { (__cpuid(1), __cpuid_count(7, 0)) };
        let osxsave = leaf1.ecx & (1 << 27) != 0;
        let avx = leaf1.ecx & (1 << 28) != 0;
        let avx2 = leaf7.ebx & (1 << 5) != 0;
        if !(osxsave && avx && avx2) {
            return Some("this CPU has no AVX2");
        }
        #[cfg(target_feature = "xsave")]
        {
            // SAFETY: OSXSAVE is set (checked above), so XGETBV is enabled; register 0 is
            // XCR0, which says which register states the OS saves.
            #[allow(unused_unsafe)]
            let xcr0 = unsafe { core::arch::x86_64::_xgetbv(0) };
            if xcr0 & 0b110 != 0b110 {
                return Some("the operating system does not enable AVX (YMM) state");
            }
        }
    }
    None
}

/// CPU time consumed by the calling thread (`CLOCK_THREAD_CPUTIME_ID`), or `None` where the
/// OS does not report it.
pub(crate) fn thread_cpu_time() -> Option<std::time::Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid, exclusive pointer it is
    // given and reads nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u32::try_from(ts.tv_nsec).ok()?;
    (rc == 0).then(|| std::time::Duration::new(secs, nanos))
}

/// The CPU's time-stamp counter, or `None` where there is none we read.
///
/// On x86-64 this is `RDTSC`: it ticks at the nominal (base) frequency, not
/// the current core clock, so "cycles" derived from it are reference cycles.
pub(crate) fn timestamp_counter() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC exists on every x86-64 CPU and only reads a counter.
        Some(unsafe { core::arch::x86_64::_rdtsc() })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn wipe_zeroes_every_byte_at_every_alignment_and_length() {
        let mut backing = [0xa5u8; 200];
        for start in 0..9 {
            for len in 0..150 {
                backing.fill(0xa5);
                super::wipe(&mut backing[start..start + len]);
                assert!(backing[start..start + len].iter().all(|&b| b == 0));
                assert!(backing[..start].iter().all(|&b| b == 0xa5), "wrote before");
                assert!(
                    backing[start + len..].iter().all(|&b| b == 0xa5),
                    "wrote after"
                );
            }
        }
    }
}
