//! The weighting of the [`crate::text::spec`]: a feature's weight from its term frequencies
//! and IDF, and the features' SimHash votes (fixed point, with no feature voting more than
//! a sixth of all).

use crate::text::spec::{MAX_FEATURE_SHARE, WEIGHT_SCALE};

/// A feature's weight from its body term frequency `body_tf`, its title term frequency
/// `title_tf` (already capped, see the fingerprint's title scale) and its `idf`.
///
/// Body term frequencies are cubed ([`body_tf_weight`]); the title adds its (capped)
/// weight after the power, so it separates otherwise equal texts but never outvotes a word
/// the body repeats. The IDF is squared (spec v6): with Gaussian projections
/// ([`crate::text::simhash`]) the rare words a text repeats can carry more of it without
/// putting unrelated texts that share common words together.
#[inline]
pub(crate) fn feature_weight(body_tf: f32, title_tf: f32, idf: f32) -> f64 {
    let idf = f64::from(idf);
    (body_tf_weight(body_tf) + f64::from(title_tf)) * idf * idf
}

/// The SimHash votes of the features that `features()` yields as (hash, weight): each
/// weight in fixed point relative to the heaviest (order-independent, at most
/// [`WEIGHT_SCALE`], 2^20), then cut to the share limit ([`MAX_FEATURE_SHARE`],
/// [`share_limit`]) on exact integer sums. `features` is called twice (for the heaviest,
/// then for the votes), so the weights need not be stored.
pub(crate) fn votes<I>(features: impl Fn() -> I) -> Vec<(u64, u32)>
where
    I: Iterator<Item = (u64, f64)>,
{
    let max = features().map(|(_, w)| w).fold(0.0f64, f64::max);
    let mut votes: Vec<(u64, u32)> = features()
        .map(|(hash, w)| (hash, fixed_point(w / max * WEIGHT_SCALE)))
        .collect();
    let limit = share_limit(&votes, MAX_FEATURE_SHARE);
    if limit < u32::MAX {
        for v in &mut votes {
            v.1 = v.1.min(limit);
        }
    }
    votes
}

/// The largest `limit` such that, with every vote cut to at most `limit`, no vote exceeds the
/// share `num/den` of the total — found exactly on the votes sorted heaviest first: with the
/// top `m` votes cut to `L`, `L = share × (rest + m·L)`, so `L = num·rest / (den − num·m)`,
/// valid when the next vote is at most `L`. `u32::MAX` when no vote needs cutting, or when
/// there are too few votes for the share to be met (five votes cannot each be under 1/6).
fn share_limit(votes: &[(u64, u32)], (num, den): (u64, u64)) -> u32 {
    let mut rest: u128 = votes.iter().map(|v| u128::from(v.1)).sum();
    let (num, den) = (u128::from(num), u128::from(den));
    let max = votes.iter().map(|v| v.1).max().unwrap_or(0);
    if u128::from(max) * den <= num * rest {
        return u32::MAX;
    }
    // Only the heaviest votes can be cut: fewer than den/num of them (5 for 1/6), so the
    // heaviest den/num + 1 suffice.
    let top = (den / num) as usize + 1;
    let mut sorted: Vec<u32> = Vec::with_capacity(top + 1);
    for v in votes {
        if sorted.len() < top || v.1 > sorted[top - 1] {
            let at = sorted.partition_point(|&x| x >= v.1);
            sorted.insert(at, v.1);
            sorted.truncate(top);
        }
    }
    for (m, &vote) in sorted.iter().enumerate() {
        // Votes 0..m are cut to L; votes m.. are as they are.
        if den <= num * m as u128 {
            break;
        }
        // (At m = 0 this limit is below the heaviest vote: "no cut" is the early return.)
        let limit = num * rest / (den - num * m as u128);
        if u128::from(vote) <= limit {
            return u32::try_from(limit).unwrap_or(u32::MAX);
        }
        rest -= u128::from(vote);
    }
    u32::MAX
}

/// A body term frequency's weight, tf^3: the words a text repeats (its topic) weigh most;
/// words it uses once (where edits land) move it less. Computed by multiplication, so it is
/// the same on every platform.
#[inline]
fn body_tf_weight(tf: f32) -> f64 {
    let tf = f64::from(tf);
    tf * tf * tf
}

/// A vote in fixed point: `x` (at least 0, at most [`WEIGHT_SCALE`]) rounded to the nearest
/// integer, halves up, and at least 1. The same as `x.round().max(1.0) as u32` for every such
/// `x` (the sum `x + 0.5` can round up to an integer only below 0.5, where the result is 1
/// either way), without a call to the C library's `round`.
#[inline]
fn fixed_point(x: f64) -> u32 {
    ((x + 0.5) as u32).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_limit_is_the_exact_fixed_point() {
        let limit_of = |votes: &[u32]| {
            let votes: Vec<(u64, u32)> = votes.iter().map(|&v| (0, v)).collect();
            share_limit(&votes, MAX_FEATURE_SHARE)
        };
        // Nothing to cut.
        assert_eq!(limit_of(&[3, 3, 3, 3, 3, 3]), u32::MAX);
        // One heavy vote among many light ones: cut to 1/6 of the total after the cut.
        assert_eq!(
            limit_of(&[1000, 10, 10, 10, 10, 10, 10]),
            12,
            "12 = (60 + 12) / 6"
        );
        // Random votes: after the cut no vote is over the share, and a larger limit would
        // break it (the limit is the largest that works, up to integer rounding).
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2000 {
            let n = 6 + (x % 20) as usize;
            let votes: Vec<u32> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (1 + (x % 1000) * (x % 1000) * (x % 7)) as u32
                })
                .collect();
            let limit = limit_of(&votes);
            let over = |l: u32| {
                let total: u64 = votes.iter().map(|&v| u64::from(v.min(l))).sum();
                votes.iter().any(|&v| u64::from(v.min(l)) * 6 > total)
            };
            assert!(!over(limit), "{votes:?} limit {limit}");
            if limit != u32::MAX {
                assert!(
                    over(limit + 2),
                    "{votes:?} limit {limit} is not the largest"
                );
            }
        }
        // Five votes cannot all be under 1/6: left as they are.
        assert_eq!(limit_of(&[100, 1, 1, 1, 1]), u32::MAX);
    }
}
