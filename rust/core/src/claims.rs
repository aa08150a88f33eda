//! The previous-owner (claim) rule, in one place.
//!
//! A member's history is the partitions it owned (`owned_partitions`) and the generation it
//! owned them in. Several members may claim one partition (a rebalance they missed, a zombie).
//! The rule every part of kassign applies:
//!
//! * the claim with the **highest generation** wins;
//! * when two or more **distinct** members claim a partition at that highest generation, nobody
//!   wins it (the claims invalidate each other) -- a lower-generation claim does not revive;
//! * a lone claim wins whatever its generation (a stale member keeps uncontested claims);
//! * a member listing a partition twice is one claim.
//!
//! Which claims take part is the caller's choice ([`Scope`]): the sticky strategies count only a
//! member's claims on topics it subscribes to ([`Scope::OwnTopics`]: a member cannot keep what it
//! no longer reads), while the previous owner of a partition for measuring moves (the fleet
//! report, `kassign.quality`) and for the lag-aware strategy's sticky mode counts every valid
//! claim ([`Scope::AllClaims`]). Claims of unknown topics or out-of-range partitions never reach
//! this module: [`crate::model`] drops them when it builds the problem.
//!
//! The entry points, from the most general to the most specific:
//!
//! * [`Resolver`]: the rule itself over dense slots (any caller that numbers its partitions,
//!   e.g. the Python binding's `previous_owners` over raw `(topic, partition)` keys);
//! * [`resolve`]: the winner of every partition of a [`Problem`] (`TIE` kept distinct);
//! * [`previous_owners`]: the same with ties read as "no previous owner";
//! * [`previous_by_topic`]: the previous owners grouped per subscribed topic and member, the form
//!   the Python strategies read (`kassign.assignors._greedy.Inputs.previous`);
//! * [`current_target_owners`]: the KIP-848 broker-side assignors' rule (no generations: any two
//!   claims of one partition void each other);
//! * [`Claims`]: the sticky engine's view: winners plus who still lists each partition
//!   (cooperative withholding).

use crate::model::{MemberIdx, PartId, Problem, TopicId, NO_OWNER};

/// The winner state of a partition that two or more distinct members claim at its highest
/// generation ([`NO_OWNER`] = nobody claims it).
pub const TIE: u32 = u32::MAX - 1;

/// Which of a member's claims take part (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Only claims on topics the claimant subscribes to (the sticky strategies).
    OwnTopics,
    /// Every valid claim (previous owners for measuring moves and for lag-aware's sticky mode).
    AllClaims,
}

/// The claim rule over `n` dense slots: offer claims in any order, read the winners.
///
/// The result does not depend on the order of the claims.
#[derive(Clone, Debug)]
pub struct Resolver {
    win: Vec<u32>,
    /// The winning claim's generation per slot; empty while every claim so far was at generation
    /// 0 (the broker-side rule's only generation), so that case costs one array, not two.
    generation: Vec<i32>,
}

impl Resolver {
    /// No claims yet on `n` slots.
    pub fn new(n: usize) -> Resolver {
        Resolver {
            win: vec![NO_OWNER; n],
            generation: Vec::new(),
        }
    }

    /// Add a slot (for callers that number slots as they meet them); returns its index.
    pub fn push_slot(&mut self) -> usize {
        self.win.push(NO_OWNER);
        if !self.generation.is_empty() {
            self.generation.push(0);
        }
        self.win.len() - 1
    }

    /// `member` claims `slot`, owned in `generation`.
    #[inline]
    pub fn claim(&mut self, slot: usize, member: u32, generation: i32) {
        let w = self.win[slot];
        let held = if self.generation.is_empty() {
            0
        } else {
            self.generation[slot]
        };
        if w == NO_OWNER || generation > held {
            self.win[slot] = member;
            if generation != 0 && self.generation.is_empty() {
                self.generation = vec![0; self.win.len()];
            }
            if !self.generation.is_empty() {
                self.generation[slot] = generation;
            }
        } else if generation == held && w != member {
            self.win[slot] = TIE;
        }
    }

