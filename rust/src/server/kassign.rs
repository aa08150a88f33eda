//! `server-kassign`: kassign's own broker-side (KIP-848) assignor, the computation behind the
//! `kassign` assignor that `java/broker/` plugs into the group coordinator.
//!
//! On the consumer protocol's inputs (each member's subscribed topics, rack and *current target
//! assignment*; no generations, no user data) it returns, in this order of priority:
//!
//! 1. the most balanced assignment the subscriptions allow, judged on the whole load vector (no
//!    cost-reducing path, hence the smallest sum of squared member loads; with equal
//!    subscriptions, loads differ by at most one);
//! 2. among those, the most partitions kept from the current target assignment;
//! 3. then KIP-881 rack locality (a member's rack against the racks of a partition's replicas),
//!    never at the cost of 1 or 2.
//!
//! This is the sticky engine (`crate::sticky`, eager) with its claims taken from the current
//! target assignment by the server rule of [`super::current_owners`] (a partition two members
//! hold is owned by nobody; claims of unsubscribed topics are dropped), not from generations.
//!
//! [`assign_flat`] is the same computation on the flat arrays the JNI boundary hands over
//! (`rust/src/jni/`), including the coordinator's `isPartitionAssignable` (a partition that is
//! not assignable is left out of the problem and stays unassigned).

use crate::model::{Assignment, InputError, PartId, Problem, ProblemBuilder, MAX_MEMBERS, NO_OWNER};

/// The optimiser's work budget ([`crate::sticky`]'s `Work`: members, classes and edges visited
/// while balancing heterogeneous subscriptions and maximising kept partitions). Every group of the
/// benchmark shapes needs far less (docs/broker.md, "Safety on the coordinator");
/// a pathological group that exhausts it gets [`super::uniform`]'s assignment instead.
pub const WORK_BUDGET: u64 = 400_000_000;

/// Run `server-kassign` on an interned problem, within [`WORK_BUDGET`].
pub fn assign(problem: &Problem) -> Assignment {
    assign_within(problem, WORK_BUDGET).0
}

/// Run `server-kassign` within `budget` units of work. When the optimiser runs out (only
/// possible on heterogeneous subscriptions; the homogeneous path has no iterative part), the
/// result is `server-uniform`'s for the same inputs (valid, and as balanced and as sticky as the
/// broker's own `uniform`) and the flag is `true`.
pub fn assign_within(problem: &Problem, budget: u64) -> (Assignment, bool) {
    let mut work = crate::sticky::Work::new(budget);
    match crate::sticky::assign_from_owners(problem, super::current_owners(problem), &mut work) {
        Ok(plan) => (plan, false),
        Err(crate::sticky::OutOfWork) => (super::uniform::assign(problem), true),
    }
}

/// A group as flat arrays, in the caller's order. Topics are identified by a string (the broker
/// uses the topic id's string form); member `i`'s subscription is
/// `sub_topics[sub_offsets[i]..sub_offsets[i + 1]]` (topic indexes), its current target
/// assignment the pairs `(owned_topics[k], owned_partitions[k])` for `k` in
/// `owned_offsets[i]..owned_offsets[i + 1]` (a topic index of -1 names a topic that is not in
/// `topics`; such claims are dropped). Partition-indexed arrays use the *input flat index*:
/// partition `p` of topic `t` is `sum(partition_counts[..t]) + p`.
#[derive(Clone, Debug, Default)]
pub struct FlatGroup<'a> {
    pub member_ids: Vec<String>,
    /// Index into `rack_names`, or -1.
    pub member_racks: &'a [i32],
    pub rack_names: Vec<String>,
    pub topics: Vec<String>,
    pub partition_counts: &'a [i32],
    pub sub_offsets: &'a [i32],
    pub sub_topics: &'a [i32],
    pub owned_offsets: &'a [i32],
    pub owned_topics: &'a [i32],
    pub owned_partitions: &'a [i32],
    /// Empty (no replica racks known), or one offset per input flat partition plus one into
    /// `partition_racks` (indexes into `rack_names`).
    pub partition_rack_offsets: &'a [i32],
    pub partition_racks: &'a [i32],
    /// Empty (every partition assignable), or one flag per input flat partition (0 = not assignable).
    pub assignable: &'a [u8],
}

fn invalid(msg: String) -> InputError {
    InputError::Invalid(msg)
}

