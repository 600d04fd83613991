//! The 14 Forro rounds on two to six 16-block batches at once, in inline assembly with a
//! fixed register plan.
//!
//! Why more than two batches, and why by hand: a Forro block is one serial chain (spec §6)
//! whose quarter-round takes 15 cycles on Zen 4 (nine 1-cycle adds and XORs, three 2-cycle
//! `vprold`), so a pass costs at least one chain's latency whatever its size, and the more
//! batches share it the closer the core gets to its throughput. But three batches are 48
//! state vectors and AVX-512 has 32 registers, and the compiler's code for two batches
//! (which fit) and for three (which spilled about ten vectors per quarter-round step) was
//! slower than the plans here:
//!
//! * two batches: all 32 words in `zmm0`-`zmm31`;
//! * three or four: batch 0 in `zmm0`-`zmm15`; of batches 1-3, words 0-3 in `zmm16`-`zmm19`,
//!   `zmm20`-`zmm23`, `zmm24`-`zmm27`, words 4-15 in memory ([`Batches`]);
//! * five or six: words 0-3 of batch `k` in `zmm(4k)`-`zmm(4k+3)`, words 4-15 in memory.
//!
//! Every quarter-round `Q(a, b, c, d, e)` of spec §6 has `a` and `e` in 0-3 and `b`, `c`, `d`
//! in 4-15, so for a spilled batch a step loads those three words into `zmm29`-`zmm31`, runs
//! the twelve operations and stores them back (register renaming lets the batches share the
//! three work registers).
//!
//! Rounds alone, cycles per 64-byte block on the Zen 4 (EPYC) used here, from a stand-alone
//! loop of each shape: one batch 57 (its chain's latency), two in registers 35, 1 + 2
//! spilled 32, 1 + 3 spilled 30, five or six spilled 29-30. Past three batches the core runs
//! about 1.4 512-bit operations per cycle, the rate OpenSSL's ChaCha20 reaches here too; the
//! extra batches mostly shorten messages' passes (8800 bytes: one six-batch and one
//! three-batch pass instead of two four-batch passes and a one-batch tail).

use core::arch::asm;
use core::arch::x86_64::__m512i;

use crate::forro14::DOUBLE_ROUNDS;

/// Sixteen row vectors of one batch (word `i` of block `j` in row `i`, lane `j`).
type Rows = [__m512i; 16];

/// The most batches one call runs.
pub(super) const MAX_BATCHES: usize = 6;

/// The state rows of `N` batches (2 to [`MAX_BATCHES`]), in the layout the assembly
/// addresses: batch `k`, word `w` at byte `1024 * k + 64 * w`.
#[repr(C, align(64))]
pub(super) struct Batches<const N: usize>(pub(super) [Rows; N]);

/// The register that holds word `$w` (0-3) of spilled batch `$k` (1-3) while the rounds run.
macro_rules! hot_reg {
    (1, 0) => {
        "zmm16"
    };
    (1, 1) => {
        "zmm17"
    };
    (1, 2) => {
        "zmm18"
    };
    (1, 3) => {
        "zmm19"
    };
    (2, 0) => {
        "zmm20"
    };
    (2, 1) => {
        "zmm21"
    };
    (2, 2) => {
        "zmm22"
    };
    (2, 3) => {
        "zmm23"
    };
    (3, 0) => {
        "zmm24"
    };
    (3, 1) => {
        "zmm25"
    };
    (3, 2) => {
        "zmm26"
    };
    (3, 3) => {
        "zmm27"
    };
}

/// The register that holds word `$w` (0-3) of batch `$k` (0-5) when every batch is spilled.
macro_rules! hot_all {
    (0, 0) => {
        "zmm0"
    };
    (0, 1) => {
        "zmm1"
    };
    (0, 2) => {
        "zmm2"
    };
    (0, 3) => {
        "zmm3"
    };
    (1, 0) => {
        "zmm4"
    };
    (1, 1) => {
        "zmm5"
    };
    (1, 2) => {
        "zmm6"
    };
    (1, 3) => {
        "zmm7"
    };
    (2, 0) => {
        "zmm8"
    };
    (2, 1) => {
        "zmm9"
    };
    (2, 2) => {
        "zmm10"
    };
    (2, 3) => {
        "zmm11"
    };
    (3, 0) => {
        "zmm12"
    };
    (3, 1) => {
        "zmm13"
    };
    (3, 2) => {
        "zmm14"
    };
    (3, 3) => {
        "zmm15"
    };
    (4, 0) => {
        "zmm16"
    };
    (4, 1) => {
        "zmm17"
    };
    (4, 2) => {
        "zmm18"
    };
    (4, 3) => {
        "zmm19"
    };
    (5, 0) => {
        "zmm20"
    };
    (5, 1) => {
        "zmm21"
    };
    (5, 2) => {
        "zmm22"
    };
    (5, 3) => {
        "zmm23"
    };
}