    /// The winner of each slot: a member, [`NO_OWNER`] (unclaimed) or [`TIE`].
    pub fn winners(self) -> Vec<u32> {
        self.win
    }

    /// The winner of each slot, a tie read as no owner.
    pub fn owners(self) -> Vec<u32> {
        let mut w = self.win;
        for x in &mut w {
            if *x == TIE {
                *x = NO_OWNER;
            }
        }
        w
    }
}

/// The winner of every flat partition of `problem` (member index, [`NO_OWNER`] or [`TIE`]).
pub fn resolve(problem: &Problem, scope: Scope) -> Vec<u32> {
    resolver(problem, scope).winners()
}

fn resolver(problem: &Problem, scope: Scope) -> Resolver {
    let mut r = Resolver::new(problem.num_partitions() as usize);
    for (i, m) in problem.members.iter().enumerate() {
        let i = i as MemberIdx;
        match scope {
            Scope::AllClaims => {
                for &p in &m.owned {
                    r.claim(p as usize, i, m.generation);
                }
            }
            Scope::OwnTopics => {
                let subs = &problem.subs[m.sub as usize];
                // owned is sorted by flat id, hence by topic: walk topics alongside (one step per
                // partition and per topic passed). `current_target_owners` looks each run's topic
                // up instead (two binary searches per run): cheaper for a member owning a few
                // partitions among many topics, dearer when its runs are short, as for the sticky
                // strategies' members (here it took 2 to 4 % more CPU in
                // `benches/assign_members.py java-large-uniform/round2 sticky`).
                let mut t = 0usize;
                let mut si = 0usize;
                for &p in &m.owned {
                    while problem.topic_base[t + 1] <= p {
                        t += 1;
                    }
                    while si < subs.len() && (subs[si] as usize) < t {
                        si += 1;
                    }
                    if si < subs.len() && subs[si] as usize == t {
                        r.claim(p as usize, i, m.generation);
                    }
                }
            }
        }
    }
    r
}

/// The owner of every flat partition in a KIP-848 *current target assignment* (the broker-side
/// assignors' input): generations play no part there, so every claim on a subscribed topic counts
/// equally ([`Scope::OwnTopics`] at one generation). The coordinator never gives two members the
/// same partition; should the input do so anyway (a snapshot taken mid-rebalance), the partition
/// counts as owned by nobody ([`NO_OWNER`]), and it is placed like a free partition.
pub fn current_target_owners(problem: &Problem) -> Vec<u32> {
    let mut r = Resolver::new(problem.num_partitions() as usize);
    for (i, m) in problem.members.iter().enumerate() {
        let subs = &problem.subs[m.sub as usize];
        // `owned` is sorted by flat id, so topics come in runs: one subscription check per run.
        let (mut end, mut subscribed) = (0, false);
        for &p in &m.owned {
            if p >= end {
                let t = problem.topic_of(p);
                end = problem.topic_base[t as usize + 1];
                subscribed = subs.binary_search(&t).is_ok();
            }
            if subscribed {
                r.claim(p as usize, i as MemberIdx, 0);
            }
        }
    }
    r.owners()
}

/// The previous owner of every flat partition of `problem`: its winning claim over all claims
/// ([`Scope::AllClaims`]), [`NO_OWNER`] when unclaimed or tied.
pub fn previous_owners(problem: &Problem) -> Vec<u32> {
    resolver(problem, Scope::AllClaims).owners()
}

/// One topic's previous owners: `(topic, [(member, [partition index, ascending])])`.
pub type TopicClaims = (TopicId, Vec<(MemberIdx, Vec<u32>)>);

