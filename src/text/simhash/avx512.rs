//! The projection sums with AVX-512 (F, BW, DQ, VBMI, VNNI), chosen at run time where the
//! CPU has them (Intel since Ice Lake, AMD since Zen 4): one feature's 64 coefficients in
//! about 40 instructions instead of 64 table lookups and multiply-adds (~300).
//!
//! Per feature: the eight splitmix64 words of [`super::stream_word`] in one 512-bit
//! register (its 64 bytes are the coefficient indices of bits 0..64 in order); the low and
//! high bytes of the 256 `i16` coefficients looked up with byte permutes over two
//! 128-entry halves and joined into `i16`; and the products with the weight's low and high
//! 10 bits added into `i32` sums with `vpdpwssd` (a multiply-add of 16-bit pairs whose
//! other lane is zero). Every 128 features the `i32` sums go into the `i64` totals. All of
//! it is integer arithmetic without overflow, so the sums are the scalar loop's to the bit.

use std::arch::x86_64::{
    __m512i, _mm512_add_epi64, _mm512_dpwssd_epi32, _mm512_loadu_si512, _mm512_mask_blend_epi8,
    _mm512_movepi8_mask, _mm512_mullo_epi64, _mm512_permutex2var_epi8, _mm512_set1_epi32,
    _mm512_set1_epi64, _mm512_setzero_si512, _mm512_srli_epi64, _mm512_storeu_si512,
    _mm512_unpackhi_epi8, _mm512_unpacklo_epi8, _mm512_xor_si512,
};

use super::{COEFFICIENTS, MAX_WEIGHT, SPLITMIX_GAMMA, SPLITMIX_MIX};

/// Whether this CPU runs [`projection_sums`].
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
        && std::arch::is_x86_feature_detected!("avx512vnni")
}

/// One byte of each of the 256 coefficients: `shift` 0 for the low bytes, 8 for the high.
const fn plane(shift: u32) -> [u8; 256] {
    let mut bytes = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        bytes[i] = (COEFFICIENTS[i] >> shift) as u8;
        i += 1;
    }
    bytes
}

/// The coefficients' low bytes, then their high bytes (they fit in `i16`: |c| < 2^14).
static PLANES: [[u8; 256]; 2] = [plane(0), plane(8)];

/// The splitmix64 increments of words 0..8: `(j + 1) · γ`.
const STEPS: [u64; 8] = {
    let mut steps = [0u64; 8];
    let mut j = 0;
    while j < 8 {
        steps[j] = (j as u64 + 1).wrapping_mul(SPLITMIX_GAMMA);
        j += 1;
    }
    steps
};

/// The same sums as [`super::scalar_projection_sums`]; call only where [`available`].
#[expect(
    unsafe_code,
    reason = "calls the body compiled for AVX-512, behind a run-time CPU check"
)]
pub(super) fn projection_sums(features: &[(u64, u32)]) -> [i64; 64] {
    debug_assert!(available());
    // SAFETY: `available` said the CPU has every feature `sums_of` is compiled for.
    unsafe { sums_of(features) }
}

/// Features per block of `i32` sums: a product of a coefficient (|c| ≤ 11,820) and a
/// 10-bit half of a weight is below 2^24 in magnitude, so 128 of them stay below 2^31.
const BLOCK: usize = 128;