/// The register that holds word `$w` of batch 1 when two batches fill the registers.
macro_rules! second_reg {
    (0) => {
        "zmm16"
    };
    (1) => {
        "zmm17"
    };
    (2) => {
        "zmm18"
    };
    (3) => {
        "zmm19"
    };
    (4) => {
        "zmm20"
    };
    (5) => {
        "zmm21"
    };
    (6) => {
        "zmm22"
    };
    (7) => {
        "zmm23"
    };
    (8) => {
        "zmm24"
    };
    (9) => {
        "zmm25"
    };
    (10) => {
        "zmm26"
    };
    (11) => {
        "zmm27"
    };
    (12) => {
        "zmm28"
    };
    (13) => {
        "zmm29"
    };
    (14) => {
        "zmm30"
    };
    (15) => {
        "zmm31"
    };
}

/// The twelve operations of spec §5's quarter-round on registers `a`, `b`, `c`, `d`, `e`.
macro_rules! qr_asm {
    ($a:expr, $b:expr, $c:expr, $d:expr, $e:expr) => {
        concat!(
            "vpaddd ", $d, ", ", $d, ", ", $e, "\n", "vpxord ", $c, ", ", $c, ", ", $d, "\n",
            "vpaddd ", $b, ", ", $b, ", ", $c, "\n", "vprold ", $b, ", ", $b, ", 10\n", "vpaddd ",
            $a, ", ", $a, ", ", $b, "\n", "vpxord ", $e, ", ", $e, ", ", $a, "\n", "vpaddd ", $d,
            ", ", $d, ", ", $e, "\n", "vprold ", $d, ", ", $d, ", 27\n", "vpaddd ", $c, ", ", $c,
            ", ", $d, "\n", "vpxord ", $b, ", ", $b, ", ", $c, "\n", "vpaddd ", $a, ", ", $a, ", ",
            $b, "\n", "vprold ", $a, ", ", $a, ", 8\n",
        )
    };
}

/// The memory operand of word `$w` of batch `$k`.
macro_rules! word_mem {
    ($k:tt, $w:tt) => {
        concat!("zmmword ptr [{rows} + 1024 * ", $k, " + 64 * ", $w, "]")
    };
}

/// Quarter-round `(a, b, c, d, e)` on spilled batch `k`: `b`, `c`, `d` are loaded into the
/// work registers `zmm29`-`zmm31`, updated and stored back.
macro_rules! qr_spilled {
    ($k:tt; $a:tt, $b:tt, $c:tt, $d:tt, $e:tt) => {
        concat!(
            "vmovdqa64 zmm29, ",
            word_mem!($k, $b),
            "\n",
            "vmovdqa64 zmm30, ",
            word_mem!($k, $c),
            "\n",
            "vmovdqa64 zmm31, ",
            word_mem!($k, $d),
            "\n",
            qr_asm!(
                hot_reg!($k, $a),
                "zmm29",
                "zmm30",
                "zmm31",
                hot_reg!($k, $e)
            ),
            "vmovdqa64 ",
            word_mem!($k, $b),
            ", zmm29\n",
            "vmovdqa64 ",
            word_mem!($k, $c),
            ", zmm30\n",
            "vmovdqa64 ",
            word_mem!($k, $d),
            ", zmm31\n",
        )
    };
}

/// Quarter-round `(a, b, c, d, e)` on batch `k` of an all-spilled call (words 0-3 in
/// [`hot_all`] registers, `b`, `c`, `d` through the work registers).
macro_rules! qr_all {
    ($k:tt; $a:tt, $b:tt, $c:tt, $d:tt, $e:tt) => {
        concat!(
            "vmovdqa64 zmm29, ",
            word_mem!($k, $b),
            "\n",
            "vmovdqa64 zmm30, ",
            word_mem!($k, $c),
            "\n",
            "vmovdqa64 zmm31, ",
            word_mem!($k, $d),
            "\n",
            qr_asm!(
                hot_all!($k, $a),
                "zmm29",
                "zmm30",
                "zmm31",
                hot_all!($k, $e)
            ),
            "vmovdqa64 ",
            word_mem!($k, $b),
            ", zmm29\n",
            "vmovdqa64 ",
            word_mem!($k, $c),
            ", zmm30\n",
            "vmovdqa64 ",
            word_mem!($k, $d),
            ", zmm31\n",
        )
    };
}