/// The previous owners of the partitions of the topics some member of `problem` subscribes to,
/// grouped: `(topic, [(member, [partition index, ascending])])`, topics ascending, members
/// ascending; topics and members without a previous-owned partition are left out.
pub fn previous_by_topic(problem: &Problem) -> Vec<TopicClaims> {
    let owner = previous_owners(problem);
    let mut subscribed = vec![false; problem.topics.len()];
    let mut seen_sub = vec![false; problem.subs.len()];
    for m in &problem.members {
        if !std::mem::replace(&mut seen_sub[m.sub as usize], true) {
            for &t in &problem.subs[m.sub as usize] {
                subscribed[t as usize] = true;
            }
        }
    }
    let mut out = Vec::new();
    // per member of the current topic: its partitions (members are few next to partitions)
    let mut by_member: Vec<Vec<u32>> = vec![Vec::new(); problem.members.len()];
    let mut touched: Vec<MemberIdx> = Vec::new();
    for (t, &is_sub) in subscribed.iter().enumerate() {
        if !is_sub {
            continue;
        }
        let range = problem.topic_range(t as TopicId);
        for f in range.clone() {
            let o = owner[f as usize];
            if o == NO_OWNER {
                continue;
            }
            let v = &mut by_member[o as usize];
            if v.is_empty() {
                touched.push(o);
            }
            v.push(f - range.start);
        }
        if touched.is_empty() {
            continue;
        }
        touched.sort_unstable();
        let members = touched
            .drain(..)
            .map(|m| (m, std::mem::take(&mut by_member[m as usize])))
            .collect();
        out.push((t as TopicId, members));
    }
    out
}

/// The sticky engine's view of the claims: who validly keeps each partition
/// ([`Scope::OwnTopics`]) and, for cooperative withholding, who still lists it as owned (any
/// topic, subscribed or not).
pub(crate) struct Claims {
    /// Flat partition => member that keeps its claim, [`NO_OWNER`] or [`TIE`].
    pub win: Vec<u32>,
    /// Flat partition => first member listing it as owned; empty for the eager strategy.
    raw_first: Vec<u32>,
    raw_multi: Vec<bool>,
}

impl Claims {
    pub fn resolve(problem: &Problem, cooperative: bool) -> Claims {
        let win = resolve(problem, Scope::OwnTopics);
        let (mut raw_first, mut raw_multi) = (Vec::new(), Vec::new());
        if cooperative {
            let n = problem.num_partitions() as usize;
            raw_first = vec![NO_OWNER; n];
            raw_multi = vec![false; n];
            for (i, m) in problem.members.iter().enumerate() {
                for &p in &m.owned {
                    let f = &mut raw_first[p as usize];
                    if *f == NO_OWNER {
                        *f = i as u32;
                    } else {
                        raw_multi[p as usize] = true;
                    }
                }
            }
        }
        Claims {
            win,
            raw_first,
            raw_multi,
        }
    }

    /// The eager engine's view of claims already resolved elsewhere (`win[p]`: the member that
    /// keeps `p` if it can, or [`NO_OWNER`]), e.g. [`current_target_owners`].
    pub fn eager(win: Vec<u32>) -> Claims {
        Claims {
            win,
            raw_first: Vec::new(),
            raw_multi: Vec::new(),
        }
    }

