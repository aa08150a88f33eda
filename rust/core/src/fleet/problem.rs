//! Everything the fleet evaluation knows about the [`Problem`]'s layout: building the group's
//! problem once, deriving the problem of a churn round from it, running a Rust strategy.
//!
//! Layout facts used: topics sorted by name get ids `0..T`; partition `p` of topic `t` has the
//! flat id `topic_base[t] + p`; members are sorted by id; subscriptions are numbered in the order
//! of the first member (by id) that has them.

use super::{Group, GroupError, GroupParts, GroupRows, NameTable, OffsetReset, Origin, Placed, NONE};
use crate::model::{InputError, Member, PartId, Problem, ProblemBuilder, SubId};

pub(super) fn build_group(rows: &GroupRows, _reset: OffsetReset, parts: GroupParts) -> Result<Group, GroupError> {
    let GroupParts {
        subscriptions,
        sub_of_row,
        count,
        kept,
        topics,
        missing,
        sum_lag,
        max_lag,
        uncommitted,
        input_error,
    } = parts;
    let names = &rows.topics;
    let n_rows = rows.members.len();
    let too_big = matches!(
        input_error,
        Some(super::StrategyError::Input(
            InputError::TooManyPartitions(_) | InputError::PartitionCountBeyondInt32(..)
        ))
    );

    // Topics with partitions, sorted by name: TopicId = position.
    let mut topic_list: Vec<(u32, u64)> = if too_big {
        Vec::new()
    } else {
        count.into_iter().collect()
    };
    topic_list.sort_unstable_by(|a, b| names.get(a.0).cmp(names.get(b.0)));
    let mut tid_of_name: Vec<u32> = vec![NONE; names.names.len()];
    let mut base: Vec<u64> = Vec::with_capacity(topic_list.len() + 1);
    let mut total = 0u64;
    for (tid, &(name, n)) in topic_list.iter().enumerate() {
        tid_of_name[name as usize] = tid as u32;
        base.push(total);
        total += n;
    }
    let flat = |t: u32, p: i64| -> Option<PartId> {
        let tid = *tid_of_name.get(t as usize)?;
        if tid == NONE || p < 0 {
            return None;
        }
        let (_, n) = topic_list[tid as usize];
        ((p as u64) < n).then(|| (base[tid as usize] + p as u64) as PartId)
    };

    let topics_in: Vec<(String, i64)> = topic_list
        .iter()
        .map(|&(t, n)| (names.get(t).to_string(), n as i64))
        .collect();
    let mut builder = ProblemBuilder::new(topics_in).expect("partition counts were checked");
    let sub_ids: Vec<SubId> = subscriptions
        .iter()
        .map(|s| builder.subscription(&s.iter().map(|&t| names.get(t)).collect::<Vec<&str>>()))
        .collect();
    let mut rack_names = NameTable::default();
    let mut member_rack = Vec::with_capacity(n_rows);
    let mut member_rack_id = Vec::with_capacity(n_rows);
    for (r, m) in rows.members.iter().enumerate() {
        let rack = m.rack.clone().filter(|s| !s.is_empty());
        member_rack_id.push(rack.as_deref().map(|s| rack_names.intern(s)));
        let owned: Vec<PartId> = m
            .owned
            .iter()
            .flatten()
            .flatten()
            .filter_map(|&(t, p)| {
                let tid = builder.topic(names.get(t?))?;
                builder.partition(tid, p? as i64)
            })
            .collect();
        builder
            .add_member(
                m.id.clone().unwrap_or_default(),
                sub_ids[sub_of_row[r] as usize],
                owned,
                m.generation.unwrap_or(-1),
                rack.as_deref(),
                m.instance_id.clone(),
            )
            .expect("validated member rows");
        member_rack.push(rack);
    }

    let mut lag = vec![0i64; total as usize];
    let mut has_lag = vec![false; total as usize];
    let mut part_racks: Vec<Option<Vec<u32>>> = vec![None; total as usize];
    let mut any_racks = false;
    if !too_big {
        for &i in &kept {
            let row = &rows.parts[i];
            let (t, p) = (row.topic.unwrap_or(0), row.partition.unwrap_or(0) as i64);
            let Some(f) = flat(t, p) else { continue };
            lag[f as usize] = super::partition_lag(row.committed, row.beginning, row.end, _reset);
            has_lag[f as usize] = true;
            if let Some(rs) = row.racks.as_ref().filter(|rs| !rs.is_empty()) {
                part_racks[f as usize] = Some(rs.iter().flatten().map(|s| rack_names.intern(s)).collect());
                any_racks = true;
                let rs: Vec<&str> = rs.iter().flatten().map(String::as_str).collect();
                builder.with_partition_racks();
                let tid = builder.topic(names.get(t)).expect("a group topic");
                builder.add_partition_racks(tid, p, &rs);
            }
        }
    }

    let mut row_by_id: Vec<u32> = (0..n_rows as u32).collect();
    row_by_id.sort_by(|&a, &b| rows.members[a as usize].id.cmp(&rows.members[b as usize].id));
    let mut member_order = vec![0u32; n_rows];
    for (idx, &r) in row_by_id.iter().enumerate() {
        member_order[r as usize] = idx as u32;
    }

    // The lag bound: max(largest lag, total / members) / (total / members).
    let (lag_total, lag_top) = lag
        .iter()
        .zip(&has_lag)
        .filter(|(_, &h)| h)
        .fold((0i128, 0i64), |(s, m), (&l, _)| (s + l as i128, m.max(l)));
    let lag_bound = crate::lag::lag_ratio_bound(lag_total, lag_top, n_rows);

    let _ = any_racks;
    let problem = builder.build().expect("validated group rows always build");
    // Previous owners: the claim rule over every valid claim (crate::claims).
    let previous = crate::claims::previous_owners(&problem);
    debug_assert_eq!(problem.input_order, member_order);
    debug_assert!(problem
        .members
        .iter()
        .zip(&row_by_id)
        .all(|(m, &r)| Some(&m.id) == rows.members[r as usize].id.as_ref()));
    debug_assert_eq!(problem.num_partitions() as u64, total);

    Ok(Group {
        problem,
        row_of: row_by_id,
        member_order,
        sub_of_row,
        subscriptions,
        user_data: rows.members.iter().map(|m| m.user_data.clone()).collect(),
        instance_ids: rows.members.iter().map(|m| m.instance_id.clone()).collect(),
        member_rack,
        topic_names: names.clone(),
        topics,
        missing_topics: missing,
        sum_lag,
        max_lag,
        uncommitted,
        lag,
        has_lag,
        part_racks,
        member_rack_id,
        rack_names,
        previous,
        lag_bound,
        input_error,
    })
}

