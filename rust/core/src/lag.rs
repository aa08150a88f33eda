//! The lag rule, in one place: how far behind a consumer group is on one partition.
//!
//! * The next offset the group consumes is its committed offset, or the log start when the
//!   committed offset lies below it (those records are gone: the consumer resumes at the log
//!   start). A committed offset < 0 (Kafka's "no offset", -1) counts as none.
//! * Without a committed offset, `auto.offset.reset` decides: "latest" starts at the end, any other
//!   value ("earliest", "none", ...) at the beginning ([`OffsetReset::from_config`]).
//! * Lag = max(end - next, 0). A missing beginning or end offset counts as 0.
//!
//! [`lag`] computes it exactly over any 64-bit offsets (128-bit arithmetic; `kassign.lag` calls
//! it); [`partition_lag`] clamps it to `i64` for the fleet's int64 columns.

use crate::model::InputError;

/// `auto.offset.reset` of consumers without a committed offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetReset {
    Latest,
    Earliest,
}

impl OffsetReset {
    /// The consumer setting as Kafka names it: "latest" (any case) starts at the end, every other
    /// value at the beginning.
    pub fn from_config(value: &str) -> OffsetReset {
        if value.eq_ignore_ascii_case("latest") {
            OffsetReset::Latest
        } else {
            OffsetReset::Earliest
        }
    }

    /// The fleet job's option: "latest" or "earliest" (any case), nothing else.
    pub fn parse(value: &str) -> Result<OffsetReset, InputError> {
        match value.to_ascii_lowercase().as_str() {
            "latest" => Ok(OffsetReset::Latest),
            "earliest" => Ok(OffsetReset::Earliest),
            other => Err(InputError::Invalid(format!(
                "auto_offset_reset: expected latest or earliest, got {other:?}"
            ))),
        }
    }
}

/// The offset the group consumes next on a partition (see the module documentation).
pub fn next_offset(committed: Option<i128>, beginning: Option<i128>, end: Option<i128>, reset: OffsetReset) -> i128 {
    let b = beginning.unwrap_or(0);
    match committed {
        Some(c) if c >= 0 => c.max(b),
        _ => match reset {
            OffsetReset::Latest => end.unwrap_or(0),
            OffsetReset::Earliest => b,
        },
    }
}

/// Lag of one partition, exact: max(end - next, 0).
pub fn lag(committed: Option<i128>, beginning: Option<i128>, end: Option<i128>, reset: OffsetReset) -> i128 {
    (end.unwrap_or(0) - next_offset(committed, beginning, end, reset)).max(0)
}

/// [`lag`] of int64 offsets, clamped to `i64` (offsets are int64 on the wire).
pub fn partition_lag(committed: Option<i64>, beginning: Option<i64>, end: Option<i64>, reset: OffsetReset) -> i64 {
    let widen = |offset: Option<i64>| offset.map(i128::from);
    lag(widen(committed), widen(beginning), widen(end), reset).min(i64::MAX as i128) as i64
}

/// The lower bound of max/mean member lag over all assignments of a group (subscriptions ignored;
/// the fleet metrics and the fleet problem both measure against it): the
/// assignable partitions' lags sum to `total` with `top` the largest, spread over `members`.
/// `None` when there is no lag (or no member).
pub fn lag_ratio_bound(total: i128, top: i64, members: usize) -> Option<f64> {
    if total == 0 || members == 0 {
        return None;
    }
    let mean = total as f64 / members as f64;
    let top = top as f64;
    Some(if mean > top { mean } else { top } / mean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_on_its_cases() {
        use OffsetReset::*;
        assert_eq!(partition_lag(Some(5), Some(0), Some(10), Latest), 5);
        assert_eq!(partition_lag(Some(1), Some(4), Some(10), Latest), 6); // below the log start
        assert_eq!(partition_lag(None, Some(4), Some(10), Latest), 0);
        assert_eq!(partition_lag(Some(-1), Some(4), Some(10), Earliest), 6);
        assert_eq!(partition_lag(Some(20), None, Some(10), Latest), 0);
        assert_eq!(partition_lag(Some(0), Some(i64::MIN), Some(i64::MAX), Latest), i64::MAX);
        assert_eq!(
            lag(None, Some(i64::MIN as i128), Some(i64::MAX as i128), Earliest),
            u64::MAX as i128
        );
    }

    #[test]
    fn reset_values() {
        assert_eq!(OffsetReset::from_config("LATEST"), OffsetReset::Latest);
        assert_eq!(OffsetReset::from_config("none"), OffsetReset::Earliest);
        assert_eq!(OffsetReset::parse("Earliest"), Ok(OffsetReset::Earliest));
        assert!(OffsetReset::parse("none").is_err());
    }
}
