//! Round-robin assignor, Java semantics (Apache Kafka's RoundRobinAssignor; docs/strategies/roundrobin.md).
//!
//! Members sit on a circular cursor in member order (static members by instance id first, then
//! dynamic members by member id). Partitions are visited sorted by (topic, partition); each goes
//! to the next member from the cursor that subscribes to its topic, and the cursor moves past it.
//! Unlike kafka-python 3.0.12, unequal subscriptions are fine (no KeyError).
//!
//! Finding "the next subscriber from the cursor" is a binary search in the topic's sorted list of
//! subscriber positions, so a topic with few subscribers in a large group costs O(log M) per
//! partition instead of a walk around the circle.

use crate::model::{Assignment, Problem};

pub fn assign(problem: &Problem) -> Assignment {
    let order = problem.member_order();
    let n = order.len();
    let mut out = Assignment::empty(problem);
    if n == 0 {
        return out;
    }
    let mut rank = vec![0u32; n];
    for (pos, &m) in order.iter().enumerate() {
        rank[m as usize] = pos as u32;
    }
    let mut cursor: u32 = 0; // position in `order` of the next member to consider
    for (t, subs) in problem.subscribers().into_iter().enumerate() {
        if subs.is_empty() {
            continue;
        }
        let mut positions: Vec<u32> = subs.iter().map(|&m| rank[m as usize]).collect();
        positions.sort_unstable();
        for p in problem.topic_range(t as u32) {
            let k = positions.partition_point(|&pos| pos < cursor);
            let pos = if k < positions.len() {
                positions[k]
            } else {
                positions[0]
            };
            out.owner[p as usize] = order[pos as usize];
            cursor = (pos + 1) % n as u32;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::{member, topics};

    #[test]
    fn skips_non_subscribers() {
        // kafka-python's docstring example that raises KeyError there.
        let p = Problem::build(
            topics(&[("t0", 1), ("t1", 2), ("t2", 3)]),
            vec![
                member("C0", &["t0"]),
                member("C1", &["t0", "t1"]),
                member("C2", &["t0", "t1", "t2"]),
            ],
            vec![],
        )
        .unwrap();
        let a = assign(&p);
        // t0p0 -> C0; t1p0 -> C1; t1p1 -> C2; t2p0,1,2 -> C2.
        assert_eq!(a.per_member(p.members.len()), vec![vec![0], vec![1], vec![2, 3, 4, 5]]);
    }

    #[test]
    fn uniform_is_a_deal() {
        let p = Problem::build(
            topics(&[("t", 5)]),
            vec![member("a", &["t"]), member("b", &["t"])],
            vec![],
        )
        .unwrap();
        assert_eq!(assign(&p).per_member(p.members.len()), vec![vec![0, 2, 4], vec![1, 3]]);
    }
}