/// Check a CSR offset array: `n + 1` entries, starting at 0, non-decreasing, ending at `len`.
fn check_offsets(name: &str, offsets: &[i32], n: usize, len: usize) -> Result<(), InputError> {
    if offsets.len() != n + 1 {
        return Err(invalid(format!(
            "{name}: expected {} offsets, got {}",
            n + 1,
            offsets.len()
        )));
    }
    if offsets[0] != 0 || offsets[n] as i64 != len as i64 || offsets.windows(2).any(|w| w[0] > w[1]) {
        return Err(invalid(format!(
            "{name}: offsets must start at 0, never decrease and end at {len}"
        )));
    }
    Ok(())
}

fn check_index(name: &str, values: &[i32], n: usize, allow_none: bool) -> Result<(), InputError> {
    let lo = if allow_none { -1 } else { 0 };
    match values.iter().find(|&&v| v < lo || v as i64 >= n as i64) {
        Some(v) => Err(invalid(format!("{name}: index {v} out of range 0..{n}"))),
        None => Ok(()),
    }
}

/// Check every shape and index of a flat group, in one place, before anything is allocated per
/// partition: array lengths, CSR offsets and the indexes they hold. Returns the input flat
/// partition count (negative counts count as 0 here; the model builder rejects them with the
/// caps, [`crate::model::MAX_PARTITIONS`] and [`MAX_MEMBERS`], as for every other entry point).
fn check_shapes(g: &FlatGroup<'_>) -> Result<usize, InputError> {
    let m = g.member_ids.len();
    let t = g.topics.len();
    if m > MAX_MEMBERS {
        return Err(InputError::TooManyMembers(m));
    }
    if g.partition_counts.len() != t {
        return Err(invalid(format!(
            "partition_counts: expected {t} counts (one per topic), got {}",
            g.partition_counts.len()
        )));
    }
    if g.member_racks.len() != m {
        return Err(invalid(format!(
            "member_racks: expected {m} entries, got {}",
            g.member_racks.len()
        )));
    }
    check_index("member_racks", g.member_racks, g.rack_names.len(), true)?;
    check_offsets("sub_offsets", g.sub_offsets, m, g.sub_topics.len())?;
    check_index("sub_topics", g.sub_topics, t, false)?;
    check_offsets("owned_offsets", g.owned_offsets, m, g.owned_topics.len())?;
    if g.owned_partitions.len() != g.owned_topics.len() {
        return Err(invalid("owned_partitions: must be as long as owned_topics".to_string()));
    }
    check_index("owned_topics", g.owned_topics, t, true)?;
    let total: usize = g.partition_counts.iter().map(|&n| n.max(0) as usize).sum();
    if !g.partition_rack_offsets.is_empty() {
        check_offsets(
            "partition_rack_offsets",
            g.partition_rack_offsets,
            total,
            g.partition_racks.len(),
        )?;
        check_index("partition_racks", g.partition_racks, g.rack_names.len(), false)?;
    }
    if !g.assignable.is_empty() && g.assignable.len() != total {
        return Err(invalid(format!(
            "assignable: expected {total} flags (one per partition), got {}",
            g.assignable.len()
        )));
    }
    Ok(total)
}