    /// Whether a member other than `m` lists `p` as owned.
    #[inline]
    pub fn held_by_other(&self, p: PartId, m: MemberIdx) -> bool {
        let f = self.raw_first[p as usize];
        f != NO_OWNER && (self.raw_multi[p as usize] || f != m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::member_owning as member;
    use crate::model::MemberInput;
    use proptest::prelude::*;

    #[test]
    fn highest_generation_wins_and_a_tie_at_it_leaves_none() {
        let topics = vec![("t".to_string(), 4), ("u".to_string(), 1)];
        let p = Problem::build(
            topics,
            vec![
                member("a", &["t"], &[("t", 0), ("t", 1), ("t", 2), ("u", 0)], 3),
                member("b", &["t"], &[("t", 0), ("t", 1)], 5),
                member("c", &["t"], &[("t", 1), ("t", 2)], 5),
                member("d", &["t"], &[("t", 3), ("t", 3)], -1),
            ],
            vec![],
        )
        .unwrap();
        // t-0: b (5 > 3); t-1: tie b/c at 5; t-2: c; t-3: d alone (listed twice); u-0: a
        assert_eq!(resolve(&p, Scope::AllClaims), vec![1, TIE, 2, 3, 0]);
        assert_eq!(previous_owners(&p), vec![1, NO_OWNER, 2, 3, 0]);
        // a does not subscribe to u: its claim does not count for the sticky strategies
        assert_eq!(resolve(&p, Scope::OwnTopics), vec![1, TIE, 2, 3, NO_OWNER]);
        // u is subscribed by nobody: left out
        assert_eq!(
            previous_by_topic(&p),
            vec![(0, vec![(1, vec![0]), (2, vec![2]), (3, vec![3])])]
        );
    }

    #[test]
    fn a_tie_is_not_revived_by_a_lower_generation() {
        let mut r = Resolver::new(1);
        r.claim(0, 0, 2);
        r.claim(0, 1, 2);
        r.claim(0, 2, 1);
        assert_eq!(r.clone().winners(), vec![TIE]);
        r.claim(0, 3, 3);
        assert_eq!(r.owners(), vec![3]);
    }

    // The implementations this module replaced (sticky/mod.rs `Claims::resolve`, the previous
    // owners of fleet/problem.rs and rust/python/src/fleet.rs `previous()`), kept as the oracle of the move.
    fn legacy_sticky_win(problem: &Problem) -> Vec<u32> {
        let n = problem.num_partitions() as usize;
        let mut win = vec![NO_OWNER; n];
        let mut win_gen = vec![0i32; n];
        for (i, m) in problem.members.iter().enumerate() {
            let i = i as u32;
            let subs = &problem.subs[m.sub as usize];
            let g = m.generation;
            let mut t = 0usize;
            let mut si = 0usize;
            for &p in &m.owned {
                while problem.topic_base[t + 1] <= p {
                    t += 1;
                }
                while si < subs.len() && (subs[si] as usize) < t {
                    si += 1;
                }
                if si >= subs.len() || subs[si] as usize != t {
                    continue;
                }
                let w = win[p as usize];
                if w == NO_OWNER || g > win_gen[p as usize] {
                    win[p as usize] = i;
                    win_gen[p as usize] = g;
                } else if g == win_gen[p as usize] {
                    win[p as usize] = TIE;
                }
            }
        }
        win
    }

    fn legacy_previous(problem: &Problem) -> Vec<u32> {
        let n = problem.num_partitions() as usize;
        let mut owner = vec![NO_OWNER; n];
        let mut best = vec![i64::MIN; n];
        let mut tied = vec![false; n];
        for (i, m) in problem.members.iter().enumerate() {
            let gen = m.generation as i64;
            for &f in &m.owned {
                let f = f as usize;
                if best[f] == i64::MIN || gen > best[f] {
                    best[f] = gen;
                    owner[f] = i as u32;
                    tied[f] = false;
                } else if gen == best[f] && (tied[f] || owner[f] != i as u32) {
                    tied[f] = true;
                }
            }
        }
        for f in 0..n {
            if tied[f] {
                owner[f] = NO_OWNER;
            }
        }
        owner
    }

    fn legacy_by_topic(problem: &Problem) -> Vec<TopicClaims> {
        let owner = legacy_previous(problem);
        let mut subscribed = vec![false; problem.topics.len()];
        for m in &problem.members {
            for &t in &problem.subs[m.sub as usize] {
                subscribed[t as usize] = true;
            }
        }
        let mut out: Vec<TopicClaims> = Vec::new();
        for f in 0..problem.num_partitions() {
            let o = owner[f as usize];
            let (t, p) = problem.split(f);
            if o == NO_OWNER || !subscribed[t as usize] {
                continue;
            }
            if out.last().map(|e| e.0) != Some(t) {
                out.push((t, Vec::new()));
            }
            let members = &mut out.last_mut().unwrap().1;
            match members.iter_mut().find(|e| e.0 == o) {
                Some(e) => e.1.push(p),
                None => members.push((o, vec![p])),
            }
        }
        for e in &mut out {
            e.1.sort_unstable();
        }
        out
    }

    const TOPICS: [&str; 4] = ["a", "b", "c", "gone"];

    fn arb_problem() -> impl Strategy<Value = Problem> {
        let topic_sizes = prop::collection::vec(0i64..5, 3);
        let members = prop::collection::vec(
            (
                prop::collection::vec(0usize..4, 0..4),
                prop::collection::vec((0usize..4, -1i64..6), 0..8),
                -1i32..3,
            ),
            1..6,
        );
        (topic_sizes, members).prop_map(|(sizes, members)| {
            let topics: Vec<(String, i64)> = TOPICS[..3]
                .iter()
                .zip(&sizes)
                .map(|(t, &n)| (t.to_string(), n))
                .collect();
            let members = members
                .into_iter()
                .enumerate()
                .map(|(i, (subs, owned, gen))| MemberInput {
                    id: format!("m{i}"),
                    topics: subs.iter().map(|&t| TOPICS[t].to_string()).collect(),
                    owned: owned.iter().map(|&(t, p)| (TOPICS[t].to_string(), p)).collect(),
                    generation: gen,
                    rack: None,
                    group_instance_id: None,
                })
                .collect();
            Problem::build(topics, members, vec![]).unwrap()
        })
    }

    /// `server::current_owners` as it was before it moved here (a copy of the replaced code).
    fn legacy_current_owners(problem: &Problem) -> Vec<u32> {
        const CONFLICT: u32 = NO_OWNER - 1;
        let mut owner = vec![NO_OWNER; problem.num_partitions() as usize];
        for (i, m) in problem.members.iter().enumerate() {
            let subs = &problem.subs[m.sub as usize];
            for &p in &m.owned {
                if subs.binary_search(&problem.topic_of(p)).is_err() {
                    continue;
                }
                let o = &mut owner[p as usize];
                *o = if *o == NO_OWNER { i as u32 } else { CONFLICT };
            }
        }
        owner
            .iter()
            .map(|&o| if o == CONFLICT { NO_OWNER } else { o })
            .collect()
    }

    /// The rule stated directly: the unique distinct member at the highest generation.
    fn oracle(claims: &[(u32, i32)]) -> u32 {
        let Some(top) = claims.iter().map(|c| c.1).max() else {
            return NO_OWNER;
        };
        let mut at_top: Vec<u32> = claims.iter().filter(|c| c.1 == top).map(|c| c.0).collect();
        at_top.sort_unstable();
        at_top.dedup();
        if at_top.len() == 1 {
            at_top[0]
        } else {
            NO_OWNER
        }
    }

    proptest! {
        #[test]
        fn equals_the_implementations_it_replaced(problem in arb_problem()) {
            prop_assert_eq!(resolve(&problem, Scope::OwnTopics), legacy_sticky_win(&problem));
            prop_assert_eq!(previous_owners(&problem), legacy_previous(&problem));
            prop_assert_eq!(previous_by_topic(&problem), legacy_by_topic(&problem));
            prop_assert_eq!(current_target_owners(&problem), legacy_current_owners(&problem));
        }

        #[test]
        fn resolver_equals_the_stated_rule(claims in prop::collection::vec((0u32..4, -2i32..3), 0..12)) {
            let mut r = Resolver::new(1);
            for &(m, g) in &claims {
                r.claim(0, m, g);
            }
            prop_assert_eq!(r.owners()[0], oracle(&claims));
        }

        #[test]
        fn resolver_ignores_claim_order(claims in prop::collection::vec((0u32..4, -2i32..3), 0..12), seed in 0usize..1000) {
            let mut a = Resolver::new(1);
            let mut b = Resolver::new(1);
            for &(m, g) in &claims {
                a.claim(0, m, g);
            }
            let n = claims.len().max(1);
            for k in 0..claims.len() {
                let (m, g) = claims[(k + seed) % n];
                b.claim(0, m, g);
            }
            prop_assert_eq!(a.winners(), b.winners());
        }
    }
}
