//! `server-uniform`: the broker's default `uniform` assignor (Apache Kafka 4.4.0,
//! `group-coordinator/.../assignor/UniformAssignor.java` with
//! `UniformHomogeneousAssignmentBuilder.java` and `UniformHeterogeneousAssignmentBuilder.java`).
//!
//! Balance first, then stickiness to the current target assignment. The group is *homogeneous*
//! when every member subscribes to the same topic names; then a quota pass runs (linear).
//! Otherwise a heterogeneous pass runs: keep every subscribed partition, deal the free ones topic
//! by topic to the least-loaded subscribers, then move partitions from the most-loaded to the
//! least-loaded subscribers of each topic, round after round (at most 16), until no topic can be
//! improved. docs/server_assignors.md describes both passes step by step.
//!
//! Every place where Java iterates a `HashMap`/`HashSet` (member ids, topic ids, a member's
//! partitions of a topic) uses the canonical order here: member index (members sorted by id),
//! topic id (topics sorted by name), partition ascending. Java breaks a few ties by topic `Uuid`;
//! kassign breaks them by topic name.

use crate::model::{MemberIdx, PartId, Problem, TopicId, NO_OWNER};

/// Dense owner array of the new target assignment.
pub fn owners(problem: &Problem) -> Vec<u32> {
    let current = super::current_owners(problem);
    if problem.members.is_empty() {
        return vec![NO_OWNER; problem.num_partitions() as usize];
    }
    if super::homogeneous(problem) {
        homogeneous(problem, &current)
    } else {
        Heterogeneous::new(problem, current).run()
    }
}

pub fn assign(problem: &Problem) -> crate::model::Assignment {
    super::finish(owners(problem))
}

/// All members subscribe to the same topics.
///
/// Capacities: `q = P div N` for everyone, `q + 1` for `r = P mod N` members. Members are visited
/// in order; a member starts with the next extra slot while any is left, keeps its current
/// partitions (topic by topic, partition ascending) up to its capacity and gives back the rest;
/// a member that did not fill its extra slot hands it on when enough members remain to take the
/// remaining extra slots. Free partitions (unowned ones in (topic, partition) order, then the
/// given-back ones in the order they were given back) then fill the members still below
/// capacity, in member order.
fn homogeneous(problem: &Problem, current: &[u32]) -> Vec<u32> {
    let n = problem.members.len();
    let topics: &[TopicId] = &problem.subs[problem.members[0].sub as usize];
    let mut owner = vec![NO_OWNER; problem.num_partitions() as usize];
    let total: u64 = topics.iter().map(|&t| problem.topic_len[t as usize] as u64).sum();
    if total == 0 {
        return owner;
    }
    let mut free: Vec<PartId> = Vec::new();
    for &t in topics {
        free.extend(problem.topic_range(t).filter(|&p| current[p as usize] == NO_OWNER));
    }
    let q = total / n as u64;
    let mut extra = total % n as u64;
    let mut unfilled: Vec<(MemberIdx, u64)> = Vec::new();
    for (i, m) in problem.members.iter().enumerate() {
        let mut quota = q;
        let mut has_extra = false;
        if extra > 0 {
            quota += 1;
            has_extra = true;
        }
        // `owned` is sorted by flat id: (topic, partition) order.
        for &p in &m.owned {
            if current[p as usize] != i as u32 {
                continue;
            }
            if quota > 0 {
                owner[p as usize] = i as u32;
                quota -= 1;
            } else {
                free.push(p);
            }
        }
        if quota > 0 && has_extra && (n - i) as u64 > extra {
            quota -= 1;
            has_extra = false;
        }
        if quota > 0 {
            unfilled.push((i as MemberIdx, quota));
        }
        if has_extra {
            extra -= 1;
        }
    }
    let mut next = free.into_iter();
    for (m, quota) in unfilled {
        for p in next.by_ref().take(quota as usize) {
            owner[p as usize] = m;
        }
    }
    debug_assert!(next.next().is_none(), "homogeneous capacities cover every partition");
    owner
}