/// The body of [`projection_sums`], compiled for AVX-512.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vbmi,avx512vnni")]
#[expect(unsafe_code, reason = "unaligned loads and stores of whole arrays")]
unsafe fn sums_of(features: &[(u64, u32)]) -> [i64; 64] {
    // SAFETY: each load reads the 64 bytes at `at` of a 256-byte plane, or all of `STEPS`.
    let quarter = |plane: &[u8; 256], at: usize| unsafe {
        _mm512_loadu_si512(plane[at..at + 64].as_ptr().cast())
    };
    let [low, high] = PLANES
        .each_ref()
        .map(|p| [0, 64, 128, 192].map(|at| quarter(p, at)));
    let steps = unsafe { _mm512_loadu_si512(STEPS.as_ptr().cast()) };
    let mut totals = [0i64; 64];
    for block in features.chunks(BLOCK) {
        // [half of the weight][even or odd i16 lane][unpacked register]
        let mut acc = [[[_mm512_setzero_si512(); 2]; 2]; 2];
        for &(hash, weight) in block {
            let w = weight.min(MAX_WEIGHT);
            let indices = stream(hash, steps);
            let c = as_i16(lookup(indices, &low), lookup(indices, &high));
            for (half, part) in acc.iter_mut().zip([w & 0x3FF, w >> 10]) {
                // `dpwssd` adds the products of a pair of lanes: a zero in the other lane of
                // the pair keeps one.
                let spread = [part, part << 16].map(|p| _mm512_set1_epi32(p as i32));
                for (lanes, s) in half.iter_mut().zip(spread) {
                    for (a, v) in lanes.iter_mut().zip(c) {
                        *a = _mm512_dpwssd_epi32(*a, v, s);
                    }
                }
            }
        }
        let mut out = [[[[0i32; 16]; 2]; 2]; 2];
        for (o, a) in out
            .as_flattened_mut()
            .as_flattened_mut()
            .iter_mut()
            .zip(acc.as_flattened().as_flattened())
        {
            // SAFETY: stores 16 `i32` into a 16-element array.
            unsafe { _mm512_storeu_si512(o.as_mut_ptr().cast(), *a) };
        }
        fold_block(&mut totals, &out);
    }
    totals
}

/// Adds one block's `i32` sums (`[weight half][lane parity][register][lane]`) into the
/// totals: the low half's products plus the high half's times 2^10, each at its bit.
fn fold_block(totals: &mut [i64; 64], out: &[[[[i32; 16]; 2]; 2]; 2]) {
    for parity in 0..2 {
        for register in 0..2 {
            for lane in 0..16 {
                let low = i64::from(out[0][parity][register][lane]);
                let high = i64::from(out[1][parity][register][lane]);
                totals[bit_of(register, 2 * lane + parity)] += low + (high << 10);
            }
        }
    }
}

/// The bit of `i16` lane `n` of unpacked register `register` (see [`as_i16`]): lane `n`
/// is byte `n % 8` of the first (register 0) or second eight bytes of 128-bit lane `n / 8`.
fn bit_of(register: usize, n: usize) -> usize {
    16 * (n / 8) + 8 * register + n % 8
}

/// The eight splitmix64 words of `hash` (see [`super::stream_word`]), word `j` in 64-bit
/// lane `j`: as bytes, the coefficient indices of bits 0..64 in order.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn stream(hash: u64, steps: __m512i) -> __m512i {
    let z = _mm512_add_epi64(_mm512_set1_epi64(hash as i64), steps);
    let z = _mm512_xor_si512(z, _mm512_srli_epi64::<30>(z));
    let z = _mm512_mullo_epi64(z, _mm512_set1_epi64(SPLITMIX_MIX[0] as i64));
    let z = _mm512_xor_si512(z, _mm512_srli_epi64::<27>(z));
    let z = _mm512_mullo_epi64(z, _mm512_set1_epi64(SPLITMIX_MIX[1] as i64));
    _mm512_xor_si512(z, _mm512_srli_epi64::<31>(z))
}

/// Byte `i` of `plane` (its four 64-byte quarters) for each of the 64 byte indices: two
/// 128-entry permutes, picked by the index's top bit.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn lookup(indices: __m512i, plane: &[__m512i; 4]) -> __m512i {
    let bottom = _mm512_permutex2var_epi8(plane[0], indices, plane[1]);
    let top = _mm512_permutex2var_epi8(plane[2], indices, plane[3]);
    _mm512_mask_blend_epi8(_mm512_movepi8_mask(indices), bottom, top)
}

/// The 64 coefficients as `i16`, from their low and high bytes: within each 128-bit lane,
/// bytes 0..8 in the first register and bytes 8..16 in the second (see [`bit_of`]).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn as_i16(low: __m512i, high: __m512i) -> [__m512i; 2] {
    [
        _mm512_unpacklo_epi8(low, high),
        _mm512_unpackhi_epi8(low, high),
    ]
}
