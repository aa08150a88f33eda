//! Greedy least-loaded placement: the inner loops of the Python strategies `fair` and `lag-aware`
//! (python/kassign/assignors/_greedy.py and lag_aware.py), with `max_skew` 0.
//!
//! The strategies stay Python: they decide the order of topics and partitions' lags, and keep
//! the options. These kernels run the per-partition placement loops (the Python code they
//! replaced lives on as the oracle of `tests/unit/test_greedy_kernels.py`, in
//! `tests/support/lag_aware_oracle.py`):
//!
//! * [`deal_global`]: every partition, in order, goes to the member of its topic's eligible set
//!   with the smallest `(count, lag, member index)`; counts and lags are kept across topics
//!   (`kassign.assignors._greedy.deal_global`, `Balancer.pick` with skew 0).
//! * [`carry_lag`]: the proposal rule of `lag-aware` (`lag_aware._carry_lag` with skew 0): per topic,
//!   rounds of one partition per subscriber, hottest partitions to the members with the least
//!   `(total lag, member index)` at the round's start; topics with owners already fixed (sticky
//!   mode) place their free partitions by `(count of the topic, lag, member index)`.
//!
//! Members are dense indices in member-id order, so comparing indices compares member ids. Lags
//! are non-negative `i64` (Kafka offsets are `int64`, so every lag fits); a member's total lag is
//! a [`Load`] (`i128`), which holds the sum of up to 2^64 lags of `i64::MAX` exactly: no input
//! overflows.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A member's total lag: the exact sum of its partitions' `i64` lags.
pub type Load = i128;

/// A fixed owner (sticky mode) is not a subscriber of its topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotSubscriber;

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

/// `deal_global` with skew 0. `pools[k]` is an eligible set (ascending member indices, not
/// empty), `eligible[r]` the pool of the topic of rank `r`, `sizes[r]` its partition count and
/// `lag_of[g]` the lag of placement rank `g` (None: no topic has lag). Returns the owner of each
/// placement rank.
pub fn deal_global(
    n_members: usize,
    pools: &[Vec<u32>],
    eligible: &[usize],
    sizes: &[usize],
    lag_of: Option<&[i64]>,
) -> Vec<u32> {
    let pool_sizes: Vec<usize> = pools.iter().map(Vec::len).collect();
    let order = deal_order(eligible, &pool_sizes, sizes, lag_of);
    let mut topic_of = Vec::with_capacity(order.len());
    for (r, &len) in sizes.iter().enumerate() {
        topic_of.extend(std::iter::repeat(r as u32).take(len));
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

/// The proposal rule of `lag-aware` with skew 0 (`lag_aware._carry_lag`): `topics` in placement
/// order, `load` each member's total lag (updated). Returns each topic's owners, or
/// [`NotSubscriber`] when a fixed owner is not a subscriber of its topic.
pub fn carry_lag(topics: &[CarryLagTopic<'_>], load: &mut [Load]) -> Result<Vec<Vec<i64>>, NotSubscriber> {
    let mut out = Vec::with_capacity(topics.len());
    for t in topics {
        let s = t.subscribers;
        let (n, k) = (t.n, s.len());
        if let Some(fixed) = t.fixed {
            out.push(carry_lag_fixed(s, n, t.lags, fixed, load)?);
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

/// `lag_aware._carry_lag_topic` with skew 0: the free partitions (lag order, or ascending without
/// lag) go one by one to the subscriber with the least `(count of this topic, load, index)`.
fn carry_lag_fixed(
    s: &[u32],
    n: usize,
    tl: Option<&[i64]>,
    fixed: &[i64],
    load: &mut [Load],
) -> Result<Vec<i64>, NotSubscriber> {
    let own = fixed.to_vec();
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
        return Ok(own);
    }
    let mut own = own;
    let mut heap: BinaryHeap<Reverse<(u32, Load, u32)>> = (0..k)
        .map(|j| Reverse((counts[j], load[s[j] as usize], j as u32)))
        .collect();
    for &p in &free {
        let Reverse((c, l, j)) = heap.pop().expect("a topic has subscribers");
        let x = tl.map_or(0, |tl| tl[p as usize]);
        let l = l + Load::from(x);
        own[p as usize] = s[j as usize] as i64;
        load[s[j as usize] as usize] = l;
        heap.push(Reverse((c + 1, l, j)));
    }
    Ok(own)
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
        let owner = deal_global(4, &pools, &eligible, &sizes, None);
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
        let own = carry_lag(&[t], &mut load).unwrap();
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
        assert_eq!(carry_lag(&[t], &mut load), Ok(vec![vec![0, 1, 0, 1]]));
        assert_eq!(load, vec![2 * Load::from(i64::MAX), Load::from(i64::MAX) + 1]);
        let owner = deal_global(2, &[vec![0, 1]], &[0], &[4], Some(&tl));
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
        assert_eq!(carry_lag(&[t], &mut load), Err(NotSubscriber));
    }
}
