//! Constrained path: every member subscribes to the same topics. Linear in partitions + members
//! (plus sorting the claims of members over quota).

use std::collections::VecDeque;

use super::rack::{self, Slots};
use super::{keep_order, Claims, Placer, Work};
use crate::model::{MemberIdx, PartId, Problem, NO_OWNER};

struct Quota<'p, 'a> {
    place: &'p mut Placer<'a>,
    q: u32,
    extra: u32,
}

impl Slots for Quota<'_, '_> {
    fn key(&self, m: MemberIdx) -> Option<u32> {
        let c = self.place.count[m as usize];
        if c < self.q || (c == self.q && self.extra > 0) {
            Some(c)
        } else {
            None
        }
    }
    fn take(&mut self, m: MemberIdx, p: PartId) {
        if self.place.count[m as usize] == self.q {
            self.extra -= 1;
        }
        self.place.give(m, p);
    }
}

/// Partitions kept by members whose claims were only counted (`server-kassign`'s counts-first
/// path, [`crate::server::kassign::members_to_read`]): such a member holds at most q partitions,
/// or q + 1 when it gets one of the extra slots (given to the members over q in member order), so
/// the keep step keeps all of them and only their number matters to the rest of the deal.
pub(crate) struct Held<'a> {
    /// Per member: how many partitions it keeps without listing them (0 for listed members).
    pub count: &'a [u32],
    /// Per flat partition: kept by one of those members (never in the pool, owner left unset).
    pub taken: &'a [bool],
}

/// Quotas q = P div N and q + 1 for P mod N members; keep claims up to quota (extra slots to the
/// members, in index order, that hold more than q), then deal the pool in (topic, partition)
/// order round-robin over members below q, then one each to the exactly-q queue. Only the rack
/// pass looks at `work` (its deadline, [`Work::expired`]); the rest is linear.
pub(crate) fn assign(problem: &Problem, claims: &Claims, cooperative: bool, work: &mut Work) -> Vec<u32> {
    assign_held(problem, claims, cooperative, None, work)
}

/// [`assign`], with some members' kept partitions given as [`Held`] counts instead of claims.
pub(crate) fn assign_held(
    problem: &Problem,
    claims: &Claims,
    cooperative: bool,
    held: Option<&Held<'_>>,
    work: &mut Work,
) -> Vec<u32> {
    let n = problem.members.len() as u32;
    let mut place = Placer::new(problem, claims, cooperative);
    if n == 0 {
        return place.owner;
    }
    let topics = &problem.subs[problem.members[0].sub as usize];
    let total: u32 = topics.iter().map(|&t| problem.topic_len[t as usize]).sum();
    let q = total / n;
    let mut extra = total % n;
    let rack_on = problem.rack_aware();
    let mut mine: Vec<PartId> = Vec::new();
    for (m, member) in problem.members.iter().enumerate() {
        let m = m as MemberIdx;
        mine.clear();
        mine.extend(member.owned.iter().copied().filter(|&p| claims.win[p as usize] == m));
        // A counted member over q keeps its q + 1 (members_to_read counts it only when it gets an
        // extra slot), taking that slot in member order like the others.
        if held.is_some_and(|h| h.count[m as usize] > q) {
            extra = extra
                .checked_sub(1)
                .expect("sticky: a counted member over quota without an extra slot (internal error)");
        }
        let mut keep = mine.len();
        if keep as u32 > q {
            keep_order(problem, m, &mut mine, rack_on);
            if extra > 0 {
                extra -= 1;
                keep = q as usize + 1;
            } else {
                keep = q as usize;
            }
        }
        for &p in &mine[..keep] {
            place.keep(m, p);
        }
    }
    if let Some(h) = held {
        for (c, &k) in place.count.iter_mut().zip(h.count) {
            *c += k;
        }
    }
    // Counted members usually leave a small pool; a fresh group's pool is every partition.
    let mut pool: Vec<PartId> = Vec::with_capacity(if held.is_some() { 0 } else { total as usize });
    for &t in topics {
        for p in problem.topic_range(t) {
            if place.owner[p as usize] == NO_OWNER && !held.is_some_and(|h| h.taken[p as usize]) {
                pool.push(p);
            }
        }
    }
    if rack_on && !pool.is_empty() {
        let mut placed = vec![false; problem.num_partitions() as usize];
        let all: Vec<MemberIdx> = (0..n).collect();
        let mut quota = Quota {
            place: &mut place,
            q,
            extra,
        };
        rack::pass(problem, &pool, &all, &mut quota, &mut placed, work);
        pool.retain(|&p| !placed[p as usize]);
    }
    let count = place.count.clone();
    deal(count, q, pool, |m, p| place.give(m, p));
    place.owner
}

/// The deal of the pool, the last step of the constrained path: `count[m]` is what member `m`
/// (member order) holds after the keep step, every count at most q + 1. The pool goes round-robin
/// over the members below q, in member order, until each has q; a member reaching q joins the
/// queue of members at exactly q (those at q from the start first, in member order), and what is
/// left of the pool goes to that queue, one partition each. The pool must hold exactly what fills
/// the quotas and the extra slots left. `give(m, p)` receives each placement in deal order.
///
/// One rule for both callers: [`assign_held`] on a [`Problem`], and the broker's flat path
/// ([`crate::server::kassign`]), which deals from counts without interning the group.
pub(crate) fn deal<P: Copy>(
    mut count: Vec<u32>,
    q: u32,
    pool: impl IntoIterator<Item = P>,
    mut give: impl FnMut(MemberIdx, P),
) {
    let n = count.len() as MemberIdx;
    let mut under: Vec<MemberIdx> = (0..n).filter(|&m| count[m as usize] < q).collect();
    let mut exact: VecDeque<MemberIdx> = (0..n).filter(|&m| count[m as usize] == q).collect();
    let mut it = pool.into_iter();
    let mut next: Vec<MemberIdx> = Vec::with_capacity(under.len());
    while !under.is_empty() {
        next.clear();
        for &m in &under {
            let p = it
                .next()
                .expect("sticky: pool shorter than the quotas (internal error)");
            count[m as usize] += 1;
            give(m, p);
            if count[m as usize] < q {
                next.push(m);
            } else {
                exact.push_back(m);
            }
        }
        std::mem::swap(&mut under, &mut next);
    }
    for p in it {
        let m = exact
            .pop_front()
            .expect("sticky: no member left for an extra slot (internal error)");
        give(m, p);
    }
}
