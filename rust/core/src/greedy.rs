//! Greedy least-loaded placement: the loops of the Python strategies `fair` and `lag-aware`
//! (python/kassign/assignors/_greedy.py and lag_aware.py), with or without `max_skew`.
//!
//! The strategies stay Python: they decide the order of topics and partitions' lags, and keep
//! the options. These kernels run every per-partition and per-member placement loop (the Python
//! code they replaced lives on as the oracle of `tests/unit/test_greedy_kernels.py`, in
//! `tests/support/lag_aware_oracle.py`):
//!
//! * [`deal_global`]: every partition, in order, goes to the member of its topic's eligible set
//!   with the smallest `(count, lag, member index)`; counts and lags are kept across topics
//!   (`kassign.assignors._greedy.deal_global`).
//! * [`carry_lag`]: the proposal rule of `lag-aware` (`lag_aware._carry_lag`): per topic,
//!   rounds of one partition per subscriber, hottest partitions to the members with the least
//!   `(total lag, member index)` at the round's start; topics with owners already fixed (sticky
//!   mode) place their free partitions by `(count of the topic, lag, member index)`.
//! * [`per_topic`]: the prototype rule of `lag-aware` (`mode="per-topic"`): every topic placed
//!   from zero counts and lags by `(count, lag, member index)`.
//! * [`keep_owned`]: sticky `lag-aware`'s keep step: each member keeps the partitions it owned
//!   within the topic's quota, its hottest first.
//! * [`loads`]: each member's total lag under a placement.
//! * [`subscriber_sets`]: the subscribers of each topic, the eligible sets of all of these
//!   ([`subscribers_by_topic`] of an interned problem).
//!
//! With `max_skew` (`skew > 0`) a partition may go to a member holding up to `skew` more
//! partitions than the least-loaded eligible member: among those, the smallest
//! `(lag, count, member index)` ([`Balancer`]). With skew 0 both rules agree.
//!
//! Members are dense indices in member-id order, so comparing indices compares member ids. Lags
//! are non-negative `i64` (Kafka offsets are `int64`, so every lag fits); a member's total lag is
//! a [`Load`] (`i128`), which holds the sum of up to 2^64 lags of `i64::MAX` exactly: no input
//! overflows.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use crate::model::{FastMap, Problem, SubId};

/// A member's total lag: the exact sum of its partitions' `i64` lags.
pub type Load = i128;

/// A fixed owner (sticky mode) is not a subscriber of its topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotSubscriber;

/// A previous owner or owned partition out of range (sticky keep step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

/// Partition order of `deal_global` (placement rank `g` = partition index in topic-rank order):
/// with lags, the eligible set's size ascending, then lag descending, then `g`; without, `g`.
fn deal_order(eligible: &[usize], pool_sizes: &[usize], sizes: &[usize], lag_of: Option<&[i64]>) -> Vec<u32> {
    let total: usize = sizes.iter().sum();
    let mut order: Vec<u32> = (0..total as u32).collect();
    if let Some(lag) = lag_of {
        let mut n_subs = Vec::with_capacity(total);
        for (r, &len) in sizes.iter().enumerate() {
            n_subs.extend(std::iter::repeat(pool_sizes[eligible[r]]).take(len));
        }
        order.sort_unstable_by_key(|&g| (n_subs[g as usize], Reverse(lag[g as usize]), g));
    }
    order
}

/// A pool's heap entry: (count, lag, member, version).
type Entry = (u32, Load, u32, u32);