/// State of the heterogeneous pass.
struct Heterogeneous<'a> {
    problem: &'a Problem,
    /// flat partition -> member index or NO_OWNER
    owner: Vec<u32>,
    /// member index -> partitions held now (live)
    size: Vec<i64>,
    /// topic -> subscribers in member index order
    subscribers: Vec<Vec<MemberIdx>>,
    /// topics with at least one subscriber, ascending
    topics: Vec<TopicId>,
}

impl<'a> Heterogeneous<'a> {
    fn new(problem: &'a Problem, owner: Vec<u32>) -> Heterogeneous<'a> {
        let subscribers = problem.subscribers();
        let topics = (0..problem.topics.len() as TopicId)
            .filter(|&t| !subscribers[t as usize].is_empty())
            .collect();
        let mut size = vec![0i64; problem.members.len()];
        for &o in &owner {
            if o != NO_OWNER {
                size[o as usize] += 1;
            }
        }
        Heterogeneous {
            problem,
            owner,
            size,
            subscribers,
            topics,
        }
    }

    fn run(mut self) -> Vec<u32> {
        // Deal the free partitions, topic by topic in comparator order.
        let mut with_free: Vec<TopicId> = self
            .topics
            .iter()
            .copied()
            .filter(|&t| self.problem.topic_range(t).any(|p| self.owner[p as usize] == NO_OWNER))
            .collect();
        self.sort_topics(&mut with_free);
        let mut balancer = Balancer::default();
        for &t in &with_free {
            balancer.initialize(&self.subscribers[t as usize], &self.size);
            for p in self.problem.topic_range(t) {
                if self.owner[p as usize] == NO_OWNER {
                    let m = balancer.next_least_loaded(&self.size);
                    self.give(p, m);
                }
            }
        }
        // Balance topics that have two or more subscribers.
        let mut movable: Vec<TopicId> = self
            .topics
            .iter()
            .copied()
            .filter(|&t| self.subscribers[t as usize].len() >= 2)
            .collect();
        if !movable.is_empty() {
            self.sort_topics(&mut movable);
            self.balance_topics(&movable, &mut balancer);
        }
        self.owner
    }

    /// Partitions per subscriber descending, then subscriber count ascending, then topic.
    fn sort_topics(&self, topics: &mut [TopicId]) {
        let key = |t: TopicId| {
            let parts = self.problem.topic_len[t as usize] as f64;
            let subs = self.subscribers[t as usize].len();
            (parts / subs as f64, subs)
        };
        topics.sort_by(|&a, &b| {
            let (ra, sa) = key(a);
            let (rb, sb) = key(b);
            rb.partial_cmp(&ra)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(sa.cmp(&sb))
                .then(a.cmp(&b))
        });
    }

    fn give(&mut self, p: PartId, m: MemberIdx) {
        let old = self.owner[p as usize];
        if old != NO_OWNER {
            self.size[old as usize] -= 1;
        }
        self.owner[p as usize] = m;
        self.size[m as usize] += 1;
    }

    /// Round after round over the topics (at most 16 rounds), stopping once a whole round after
    /// the last topic that moved something moved nothing.
    fn balance_topics(&mut self, topics: &[TopicId], balancer: &mut Balancer) {
        const MAX_ROUNDS: usize = 16;
        let mut last_moved: Option<usize> = None;
        let mut parts: Vec<PartId> = Vec::new();
        let mut ranges: Vec<(MemberIdx, usize, usize)> = Vec::new();
        for _ in 0..MAX_ROUNDS {
            for (k, &t) in topics.iter().enumerate() {
                if last_moved == Some(k) {
                    return;
                }
                let moved = self.balance_topic(t, balancer, &mut parts, &mut ranges);
                if moved > 0 || last_moved.is_none() {
                    last_moved = Some(k);
                }
            }
        }
    }

    /// Move partitions of topic `t` from its most-loaded subscribers (each gives its highest
    /// partition of `t` first) to its least-loaded ones until they are within one of each other
    /// or no most-loaded subscriber holds a partition of `t`. Returns the number moved.
    fn balance_topic(
        &mut self,
        t: TopicId,
        balancer: &mut Balancer,
        parts: &mut Vec<PartId>,
        ranges: &mut Vec<(MemberIdx, usize, usize)>,
    ) -> usize {
        let imbalance = balancer.initialize(&self.subscribers[t as usize], &self.size);
        if imbalance <= 1 {
            return 0;
        }
        let owner = &self.owner;
        parts.clear();
        parts.extend(self.problem.topic_range(t));
        parts.sort_by_key(|&p| (owner[p as usize], p));
        ranges.clear();
        for (i, &p) in parts.iter().enumerate() {
            let o = owner[p as usize];
            match ranges.last_mut() {
                Some(r) if r.0 == o => r.2 = i + 1,
                _ => ranges.push((o, i, i + 1)),
            }
        }
        let mut moved = 0;
        while !balancer.is_balanced() {
            let mut giver = None;
            while let Some(m) = balancer.next_most_loaded(&self.size) {
                let has = ranges
                    .binary_search_by_key(&m, |r| r.0)
                    .map(|i| ranges[i].2 > ranges[i].1)
                    .unwrap_or(false);
                if has {
                    giver = Some(m);
                    break;
                }
                balancer.exclude_most_loaded();
            }
            let Some(giver) = giver else { break };
            let i = ranges.binary_search_by_key(&giver, |r| r.0).expect("giver has a range");
            ranges[i].2 -= 1;
            let p = parts[ranges[i].2];
            let taker = balancer.next_least_loaded(&self.size);
            if balancer.is_balanced() {
                break;
            }
            self.give(p, taker);
            moved += 1;
        }
        moved
    }
}

/// Two ranges over members sorted by load: the least-loaded range grows rightwards as its members
/// receive partitions, the most-loaded range grows leftwards as its members give partitions up.
/// Members are handed out round-robin within each range; the ranges' load levels decide balance.
#[derive(Default)]
struct Balancer {
    sorted: Vec<MemberIdx>,
    least_end: usize,
    least_level: i64,
    next_least: usize,
    most_start: usize,
    most_end: usize,
    most_level: i64,
    /// next position to hand out in the most-loaded range; -1 when exhausted
    next_most: isize,
}

impl Balancer {
    /// Sort `members` by (load, index) and reset both ranges; returns max load - min load.
    fn initialize(&mut self, members: &[MemberIdx], size: &[i64]) -> i64 {
        assert!(!members.is_empty(), "a balanced topic has subscribers");
        self.sorted.clear();
        self.sorted.extend_from_slice(members);
        self.sorted.sort_by_key(|&m| (size[m as usize], m));
        let n = self.sorted.len();
        let lo = size[self.sorted[0] as usize];
        let hi = size[self.sorted[n - 1] as usize];
        self.least_end = 0;
        self.least_level = lo - 1;
        self.next_least = 0;
        self.most_start = n;
        self.most_end = n;
        self.most_level = hi + 1;
        self.next_most = n as isize - 1;
        hi - lo
    }

