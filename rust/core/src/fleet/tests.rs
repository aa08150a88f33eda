use super::*;

/// (id, topics, owned, generation, rack)
pub(super) type M<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, i32)], i32, Option<&'a str>);
/// (topic, partition, replica racks, beginning, end, committed)
pub(super) type P<'a> = (&'a str, i32, &'a [&'a str], i64, i64, Option<i64>);

pub(super) fn rows(members: &[M<'_>], parts: &[P<'_>]) -> GroupRows {
    let mut g = GroupRows::default();
    for (id, topics, owned, gen, rack) in members {
        let topics = topics.iter().map(|t| Some(g.topics.intern(t))).collect();
        let owned = owned
            .iter()
            .map(|(t, p)| Some((Some(g.topics.intern(t)), Some(*p))))
            .collect();
        g.members.push(MemberRow {
            id: Some(id.to_string()),
            topics: Some(topics),
            owned: Some(owned),
            generation: Some(*gen),
            rack: rack.map(str::to_string),
            ..Default::default()
        });
    }
    for (t, p, racks, b, e, c) in parts {
        let topic = Some(g.topics.intern(t));
        g.parts.push(PartRow {
            topic,
            partition: Some(*p),
            racks: Some(racks.iter().map(|r| Some(r.to_string())).collect()),
            beginning: Some(*b),
            end: Some(*e),
            committed: *c,
        });
    }
    g
}

fn opts(churn: u32) -> EvalOptions {
    EvalOptions {
        churn_rounds: churn,
        churn_seed: 7,
        with_assignment: true,
    }
}

#[test]
fn group_errors_in_the_reference_order() {
    let g = GroupRows::default();
    assert_eq!(
        Group::build(&g, OffsetReset::Latest).unwrap_err(),
        GroupError::NoMembers
    );
    let mut g = rows(&[("a", &["t"], &[], 1, None), ("a", &["t"], &[], 1, None)], &[]);
    assert_eq!(
        Group::build(&g, OffsetReset::Latest).unwrap_err(),
        GroupError::DuplicateMember { id: "a".into() }
    );
    g.members[1].id = Some(String::new());
    assert_eq!(
        Group::build(&g, OffsetReset::Latest).unwrap_err(),
        GroupError::EmptyMemberId { row: 1 }
    );
    g.members[1].id = Some("b".into());
    g.members[1].topics = Some(vec![None]);
    g.members[1].owned = Some(vec![None]);
    // the owned list is read before the Member is built
    assert_eq!(
        Group::build(&g, OffsetReset::Latest).unwrap_err(),
        GroupError::NullOwnedEntry { id: "b".into() }
    );
    g.members[1].owned = None;
    assert_eq!(
        Group::build(&g, OffsetReset::Latest).unwrap_err(),
        GroupError::NullTopicName { id: "b".into() }
    );
    let e = GroupError::DuplicateMember { id: "it's".into() };
    assert_eq!(e.message(&py_repr), "member \"it's\": duplicate member_id");
}

#[test]
fn metrics_of_a_small_group() {
    // t has 4 partitions: lags 10, 0, 0, 30 (t-2 uncommitted: lag 0 with latest)
    let g = rows(
        &[
            ("a", &["t"], &[("t", 0), ("t", 1)], 3, Some("r1")),
            ("b", &["t"], &[("t", 1)], 3, Some("r2")),
        ],
        &[
            ("t", 0, &["r1"], 0, 10, Some(0)),
            ("t", 1, &["r2"], 0, 10, Some(10)),
            ("t", 2, &["r1", "r2"], 0, 10, None),
            ("t", 3, &[], 0, 40, Some(10)),
        ],
    );
    let group = Group::build(&g, OffsetReset::Latest).unwrap();
    assert_eq!((group.sum_lag, group.max_lag, group.uncommitted), (40, 30, 1));
    assert_eq!(group.previous, vec![0, NONE, NONE, NONE]); // t-1: tie at generation 3
                                                           // bound: max(30, 40 / 2) / 20
    assert_eq!(group.lag_bound, Some(1.5));
    let placed = Placed::from_lists(vec![vec![0, 1], vec![2, 3]]);
    let q = metrics::evaluate(&group, &placed);
    assert_eq!((q.assigned, q.unassigned, q.min_count, q.max_count), (4, 0, 2, 2));
    assert_eq!((q.max_member_lag, q.mean_member_lag), (30, 20.0));
    assert_eq!(q.lag_ratio, Some(1.5));
    assert!(q.lag_imbalanced);
    assert_eq!((q.moves, q.kept), (0, 1));
    // a: t-0 on r1 (local), t-1 on r2 (not); b: t-2 (local), t-3 has no racks
    assert_eq!((q.rack_local, q.rack_eligible), (2, 3));
    assert_eq!(q.violations, 0);
    let broken = Placed::from_lists(vec![vec![0, 0], vec![]]);
    assert_eq!(metrics::evaluate(&group, &broken).violations, 1);
}

#[test]
fn evaluation_and_churn_with_rust_strategies() {
    let g = rows(
        &[
            ("a", &["t", "u"], &[], -1, None),
            ("b", &["t"], &[], -1, None),
            ("c", &["t", "u"], &[], -1, None),
        ],
        &[
            ("t", 0, &[], 0, 1, Some(0)),
            ("t", 1, &[], 0, 1, Some(0)),
            ("t", 2, &[], 0, 1, Some(0)),
            ("u", 0, &[], 0, 1, Some(0)),
        ],
    );
    let strategies: Vec<String> = crate::strategy::names().iter().map(|s| s.to_string()).collect();
    let rows = evaluate_rows(&g, &strategies, OffsetReset::Latest, &opts(4));
    for r in &rows {
        assert!(r.error.is_none(), "{:?}", r.error);
        let q = r.quality.as_ref().unwrap();
        assert_eq!((q.assigned, q.violations, q.partitions), (4, 0, 4));
        let c = r.churn.unwrap();
        assert_eq!(c.rounds, 4);
        assert!(c.rebalances >= 4);
        assert_eq!(r.assignment.as_ref().unwrap().len(), 4);
    }
    let err = evaluate_rows(&g, &["nope".to_string()], OffsetReset::Latest, &opts(0));
    assert_eq!(
        err[0].error.as_deref(),
        Some("nope: InputError: strategy: unknown strategy \"nope\"")
    );
}