/// `deal_global`. `pools[k]` is an eligible set (ascending member indices, not empty),
/// `eligible[r]` the pool of the topic of rank `r`, `sizes[r]` its partition count, `lag_of[g]`
/// the lag of placement rank `g` (None: no topic has lag) and `skew` the `max_skew` option.
/// Returns the owner of each placement rank.
pub fn deal_global(
    n_members: usize,
    pools: &[Vec<u32>],
    eligible: &[usize],
    sizes: &[usize],
    lag_of: Option<&[i64]>,
    skew: u64,
) -> Vec<u32> {
    let pool_sizes: Vec<usize> = pools.iter().map(Vec::len).collect();
    let order = deal_order(eligible, &pool_sizes, sizes, lag_of);
    let mut topic_of = Vec::with_capacity(order.len());
    for (r, &len) in sizes.iter().enumerate() {
        topic_of.extend(std::iter::repeat(r as u32).take(len));
    }
    if skew > 0 {
        let mut bal = Balancer::new(vec![0; n_members], vec![0; n_members], pools);
        let mut owner = vec![0u32; order.len()];
        for &g in &order {
            let i = bal.pick(eligible[topic_of[g as usize] as usize], skew);
            bal.place(i, lag_of.map_or(0, |l| l[g as usize]));
            owner[g as usize] = i;
        }
        return owner;
    }
    // One heap of (count, lag, member, version) per pool; a placement pushes a fresh entry into
    // every pool of the member and the old ones go stale (dropped when they surface).
    let mut count = vec![0u32; n_members];
    let mut lag: Vec<Load> = vec![0; n_members];
    let mut version = vec![0u32; n_members];
    let mut pools_of: Vec<Vec<u32>> = vec![Vec::new(); n_members];
    let mut heaps: Vec<BinaryHeap<Reverse<Entry>>> = Vec::with_capacity(pools.len());
    for (k, members) in pools.iter().enumerate() {
        heaps.push(members.iter().map(|&i| Reverse((0, 0, i, 0))).collect());
        for &i in members {
            pools_of[i as usize].push(k as u32);
        }
    }
    let mut owner = vec![0u32; order.len()];
    for &g in &order {
        let heap = &mut heaps[eligible[topic_of[g as usize] as usize]];
        let i = loop {
            let Reverse((_, _, i, v)) = *heap.peek().expect("every member keeps a valid entry in its pools");
            if version[i as usize] == v {
                break i as usize;
            }
            heap.pop();
        };
        let x = lag_of.map_or(0, |l| l[g as usize]);
        count[i] += 1;
        lag[i] += Load::from(x);
        version[i] += 1;
        let entry = Reverse((count[i], lag[i], i as u32, version[i]));
        for &k in &pools_of[i] {
            heaps[k as usize].push(entry);
        }
        owner[g as usize] = i as u32;
    }
    owner
}

/// One topic of [`carry_lag`].
pub struct CarryLagTopic<'a> {
    /// Subscribers, ascending member indices (not empty).
    pub subscribers: &'a [u32],
    /// Partitions.
    pub n: usize,
    /// Lag of each partition (None: the topic has no lag).
    pub lags: Option<&'a [i64]>,
    /// Owners already fixed (sticky mode), -1 = free; every fixed owner is a subscriber.
    pub fixed: Option<&'a [i64]>,
}

/// Partitions by lag descending, ties partition ascending (`lag_aware._lag_order`).
fn lag_order(tl: &[i64]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..tl.len() as u32).collect();
    order.sort_by_key(|&p| (Reverse(tl[p as usize]), p));
    order
}