    fn next_least_loaded(&mut self, size: &[i64]) -> MemberIdx {
        if self.next_least >= self.least_end {
            self.least_level += 1;
            while self.least_end < self.sorted.len() && size[self.sorted[self.least_end] as usize] == self.least_level {
                self.least_end += 1;
            }
            self.next_least = 0;
        }
        let m = self.sorted[self.next_least];
        self.next_least += 1;
        m
    }

    fn next_most_loaded(&mut self, size: &[i64]) -> Option<MemberIdx> {
        if self.next_most < self.most_start as isize {
            if self.most_end <= self.most_start && self.most_start > 0 {
                // The range was emptied by exclusions: restart from the next member's level.
                self.most_level = size[self.sorted[self.most_start - 1] as usize];
            } else {
                self.most_level -= 1;
            }
            while self.most_start > 0 && size[self.sorted[self.most_start - 1] as usize] == self.most_level {
                self.most_start -= 1;
            }
            self.next_most = self.most_end as isize - 1;
        }
        if self.next_most < 0 {
            return None;
        }
        let m = self.sorted[self.next_most as usize];
        self.next_most -= 1;
        Some(m)
    }

    /// Drop the member last returned by `next_most_loaded` from the most-loaded range.
    fn exclude_most_loaded(&mut self) {
        let at = (self.next_most + 1) as usize;
        self.sorted.swap(at, self.most_end - 1);
        self.most_end -= 1;
    }

