//! Quality metrics of one assignment of a group (docs/fleet.md, "Result columns"): count balance,
//! member lag spread and its lower bound, moves and kept against the previous owners, rack
//! locality, and invalid placements. They measure a result; they never compute one.
//!
//! Two fronts over one set of definitions: [`evaluate`] measures a fleet group's result on its
//! interned problem (the fleet job), [`Named`] measures any assignment given by names
//! (`kassign.quality`, whose arguments may name unknown members or partitions). Both tally the
//! same counts and hand them to [`summarize`], which holds every ratio and threshold.

use super::{problem, FastMap, FastSet, Group, Placed, NONE};
use crate::lag::lag_ratio_bound;

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

impl Quality {
    /// The busiest member's lag against the best any assignment could do: `lag_ratio` over
    /// `lag_ratio_bound` (the report's `lag_vs_bound`), when both are known.
    pub fn lag_vs_bound(&self) -> Option<f64> {
        self.lag_ratio.zip(self.lag_ratio_bound).map(|(r, b)| r / b)
    }
}

/// max / mean, or `None` when the mean is not positive (nothing to balance).
pub fn ratio(max: f64, mean: f64) -> Option<f64> {
    (mean > 0.0).then(|| max / mean)
}

/// max - min of `counts` (0 when empty).
pub fn count_spread(counts: &[i64]) -> i64 {
    match (counts.iter().min(), counts.iter().max()) {
        (Some(lo), Some(hi)) => hi - lo,
        _ => 0,
    }
}

/// Whether a placement is rack-local: `None` when it is not eligible (the member has no rack or
/// the partition no known replica racks), else whether a replica is on the member's rack.
pub fn rack_local<R: PartialEq>(member_rack: Option<&R>, replica_racks: Option<&[R]>) -> Option<bool> {
    match (member_rack, replica_racks) {
        (Some(r), Some(racks)) if !racks.is_empty() => Some(racks.contains(r)),
        _ => None,
    }
}

/// What a measurement tallies before the ratios: per member (in result order) its partition
/// count and lag sum, and the group's totals.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Partitions per member of the result (placements that name nothing included).
    pub counts: Vec<i64>,
    /// Lag sum per member of the result.
    pub member_lag: Vec<i128>,
    /// Assignable partitions of the group.
    pub partitions: i64,
    pub lag_ratio_bound: Option<f64>,
    pub moves: i64,
    pub kept: i64,
    pub rack_local: i64,
    pub rack_eligible: i64,
    pub violations: i64,
}

/// Every metric from its tallies: the one place the balance ratios, the imbalance threshold and
/// rack locality are defined.
pub fn summarize(t: Tally) -> Quality {
    let n = t.counts.len();
    let assigned: i64 = t.counts.iter().sum();
    let min_c = t.counts.iter().copied().min().unwrap_or(0);
    let max_c = t.counts.iter().copied().max().unwrap_or(0);
    let max_lag = t.member_lag.iter().copied().max().unwrap_or(0);
    let lag_sum: i128 = t.member_lag.iter().sum();
    let mean_lag = if n > 0 { lag_sum as f64 / n as f64 } else { 0.0 };
    let lag_r = ratio(max_lag as f64, mean_lag);
    let clamp = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
    Quality {
        members: n as i64,
        partitions: t.partitions,
        assigned,
        unassigned: t.partitions - assigned,
        min_count: min_c,
        max_count: max_c,
        count_spread: max_c - min_c,
        count_ratio: ratio(max_c as f64, if n > 0 { assigned as f64 / n as f64 } else { 0.0 }),
        max_member_lag: clamp(max_lag),
        mean_member_lag: mean_lag,
        lag_ratio: lag_r,
        lag_ratio_bound: t.lag_ratio_bound,
        lag_imbalanced: lag_r.is_some_and(|r| r > IMBALANCE_THRESHOLD),
        moves: t.moves,
        kept: t.kept,
        rack_local: t.rack_local,
        rack_eligible: t.rack_eligible,
        rack_locality: (t.rack_eligible > 0).then(|| t.rack_local as f64 / t.rack_eligible as f64),
        violations: t.violations,
    }
}

