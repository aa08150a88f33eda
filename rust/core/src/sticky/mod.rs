//! The sticky engine behind `sticky` (eager) and `cooperative-sticky`.
//!
//! The algorithm is stated, readably, in `python/kassign/reference/sticky.py`; this is the same
//! algorithm on dense integers, and the two must return identical assignments (tests compare
//! them on random groups). Every tie is broken by member index (members sorted by id) or flat
//! partition id ((topic, partition) order), never by hash order.
//!
//! * [`Claims`] ([`crate::claims`], the one home of the claim rule): who validly keeps each
//!   partition and who still lists it (cooperative withholding).
//! * [`constrained`]: every member subscribes to the same topics (Java's test on raw topic sets).
//! * [`general`]: heterogeneous subscriptions: optimal load vector, then the most kept partitions
//!   among all optimal load vectors, then concrete placement.
//! * [`rack`]: the KIP-881 rack-matching pass used by both paths.

pub mod constrained;
pub mod general;
pub mod rack;

pub(crate) use crate::claims::Claims;
use crate::model::{Assignment, MemberIdx, PartId, Problem, NO_OWNER};

/// The owner array being built, with cooperative withholding on new placements.
pub(crate) struct Placer<'a> {
    pub owner: Vec<u32>,
    pub count: Vec<u32>,
    claims: &'a Claims,
    cooperative: bool,
}

impl<'a> Placer<'a> {
    pub fn new(problem: &Problem, claims: &'a Claims, cooperative: bool) -> Placer<'a> {
        Placer {
            owner: vec![NO_OWNER; problem.num_partitions() as usize],
            count: vec![0; problem.members.len()],
            claims,
            cooperative,
        }
    }

    #[inline]
    pub fn keep(&mut self, m: MemberIdx, p: PartId) {
        self.owner[p as usize] = m;
        self.count[m as usize] += 1;
    }

    /// A partition `m` did not validly own: withheld when someone else still lists it.
    #[inline]
    pub fn give(&mut self, m: MemberIdx, p: PartId) {
        self.count[m as usize] += 1;
        if self.cooperative && self.claims.held_by_other(p, m) {
            return;
        }
        self.owner[p as usize] = m;
    }
}

/// Claims in the order they are kept: rack-local first (when rack logic applies), then
/// (partition index, topic) -- Java's order, which interleaves topics.
///
/// Each claim's key is computed once (its topic is a binary search over the topic bases):
/// `sort_by_cached_key`; (partition index, topic) names one partition, so the order is total.
pub(crate) fn keep_order(problem: &Problem, m: MemberIdx, parts: &mut [PartId], rack_on: bool) {
    let rack = problem.members[m as usize].rack;
    parts.sort_by_cached_key(|&p| {
        let (t, idx) = problem.split(p);
        let mismatch = rack_on
            && match rack {
                Some(r) => !problem.partition_racks[p as usize].contains(&r),
                None => true,
            };
        (mismatch, idx, t)
    });
}

/// A budget of elementary steps (a member, class or edge visited) for the optimiser's iterative
/// parts ([`general`], steps A and B), whose number of rounds depends on the shape of the group
/// rather than on its size alone, and optionally a deadline in wall time. Everything else is
/// linear or `n log n` in the input.
///
/// The deadline is read every [`CLOCK_EVERY`] units spent, and by [`Work::expired`], which the
/// KIP-881 rack pass of both paths asks as it goes (past the deadline it stops matching racks, and
/// the rest of the deal places the partitions it left: still valid, balanced and sticky).
pub(crate) struct Work {
    left: u64,
    deadline: Option<std::time::Instant>,
    /// Units spent since the clock was last read.
    since_clock: u64,
}

/// How many units of work pass between two readings of the clock.
const CLOCK_EVERY: u64 = 1 << 16;

/// The optimiser ran out of its [`Work`] budget.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct OutOfWork;

impl Work {
    pub fn new(budget: u64) -> Work {
        // The first unit spent reads the clock: a deadline already past stops the optimiser at
        // once, however small the group.
        Work {
            left: budget,
            deadline: None,
            since_clock: CLOCK_EVERY,
        }
    }

    /// `budget` units, and out of work once `deadline` has passed.
    pub fn until(budget: u64, deadline: Option<std::time::Instant>) -> Work {
        Work {
            deadline,
            ..Work::new(budget)
        }
    }

    /// Whether the deadline has passed (false without one).
    pub fn expired(&self) -> bool {
        self.deadline.is_some_and(|d| std::time::Instant::now() >= d)
    }

    /// No limit (the client-side strategies, which run in the application's own process).
    pub fn unlimited() -> Work {
        Work::new(u64::MAX)
    }