/// Run `server-kassign` on a flat group. Returns the owner of every input flat partition: the
/// member's index in `member_ids`, or -1 (not subscribed by anyone, or not assignable).
///
/// Bad shapes and indexes are clear errors ([`check_shapes`]), never a panic.
/// The group is taken by value: the member ids move into the problem (no copy per member).
pub fn assign_flat(mut g: FlatGroup<'_>) -> Result<Vec<i32>, InputError> {
    let total = check_shapes(&g)?;
    let member_ids = std::mem::take(&mut g.member_ids);
    let m = member_ids.len();
    let t = g.topics.len();
    let base: Vec<usize> = g
        .partition_counts
        .iter()
        .scan(0usize, |acc, &n| {
            let b = *acc;
            *acc += n.max(0) as usize;
            Some(b)
        })
        .collect();
    // Not-assignable partitions are left out: topic t keeps its assignable partitions, renumbered
    // in order. The counts are the builder's input (it checks them, the caps included, before
    // anything is allocated per partition); `compact[flat]` is then a partition's index in its
    // topic's problem, or -1.
    let counts: Vec<i64> = (0..t)
        .map(|ti| {
            let n = g.partition_counts[ti] as i64;
            if g.assignable.is_empty() || n <= 0 {
                n
            } else {
                let b0 = base[ti];
                g.assignable[b0..b0 + n as usize].iter().filter(|&&a| a != 0).count() as i64
            }
        })
        .collect();
    let mut b = ProblemBuilder::new(g.topics.iter().map(|s| s.as_str()).zip(counts.iter().copied()))?;
    let mut compact: Vec<i32> = Vec::new();
    if !g.assignable.is_empty() {
        compact = vec![-1; total];
        for ti in 0..t {
            let mut k = 0i32;
            for p in 0..g.partition_counts[ti].max(0) as usize {
                if g.assignable[base[ti] + p] != 0 {
                    compact[base[ti] + p] = k;
                    k += 1;
                }
            }
        }
    }
    let local = |ti: usize, p: i64| -> i64 {
        if compact.is_empty() {
            p
        } else if p < 0 || p >= g.partition_counts[ti] as i64 {
            -1
        } else {
            compact[base[ti] + p as usize] as i64
        }
    };
    let tids: Vec<u32> = (0..t)
        .map(|i| {
            b.given_topic(i)
                .ok_or_else(|| invalid("topics: internal index".to_string()))
        })
        .collect::<Result<_, _>>()?;
    b.reserve_members(m);
    // TopicIds are name order: sorting a subscription's ids sorts its names (no string sort), and
    // a member subscribed like the one before reuses its SubId (no hashing of names).
    let mut name_of: Vec<&str> = vec![""; t];
    for (i, &tid) in tids.iter().enumerate() {
        name_of[tid as usize] = g.topics[i].as_str();
    }
    let mut names: Vec<&str> = Vec::new();
    let mut sub_ids: Vec<u32> = Vec::new();
    let mut prev: Option<(Vec<u32>, u32)> = None;
    let mut owned: Vec<PartId> = Vec::new();
    for (i, id) in member_ids.into_iter().enumerate() {
        let (s0, s1) = (g.sub_offsets[i] as usize, g.sub_offsets[i + 1] as usize);
        sub_ids.clear();
        sub_ids.extend(g.sub_topics[s0..s1].iter().map(|&x| tids[x as usize]));
        sub_ids.sort_unstable();
        sub_ids.dedup();
        let sub = match &prev {
            Some((ids, s)) if *ids == sub_ids => *s,
            _ => {
                names.clear();
                names.extend(sub_ids.iter().map(|&x| name_of[x as usize]));
                let s = b.subscription(&names);
                prev = Some((sub_ids.clone(), s));
                s
            }
        };
        owned.clear();
        let (o0, o1) = (g.owned_offsets[i] as usize, g.owned_offsets[i + 1] as usize);
        for k in o0..o1 {
            let ti = g.owned_topics[k];
            if ti < 0 {
                continue;
            }
            if let Some(p) = b.partition(tids[ti as usize], local(ti as usize, g.owned_partitions[k] as i64)) {
                owned.push(p);
            }
        }
        let rack = match g.member_racks[i] {
            r if r >= 0 => Some(g.rack_names[r as usize].as_str()),
            _ => None,
        };
        b.add_member(id, sub, owned.clone(), 0, rack, None)?;
    }
    if !g.partition_rack_offsets.is_empty() {
        b.with_partition_racks();
        let mut racks: Vec<&str> = Vec::new();
        for ti in 0..t {
            for p in 0..g.partition_counts[ti].max(0) as usize {
                let flat = base[ti] + p;
                let (r0, r1) = (
                    g.partition_rack_offsets[flat] as usize,
                    g.partition_rack_offsets[flat + 1] as usize,
                );
                if r0 == r1 {
                    continue;
                }
                racks.clear();
                racks.extend(
                    g.partition_racks[r0..r1]
                        .iter()
                        .map(|&r| g.rack_names[r as usize].as_str()),
                );
                b.add_partition_racks(tids[ti], local(ti, p as i64), &racks);
            }
        }
    }
    let problem = b.build()?;
    let plan = assign(&problem);
    // Member index (by id) -> the caller's index.
    let mut caller = vec![0i32; m];
    for (pos, &idx) in problem.input_order.iter().enumerate() {
        caller[idx as usize] = pos as i32;
    }
    let mut out = vec![-1i32; total];
    for ti in 0..t {
        for p in 0..g.partition_counts[ti].max(0) as usize {
            if let Some(flat) = b_partition(&problem, tids[ti], local(ti, p as i64)) {
                let o = plan.owner[flat as usize];
                if o != NO_OWNER {
                    out[base[ti] + p] = caller[o as usize];
                }
            }
        }
    }
    Ok(out)
}