/// All metrics of `placed` (a result on `group.problem`).
pub fn evaluate(group: &Group, placed: &Placed) -> Quality {
    let p = &group.problem;
    let n = placed.per_member.len();
    let total = p.num_partitions() as i64;
    let mut t = Tally {
        counts: Vec::with_capacity(n),
        member_lag: Vec::with_capacity(n),
        partitions: total,
        lag_ratio_bound: group.lag_bound,
        ..Tally::default()
    };
    let mut owner_now = vec![NONE; total as usize];
    let mut seen = vec![false; total as usize];
    for (m, parts) in placed.per_member.iter().enumerate() {
        let extra = placed.invalid.get(m).copied().unwrap_or(0) as i64;
        t.counts.push(parts.len() as i64 + extra);
        t.violations += extra;
        let rack = group.member_rack_id[group.row_of[m] as usize];
        let mut sum = 0i128;
        for &f in parts {
            let fi = f as usize;
            sum += group.lag[fi] as i128;
            if seen[fi] || !problem::subscribes(p, m, f) {
                t.violations += 1;
            }
            seen[fi] = true;
            owner_now[fi] = m as u32;
            if let Some(hit) = rack_local(rack.as_ref(), group.part_racks[fi].as_deref()) {
                t.rack_eligible += 1;
                t.rack_local += hit as i64;
            }
        }
        t.member_lag.push(sum);
    }
    for (f, &prev) in group.previous.iter().enumerate() {
        if prev == NONE {
            continue;
        }
        if owner_now[f] == prev {
            t.kept += 1;
        } else {
            t.moves += 1;
        }
    }
    summarize(t)
}

/// A member as the metrics by names see it.
#[derive(Clone, Debug, Default)]
pub struct NamedMember {
    pub id: String,
    /// Subscribed topic names.
    pub topics: Vec<String>,
    /// Rack (an empty name counts as none).
    pub rack: Option<String>,
}

/// A `(topic, partition)` key of the metrics by names.
pub type Key = (String, i64);