    #[inline]
    pub fn spend(&mut self, n: u64) -> Result<(), OutOfWork> {
        self.left = self.left.checked_sub(n).ok_or(OutOfWork)?;
        self.since_clock += n;
        if self.since_clock >= CLOCK_EVERY {
            self.since_clock = 0;
            if self.expired() {
                return Err(OutOfWork);
            }
        }
        Ok(())
    }
}

/// Run `sticky` (eager) or `cooperative-sticky` on an interned problem.
pub fn assign(problem: &Problem, cooperative: bool) -> Assignment {
    let claims = Claims::resolve(problem, cooperative);
    run(problem, &claims, cooperative, &mut Work::unlimited()).expect("an unlimited budget never runs out")
}

/// Run the eager sticky engine with the claims already resolved: `win[p]` is the member that keeps
/// partition `p` if it can, or `NO_OWNER` (`server-kassign`, whose claims are the current target
/// assignment rather than generations), within a work budget.
pub(crate) fn assign_from_owners(problem: &Problem, win: Vec<u32>, work: &mut Work) -> Result<Assignment, OutOfWork> {
    run(problem, &Claims::eager(win), false, work)
}

/// [`assign_from_owners`] on uniform subscriptions (the constrained path), with some members'
/// kept partitions only counted ([`constrained::Held`]).
pub(crate) fn assign_from_owners_held(
    problem: &Problem,
    win: Vec<u32>,
    held: &constrained::Held<'_>,
    work: &mut Work,
) -> Assignment {
    debug_assert!(problem.uniform_subscriptions());
    let owner = constrained::assign_held(problem, &Claims::eager(win), false, Some(held), work);
    Assignment { owner }
}

/// The constrained path when every member subscribes to the same topics, the general one otherwise.
fn run(problem: &Problem, claims: &Claims, cooperative: bool, work: &mut Work) -> Result<Assignment, OutOfWork> {
    let owner = if problem.uniform_subscriptions() {
        constrained::assign(problem, claims, cooperative, work)
    } else {
        general::assign(problem, claims, cooperative, work)?
    };
    Ok(Assignment { owner })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::{member_owning as member, names};
    use crate::model::MemberInput;

    /// [`keep_order`] against the sort it replaced (a key recomputed at every comparison), on
    /// random claims of random problems with and without replica racks.
    #[test]
    fn keep_order_sorts_as_the_per_comparison_key_did() {
        fn oracle(problem: &Problem, m: MemberIdx, parts: &mut [PartId], rack_on: bool) {
            let rack = problem.members[m as usize].rack;
            parts.sort_by_key(|&p| {
                let (t, idx) = problem.split(p);
                let mismatch = rack_on
                    && match rack {
                        Some(r) => !problem.partition_racks[p as usize].contains(&r),
                        None => true,
                    };
                (mismatch, idx, t)
            });
        }
        let mut checked = 0;
        for seed in 0..400u64 {
            let mut next = crate::model::xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let nt = 1 + next(6) as usize;
            let topics: Vec<(String, i64)> = (0..nt).map(|t| (format!("t{t}"), next(9) as i64)).collect();
            let names: Vec<&str> = topics.iter().map(|(n, _)| n.as_str()).collect();
            let members: Vec<MemberInput> = (0..1 + next(4))
                .map(|i| MemberInput {
                    rack: (next(3) > 0).then(|| format!("r{}", next(3))),
                    ..member(&format!("c{i}"), &names, &[], -1)
                })
                .collect();
            let mut racks = Vec::new();
            if next(2) == 0 {
                for (t, n) in &topics {
                    for p in 0..*n {
                        let r: Vec<String> = (0..next(3)).map(|_| format!("r{}", next(3))).collect();
                        racks.push((t.clone(), p, r));
                    }
                }
            }
            let problem = Problem::build(topics, members, racks).unwrap();
            let n = problem.num_partitions();
            for m in 0..problem.members.len() as MemberIdx {
                for rack_on in [false, problem.rack_aware()] {
                    let mut parts: Vec<PartId> = (0..n).filter(|_| next(2) == 0).collect();
                    for i in (1..parts.len()).rev() {
                        parts.swap(i, next(i as u64 + 1) as usize);
                    }
                    let mut want = parts.clone();
                    oracle(&problem, m, &mut want, rack_on);
                    keep_order(&problem, m, &mut parts, rack_on);
                    assert_eq!(parts, want, "seed {seed}, member {m}, racks {rack_on}");
                    checked += parts.len();
                }
            }
        }
        assert!(checked > 10_000, "only {checked} claims sorted");
    }

    #[test]
    fn fresh_uniform_group_is_dealt_round_robin() {
        let topics = vec![("t1".to_string(), 3), ("t2".to_string(), 3)];
        let p = Problem::build(
            topics,
            vec![
                member("c1", &["t1", "t2"], &[], -1),
                member("c2", &["t1", "t2"], &[], -1),
            ],
            vec![],
        )
        .unwrap();
        let a = assign(&p, false);
        assert_eq!(
            names(&p, &a),
            vec![vec!["t1-0", "t1-2", "t2-1"], vec!["t1-1", "t2-0", "t2-2"]]
        );
    }

    #[test]
    fn equal_generation_claims_are_withheld_only_when_cooperative() {
        let topics = vec![("t".to_string(), 3)];
        let members = vec![
            member("c1", &["t"], &[("t", 0), ("t", 1)], 2),
            member("c2", &["t"], &[("t", 0), ("t", 2)], 2),
            member("c3", &["t"], &[], -1),
        ];
        let p = Problem::build(topics, members, vec![]).unwrap();
        assert_eq!(
            names(&p, &assign(&p, true)),
            vec![vec!["t-1"], vec!["t-2"], Vec::<&str>::new()]
        );
        assert_eq!(
            names(&p, &assign(&p, false)),
            vec![vec!["t-1"], vec!["t-2"], vec!["t-0"]]
        );
    }

    #[test]
    fn general_path_finds_the_chain_single_hop_misses() {
        let topics: Vec<(String, i64)> = ["t0", "t1", "t2", "t3"].iter().map(|t| (t.to_string(), 1)).collect();
        let members = vec![
            member("c00", &["t0", "t2"], &[("t0", 0), ("t2", 0)], 1),
            member("c01", &["t0", "t3"], &[("t3", 0)], 1),
            member("c02", &["t1", "t2"], &[("t1", 0)], 1),
            member("cNEW", &["t1", "t3"], &[], -1),
        ];
        let p = Problem::build(topics, members, vec![]).unwrap();
        let a = assign(&p, false);
        assert!(
            a.per_member(p.members.len()).iter().all(|v| v.len() == 1),
            "{:?}",
            names(&p, &a)
        );
    }
}
