//! The KIP-881 rack-matching pass shared by both sticky paths.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::model::{MemberIdx, PartId, Problem};

/// Capacity bookkeeping of the path running the pass.
pub(crate) trait Slots {
    /// The member's current key (smaller = preferred; keys only grow), or None when it is full.
    fn key(&self, m: MemberIdx) -> Option<u32>;
    /// Place `p` on `m`.
    fn take(&mut self, m: MemberIdx, p: PartId);
}

/// Give pool partitions to members on a rack hosting a replica: scarcest partitions first (fewest
/// replica racks, then flat id), each to the matching member with the smallest (key, index).
/// Marks placed partitions in `placed`. Stops early once `work`'s deadline has passed (read every
/// 1024 partitions): the caller deals the partitions left in the pool.
pub(crate) fn pass<S: Slots>(
    problem: &Problem,
    pool: &[PartId],
    eligible: &[MemberIdx],
    slots: &mut S,
    placed: &mut [bool],
    work: &super::Work,
) {
    let prs = &problem.partition_racks;
    let mut heaps: Vec<BinaryHeap<Reverse<(u32, MemberIdx)>>> = vec![BinaryHeap::new(); problem.racks.len()];
    for &m in eligible {
        if let (Some(r), Some(k)) = (problem.members[m as usize].rack, slots.key(m)) {
            heaps[r as usize].push(Reverse((k, m)));
        }
    }
    let mut order: Vec<PartId> = pool.iter().copied().filter(|&p| !prs[p as usize].is_empty()).collect();
    order.sort_unstable_by_key(|&p| (prs[p as usize].len(), p));
    for (i, p) in order.into_iter().enumerate() {
        if i % 1024 == 1023 && work.expired() {
            return;
        }
        let mut best: Option<(u32, MemberIdx)> = None;
        for &r in &prs[p as usize] {
            let h = &mut heaps[r as usize];
            while let Some(&Reverse((k, m))) = h.peek() {
                match slots.key(m) {
                    None => {
                        h.pop();
                    }
                    Some(cur) if cur != k => {
                        h.pop();
                        h.push(Reverse((cur, m)));
                    }
                    Some(_) => break,
                }
            }
            if let Some(&Reverse(top)) = h.peek() {
                if best.map_or(true, |b| top < b) {
                    best = Some(top);
                }
            }
        }
        if let Some((_, m)) = best {
            slots.take(m, p);
            placed[p as usize] = true;
        }
    }
}
