//! Range assignor, Java semantics (Apache Kafka's RangeAssignor; docs/strategies/range.md).
//!
//! Per topic, the topic's subscribers in member order (static members by instance id first, then
//! dynamic members by member id); member i of n gets the contiguous run starting at
//! `i*q + min(i, r)` of length `q + (i < r)`, where `q = P div n`, `r = P mod n`. Topics of equal
//! size with equal subscriber lists therefore line up (co-partitioning).
//!
//! Rack awareness (KIP-881) follows Java's RangeAssignor: it applies when, for at least one topic,
//! that topic's subscribers have racks that intersect the topic's replica racks and not every
//! partition of the topic has replicas on the same set of racks. Then, before the plain range pass,
//! (1) co-partitioned topics (same subscribers, same partition count, more than one topic) place
//! index p on the first subscriber, in member order, whose rack holds p in every one of those
//! topics and that still has room in all of them; (2) a single topic that needs rack awareness
//! gives each subscriber, in member order, its rack-matching partitions up to its quota. The plain
//! pass then places the rest: each subscriber, in member order, takes the lowest unassigned
//! partitions up to its quota. A member without a rack matches every partition.

use std::collections::BTreeMap;

use crate::model::{Assignment, MemberIdx, PartId, Problem, RackId};

pub fn assign(problem: &Problem) -> Assignment {
    if !problem.partition_racks.is_empty() && problem.members.iter().any(|m| m.rack.is_some()) {
        if let Some(a) = assign_rack_aware(problem) {
            return a;
        }
    }
    assign_plain(problem)
}

fn assign_plain(problem: &Problem) -> Assignment {
    let order = problem.member_order();
    // member index => position in member order
    let mut rank = vec![0u32; problem.members.len()];
    for (pos, &m) in order.iter().enumerate() {
        rank[m as usize] = pos as u32;
    }
    let mut out = Assignment::empty(problem);
    for (t, mut subs) in problem.subscribers().into_iter().enumerate() {
        if subs.is_empty() {
            continue;
        }
        subs.sort_by_key(|&m| rank[m as usize]);
        let range = problem.topic_range(t as u32);
        let p = range.len() as u32;
        let n = subs.len() as u32;
        let (q, r) = (p / n, p % n);
        for (i, &m) in subs.iter().enumerate() {
            let i = i as u32;
            let start = range.start + i * q + i.min(r);
            let len = q + u32::from(i < r);
            out.owner[start as usize..(start + len) as usize].fill(m);
        }
    }
    out
}

/// Per-topic state of the rack-aware pass (Java's TopicAssignmentState).
struct TopicState {
    topic: u32,
    /// subscribers in member order
    consumers: Vec<MemberIdx>,
    quota: u32,
    extra_left: u32,
    /// member index => partitions of this topic assigned so far
    assigned: BTreeMap<MemberIdx, u32>,
    /// flat partition id => still unassigned
    unassigned: Vec<bool>,
    needs_rack_aware: bool,
}

impl TopicState {
    fn max_assignable(&self, m: MemberIdx) -> u32 {
        let cap = self.quota + u32::from(self.extra_left > 0);
        cap.saturating_sub(*self.assigned.get(&m).unwrap_or(&0))
    }

    fn on_assigned(&mut self, m: MemberIdx, base: PartId, parts: &[PartId]) {
        let n = self.assigned.entry(m).or_insert(0);
        *n += parts.len() as u32;
        if *n > self.quota {
            self.extra_left = self.extra_left.saturating_sub(1);
        }
        for &p in parts {
            self.unassigned[(p - base) as usize] = false;
        }
    }
}

fn racks_match(problem: &Problem, m: MemberIdx, p: PartId) -> bool {
    match problem.members[m as usize].rack {
        None => true,
        Some(r) => problem.partition_racks[p as usize].binary_search(&r).is_ok(),
    }
}

