//! Quality metrics of one assignment of a group, with the definitions of
//! `python/kassign/fleet/quality.py` (docs/fleet.md, "Result columns"): count balance, member lag
//! spread and its lower bound, moves and kept against the previous owners, rack locality, and
//! invalid placements. They measure a result; they never compute one.

use super::{problem, Group, Placed, NONE};

/// max/mean above this is flagged as imbalanced (Cruise Control's default balance threshold).
pub const IMBALANCE_THRESHOLD: f64 = 1.10;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Quality {
    pub members: i64,
    pub partitions: i64,
    pub assigned: i64,
    pub unassigned: i64,
    pub min_count: i64,
    pub max_count: i64,
    pub count_spread: i64,
    pub count_ratio: Option<f64>,
    pub max_member_lag: i64,
    pub mean_member_lag: f64,
    pub lag_ratio: Option<f64>,
    pub lag_ratio_bound: Option<f64>,
    pub lag_imbalanced: bool,
    pub moves: i64,
    pub kept: i64,
    pub rack_local: i64,
    pub rack_eligible: i64,
    pub rack_locality: Option<f64>,
    pub violations: i64,
}

fn ratio(max: f64, mean: f64) -> Option<f64> {
    (mean > 0.0).then(|| max / mean)
}

/// All metrics of `placed` (a result on `group.problem`).
pub fn evaluate(group: &Group, placed: &Placed) -> Quality {
    let p = &group.problem;
    let n = placed.per_member.len();
    let total = p.num_partitions() as i64;
    let mut counts = Vec::with_capacity(n);
    let mut member_lag: Vec<i128> = Vec::with_capacity(n);
    let mut owner_now = vec![NONE; total as usize];
    let mut seen = vec![false; total as usize];
    let (mut violations, mut local, mut eligible) = (0i64, 0i64, 0i64);
    for (m, parts) in placed.per_member.iter().enumerate() {
        let extra = placed.invalid.get(m).copied().unwrap_or(0) as i64;
        counts.push(parts.len() as i64 + extra);
        violations += extra;
        let rack = group.member_rack_id[group.row_of[m] as usize];
        let mut sum = 0i128;
        for &f in parts {
            let fi = f as usize;
            sum += group.lag[fi] as i128;
            if seen[fi] || !problem::subscribes(p, m, f) {
                violations += 1;
            }
            seen[fi] = true;
            owner_now[fi] = m as u32;
            if let (Some(r), Some(racks)) = (rack, &group.part_racks[fi]) {
                if !racks.is_empty() {
                    eligible += 1;
                    if racks.contains(&r) {
                        local += 1;
                    }
                }
            }
        }
        member_lag.push(sum);
    }
    if counts.is_empty() {
        counts.push(0);
        member_lag.push(0);
    }
    let assigned: i64 = counts.iter().sum();
    let (min_c, max_c) = (*counts.iter().min().unwrap(), *counts.iter().max().unwrap());
    let max_lag = member_lag.iter().copied().max().unwrap_or(0);
    let lag_sum: i128 = member_lag.iter().sum();
    let mean_lag = if n > 0 { lag_sum as f64 / n as f64 } else { 0.0 };
    let lag_r = ratio(max_lag as f64, mean_lag);
    let (mut moves, mut kept) = (0i64, 0i64);
    for (f, &prev) in group.previous.iter().enumerate() {
        if prev == NONE {
            continue;
        }
        if owner_now[f] == prev {
            kept += 1;
        } else {
            moves += 1;
        }
    }
    let clamp = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
    Quality {
        members: n as i64,
        partitions: total,
        assigned,
        unassigned: total - assigned,
        min_count: min_c,
        max_count: max_c,
        count_spread: max_c - min_c,
        count_ratio: ratio(max_c as f64, if n > 0 { assigned as f64 / n as f64 } else { 0.0 }),
        max_member_lag: clamp(max_lag),
        mean_member_lag: mean_lag,
        lag_ratio: lag_r,
        lag_ratio_bound: group.lag_bound,
        lag_imbalanced: lag_r.is_some_and(|r| r > IMBALANCE_THRESHOLD),
        moves,
        kept,
        rack_local: local,
        rack_eligible: eligible,
        rack_locality: (eligible > 0).then(|| local as f64 / eligible as f64),
        violations,
    }
}
