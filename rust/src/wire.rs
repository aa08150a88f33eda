//! The group leader's path on wire bytes: every member's `ConsumerProtocolSubscription` in,
//! every member's `ConsumerProtocolAssignment` out, with no Python object in between.
//!
//! Each member's history is read by its strategy's rules, the same rules the drop-in classes
//! apply to decoded metadata (docs/wire.md): a member whose bytes cannot be decoded never fails
//! the leader; it gets an empty assignment and a warning.

use crate::model::{InputError, PartId, ProblemBuilder};
use crate::protocol::{self, EncodeError, StickyUserDataRef, SubscriptionRef, TopicPartitionsRef, Writer};
use crate::strategy::Strategy;

/// The leader's view of one member, from its subscription bytes, with the history rules of the
/// member's strategy (the same rules the drop-in classes apply to decoded metadata).
pub struct WireMember<'a> {
    pub topics: Vec<&'a str>,
    /// The history the strategy reads (empty for strategies without history).
    pub owned: Vec<TopicPartitionsRef<'a>>,
    /// -1 when unknown.
    pub generation: i32,
    /// None for no rack or `""`.
    pub rack: Option<&'a str>,
    pub user_data: Option<&'a [u8]>,
}

/// How a strategy carries history on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum History {
    /// cooperative-sticky: owned partitions and the generation field of subscription v1+/v2+;
    /// the 4-byte generation user data when the field is absent; an owned list appended after
    /// those four bytes (kassign's aiokafka members) when the field list is empty.
    Cooperative,
    /// sticky (eager): StickyAssignorUserData v0/v1 wins over the subscription's fields.
    Sticky,
    /// The other strategies read no history.
    None,
}

impl History {
    /// The history rules of a strategy, by protocol name.
    pub fn of(strategy: &str) -> History {
        match strategy {
            "cooperative-sticky" => History::Cooperative,
            "sticky" => History::Sticky,
            _ => History::None,
        }
    }
}

/// Decode one member's subscription; never fails. Warnings name the member.
pub fn member<'a>(id: &str, data: &'a [u8], history: History, warnings: &mut Vec<String>) -> WireMember<'a> {
    let s = match SubscriptionRef::decode(data) {
        Ok(s) => s,
        Err(e) => {
            warnings.push(format!(
                "member {id}: undecodable subscription ({e}); it gets no partitions"
            ));
            return WireMember {
                topics: Vec::new(),
                owned: Vec::new(),
                generation: -1,
                rack: None,
                user_data: None,
            };
        }
    };
    let rack = s.rack.filter(|r| !r.is_empty());
    let (owned, generation) = match history {
        History::None => (Vec::new(), -1),
        History::Cooperative => {
            let mut generation = s.generation;
            let mut owned = s.owned_partitions;
            if let Some(ud) = s.user_data {
                if generation < 0 {
                    generation = match protocol::decode_generation(ud) {
                        Ok(g) => g,
                        Err(e) => {
                            warnings.push(format!(
                                "member {id}: undecodable cooperative-sticky user data ({e}); generation -1"
                            ));
                            -1
                        }
                    };
                }
                if owned.iter().all(|g| g.partitions.is_empty()) && ud.len() > 4 {
                    if let Ok(embedded) = StickyUserDataRef::decode(&ud[4..]) {
                        owned = embedded.partitions;
                    }
                }
            }
            (owned, generation)
        }
        History::Sticky => match s.user_data {
            None | Some([]) => (s.owned_partitions, s.generation),
            Some(ud) => match StickyUserDataRef::decode(ud) {
                Ok(u) => (u.partitions, u.generation.unwrap_or(-1)),
                Err(e) => {
                    warnings.push(format!(
                        "member {id}: undecodable sticky user data ({e}); treated as having no history"
                    ));
                    (Vec::new(), -1)
                }
            },
        },
    };
    WireMember {
        topics: s.topics,
        owned,
        generation: if generation >= 0 { generation } else { -1 },
        rack,
        user_data: s.user_data,
    }
}

