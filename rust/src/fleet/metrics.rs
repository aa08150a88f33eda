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

#[cfg(test)]
mod tests {
    use super::super::tests::rows;
    use super::super::{Group, OffsetReset, Placed};
    use super::*;
    use proptest::prelude::*;

    const IDS: [&str; 5] = ["m0", "m1", "m2", "m3", "m4"];
    const SUBS: [&[&str]; 3] = [&["t"], &["u"], &["t", "u"]];

    proptest! {
        /// The metrics of random placements (duplicates, partitions outside a member's
        /// subscription, unassigned ones) against sums written out here from the definitions.
        #[test]
        fn metrics_match_their_definitions(
            subs in proptest::collection::vec(0usize..3, 1..5),
            sizes in (1i32..5, 1i32..5),
            lags in proptest::collection::vec(0i64..1000, 8),
            owned_by in proptest::collection::vec(proptest::option::of(0usize..5), 8),
            picks in proptest::collection::vec((0usize..5, 0usize..8), 0..14),
        ) {
            // The group's partitions: those of the topics some member subscribes to.
            let wanted = |t: &str| subs.iter().any(|&s| SUBS[s].contains(&t));
            let parts: Vec<(&str, i32)> = (0..sizes.0)
                .map(|p| ("t", p))
                .chain((0..sizes.1).map(|p| ("u", p)))
                .filter(|&(t, _)| wanted(t))
                .collect();
            // Previous owners: partition k owned by member owned_by[k] (when that member exists).
            let mut owned: Vec<Vec<(&str, i32)>> = vec![Vec::new(); subs.len()];
            for (k, &(t, p)) in parts.iter().enumerate() {
                if let Some(m) = owned_by[k].filter(|&m| m < subs.len()) {
                    owned[m].push((t, p));
                }
            }
            let members: Vec<_> = subs
                .iter()
                .enumerate()
                .map(|(m, &s)| (IDS[m], SUBS[s], owned[m].as_slice(), 1, None))
                .collect();
            let part_rows: Vec<_> =
                parts.iter().enumerate().map(|(k, &(t, p))| (t, p, &[][..], 0, lags[k], Some(0))).collect();
            let group = Group::build(&rows(&members, &part_rows), OffsetReset::Latest).unwrap();
            let prob = &group.problem;
            // The flat id of partition k of `parts` (topics sorted by name, as here).
            let flat = |k: usize| -> u32 {
                let (t, p) = parts[k];
                let id = prob.topics.iter().position(|x| x == t).unwrap();
                prob.topic_range(id as _).start + p as u32
            };
            let n = subs.len();
            let mut per_member = vec![Vec::new(); n];
            for &(m, k) in &picks {
                if m < n && k < parts.len() {
                    per_member[m].push(flat(k));
                }
            }
            let q = evaluate(&group, &Placed::from_lists(per_member.clone()));
            // Written out: member m of the problem is row group.row_of[m].
            let subscribes = |m: usize, k: usize| SUBS[subs[group.row_of[m] as usize]].contains(&parts[k].0);
            let k_of = |f: u32| (0..parts.len()).find(|&k| flat(k) == f).unwrap();
            let mut seen = std::collections::HashSet::new();
            let (mut violations, mut assigned) = (0, 0);
            let mut member_lag = vec![0i64; n];
            let mut now = std::collections::HashMap::new();
            for (m, list) in per_member.iter().enumerate() {
                for &f in list {
                    let k = k_of(f);
                    assigned += 1;
                    if !seen.insert(f) || !subscribes(m, k) {
                        violations += 1;
                    }
                    member_lag[m] += lags[k];
                    now.insert(k, m);
                }
            }
            let (mut moves, mut kept) = (0, 0);
            for (k, prev) in owned_by.iter().enumerate().take(parts.len()) {
                let Some(prev) = prev.filter(|&m| m < n) else { continue };
                let prev_member = group.member_order[prev] as usize;
                if now.get(&k) == Some(&prev_member) { kept += 1 } else { moves += 1 }
            }
            let counts: Vec<i64> = per_member.iter().map(|l| l.len() as i64).collect();
            prop_assert_eq!(q.members, n as i64);
            prop_assert_eq!(q.partitions, parts.len() as i64);
            prop_assert_eq!(q.assigned, assigned);
            prop_assert_eq!(q.unassigned, parts.len() as i64 - assigned);
            prop_assert_eq!(q.violations, violations);
            prop_assert_eq!(q.min_count, *counts.iter().min().unwrap());
            prop_assert_eq!(q.max_count, *counts.iter().max().unwrap());
            prop_assert_eq!(q.max_member_lag, *member_lag.iter().max().unwrap());
            let mean = member_lag.iter().sum::<i64>() as f64 / n as f64;
            prop_assert!((q.mean_member_lag - mean).abs() < 1e-9);
            prop_assert_eq!((q.moves, q.kept), (moves, kept));
        }
    }
}
