//! The sticky engine behind `sticky` (eager) and `cooperative-sticky`.
//!
//! The algorithm is stated, readably, in `python/kassign/reference/sticky.py`; this is the same
//! algorithm on dense integers, and the two must return identical assignments (tests compare
//! them on random groups). Every tie is broken by member index (members sorted by id) or flat
//! partition id ((topic, partition) order), never by hash order.
//!
//! * [`Claims`]: who validly keeps each partition (highest generation wins, equal top
//!   generations invalidate, a lone claim wins) and who still lists it (cooperative withholding).
//! * [`constrained`]: every member subscribes to the same topics (Java's test on raw topic sets).
//! * [`general`]: heterogeneous subscriptions: optimal load vector, then the most kept partitions
//!   among all optimal load vectors, then concrete placement.
//! * [`rack`]: the KIP-881 rack-matching pass used by both paths.

pub mod constrained;
pub mod general;
pub mod rack;

use crate::model::{Assignment, MemberIdx, PartId, Problem, NO_OWNER};

/// Claim state of a partition that several top-generation members claim.
pub(crate) const TIE: u32 = u32::MAX - 1;

/// Resolved ownership claims.
pub(crate) struct Claims {
    /// Flat partition => member that keeps its claim, `NO_OWNER` or `TIE`.
    pub win: Vec<u32>,
    /// Flat partition => first member listing it as owned (any topic, subscribed or not), for
    /// cooperative withholding; empty for the eager strategy.
    raw_first: Vec<u32>,
    raw_multi: Vec<bool>,
}

impl Claims {
    pub fn resolve(problem: &Problem, cooperative: bool) -> Claims {
        let n = problem.num_partitions() as usize;
        let mut win = vec![NO_OWNER; n];
        let mut win_gen = vec![0i32; n];
        let (mut raw_first, mut raw_multi) = if cooperative {
            (vec![NO_OWNER; n], vec![false; n])
        } else {
            (Vec::new(), Vec::new())
        };
        for (i, m) in problem.members.iter().enumerate() {
            let i = i as u32;
            let subs = &problem.subs[m.sub as usize];
            let g = m.generation;
            // owned is sorted by flat id, hence by topic: walk topics alongside.
            let mut t = 0usize;
            let mut si = 0usize;
            for &p in &m.owned {
                if cooperative {
                    let f = &mut raw_first[p as usize];
                    if *f == NO_OWNER {
                        *f = i;
                    } else {
                        raw_multi[p as usize] = true;
                    }
                }
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
        Claims {
            win,
            raw_first,
            raw_multi,
        }
    }

    /// Whether a member other than `m` lists `p` as owned.
    #[inline]
    fn held_by_other(&self, p: PartId, m: MemberIdx) -> bool {
        let f = self.raw_first[p as usize];
        f != NO_OWNER && (self.raw_multi[p as usize] || f != m)
    }
}

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
pub(crate) fn keep_order(problem: &Problem, m: MemberIdx, parts: &mut [PartId], rack_on: bool) {
    let rack = problem.members[m as usize].rack;
    parts.sort_unstable_by_key(|&p| {
        let (t, idx) = problem.split(p);
        let mismatch = if rack_on {
            match rack {
                Some(r) => !problem.partition_racks[p as usize].contains(&r),
                None => true,
            }
        } else {
            false
        };
        (mismatch, idx, t)
    });
}

/// Run `sticky` (eager) or `cooperative-sticky` on an interned problem.
pub fn assign(problem: &Problem, cooperative: bool) -> Assignment {
    let claims = Claims::resolve(problem, cooperative);
    let owner = if problem.uniform_subscriptions() {
        constrained::assign(problem, &claims, cooperative)
    } else {
        general::assign(problem, &claims, cooperative)
    };
    Assignment::from_owner(problem, &owner)
}