/// One quarter-round step `Q(a, b, c, d, e)` on every batch `k..` of an all-spilled call.
macro_rules! qr_step_all {
    ($($k:tt),* ; $a:tt, $b:tt, $c:tt, $d:tt, $e:tt) => {
        concat!($( qr_all!($k; $a, $b, $c, $d, $e), )*)
    };
}

/// Moves words 0-3 of batches `k..` of an all-spilled call between memory and registers.
macro_rules! move_hot_all {
    (load; $($k:tt),*) => {
        concat!($( move_hot_all!(@load $k; 0, 1, 2, 3), )*)
    };
    (store; $($k:tt),*) => {
        concat!($( move_hot_all!(@store $k; 0, 1, 2, 3), )*)
    };
    (@load $k:tt; $($w:tt),*) => {
        concat!($( "vmovdqa64 ", hot_all!($k, $w), ", ", word_mem!($k, $w), "\n", )*)
    };
    (@store $k:tt; $($w:tt),*) => {
        concat!($( "vmovdqa64 ", word_mem!($k, $w), ", ", hot_all!($k, $w), "\n", )*)
    };
}

/// One quarter-round step `Q(a, b, c, d, e)` on batch 0 (in registers) and spilled batches `k..`.
macro_rules! qr_step {
    ($($k:tt),* ; $a:tt, $b:tt, $c:tt, $d:tt, $e:tt) => {
        concat!(
            qr_asm!(
                concat!("zmm", $a),
                concat!("zmm", $b),
                concat!("zmm", $c),
                concat!("zmm", $d),
                concat!("zmm", $e)
            ),
            $( qr_spilled!($k; $a, $b, $c, $d, $e), )*
        )
    };
}

/// One quarter-round step `Q(a, b, c, d, e)` on two batches held in all 32 registers.
macro_rules! qr_step_x2 {
    ($a:tt, $b:tt, $c:tt, $d:tt, $e:tt) => {
        concat!(
            qr_asm!(
                concat!("zmm", $a),
                concat!("zmm", $b),
                concat!("zmm", $c),
                concat!("zmm", $d),
                concat!("zmm", $e)
            ),
            qr_asm!(
                second_reg!($a),
                second_reg!($b),
                second_reg!($c),
                second_reg!($d),
                second_reg!($e)
            ),
        )
    };
}

/// Moves batch 1's sixteen words between memory and `zmm16`-`zmm31`.
macro_rules! move_second {
    (load; $($w:tt),*) => {
        concat!($( "vmovdqa64 ", second_reg!($w), ", ", word_mem!(1, $w), "\n", )*)
    };
    (store; $($w:tt),*) => {
        concat!($( "vmovdqa64 ", word_mem!(1, $w), ", ", second_reg!($w), "\n", )*)
    };
}