/// The problem's flat id of partition `p` of topic `t`, or `None` when out of range.
fn b_partition(problem: &Problem, t: u32, p: i64) -> Option<PartId> {
    let len = problem.topic_len[t as usize];
    (p >= 0 && (p as u64) < len as u64).then(|| problem.topic_base[t as usize] + p as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::too_many_arguments)]
    fn group<'a>(
        ids: &[&str],
        topics: &[&str],
        counts: &'a [i32],
        sub_offsets: &'a [i32],
        sub_topics: &'a [i32],
        owned_offsets: &'a [i32],
        owned_topics: &'a [i32],
        owned_partitions: &'a [i32],
        member_racks: &'a [i32],
    ) -> FlatGroup<'a> {
        FlatGroup {
            member_ids: ids.iter().map(|s| s.to_string()).collect(),
            member_racks,
            rack_names: vec!["a".into(), "b".into()],
            topics: topics.iter().map(|s| s.to_string()).collect(),
            partition_counts: counts,
            sub_offsets,
            sub_topics,
            owned_offsets,
            owned_topics,
            owned_partitions,
            ..Default::default()
        }
    }

    #[test]
    fn keeps_the_current_target_when_balanced() {
        // c1 holds t-2 and t-3, c0 holds t-0 and t-1: balanced already, nothing moves.
        let g = group(
            &["c1", "c0"],
            &["t"],
            &[4],
            &[0, 1, 2],
            &[0, 0],
            &[0, 2, 4],
            &[0, 0, 0, 0],
            &[2, 3, 0, 1],
            &[-1, -1],
        );
        assert_eq!(assign_flat(g).unwrap(), vec![1, 1, 0, 0]);
    }

    #[test]
    fn not_assignable_partitions_stay_unassigned() {
        let mut g = group(
            &["c0", "c1"],
            &["t"],
            &[4],
            &[0, 1, 2],
            &[0, 0],
            &[0, 0, 0],
            &[],
            &[],
            &[-1, -1],
        );
        let flags = [1u8, 0, 1, 1];
        g.assignable = &flags;
        let out = assign_flat(g).unwrap();
        assert_eq!(out[1], -1);
        let mut loads = [0, 0];
        for &o in &out {
            if o >= 0 {
                loads[o as usize] += 1;
            }
        }
        assert_eq!(loads.iter().sum::<i32>(), 3);
        assert!((loads[0] - loads[1]).abs() <= 1);
    }

    #[test]
    fn bad_shapes_are_errors_not_panics() {
        let g = group(&["c0"], &["t"], &[2], &[0, 2], &[0], &[0, 0], &[], &[], &[-1]);
        assert!(assign_flat(g).is_err());
        let g = group(&["c0"], &["t"], &[2], &[0, 1], &[3], &[0, 0], &[], &[], &[-1]);
        assert!(assign_flat(g).is_err());
        let g = group(&["c0"], &["t"], &[-2], &[0, 1], &[0], &[0, 0], &[], &[], &[-1]);
        assert!(assign_flat(g).is_err());
        let g = group(&["c0"], &["t"], &[2], &[0, 1], &[0], &[0, 1], &[0], &[7], &[5]);
        assert!(assign_flat(g).is_err());
        let g = group(
            &["c0", "c0"],
            &["t"],
            &[2],
            &[0, 1, 2],
            &[0, 0],
            &[0, 0, 0],
            &[],
            &[],
            &[-1, -1],
        );
        assert!(assign_flat(g).is_err());
        // Partition-indexed arrays of the wrong length, and a replica rack out of range.
        let mut g = group(&["c0"], &["t"], &[2], &[0, 1], &[0], &[0, 0], &[], &[], &[-1]);
        let flags = [1u8];
        g.assignable = &flags;
        assert!(matches!(assign_flat(g), Err(InputError::Invalid(msg)) if msg.starts_with("assignable")));
        let mut g = group(&["c0"], &["t"], &[2], &[0, 1], &[0], &[0, 0], &[], &[], &[-1]);
        let offs = [0, 1];
        g.partition_rack_offsets = &offs;
        g.partition_racks = &[0];
        assert!(matches!(assign_flat(g), Err(InputError::Invalid(msg)) if msg.starts_with("partition_rack_offsets")));
        let mut g = group(&["c0"], &["t"], &[2], &[0, 1], &[0], &[0, 0], &[], &[], &[-1]);
        let offs = [0, 1, 2];
        g.partition_rack_offsets = &offs;
        g.partition_racks = &[0, 2];
        assert!(matches!(assign_flat(g), Err(InputError::Invalid(msg)) if msg.starts_with("partition_racks")));
        // The caps are the builder's: a negative count and a total beyond MAX_PARTITIONS, with
        // the assignable flags given too (counted before the builder sees the counts).
        let mut g = group(&["c0"], &["t"], &[-2], &[0, 1], &[0], &[0, 0], &[], &[], &[-1]);
        g.assignable = &[];
        assert!(matches!(assign_flat(g), Err(InputError::NegativePartitionCount(..))));
        let counts = [i32::MAX, i32::MAX];
        let g = group(&["c0"], &["t", "u"], &counts, &[0, 1], &[0], &[0, 0], &[], &[], &[-1]);
        assert!(matches!(assign_flat(g), Err(InputError::TooManyPartitions(_))));
    }

    #[test]
    fn odd_history_is_filtered() {
        // An unknown topic (-1), an out-of-range index and a partition two members hold.
        let g = group(
            &["c0", "c1"],
            &["t"],
            &[2],
            &[0, 1, 2],
            &[0, 0],
            &[0, 3, 4],
            &[-1, 0, 0, 0],
            &[0, 9, 1, 1],
            &[-1, -1],
        );
        let out = assign_flat(g).unwrap();
        assert!(out.iter().all(|&o| o == 0 || o == 1));
        assert_ne!(out[0], out[1]);
    }

    /// A heterogeneous group: `n` topics of `size` partitions; member i subscribes to the topics
    /// `j` with `(i + j) % 3 != 0`, and holds every partition of topic `i % n` as its current target.
    fn heterogeneous(members: usize, n: usize, size: i64) -> Problem {
        let topics: Vec<(String, i64)> = (0..n).map(|j| (format!("t{j:03}"), size)).collect();
        let members = (0..members)
            .map(|i| crate::model::MemberInput {
                id: format!("m{i:04}"),
                topics: (0..n)
                    .filter(|j| (i + j) % 3 != 0)
                    .map(|j| format!("t{j:03}"))
                    .collect(),
                owned: (0..size).map(|p| (format!("t{:03}", i % n), p)).collect(),
                generation: 1,
                rack: None,
                group_instance_id: None,
            })
            .collect();
        Problem::build(topics, members, vec![]).unwrap()
    }

    fn sum_of_squares(problem: &Problem, plan: &Assignment) -> u64 {
        plan.per_member(problem.members.len())
            .iter()
            .map(|v| (v.len() as u64).pow(2))
            .sum()
    }

    #[test]
    fn out_of_work_falls_back_to_uniform() {
        let p = heterogeneous(12, 9, 7);
        let (plan, fell_back) = assign_within(&p, WORK_BUDGET);
        assert!(!fell_back);
        let uniform = super::super::uniform::assign(&p);
        assert!(sum_of_squares(&p, &plan) <= sum_of_squares(&p, &uniform));
        // A budget too small for even one balancing round: uniform's plan, exactly.
        let (fallback, fell_back) = assign_within(&p, 10);
        assert!(fell_back);
        assert_eq!(fallback.owner, uniform.owner);
        // Homogeneous subscriptions have no iterative step: no budget needed.
        let topics = vec![("t".to_string(), 5)];
        let same = (0..3)
            .map(|i| crate::model::MemberInput {
                id: format!("c{i}"),
                topics: vec!["t".into()],
                owned: vec![],
                generation: -1,
                rack: None,
                group_instance_id: None,
            })
            .collect();
        let q = Problem::build(topics, same, vec![]).unwrap();
        assert_eq!(assign_within(&q, 0).0.owner, assign(&q).owner);
        assert!(!assign_within(&q, 0).1);
    }

    #[test]
    fn a_large_heterogeneous_group_stays_within_the_budget() {
        // 300 members over 60 topics of 50 partitions (3,000 partitions), many classes.
        let p = heterogeneous(300, 60, 50);
        assert!(!assign_within(&p, WORK_BUDGET).1);
    }

    #[test]
    fn racks_break_ties_without_costing_balance() {
        // Two members on racks a and b, four partitions with one replica each (a, a, b, b), fresh.
        let mut g = group(
            &["c0", "c1"],
            &["t"],
            &[4],
            &[0, 1, 2],
            &[0, 0],
            &[0, 0, 0],
            &[],
            &[],
            &[1, 0],
        );
        let offs = [0, 1, 2, 3, 4];
        let racks = [0, 0, 1, 1];
        g.partition_rack_offsets = &offs;
        g.partition_racks = &racks;
        // c0 is on rack b, c1 on rack a.
        assert_eq!(assign_flat(g).unwrap(), vec![1, 1, 0, 0]);
    }
}
