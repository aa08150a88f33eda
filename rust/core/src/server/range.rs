//! `server-range`: the broker's `range` assignor (Apache Kafka 4.4.0,
//! `group-coordinator/.../assignor/RangeAssignor.java`).
//!
//! Not sticky: the current target assignment is ignored. Members are put in order: members with
//! an instance id (static members) first, by instance id, then the others by member id. Each
//! topic's subscribers, in that order, cut the topic into contiguous ranges: with `P` partitions
//! and `n` subscribers, subscriber `i` gets `q + (i < r)` partitions starting at
//! `i*q + min(i, r)`, where `q = P div n` and `r = P mod n`. Racks are not read.
//!
//! The homogeneous and heterogeneous paths of the Java class give the same result under this
//! rule (in the homogeneous one every member subscribes to every topic), so there is one path.

use crate::model::{Assignment, MemberIdx, Problem};

/// The plan as a dense owner array (flat partition id -> member index; `NO_OWNER` for topics
/// nobody subscribes to). Each topic's subscribers in member order come from the members of each
/// subscription in member order (one subscription naming the topic: used as is; several: merged
/// by rank), so no per-topic sort is needed in the common case.
pub fn assign(problem: &Problem) -> Assignment {
    let n_members = problem.members.len();
    let order = problem.member_order();
    let mut rank = vec![0u32; n_members];
    let mut by_sub: Vec<Vec<MemberIdx>> = vec![Vec::new(); problem.subs.len()];
    for (pos, &m) in order.iter().enumerate() {
        rank[m as usize] = pos as u32;
        by_sub[problem.members[m as usize].sub as usize].push(m);
    }
    let mut subs_of_topic: Vec<Vec<usize>> = vec![Vec::new(); problem.topics.len()];
    for (s, topics) in problem.subs.iter().enumerate() {
        if !by_sub[s].is_empty() {
            for &t in topics {
                subs_of_topic[t as usize].push(s);
            }
        }
    }
    let mut out = Assignment::empty(problem);
    let mut merged: Vec<MemberIdx> = Vec::new();
    for (t, sub_ids) in subs_of_topic.iter().enumerate() {
        let subscribers: &[MemberIdx] = match sub_ids.as_slice() {
            [] => continue,
            [only] => &by_sub[*only],
            many => {
                merged.clear();
                for &s in many {
                    merged.extend_from_slice(&by_sub[s]);
                }
                merged.sort_unstable_by_key(|&m| rank[m as usize]);
                &merged
            }
        };
        let range = problem.topic_range(t as u32);
        let p = range.len() as u32;
        let n = subscribers.len() as u32;
        let (q, r) = (p / n, p % n);
        let mut start = range.start;
        for (i, &m) in subscribers.iter().enumerate() {
            let len = q + u32::from((i as u32) < r);
            out.owner[start as usize..(start + len) as usize].fill(m);
            start += len;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::{member, topics};

    #[test]
    fn ignores_current_assignment_and_orders_static_members_first() {
        let mut a = member("a", &["t"]);
        a.owned = vec![("t".into(), 0), ("t".into(), 1), ("t".into(), 2)];
        let mut b = member("b", &["t"]);
        b.group_instance_id = Some("i".into());
        let c = member("c", &["t"]);
        let p = Problem::build(topics(&[("t", 5)]), vec![a, b, c], vec![]).unwrap();
        let got = assign(&p).per_member(p.members.len());
        // order: b (static), a, c; 5 = 2 + 2 + 1
        assert_eq!(got, vec![vec![2, 3], vec![0, 1], vec![4]]);
    }

    #[test]
    fn heterogeneous_topics_use_their_own_subscribers() {
        let p = Problem::build(
            topics(&[("x", 3), ("y", 2)]),
            vec![
                member("a", &["x"]),
                member("b", &["x", "y"]),
                member("c", &["y", "gone"]),
            ],
            vec![],
        )
        .unwrap();
        // x: a, b -> [0,1], [2]; y (flat 3,4): b, c -> [3], [4]
        assert_eq!(
            assign(&p).per_member(p.members.len()),
            vec![vec![0, 1], vec![2, 3], vec![4]]
        );
    }
}