/// The group side of a measurement by names (`kassign.quality`): members, partition counts, and
/// optional lags and replica racks, indexed once for every metric of one call.
pub struct Named<'a> {
    members: FastMap<&'a str, &'a NamedMember>,
    subscribed: FastSet<&'a str>,
    partitions_per_topic: FastMap<&'a str, i64>,
    lags: FastMap<(&'a str, i64), i64>,
    racks: FastMap<(&'a str, i64), &'a [String]>,
    n_members: usize,
}

/// An assignment by names: member id -> its `(topic, partition)` list, in the caller's order.
pub type NamedAssignment = [(String, Vec<Key>)];

/// Partitions per member of `assignment`, in its order.
pub fn counts(assignment: &NamedAssignment) -> Vec<i64> {
    assignment.iter().map(|(_, tps)| tps.len() as i64).collect()
}

impl<'a> Named<'a> {
    /// Index the group. A repeated member id or key: the last one counts (a mapping's rule).
    pub fn new(
        members: &'a [NamedMember],
        partitions_per_topic: &'a [(String, i64)],
        lags: &'a [(Key, i64)],
        partition_racks: &'a [(Key, Vec<String>)],
    ) -> Named<'a> {
        let mut named = Named {
            members: FastMap::default(),
            subscribed: FastSet::default(),
            partitions_per_topic: partitions_per_topic.iter().map(|(t, c)| (t.as_str(), *c)).collect(),
            lags: lags.iter().map(|((t, p), l)| ((t.as_str(), *p), *l)).collect(),
            racks: partition_racks
                .iter()
                .map(|((t, p), r)| ((t.as_str(), *p), r.as_slice()))
                .collect(),
            n_members: 0,
        };
        for m in members {
            named.members.insert(m.id.as_str(), m);
            named.subscribed.extend(m.topics.iter().map(String::as_str));
        }
        named.n_members = named.members.len();
        named
    }

    /// Whether `(topic, partition)` is assignable: its topic exists, the index is in range and
    /// some member subscribes to the topic.
    fn assignable(&self, topic: &str, partition: i64) -> bool {
        self.subscribed.contains(topic)
            && 0 <= partition
            && partition < self.partitions_per_topic.get(topic).copied().unwrap_or(0)
    }

    /// Partitions of existing topics that at least one member subscribes to.
    pub fn assignable_partitions(&self) -> i64 {
        self.subscribed
            .iter()
            .map(|t| self.partitions_per_topic.get(t).copied().unwrap_or(0))
            .sum()
    }

    /// [`lag_ratio_bound`] over the assignable partitions' known lags.
    pub fn lag_ratio_bound(&self) -> Option<f64> {
        let (mut total, mut top) = (0i128, 0i64);
        for (&(t, p), &lag) in &self.lags {
            if self.assignable(t, p) {
                total += lag as i128;
                top = top.max(lag);
            }
        }
        lag_ratio_bound(total, top, self.n_members)
    }

    /// Sum of partition lags per member of `assignment` (unknown lags count as 0).
    pub fn member_lags(&self, assignment: &NamedAssignment) -> Vec<i128> {
        assignment
            .iter()
            .map(|(_, tps)| {
                tps.iter()
                    .map(|(t, p)| self.lags.get(&(t.as_str(), *p)).copied().unwrap_or(0) as i128)
                    .sum()
            })
            .collect()
    }

    /// (moves, kept): previously owned, still assignable partitions that changed owner / stayed
    /// (a partition listed twice in `assignment`: its last owner counts).
    pub fn moves(&self, previous: &[(Key, String)], assignment: &NamedAssignment) -> (i64, i64) {
        let mut owner_now: FastMap<(&str, i64), &str> = FastMap::default();
        for (m, tps) in assignment {
            for (t, p) in tps {
                owner_now.insert((t.as_str(), *p), m.as_str());
            }
        }
        let (mut moved, mut kept) = (0, 0);
        for ((t, p), prev) in previous {
            if !self.assignable(t, *p) {
                continue;
            }
            if owner_now.get(&(t.as_str(), *p)) == Some(&prev.as_str()) {
                kept += 1;
            } else {
                moved += 1;
            }
        }
        (moved, kept)
    }

    /// (local, eligible): placements with a replica on their member's rack / with both a member
    /// rack and known replica racks.
    pub fn rack_locality(&self, assignment: &NamedAssignment) -> (i64, i64) {
        let (mut local, mut eligible) = (0, 0);
        for (m, tps) in assignment {
            let rack = self
                .members
                .get(m.as_str())
                .and_then(|m| m.rack.as_ref())
                .filter(|r| !r.is_empty());
            for (t, p) in tps {
                let racks = self.racks.get(&(t.as_str(), *p)).copied();
                if let Some(hit) = rack_local(rack, racks) {
                    eligible += 1;
                    local += hit as i64;
                }
            }
        }
        (local, eligible)
    }

    /// Invalid placements: a partition given twice, to a non-subscriber, or out of range; a
    /// result entry of no member of the group (its partitions, or 1 when it has none); a member
    /// of the group missing from the result. 0 for every valid assignment.
    pub fn violations(&self, assignment: &NamedAssignment) -> i64 {
        let listed: FastSet<&str> = assignment.iter().map(|(m, _)| m.as_str()).collect();
        let mut bad = self.members.keys().filter(|m| !listed.contains(*m)).count() as i64;
        let mut seen: FastSet<(&str, i64)> = FastSet::default();
        for (m, tps) in assignment {
            let Some(member) = self.members.get(m.as_str()) else {
                bad += tps.len().max(1) as i64;
                continue;
            };
            for (t, p) in tps {
                let in_range = 0 <= *p && *p < self.partitions_per_topic.get(t.as_str()).copied().unwrap_or(0);
                if !seen.insert((t.as_str(), *p)) || !member.topics.contains(t) || !in_range {
                    bad += 1;
                }
            }
        }
        bad
    }

    /// Every metric of `assignment`. `assignable` and `lag_bound` depend on the group only
    /// (callers measuring several assignments pass them computed once); `previous` is the
    /// previous owner of each claimed key.
    pub fn evaluate(
        &self,
        assignment: &NamedAssignment,
        previous: &[(Key, String)],
        assignable: Option<i64>,
        lag_bound: Option<Option<f64>>,
    ) -> Quality {
        let (moves, kept) = self.moves(previous, assignment);
        let (rack_local, rack_eligible) = self.rack_locality(assignment);
        summarize(Tally {
            counts: counts(assignment),
            member_lag: self.member_lags(assignment),
            partitions: assignable.unwrap_or_else(|| self.assignable_partitions()),
            lag_ratio_bound: lag_bound.unwrap_or_else(|| self.lag_ratio_bound()),
            moves,
            kept,
            rack_local,
            rack_eligible,
            violations: self.violations(assignment),
        })
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