/// Returns None when no topic needs rack awareness (the plain pass is then exact).
fn assign_rack_aware(problem: &Problem) -> Option<Assignment> {
    let order = problem.member_order();
    let mut rank = vec![0u32; problem.members.len()];
    for (pos, &m) in order.iter().enumerate() {
        rank[m as usize] = pos as u32;
    }
    let mut states: Vec<TopicState> = Vec::new();
    for (t, mut subs) in problem.subscribers().into_iter().enumerate() {
        let range = problem.topic_range(t as u32);
        if range.is_empty() {
            continue;
        }
        subs.sort_by_key(|&m| rank[m as usize]);
        let n = range.len() as u32;
        let (quota, extra_left) = if subs.is_empty() {
            (0, 0)
        } else {
            (n / subs.len() as u32, n % subs.len() as u32)
        };
        let consumer_racks: std::collections::BTreeSet<RackId> =
            subs.iter().filter_map(|&m| problem.members[m as usize].rack).collect();
        let mut needs = false;
        if !consumer_racks.is_empty() {
            let mut all: std::collections::BTreeSet<RackId> = std::collections::BTreeSet::new();
            for p in range.clone() {
                all.extend(problem.partition_racks[p as usize].iter().copied());
            }
            let intersects = consumer_racks.iter().any(|r| all.contains(r));
            let all_vec: Vec<RackId> = all.iter().copied().collect();
            let uneven = range.clone().any(|p| problem.partition_racks[p as usize] != all_vec);
            needs = intersects && uneven;
        }
        states.push(TopicState {
            topic: t as u32,
            consumers: subs,
            quota,
            extra_left,
            assigned: BTreeMap::new(),
            unassigned: vec![true; n as usize],
            needs_rack_aware: needs,
        });
    }
    if !states.iter().any(|s| s.needs_rack_aware) {
        return None;
    }
    let mut out = Assignment::empty(problem);

    // Group topics by (subscriber list, partition count); groups of two or more are co-partitioned.
    let mut groups: BTreeMap<(Vec<MemberIdx>, u32), Vec<usize>> = BTreeMap::new();
    for (i, s) in states.iter().enumerate() {
        groups
            .entry((s.consumers.clone(), s.unassigned.len() as u32))
            .or_default()
            .push(i);
    }
    for ((consumers, num_partitions), idxs) in groups {
        if idxs.len() > 1 {
            let mut remaining: Vec<MemberIdx> = consumers.clone();
            for i in 0..num_partitions {
                let found = remaining.iter().position(|&c| {
                    idxs.iter().all(|&s| {
                        let st = &states[s];
                        let p = problem.topic_base[st.topic as usize] + i;
                        racks_match(problem, c, p) && st.max_assignable(c) > 0
                    })
                });
                if let Some(pos) = found {
                    let c = remaining[pos];
                    for &s in &idxs {
                        let base = problem.topic_base[states[s].topic as usize];
                        let p = base + i;
                        out.owner[p as usize] = c;
                        states[s].on_assigned(c, base, &[p]);
                    }
                    if idxs.iter().all(|&s| states[s].max_assignable(c) == 0) {
                        remaining.remove(pos);
                        if remaining.is_empty() {
                            break;
                        }
                    }
                }
            }
        } else {
            let s = idxs[0];
            if states[s].needs_rack_aware {
                assign_ranges(problem, &mut states[s], &mut out, true);
            }
        }
    }
    for st in states.iter_mut() {
        assign_ranges(problem, st, &mut out, false);
    }
    Some(out)
}