    fn is_balanced(&self) -> bool {
        self.most_level - self.least_level <= 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::{member, member_owning, topics};
    use crate::model::MemberInput;

    /// A member owning `owned`, generation -1 (the target assignment has none).
    fn owning(id: &str, subs: &[&str], owned: &[(&str, i64)]) -> MemberInput {
        member_owning(id, subs, owned, -1)
    }

    #[test]
    fn homogeneous_fresh_group_gives_extra_slots_to_the_last_members() {
        let p = Problem::build(
            topics(&[("t", 5)]),
            vec![member("a", &["t"]), member("b", &["t"])],
            vec![],
        )
        .unwrap();
        // a does not fill the extra slot and hands it on; b, the last member, must take it.
        assert_eq!(assign(&p).per_member(p.members.len()), vec![vec![0, 1], vec![2, 3, 4]]);
    }

    #[test]
    fn homogeneous_keeps_within_capacity_and_hands_extra_slot_on() {
        // 7 partitions, 3 members: q = 2, r = 1. a owns 2 (does not need the extra slot and
        // hands it on), b owns 4 (keeps 3 = q + 1), c is new.
        let p = Problem::build(
            topics(&[("t", 7)]),
            vec![
                owning("a", &["t"], &[("t", 0), ("t", 1)]),
                owning("b", &["t"], &[("t", 2), ("t", 3), ("t", 4), ("t", 5)]),
                member("c", &["t"]),
            ],
            vec![],
        )
        .unwrap();
        assert_eq!(
            assign(&p).per_member(p.members.len()),
            vec![vec![0, 1], vec![2, 3, 4], vec![5, 6]]
        );
    }

    #[test]
    fn homogeneous_last_members_must_take_the_extra_slots() {
        // 4 partitions, 3 members: r = 1. Nobody owns anything: a takes the extra slot at once.
        // With a owning exactly q = 1 and b, c owning 1 each, the last member is forced.
        let p = Problem::build(
            topics(&[("t", 4)]),
            vec![
                owning("a", &["t"], &[("t", 0)]),
                owning("b", &["t"], &[("t", 1)]),
                owning("c", &["t"], &[("t", 2)]),
            ],
            vec![],
        )
        .unwrap();
        assert_eq!(
            assign(&p).per_member(p.members.len()),
            vec![vec![0], vec![1], vec![2, 3]]
        );
    }

    #[test]
    fn conflicting_current_claims_are_owned_by_nobody() {
        let p = Problem::build(
            topics(&[("t", 2)]),
            vec![
                owning("a", &["t"], &[("t", 0)]),
                owning("b", &["t"], &[("t", 0), ("t", 1)]),
            ],
            vec![],
        )
        .unwrap();
        // t-0 is free: a (first unfilled) takes it; b keeps t-1.
        assert_eq!(assign(&p).per_member(p.members.len()), vec![vec![0], vec![1]]);
    }

    #[test]
    fn heterogeneous_deals_then_balances() {
        // x (4) on a and b; y (2) on b only. b owns all of x.
        let p = Problem::build(
            topics(&[("x", 4), ("y", 2)]),
            vec![
                member("a", &["x"]),
                owning("b", &["x", "y"], &[("x", 0), ("x", 1), ("x", 2), ("x", 3)]),
            ],
            vec![],
        )
        .unwrap();
        // y is dealt to b (6), then x balances: b gives its highest x partitions to a until the
        // loads are within one: a 3 (x-3, x-2, x-1), b 3 (x-0, y-0, y-1).
        assert_eq!(
            assign(&p).per_member(p.members.len()),
            vec![vec![1, 2, 3], vec![0, 4, 5]]
        );
    }

    #[test]
    fn heterogeneous_drops_unsubscribed_claims() {
        let p = Problem::build(
            topics(&[("x", 2), ("y", 2)]),
            vec![owning("a", &["x"], &[("y", 0), ("y", 1)]), owning("b", &["y"], &[])],
            vec![],
        )
        .unwrap();
        assert_eq!(assign(&p).per_member(p.members.len()), vec![vec![0, 1], vec![2, 3]]);
    }
}