/// Moves batch 0's sixteen words and words 0-3 of spilled batches `k..` between memory and
/// registers: `load` or `store` order of operands.
macro_rules! move_words {
    (load; $($k:tt),*) => {
        concat!(
            move_words!(@x load; 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            $( move_words!(@hot load; $k; 0, 1, 2, 3), )*
        )
    };
    (store; $($k:tt),*) => {
        concat!(
            move_words!(@x store; 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            $( move_words!(@hot store; $k; 0, 1, 2, 3), )*
        )
    };
    (@x load; $($w:tt),*) => {
        concat!($( "vmovdqa64 zmm", $w, ", ", word_mem!(0, $w), "\n", )*)
    };
    (@x store; $($w:tt),*) => {
        concat!($( "vmovdqa64 ", word_mem!(0, $w), ", zmm", $w, "\n", )*)
    };
    (@hot load; $k:tt; $($w:tt),*) => {
        concat!($( "vmovdqa64 ", hot_reg!($k, $w), ", ", word_mem!($k, $w), "\n", )*)
    };
    (@hot store; $k:tt; $($w:tt),*) => {
        concat!($( "vmovdqa64 ", word_mem!($k, $w), ", ", hot_reg!($k, $w), "\n", )*)
    };
}

/// The 14 rounds on batch 0 in registers and spilled batches `k..` (1-3), in place in `rows`.
macro_rules! rounds_asm {
    ($rows:expr; $($k:tt),*) => {
        asm!(
            move_words!(load; $($k),*),
            "2:",
            qr_step!($($k),*; 0, 4, 8, 12, 3),
            qr_step!($($k),*; 1, 5, 9, 13, 0),
            qr_step!($($k),*; 2, 6, 10, 14, 1),
            qr_step!($($k),*; 3, 7, 11, 15, 2),
            qr_step!($($k),*; 0, 5, 10, 15, 3),
            qr_step!($($k),*; 1, 6, 11, 12, 0),
            qr_step!($($k),*; 2, 7, 8, 13, 1),
            qr_step!($($k),*; 3, 4, 9, 14, 2),
            "dec {n}",
            "jnz 2b",
            move_words!(store; $($k),*),
            rows = in(reg) $rows,
            n = inout(reg) DOUBLE_ROUNDS => _,
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _,
            out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
            out("zmm24") _, out("zmm25") _, out("zmm26") _, out("zmm27") _,
            out("zmm29") _, out("zmm30") _, out("zmm31") _,
            options(nostack),
        )
    };
}

/// The 14 rounds on batches `k..`, every one spilled (words 0-3 in registers, 4-15 in
/// memory), in place in `rows`.
macro_rules! rounds_asm_all {
    ($rows:expr; $($k:tt),*) => {
        asm!(
            move_hot_all!(load; $($k),*),
            "2:",
            qr_step_all!($($k),*; 0, 4, 8, 12, 3),
            qr_step_all!($($k),*; 1, 5, 9, 13, 0),
            qr_step_all!($($k),*; 2, 6, 10, 14, 1),
            qr_step_all!($($k),*; 3, 7, 11, 15, 2),
            qr_step_all!($($k),*; 0, 5, 10, 15, 3),
            qr_step_all!($($k),*; 1, 6, 11, 12, 0),
            qr_step_all!($($k),*; 2, 7, 8, 13, 1),
            qr_step_all!($($k),*; 3, 4, 9, 14, 2),
            "dec {n}",
            "jnz 2b",
            move_hot_all!(store; $($k),*),
            rows = in(reg) $rows,
            n = inout(reg) DOUBLE_ROUNDS => _,
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _,
            out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
            out("zmm29") _, out("zmm30") _, out("zmm31") _,
            options(nostack),
        )
    };
}

/// The 14 rounds on batches 0 and 1, both entirely in registers, in place in `rows`.
macro_rules! rounds_asm_x2 {
    ($rows:expr) => {
        asm!(
            move_words!(load;),
            move_second!(load; 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            "2:",
            qr_step_x2!(0, 4, 8, 12, 3),
            qr_step_x2!(1, 5, 9, 13, 0),
            qr_step_x2!(2, 6, 10, 14, 1),
            qr_step_x2!(3, 7, 11, 15, 2),
            qr_step_x2!(0, 5, 10, 15, 3),
            qr_step_x2!(1, 6, 11, 12, 0),
            qr_step_x2!(2, 7, 8, 13, 1),
            qr_step_x2!(3, 4, 9, 14, 2),
            "dec {n}",
            "jnz 2b",
            move_words!(store;),
            move_second!(store; 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            rows = in(reg) $rows,
            n = inout(reg) DOUBLE_ROUNDS => _,
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _,
            out("zmm4") _, out("zmm5") _, out("zmm6") _, out("zmm7") _,
            out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _,
            out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _,
            out("zmm24") _, out("zmm25") _, out("zmm26") _, out("zmm27") _,
            out("zmm28") _, out("zmm29") _, out("zmm30") _, out("zmm31") _,
            options(nostack),
        )
    };
}

/// Runs the 14 rounds (no feed-forward) in place on the `N` batches of `rows`, `N` in 2..=6
/// (other values do nothing): two batches fill the registers; of three or four, batch 0
/// is in registers and the others are spilled; five or six are all spilled.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn rounds<const N: usize>(rows: &mut Batches<N>) {
    let ptr = rows.0.as_mut_ptr();
    // SAFETY: the CPU supports AVX-512F (this function's target feature). `ptr` points to N
    // 64-byte-aligned batches of sixteen vectors (`Batches<N>`, 1024 * N bytes); the code for
    // N batches forms only `ptr + 1024 * k + 64 * w` with k < N and w < 16, so every aligned
    // load and store stays inside it. Every vector register it writes is declared clobbered, the loop
    // counter is an inout, and only `dec` changes the flags (`preserves_flags` is not
    // claimed).
    unsafe {
        match N {
            2 => rounds_asm_x2!(ptr),
            3 => rounds_asm!(ptr; 1, 2),
            4 => rounds_asm!(ptr; 1, 2, 3),
            5 => rounds_asm_all!(ptr; 0, 1, 2, 3, 4),
            6 => rounds_asm_all!(ptr; 0, 1, 2, 3, 4, 5),
            _ => {}
        }
    }
}