/// Encode one assignment (v3, null user data, as Java's built-in assignors send) from sorted
/// flat partition ids.
pub fn encode_member_assignment(
    problem_topics: &[String],
    topic_base: &[PartId],
    parts: &[PartId],
) -> Result<Vec<u8>, EncodeError> {
    // Groups are runs of one topic in the sorted ids: count them, then write.
    let mut groups = 0usize;
    let mut t = 0usize;
    for (i, &p) in parts.iter().enumerate() {
        if i == 0 || p >= topic_base[t + 1] {
            while topic_base[t + 1] <= p {
                t += 1;
            }
            groups += 1;
        }
    }
    let mut w = Writer::with_capacity(10 + groups * 8 + parts.len() * 4);
    w.write_i16(protocol::MAX_VERSION);
    w.write_array_len(groups, "partitions")?;
    let mut t = 0usize;
    let mut i = 0usize;
    while i < parts.len() {
        while topic_base[t + 1] <= parts[i] {
            t += 1;
        }
        let end = parts[i..].partition_point(|&p| p < topic_base[t + 1]) + i;
        w.write_string(&problem_topics[t], "partitions")?;
        w.write_array_len(end - i, "partitions")?;
        for &p in &parts[i..end] {
            w.write_i32((p - topic_base[t]) as i32);
        }
        i = end;
    }
    w.write_nullable_bytes(None, "user_data")?;
    Ok(w.into_bytes())
}

/// One member as the leader receives it.
pub struct WireInput<'a> {
    pub id: &'a str,
    /// Its JoinGroup metadata: a ConsumerProtocolSubscription of any version.
    pub subscription: &'a [u8],
    pub group_instance_id: Option<String>,
}

