//! Range assignor, Java semantics (REFERENCE.md 2.2).
//!
//! Per topic, the topic's subscribers in member order (static members by instance id first, then
//! dynamic members by member id); member i of n gets the contiguous run starting at
//! `i*q + min(i, r)` of length `q + (i < r)`, where `q = P div n`, `r = P mod n`. Topics of equal
//! size with equal subscriber lists therefore line up (co-partitioning).

use crate::model::{Assignment, Problem};

pub fn assign(problem: &Problem) -> Assignment {
    let order = problem.member_order();
    // member index => position in member order
    let mut rank = vec![0u32; problem.members.len()];
    for (pos, &m) in order.iter().enumerate() {
        rank[m as usize] = pos as u32;
    }
    let mut per_member: Vec<Vec<u32>> = vec![Vec::new(); problem.members.len()];
    for (t, mut subs) in problem.subscribers().into_iter().enumerate() {
        if subs.is_empty() {
            continue;
        }
        subs.sort_by_key(|&m| rank[m as usize]);
        let range = problem.topic_range(t as u32);
        let p = range.len() as u32;
        let n = subs.len() as u32;
        let (q, r) = (p / n, p % n);
        for (i, &m) in subs.iter().enumerate() {
            let i = i as u32;
            let start = range.start + i * q + i.min(r);
            let len = q + u32::from(i < r);
            per_member[m as usize].extend(start..start + len);
        }
    }
    // Topics are visited in flat-id order, so each list is already sorted.
    Assignment { per_member }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::{member, topics};
    use crate::model::Problem;

    fn names(p: &Problem, a: &Assignment) -> Vec<Vec<String>> {
        a.per_member
            .iter()
            .map(|ps| {
                ps.iter()
                    .map(|&x| {
                        let (t, i) = p.split(x);
                        format!("{}-{}", p.topics[t as usize], i)
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn co_partitioned_topics_line_up() {
        let p = Problem::build(
            topics(&[("t1", 3), ("t2", 3)]),
            vec![member("c0", &["t1", "t2"]), member("c1", &["t1", "t2"])],
            vec![],
        )
        .unwrap();
        let a = assign(&p);
        assert_eq!(names(&p, &a), vec![vec!["t1-0", "t1-1", "t2-0", "t2-1"], vec!["t1-2", "t2-2"]]);
    }

    #[test]
    fn static_members_come_first() {
        let mut b = member("b", &["t"]);
        b.group_instance_id = Some("i1".into());
        let p = Problem::build(topics(&[("t", 3)]), vec![member("a", &["t"]), b], vec![]).unwrap();
        let a = assign(&p);
        // b is static, so it is first in member order and gets the extra partition.
        assert_eq!(names(&p, &a), vec![vec!["t-2"], vec!["t-0", "t-1"]]);
    }
}