/// Each consumer in member order takes the lowest unassigned partitions (rack-matching ones only
/// when `rack_filter`) up to what it may still take.
///
/// Linear per topic: a consumer always takes the *lowest* unassigned candidates, so every candidate
/// before the last one it took is assigned; one lazily advanced cursor per candidate list (all
/// partitions, or those with a replica on rack r) never has to look back.
fn assign_ranges(problem: &Problem, st: &mut TopicState, out: &mut Assignment, rack_filter: bool) {
    let base = problem.topic_base[st.topic as usize];
    let n = st.unassigned.len() as u32;
    let all: Vec<u32> = (0..n).collect();
    // rack => indexes (within the topic) of partitions with a replica on it, ascending
    let mut by_rack: BTreeMap<RackId, Vec<u32>> = BTreeMap::new();
    if rack_filter {
        for i in 0..n {
            for &r in &problem.partition_racks[(base + i) as usize] {
                by_rack.entry(r).or_default().push(i);
            }
        }
    }
    let mut cursors: BTreeMap<Option<RackId>, usize> = BTreeMap::new();
    let mut left = st.unassigned.iter().filter(|&&u| u).count();
    let consumers = st.consumers.clone();
    let empty: Vec<u32> = Vec::new();
    for c in consumers {
        if left == 0 {
            break;
        }
        let rack = if rack_filter {
            problem.members[c as usize].rack
        } else {
            None
        };
        let list = match rack {
            None => &all,
            Some(r) => by_rack.get(&r).unwrap_or(&empty),
        };
        let cursor = cursors.entry(rack).or_insert(0);
        let limit = st.max_assignable(c) as usize;
        let mut picked: Vec<PartId> = Vec::with_capacity(limit.min(list.len()));
        while picked.len() < limit && *cursor < list.len() {
            let i = list[*cursor];
            if st.unassigned[i as usize] {
                picked.push(base + i);
            }
            *cursor += 1;
        }
        if picked.is_empty() {
            continue;
        }
        left -= picked.len();
        for &p in &picked {
            out.owner[p as usize] = c;
        }
        st.on_assigned(c, base, &picked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::{member, names, topics};
    use crate::model::Problem;

    #[test]
    fn co_partitioned_topics_line_up() {
        let p = Problem::build(
            topics(&[("t1", 3), ("t2", 3)]),
            vec![member("c0", &["t1", "t2"]), member("c1", &["t1", "t2"])],
            vec![],
        )
        .unwrap();
        let a = assign(&p);
        assert_eq!(
            names(&p, &a),
            vec![vec!["t1-0", "t1-1", "t2-0", "t2-1"], vec!["t1-2", "t2-2"]]
        );
    }

    #[test]
    fn static_members_come_first() {
        let mut b = member("b", &["t"]);
        b.group_instance_id = Some("i1".into());
        let p = Problem::build(topics(&[("t", 3)]), vec![member("a", &["t"]), b], vec![]).unwrap();
        let a = assign(&p);
        // b is static, so it is first in member order and gets the extra partition.
        assert_eq!(names(&p, &a), vec![vec!["t-2"], vec!["t-0", "t-1"]]);
    }

    fn racks(spec: &[(&str, i64, &[&str])]) -> Vec<(String, i64, Vec<String>)> {
        spec.iter()
            .map(|(t, p, r)| (t.to_string(), *p, r.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn rack_aware_single_topic_prefers_local_replicas() {
        // t-0 on rack a, t-1 on rack b, t-2 on a, t-3 on b; c0 in rack b, c1 in rack a.
        let mut c0 = member("c0", &["t"]);
        c0.rack = Some("b".into());
        let mut c1 = member("c1", &["t"]);
        c1.rack = Some("a".into());
        let p = Problem::build(
            topics(&[("t", 4)]),
            vec![c0, c1],
            racks(&[("t", 0, &["a"]), ("t", 1, &["b"]), ("t", 2, &["a"]), ("t", 3, &["b"])]),
        )
        .unwrap();
        let a = assign(&p);
        assert_eq!(names(&p, &a), vec![vec!["t-1", "t-3"], vec!["t-0", "t-2"]]);
    }

    #[test]
    fn rack_data_on_every_rack_keeps_plain_ranges() {
        let mut c0 = member("c0", &["t"]);
        c0.rack = Some("b".into());
        let mut c1 = member("c1", &["t"]);
        c1.rack = Some("a".into());
        let p = Problem::build(
            topics(&[("t", 2)]),
            vec![c0, c1],
            racks(&[("t", 0, &["a", "b"]), ("t", 1, &["a", "b"])]),
        )
        .unwrap();
        assert_eq!(names(&p, &assign(&p)), vec![vec!["t-0"], vec!["t-1"]]);
    }

    #[test]
    fn rack_aware_co_partitioned_topics_stay_aligned() {
        let mut c0 = member("c0", &["x", "y"]);
        c0.rack = Some("b".into());
        let mut c1 = member("c1", &["x", "y"]);
        c1.rack = Some("a".into());
        let pr = racks(&[("x", 0, &["a"]), ("x", 1, &["b"]), ("y", 0, &["a"]), ("y", 1, &["b"])]);
        let p = Problem::build(topics(&[("x", 2), ("y", 2)]), vec![c0, c1], pr).unwrap();
        assert_eq!(names(&p, &assign(&p)), vec![vec!["x-1", "y-1"], vec!["x-0", "y-0"]]);
    }
}