/// Decode every member, assign with `strategy`, encode every assignment. Returns the
/// assignments in the order of `members`, and one warning per member whose bytes were partly or
/// wholly undecodable. `topics` and `partition_racks` are as for [`ProblemBuilder`]; with
/// `with_racks`, rack data counts as given even when none of it is valid.
pub fn assign(
    strategy: Strategy,
    members: &[WireInput<'_>],
    topics: Vec<(String, i64)>,
    with_racks: bool,
    partition_racks: &[(String, i64, Vec<String>)],
) -> Result<(Vec<Vec<u8>>, Vec<String>), InputError> {
    let history = History::of(strategy.name());
    let mut warnings = Vec::new();
    let mut b = ProblemBuilder::new(topics)?;
    for w in members {
        let m = member(w.id, w.subscription, history, &mut warnings);
        let sub = b.subscription(&m.topics);
        let mut owned = Vec::new();
        for g in &m.owned {
            if let Some(t) = b.topic(g.topic) {
                owned.extend(g.partitions.iter().filter_map(|p| b.partition(t, p as i64)));
            }
        }
        b.add_member(
            w.id.to_string(),
            sub,
            owned,
            m.generation,
            m.rack,
            w.group_instance_id.clone(),
        )?;
    }
    if with_racks {
        b.with_partition_racks();
    }
    for (t, p, rs) in partition_racks {
        if let Some(t) = b.topic(t) {
            b.add_partition_racks(t, *p, rs);
        }
    }
    let problem = b.build()?;
    let assignment = strategy.run(&problem);
    let (starts, parts) = assignment.grouped(problem.members.len());
    let mut encoded = Vec::with_capacity(problem.members.len());
    for pos in 0..problem.members.len() {
        let m = problem.input_order[pos] as usize;
        encoded.push(
            encode_member_assignment(&problem.topics, &problem.topic_base, &parts[starts[m]..starts[m + 1]])
                .map_err(|e| InputError::Invalid(e.to_string()))?,
        );
    }
    Ok((encoded, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Assignment, StickyUserData, Subscription, TopicPartitions};

    fn sub(topics: &[&str], owned: &[(&str, &[i32])], generation: i32, user_data: Option<Vec<u8>>) -> Vec<u8> {
        Subscription {
            version: 3,
            topics: topics.iter().map(|t| t.to_string()).collect(),
            user_data,
            owned_partitions: owned
                .iter()
                .map(|(t, ps)| TopicPartitions {
                    topic: t.to_string(),
                    partitions: ps.to_vec(),
                })
                .collect(),
            generation,
            rack: None,
        }
        .encode()
        .unwrap()
    }

    #[test]
    fn garbage_member_gets_an_empty_assignment_and_a_warning() {
        let good = sub(&["t"], &[], -1, None);
        let members = [
            WireInput {
                id: "b",
                subscription: &good,
                group_instance_id: None,
            },
            WireInput {
                id: "a",
                subscription: b"\xff\xff\x00",
                group_instance_id: None,
            },
        ];
        let (out, warnings) = assign(Strategy::Range, &members, vec![("t".into(), 2)], false, &[]).unwrap();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("member a"));
        let b = Assignment::decode(&out[0]).unwrap();
        assert_eq!(
            b.partitions,
            vec![TopicPartitions {
                topic: "t".into(),
                partitions: vec![0, 1]
            }]
        );
        assert_eq!(b.user_data, None);
        assert!(Assignment::decode(&out[1]).unwrap().partitions.is_empty());
    }

    #[test]
    fn cooperative_history_from_fields_and_user_data() {
        // c0 owns t-0 and t-1 (owned field, generation field); c1 carries its generation in the
        // user data only and owns t-2 via the appended sticky list.
        let c0 = sub(&["t"], &[("t", &[0, 1])], 4, Some(4i32.to_be_bytes().to_vec()));
        let mut ud = 4i32.to_be_bytes().to_vec();
        ud.extend(
            StickyUserData {
                partitions: vec![TopicPartitions {
                    topic: "t".into(),
                    partitions: vec![2],
                }],
                generation: None,
            }
            .encode()
            .unwrap(),
        );
        let c1 = sub(&["t"], &[], -1, Some(ud));
        let members = [
            WireInput {
                id: "c0",
                subscription: &c0,
                group_instance_id: None,
            },
            WireInput {
                id: "c1",
                subscription: &c1,
                group_instance_id: None,
            },
        ];
        let (out, warnings) = assign(Strategy::CooperativeSticky, &members, vec![("t".into(), 4)], false, &[]).unwrap();
        assert!(warnings.is_empty());
        let parts = |i: usize| Assignment::decode(&out[i]).unwrap().partitions[0].partitions.clone();
        assert!(parts(0).contains(&0) && parts(0).contains(&1));
        assert!(parts(1).contains(&2));
    }

    #[test]
    fn duplicate_member_ids_are_an_error() {
        let s = sub(&["t"], &[], -1, None);
        let members = [
            WireInput {
                id: "a",
                subscription: &s,
                group_instance_id: None,
            },
            WireInput {
                id: "a",
                subscription: &s,
                group_instance_id: None,
            },
        ];
        assert!(matches!(
            assign(Strategy::Sticky, &members, vec![("t".into(), 1)], false, &[]),
            Err(InputError::DuplicateMember(_))
        ));
    }

    use proptest::prelude::{any, prop_assert, prop_assert_eq, prop_oneof, proptest, Just, Strategy as Gen};

    /// A valid subscription, or its bytes cut and flipped (the fuzz target's properties, in
    /// `cargo test`).
    fn member_bytes() -> impl Gen<Value = Vec<u8>> {
        (
            proptest::collection::vec(prop_oneof![Just("t"), Just("u"), Just("x")], 0..3),
            proptest::collection::vec((prop_oneof![Just("t"), Just("u")], -1i32..6), 0..6),
            -2i32..3,
            proptest::option::of(proptest::collection::vec(any::<u8>(), 0..12)),
            0usize..40,
            any::<u8>(),
            0u8..4,
        )
            .prop_map(|(topics, owned, generation, user_data, cut, flip, mode)| {
                let mut by_topic: Vec<TopicPartitions> = Vec::new();
                for (t, p) in owned {
                    match by_topic.iter_mut().find(|g| g.topic == t) {
                        Some(g) => g.partitions.push(p),
                        None => by_topic.push(TopicPartitions {
                            topic: t.into(),
                            partitions: vec![p],
                        }),
                    }
                }
                let mut b = Subscription {
                    version: 3,
                    topics: topics.iter().map(|t| t.to_string()).collect(),
                    user_data,
                    owned_partitions: by_topic,
                    generation,
                    rack: None,
                }
                .encode()
                .unwrap();
                match mode {
                    0 => b.truncate(cut.min(b.len())),
                    1 if !b.is_empty() => {
                        let i = cut % b.len();
                        b[i] ^= flip;
                    }
                    _ => {}
                }
                b
            })
    }

    proptest! {
        #[test]
        fn any_bytes_give_a_valid_answer_for_every_member(members in proptest::collection::vec(member_bytes(), 0..6)) {
            let ids: Vec<String> = (0..members.len()).map(|i| format!("m{i}")).collect();
            let input: Vec<WireInput<'_>> = ids.iter().zip(&members)
                .map(|(id, m)| WireInput { id, subscription: m, group_instance_id: None })
                .collect();
            for strategy in Strategy::ALL {
                let (out, _) = assign(strategy, &input, vec![("t".into(), 4), ("u".into(), 2)], false, &[]).unwrap();
                prop_assert_eq!(out.len(), members.len());
                let mut seen = std::collections::HashSet::new();
                for (bytes, m) in out.iter().zip(&members) {
                    let a = Assignment::decode(bytes).unwrap();
                    let sub = Subscription::decode(m).ok();
                    for g in &a.partitions {
                        if let Some(s) = &sub {
                            prop_assert!(s.topics.contains(&g.topic));
                        }
                        for &p in &g.partitions {
                            prop_assert!(seen.insert((g.topic.clone(), p)));
                        }
                    }
                }
            }
        }
    }
}