/// A member of a churn round: identity, where it comes from, what it owns now.
#[derive(Clone, Debug)]
pub struct RoundMember {
    pub id: String,
    pub origin: Origin,
    /// Owned flat partitions, sorted, valid.
    pub owned: Vec<PartId>,
    pub generation: i32,
}

/// A problem reused across churn rounds: topics, partitions and racks are the group's, members
/// and subscriptions are replaced for each round (as the builder would number them).
pub struct RoundProblem {
    pub problem: Problem,
    /// Problem member index => index into the round's member list.
    pub slot: Vec<usize>,
    pub origins: Vec<Origin>,
}

impl RoundProblem {
    pub fn new(group: &Group) -> RoundProblem {
        RoundProblem {
            problem: group.problem.clone(),
            slot: Vec::new(),
            origins: Vec::new(),
        }
    }

    /// Put the round's members in (moved: their owned lists are taken).
    pub fn set_members(&mut self, group: &Group, members: &mut [RoundMember]) {
        let base = &group.problem;
        let mut order: Vec<usize> = (0..members.len()).collect();
        order.sort_by(|&a, &b| members[a].id.cmp(&members[b].id));
        let mut new_sub: Vec<SubId> = vec![SubId::MAX; base.subs.len()];
        let mut subs = Vec::new();
        let mut sub_raw = Vec::new();
        let mut out = Vec::with_capacity(members.len());
        let mut origins = Vec::with_capacity(members.len());
        for &i in &order {
            let m = &mut members[i];
            let row = match m.origin {
                Origin::Row(r) => r,
                Origin::Joiner { like_row } => like_row,
            };
            let like = &base.members[group.member_order[row as usize] as usize];
            let slot = &mut new_sub[like.sub as usize];
            if *slot == SubId::MAX {
                *slot = subs.len() as SubId;
                subs.push(base.subs[like.sub as usize].clone());
                sub_raw.push(base.sub_raw[like.sub as usize].clone());
            }
            let sub = *slot;
            out.push(Member {
                id: m.id.clone(),
                group_instance_id: match m.origin {
                    Origin::Row(r) => group.instance_ids[r as usize].clone(),
                    Origin::Joiner { .. } => None,
                },
                generation: m.generation,
                rack: like.rack,
                sub,
                owned: std::mem::take(&mut m.owned),
            });
            origins.push(m.origin);
        }
        let mut input_order = vec![0; order.len()];
        for (idx, &i) in order.iter().enumerate() {
            input_order[i] = idx as u32;
        }
        self.problem.members = out;
        self.problem.input_order = input_order;
        self.problem.subs = subs;
        self.problem.sub_raw = sub_raw;
        self.slot = order;
        self.origins = origins;
    }
}

/// Run a Rust strategy (`crate::strategy`).
pub fn run_rust(strategy: &str, problem: &Problem) -> Result<Placed, InputError> {
    let s: crate::strategy::Strategy = strategy.parse()?;
    Ok(Placed::from_lists(s.run(problem).per_member(problem.members.len())))
}

/// Topic of a flat partition and whether `member` subscribes to it.
pub fn subscribes(problem: &Problem, member: usize, part: PartId) -> bool {
    problem.subscribes(member as u32, problem.topic_of(part))
}

/// Partitions of the topics some member of `problem` subscribes to.
pub fn assignable(problem: &Problem) -> u64 {
    let mut seen = vec![false; problem.topics.len()];
    let mut total = 0u64;
    for m in &problem.members {
        for &t in &problem.subs[m.sub as usize] {
            if !seen[t as usize] {
                seen[t as usize] = true;
                total += problem.topic_len[t as usize] as u64;
            }
        }
    }
    total
}

/// (topic name, partition index) of a flat partition.
pub fn topic_partition(problem: &Problem, part: PartId) -> (&str, u32) {
    let (t, p) = problem.split(part);
    (problem.topics[t as usize].as_str(), p)
}