/// The proposal rule of `lag-aware` (`lag_aware._carry_lag`): `topics` in placement order,
/// `load` each member's total lag (updated), `skew` the `max_skew` option. Returns each topic's
/// owners, or [`NotSubscriber`] when a fixed owner is not a subscriber of its topic.
pub fn carry_lag(topics: &[CarryLagTopic<'_>], load: &mut [Load], skew: u64) -> Result<Vec<Vec<i64>>, NotSubscriber> {
    let mut out = Vec::with_capacity(topics.len());
    for t in topics {
        let s = t.subscribers;
        let (n, k) = (t.n, s.len());
        if t.fixed.is_some() || skew > 0 {
            let start: Vec<Load> = s.iter().map(|&i| load[i as usize]).collect();
            let (own, after) = place_topic(s, n, t.lags, t.fixed, start, skew)?;
            for (&i, l) in s.iter().zip(after) {
                load[i as usize] = l;
            }
            out.push(own);
            continue;
        }
        let mut own = vec![0i64; n];
        if k == 0 || n == 0 {
            out.push(own);
            continue;
        }
        // The members of s by (load, member index): s is ascending, so a stable sort by load.
        let ranked = |load: &[Load]| -> Vec<u32> {
            let mut r = s.to_vec();
            r.sort_by_key(|&i| load[i as usize]);
            r
        };
        match t.lags {
            None => {
                // Loads do not change: every round deals to the same members.
                let first = ranked(load);
                for (p, o) in own.iter_mut().enumerate() {
                    *o = first[p % k] as i64;
                }
            }
            Some(tl) => {
                let order = lag_order(tl);
                // Rounds of k partitions (the last one partial), each dealt by the loads at its start.
                for round in order.chunks(k) {
                    let r = ranked(load);
                    for (&p, &i) in round.iter().zip(&r) {
                        own[p as usize] = i as i64;
                        load[i as usize] += Load::from(tl[p as usize]);
                    }
                }
            }
        }
        out.push(own);
    }
    Ok(out)
}

/// A pool's bucket entry: (lag, member, version).
type PoolEntry = (Load, u32, u32);

/// Least-loaded selection over eligible sets with `max_skew` (the `skew > 0` rule; with skew 0 it
/// is the smallest `(count, lag, member)`). Each distinct eligible set is a pool: count -> heap of
/// (lag, member, version). Placing a partition bumps the member's version and pushes a fresh
/// entry into each of its pools; stale entries are dropped when they surface, so every member
/// has exactly one valid entry per pool, in the bucket of its count with its lag.
struct Balancer {
    count: Vec<u32>,
    lag: Vec<Load>,
    version: Vec<u32>,
    pools_of: Vec<Vec<u32>>,
    pools: Vec<BTreeMap<u32, BinaryHeap<Reverse<PoolEntry>>>>,
    max_count: u32,
}

impl Balancer {
    /// Members with starting `counts` and `lags`, and the eligible sets `pools` (ascending member
    /// indices, not empty).
    fn new(counts: Vec<u32>, lags: Vec<Load>, pools: &[Vec<u32>]) -> Self {
        let n = counts.len();
        let mut pools_of: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut buckets = Vec::with_capacity(pools.len());
        for (k, members) in pools.iter().enumerate() {
            let mut b: BTreeMap<u32, BinaryHeap<Reverse<PoolEntry>>> = BTreeMap::new();
            for &i in members {
                b.entry(counts[i as usize])
                    .or_default()
                    .push(Reverse((lags[i as usize], i, 0)));
                pools_of[i as usize].push(k as u32);
            }
            buckets.push(b);
        }
        let max_count = counts.iter().copied().max().unwrap_or(0);
        Balancer {
            count: counts,
            lag: lags,
            version: vec![0; n],
            pools_of,
            pools: buckets,
            max_count,
        }
    }

    /// The member of pool `k` the rule chooses: the least count `lo` among the pool's members;
    /// with `skew`, among the members holding at most `lo + skew`, the smallest
    /// `(lag, count, member)`.
    fn pick(&mut self, k: usize, skew: u64) -> u32 {
        let version = &self.version;
        let buckets = &mut self.pools[k];
        let (lo, lo_lag, lo_member) = loop {
            let mut first = buckets
                .first_entry()
                .expect("every member keeps a valid entry in its pools");
            match first.get().peek() {
                Some(&Reverse((lag, i, v))) if version[i as usize] == v => break (*first.key(), lag, i),
                Some(_) => {
                    first.get_mut().pop();
                }
                None => {
                    first.remove();
                }
            }
        };
        if skew == 0 {
            return lo_member;
        }
        let mut best = (lo_lag, lo, lo_member);
        let top = u64::from(lo).saturating_add(skew).min(u64::from(self.max_count)) as u32;
        if top > lo {
            for (&c, heap) in buckets.range_mut(lo + 1..=top) {
                while let Some(&Reverse((lag, j, v))) = heap.peek() {
                    if version[j as usize] == v {
                        best = best.min((lag, c, j));
                        break;
                    }
                    heap.pop();
                }
            }
        }
        best.2
    }

    /// Member `i` takes one more partition carrying `x`.
    fn place(&mut self, i: u32, x: i64) {
        let m = i as usize;
        self.count[m] += 1;
        self.lag[m] += Load::from(x);
        self.version[m] += 1;
        self.max_count = self.max_count.max(self.count[m]);
        let entry = Reverse((self.lag[m], i, self.version[m]));
        for &k in &self.pools_of[m] {
            self.pools[k as usize].entry(self.count[m]).or_default().push(entry);
        }
    }
}

/// The prototype rule of `lag-aware` (`mode="per-topic"`): every topic is placed from zero
/// counts and zero lags (plus its fixed owners' partitions in sticky mode), each free partition
/// (lag order) to the subscriber the rule picks. Returns each topic's owners, or
/// [`NotSubscriber`] when a fixed owner is not a subscriber of its topic.
pub fn per_topic(topics: &[CarryLagTopic<'_>], skew: u64) -> Result<Vec<Vec<i64>>, NotSubscriber> {
    let mut out = Vec::with_capacity(topics.len());
    for t in topics {
        let s = t.subscribers;
        let mut start: Vec<Load> = vec![0; s.len()];
        if let (Some(fixed), Some(tl)) = (t.fixed, t.lags) {
            for (&i, &x) in fixed.iter().zip(tl) {
                if i >= 0 {
                    let j = s.binary_search(&(i as u32)).map_err(|_| NotSubscriber)?;
                    start[j] += Load::from(x);
                }
            }
        }
        out.push(place_topic(s, t.n, t.lags, t.fixed, start, skew)?.0);
    }
    Ok(out)
}

/// One topic from arbitrary starting counts (`fixed` owners, -1 = free) and loads (`start[j]`:
/// subscriber `s[j]`'s): the free partitions (lag order, or ascending without lag) go one by one
/// to the subscriber the rule picks (skew 0: the least `(count of this topic, load, index)`).
/// Returns the owners and the subscribers' loads after.
fn place_topic(
    s: &[u32],
    n: usize,
    tl: Option<&[i64]>,
    fixed: Option<&[i64]>,
    start: Vec<Load>,
    skew: u64,
) -> Result<(Vec<i64>, Vec<Load>), NotSubscriber> {
    let mut own = fixed.map_or_else(|| vec![-1; n], <[i64]>::to_vec);
    let k = s.len();
    let mut counts = vec![0u32; k];
    for &i in &own {
        if i >= 0 {
            let j = s.binary_search(&(i as u32)).map_err(|_| NotSubscriber)?;
            counts[j] += 1;
        }
    }
    let order: Vec<u32> = match tl {
        Some(tl) => lag_order(tl),
        None => (0..n as u32).collect(),
    };
    let free: Vec<u32> = order.into_iter().filter(|&p| own[p as usize] < 0).collect();
    if free.is_empty() {
        return Ok((own, start));
    }
    let lag_at = |p: u32| tl.map_or(0, |tl| tl[p as usize]);
    if skew > 0 {
        let mut bal = Balancer::new(counts, start, &[(0..k as u32).collect()]);
        for &p in &free {
            let j = bal.pick(0, skew);
            bal.place(j, lag_at(p));
            own[p as usize] = i64::from(s[j as usize]);
        }
        return Ok((own, bal.lag));
    }
    let mut load = start;
    let mut heap: BinaryHeap<Reverse<(u32, Load, u32)>> =
        (0..k).map(|j| Reverse((counts[j], load[j], j as u32))).collect();
    for &p in &free {
        let Reverse((c, l, j)) = heap.pop().expect("a topic has subscribers");
        let l = l + Load::from(lag_at(p));
        own[p as usize] = i64::from(s[j as usize]);
        load[j as usize] = l;
        heap.push(Reverse((c + 1, l, j)));
    }
    Ok((own, load))
}

/// Sticky `lag-aware`'s keep step for one topic (`lag_aware._sticky`): `s` its subscribers,
/// `n` its partitions, `tl` their lags, `owned` (member, partitions it previously owned) for the
/// members the claim rule names. Members owning more claim first (then member index); each
/// keeps at most `ceil(n / |s|)` partitions, and only as many members keep that many as the
/// remainder of `n / |s|` allows; over its quota a member keeps its hottest partitions (lag
/// descending, then partition). Claims of members not subscribed to the topic are ignored.
/// Adds the kept partitions' lags to `load`; returns (owners with -1 = free, kept flags, kept).
pub fn keep_owned(
    s: &[u32],
    n: usize,
    tl: Option<&[i64]>,
    owned: &[(u32, Vec<u32>)],
    load: &mut [Load],
) -> Result<(Vec<i64>, Vec<bool>, usize), Malformed> {
    if s.is_empty() {
        return Err(Malformed);
    }
    let (q, mut r) = (n / s.len(), n % s.len());
    let mut claims: Vec<&(u32, Vec<u32>)> = owned.iter().filter(|(i, _)| s.binary_search(i).is_ok()).collect();
    claims.sort_by_key(|(i, ps)| (Reverse(ps.len()), *i));
    let mut own = vec![-1i64; n];
    let mut flags = vec![false; n];
    let mut kept = 0;
    for (i, ps) in claims {
        if ps.iter().any(|&p| p as usize >= n) || *i as usize >= load.len() {
            return Err(Malformed);
        }
        let mut quota = q;
        if ps.len() > q && r > 0 {
            quota = q + 1;
            r -= 1;
        }
        let mut keep = ps.clone();
        if keep.len() > quota {
            match tl {
                Some(tl) => keep.sort_by_key(|&p| (Reverse(tl[p as usize]), p)),
                None => keep.sort_unstable(),
            }
            keep.truncate(quota);
        }
        for &p in &keep {
            own[p as usize] = i64::from(*i);
            flags[p as usize] = true;
            if let Some(tl) = tl {
                load[*i as usize] += Load::from(tl[p as usize]);
            }
        }
        kept += keep.len();
    }
    Ok((own, flags, kept))
}

/// The subscribers of each topic, as the Python strategies' shared inputs hold them
/// (`kassign.assignors._greedy.Inputs.subs`; the fleet derives them from its problem with this
/// too). Members are indices in member-id order; `member_class[i]` is member `i`'s subscription,
/// an index into `class_topics` (its topics, indices into `topic_len`, the partition count of
/// each topic). Topics without partitions are skipped. The work is per distinct subscription,
/// not per member.
///
/// Returns `(topics, sets)`: `topics` lists `(topic, index into sets)` for every topic some member
/// subscribes to that has at least one partition, in order of first appearance over the members,
/// each subscription's topics in its own order; `sets` holds the member indices (ascending) of
/// each distinct subscriber set, and topics with the same subscribers share one set.
pub fn subscriber_sets(
    member_class: &[u32],
    class_topics: &[&[u32]],
    topic_len: &[u32],
) -> (Vec<(u32, u32)>, Vec<Vec<u32>>) {
    let mut class_members: Vec<Vec<u32>> = vec![Vec::new(); class_topics.len()];
    let mut class_order: Vec<u32> = Vec::new();
    for (i, &c) in member_class.iter().enumerate() {
        let members = &mut class_members[c as usize];
        if members.is_empty() {
            class_order.push(c);
        }
        members.push(i as u32);
    }
    let mut classes_of: Vec<Vec<u32>> = vec![Vec::new(); topic_len.len()];
    let mut order: Vec<u32> = Vec::new();
    for &c in &class_order {
        for &t in class_topics[c as usize] {
            if topic_len[t as usize] == 0 {
                continue;
            }
            let classes = &mut classes_of[t as usize];
            if classes.is_empty() {
                order.push(t);
            }
            classes.push(c);
        }
    }
    let mut set_of: FastMap<&[u32], u32> = FastMap::default();
    let mut sets: Vec<Vec<u32>> = Vec::new();
    let mut topics = Vec::with_capacity(order.len());
    for &t in &order {
        let classes = classes_of[t as usize].as_slice();
        let k = *set_of.entry(classes).or_insert_with(|| {
            let mut members: Vec<u32> = classes
                .iter()
                .flat_map(|&c| class_members[c as usize].iter().copied())
                .collect();
            if classes.len() > 1 {
                members.sort_unstable();
            }
            sets.push(members);
            (sets.len() - 1) as u32
        });
        topics.push((t, k));
    }
    (topics, sets)
}

/// [`subscriber_sets`] of an interned problem (members sorted by id, each subscription's topics
/// by id = by name): the Python strategies' eligible sets as the fleet hands them over and as
/// `kassign._core.sticky_inputs` derives them from its one read of the group.
pub fn subscribers_by_topic(problem: &Problem) -> (Vec<(u32, u32)>, Vec<Vec<u32>>) {
    let member_class: Vec<SubId> = problem.members.iter().map(|m| m.sub).collect();
    let class_topics: Vec<&[u32]> = problem.subs.iter().map(Vec::as_slice).collect();
    subscriber_sets(&member_class, &class_topics, &problem.topic_len)
}

/// Each member's total lag under `owners` (topic by topic, the owner of each partition) with
/// `arrays` each topic's lags (None: no lag). [`Malformed`] when an owner is out of range or a
/// topic's lags and owners differ in length.
pub fn loads(n_members: usize, owners: &[Vec<i64>], arrays: &[Option<Vec<i64>>]) -> Result<Vec<Load>, Malformed> {
    let mut load: Vec<Load> = vec![0; n_members];
    for (own, arr) in owners.iter().zip(arrays) {
        let Some(arr) = arr else { continue };
        if arr.len() != own.len() {
            return Err(Malformed);
        }
        for (&i, &x) in own.iter().zip(arr) {
            if x != 0 {
                let slot = usize::try_from(i).ok().and_then(|i| load.get_mut(i)).ok_or(Malformed)?;
                *slot += Load::from(x);
            }
        }
    }
    Ok(load)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kip49_example_fair() {
        // C1..C4 = 0..3; T1=2, T2=1, T3=2, T4=1, T5=2; C1, C4 subscribe all, C2, C3 T1, T3, T5.
        // Topic order (fewest subscribers, more partitions, name): T2, T4, T1, T3, T5.
        let pools = vec![vec![0, 3], vec![0, 1, 2, 3]];
        let eligible = [0, 0, 1, 1, 1];
        let sizes = [1, 1, 2, 2, 2];
        let owner = deal_global(4, &pools, &eligible, &sizes, None, 0);
        // T2-0 C1, T4-0 C4, T1 [C2, C3], T3 [C1, C4]... as KIP-49's example: C1 [T2-0, T3-0],
        // C2 [T1-0, T3-1], C3 [T1-1, T5-0], C4 [T4-0, T5-1].
        assert_eq!(owner, vec![0, 3, 1, 2, 0, 1, 2, 3]);
    }

    #[test]
    fn proposal_example() {
        // C0, C1 on t0 with lags 100000, 60000, 50000: C0 [t0-0], C1 [t0-1, t0-2].
        let tl = [100_000, 60_000, 50_000];
        let s = [0u32, 1];
        let mut load = vec![0, 0];
        let t = CarryLagTopic {
            subscribers: &s,
            n: 3,
            lags: Some(&tl),
            fixed: None,
        };
        let own = carry_lag(&[t], &mut load, 0).unwrap();
        assert_eq!(own, vec![vec![0, 1, 1]]);
        assert_eq!(load, vec![100_000, 110_000]);
    }

    #[test]
    fn sums_beyond_i64_are_exact() {
        // Three partitions of lag i64::MAX over two members: the one with two holds 2^64 - 2.
        // Rounds of two, each dealt by the loads at its start (ties: member index).
        let tl = [i64::MAX, i64::MAX, i64::MAX, 1];
        let s = [0u32, 1];
        let mut load = vec![0, 0];
        let t = CarryLagTopic {
            subscribers: &s,
            n: 4,
            lags: Some(&tl),
            fixed: None,
        };
        assert_eq!(carry_lag(&[t], &mut load, 0), Ok(vec![vec![0, 1, 0, 1]]));
        assert_eq!(load, vec![2 * Load::from(i64::MAX), Load::from(i64::MAX) + 1]);
        let owner = deal_global(2, &[vec![0, 1]], &[0], &[4], Some(&tl), 0);
        assert_eq!(owner, vec![0, 1, 0, 1]);
    }

    #[test]
    fn fixed_owner_outside_the_topic() {
        let s = [0u32, 2];
        let fixed = [1, -1];
        let mut load = vec![0, 0, 0];
        let t = CarryLagTopic {
            subscribers: &s,
            n: 2,
            lags: None,
            fixed: Some(&fixed),
        };
        assert_eq!(carry_lag(&[t], &mut load, 0), Err(NotSubscriber));
    }

    #[test]
    fn skew_lets_the_least_lag_take_more() {
        // One topic, lags 10, 1, 1, 1 over two members. Skew 0: counts alternate. Skew 1: member
        // 0 holds the hot partition, so member 1 takes the other three (counts 1 and 3: they
        // differ by skew + 1 at most).
        let tl = [10, 1, 1, 1];
        let owner = deal_global(2, &[vec![0, 1]], &[0], &[4], Some(&tl), 0);
        assert_eq!(owner, vec![0, 1, 1, 0]);
        let owner = deal_global(2, &[vec![0, 1]], &[0], &[4], Some(&tl), 1);
        assert_eq!(owner, vec![0, 1, 1, 1]);
        // A skew beyond any count behaves like the largest one.
        assert_eq!(deal_global(2, &[vec![0, 1]], &[0], &[4], Some(&tl), u64::MAX), owner);
    }

    #[test]
    fn per_topic_starts_every_topic_from_zero() {
        // Two topics with the same hot first partition: both land on member 0.
        let s = [0u32, 1];
        let tl = [5, 1];
        let topic = |lags| CarryLagTopic {
            subscribers: &s,
            n: 2,
            lags,
            fixed: None,
        };
        assert_eq!(
            per_topic(&[topic(Some(&tl)), topic(Some(&tl))], 0),
            Ok(vec![vec![0, 1], vec![0, 1]])
        );
        assert_eq!(per_topic(&[topic(None)], 3), Ok(vec![vec![0, 1]]));
    }

    #[test]
    fn keep_owned_respects_the_quota() {
        // 5 partitions over 2 subscribers: quota 3 for one member (the one owning more), 2 for
        // the other; member 0 owned 4 and keeps its 3 hottest, member 1 owned 3 and keeps 2.
        let s = [0u32, 1];
        let tl = [1, 9, 5, 7, 0];
        let owned = vec![(0, vec![0, 1, 2, 3]), (1, vec![2, 3, 4]), (2, vec![4])];
        let mut load = vec![0, 0, 0];
        let (own, flags, kept) = keep_owned(&s, 5, Some(&tl), &owned, &mut load).unwrap();
        // Member 0 keeps 1, 3, 2 (lags 9, 7, 5); member 1 keeps the hottest two of 2, 3, 4 (lags
        // 5, 7, 0): 3 and 2, which member 0 keeps too: the later claim overwrites, as before.
        assert_eq!(own, vec![-1, 0, 1, 1, -1]);
        assert_eq!(flags, vec![false, true, true, true, false]);
        assert_eq!(kept, 5);
        assert_eq!(load, vec![21, 12, 0]);
        assert_eq!(keep_owned(&s, 2, None, &[(0, vec![2])], &mut load), Err(Malformed));
    }

    #[test]
    fn subscriber_sets_share_equal_sets() {
        // Topics 0..4 with 2, 0, 3, 1 partitions; subscriptions A {2, 0}, B {0, 1}, C {2, 0, 3};
        // members 0 C, 1 A, 2 B, 3 A.
        let classes: [&[u32]; 3] = [&[2, 0], &[0, 1], &[2, 0, 3]];
        let (topics, sets) = subscriber_sets(&[2, 0, 1, 0], &classes, &[2, 0, 3, 1]);
        // Topic 1 has no partitions; 2 and 0 first (member 0), then 3; 2 is {0, 1, 3}, 0 all.
        assert_eq!(topics, vec![(2, 0), (0, 1), (3, 2)]);
        assert_eq!(sets, vec![vec![0, 1, 3], vec![0, 1, 2, 3], vec![0]]);
        // Topics with the same subscribers share one set.
        let (topics, sets) = subscriber_sets(&[0, 1], &[&[0, 1], &[1, 0]], &[1, 1]);
        assert_eq!(topics, vec![(0, 0), (1, 0)]);
        assert_eq!(sets, vec![vec![0, 1]]);
    }

    #[test]
    fn loads_sum_exactly() {
        let owners = vec![vec![0, 1, 0], vec![1]];
        let arrays = vec![Some(vec![i64::MAX, 3, i64::MAX]), None];
        assert_eq!(loads(2, &owners, &arrays), Ok(vec![2 * Load::from(i64::MAX), 3]));
        assert_eq!(loads(2, &[vec![2]], &[Some(vec![1])]), Err(Malformed));
        assert_eq!(loads(2, &[vec![-1]], &[Some(vec![1])]), Err(Malformed));
    }
}
