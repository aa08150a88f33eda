//! One consumer group of a fleet snapshot, evaluated in the core (the `kassign fleet` job).
//!
//! The Spark job hands each group's rows to [`GroupRows`] (decoded from Arrow by the Python
//! boundary, `rust/python/src/fleet.rs`); [`Group::build`] turns them into the interned [`Problem`]
//! once, with the same rules (and error messages) as the reference path in
//! `python/kassign/fleet/group.py` (`build_group` + `kassign.assign`'s input checks). Then
//! [`evaluate`] runs every strategy on that problem, measures each result ([`metrics`]) and replays
//! member churn ([`churn`]), reusing the problem for every Rust strategy and every churn round.
//!
//! Strategies are run through an [`Assigner`]: the Rust ones directly ([`RustAssigner`]), the
//! Python ones (lag-aware, fair, failover) by the boundary, which calls back into Python.
//!
//! Everything that touches the [`Problem`]'s layout lives in [`problem`], so a change of the
//! problem builder is a change there.

pub mod churn;
pub mod metrics;
pub mod problem;
pub mod splitmix;

use crate::model::{py_repr, InputError, PartId, Problem, NO_OWNER};

pub use crate::hash::{FastMap, FastSet};

/// The core's limit on a group's partitions (`kassign.assign` checks the same number first).
pub use crate::model::MAX_PARTITIONS;

/// Interned strings (topic or rack names) of one group.
#[derive(Clone, Debug, Default)]
pub struct NameTable {
    pub names: Vec<String>,
    index: FastMap<String, u32>,
}

impl NameTable {
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }

    pub fn get(&self, i: u32) -> &str {
        &self.names[i as usize]
    }
}

/// One element of a member's `owned_partitions` list: `None` is a null struct.
pub type OwnedClaim = Option<(Option<u32>, Option<i32>)>;

/// A member row of the snapshot (`members.parquet`). Topic names are ids in [`GroupRows::topics`].
#[derive(Clone, Debug, Default)]
pub struct MemberRow {
    pub id: Option<String>,
    pub instance_id: Option<String>,
    pub rack: Option<String>,
    /// `None`: a null list; inner `None`: a null topic name.
    pub topics: Option<Vec<Option<u32>>>,
    /// `None`: a null list (owns nothing).
    pub owned: Option<Vec<OwnedClaim>>,
    pub generation: Option<i32>,
    pub user_data: Option<Vec<u8>>,
}

/// A row of the partition side: the group's partitions joined with its committed offsets, or a
/// marker row (`topic` null) carrying the groups table's state and protocol.
#[derive(Clone, Debug, Default)]
pub struct PartRow {
    pub topic: Option<u32>,
    pub partition: Option<i32>,
    /// Replica racks; inner `None`: a null rack name.
    pub racks: Option<Vec<Option<String>>>,
    pub beginning: Option<i64>,
    pub end: Option<i64>,
    pub committed: Option<i64>,
}

/// The rows of one group, as the job's `applyInArrow` function receives them.
#[derive(Clone, Debug, Default)]
pub struct GroupRows {
    pub topics: NameTable,
    pub members: Vec<MemberRow>,
    pub parts: Vec<PartRow>,
    pub state: Option<String>,
    pub protocol: Option<String>,
    /// The group protocol ("classic" / "consumer") of the groups table, when recorded.
    pub group_protocol: Option<String>,
    /// Members whose current assignment carries user data (KIP-848 migration input).
    pub custom_user_data: i32,
}

impl GroupRows {
    /// Fold a marker row's state/protocol in the way the reference does (`state = state or s`):
    /// the first non-empty value wins; before one is seen, the latest value stands.
    pub fn add_marker(&mut self, state: Option<&str>, protocol: Option<&str>) {
        fn or(acc: &mut Option<String>, v: Option<&str>) {
            if acc.as_deref().map_or(true, str::is_empty) {
                *acc = v.map(str::to_string);
            }
        }
        or(&mut self.state, state);
        or(&mut self.protocol, protocol);
    }

    /// Fold a marker row's group protocol: the first non-empty one wins.
    pub fn add_group_protocol(&mut self, group_protocol: Option<&str>) {
        if self.group_protocol.is_none() {
            self.group_protocol = group_protocol.filter(|p| !p.is_empty()).map(str::to_string);
        }
    }
}

/// The lag rule lives in [`crate::lag`].
pub use crate::lag::{partition_lag, OffsetReset};

/// Why a group's rows cannot form an input: every strategy gets an error row with this reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupError {
    NoMembers,
    EmptyMemberId { row: usize },
    DuplicateMember { id: String },
    NullTopics { id: String },
    NullOwnedEntry { id: String },
    NullTopicName { id: String },
    NullOwnedTopic { id: String },
    NullOwnedPartition { id: String },
}

impl GroupError {
    /// The reference path's message; `repr` formats a string as Python's `repr()` does.
    pub fn message(&self, repr: &dyn Fn(&str) -> String) -> String {
        match self {
            GroupError::NoMembers => "group has no members (nothing to assign)".to_string(),
            GroupError::EmptyMemberId { row } => format!("member row {row}: member_id is null or empty"),
            GroupError::DuplicateMember { id } => format!("member {}: duplicate member_id", repr(id)),
            GroupError::NullTopics { id } => format!("member {}: topics (subscription) is null", repr(id)),
            GroupError::NullOwnedEntry { id } => {
                format!("member {}: 'NoneType' object is not subscriptable", repr(id))
            }
            GroupError::NullTopicName { id } => {
                format!("member {}: Member.topics: topic names must be str, got None", repr(id))
            }
            GroupError::NullOwnedTopic { id } => format!(
                "member {}: Member.owned_partitions: topic must be a str, got NoneType",
                repr(id)
            ),
            GroupError::NullOwnedPartition { id } => format!(
                "member {}: Member.owned_partitions: partition must be an int, got NoneType",
                repr(id)
            ),
        }
    }
}

/// Why a strategy has no result on a group: the error row of the report reads
/// `"{strategy}: {label}: {message}"`, with the label of the exception `kassign.assign` raises
/// for the same input (so the rows equal what a user of the Python API sees).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StrategyError {
    /// Input the model rejects for every strategy (partition counts, the cap, an unknown
    /// strategy): [`InputError`], labelled `InputError` (`kassign.InputError`).
    Input(InputError),
    /// A replica rack name is null: labelled `TypeError`.
    NullRackName { topic: String, partition: i32 },
    /// The core panicked (a bug): labelled `InternalError`.
    Panic(String),
    /// An error a strategy run by the caller raised (a Python strategy): its type name and
    /// message, carried verbatim.
    Raised { label: String, message: String },
}

impl StrategyError {
    /// The error's label in the row (the Python exception type name).
    pub fn label(&self) -> &str {
        match self {
            StrategyError::Input(_) => "InputError",
            StrategyError::NullRackName { .. } => "TypeError",
            StrategyError::Panic(_) => "InternalError",
            StrategyError::Raised { label, .. } => label,
        }
    }

    /// The message, naming values with `repr` (Python's `repr` on the boundary).
    pub fn message(&self, repr: &dyn Fn(&str) -> String) -> String {
        match self {
            StrategyError::Input(e) => e.to_string(),
            StrategyError::NullRackName { topic, partition } => {
                format!(
                    "partition_racks[({}, {partition})]: rack names must be str, got None",
                    repr(topic)
                )
            }
            StrategyError::Panic(msg) => format!("kassign core panicked (this is a bug, please report it): {msg}"),
            StrategyError::Raised { message, .. } => message.clone(),
        }
    }
}

impl From<InputError> for StrategyError {
    fn from(e: InputError) -> StrategyError {
        StrategyError::Input(e)
    }
}

/// Where a member of a (churn-round) problem comes from: a snapshot member (its row), or a member
/// that joined during the churn replay with the subscription, rack and user data of `row`'s member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    Row(u32),
    Joiner { like_row: u32 },
}

/// A group ready for evaluation: the interned problem plus what the metrics need.
#[derive(Clone, Debug)]
pub struct Group {
    pub problem: Problem,
    /// Problem member index => member row.
    pub row_of: Vec<u32>,
    /// Member rows in row order => problem member index.
    pub member_order: Vec<u32>,
    /// Member row => index into `subscriptions` (the distinct sorted topic lists).
    pub sub_of_row: Vec<u32>,
    /// Distinct subscriptions (sorted, deduplicated topic name ids).
    pub subscriptions: Vec<Vec<u32>>,
    pub user_data: Vec<Option<Vec<u8>>>,
    pub instance_ids: Vec<Option<String>>,
    /// Member row => rack name (None for a null or empty rack).
    pub member_rack: Vec<Option<String>>,
    pub topic_names: NameTable,
    /// Subscribed topics, and those among them without partitions rows.
    pub topics: usize,
    pub missing_topics: usize,
    /// kafka-lag-exporter's sums (partitions without a committed offset left out).
    pub sum_lag: i64,
    pub max_lag: i64,
    pub uncommitted: usize,
    /// Flat partition => lag (0 without a row) and whether a row gave it.
    pub lag: Vec<i64>,
    pub has_lag: Vec<bool>,
    /// Flat partition => replica racks from its row (rack name ids in `rack_names`), when the row
    /// has a non-empty list.
    pub part_racks: Vec<Option<Vec<u32>>>,
    /// Member row => rack name id in `rack_names`.
    pub member_rack_id: Vec<Option<u32>>,
    pub rack_names: NameTable,
    /// Flat partition => previous owner (problem member index) or NO_OWNER.
    pub previous: Vec<u32>,
    pub lag_bound: Option<f64>,
    /// What `kassign.assign` rejects for every strategy.
    pub input_error: Option<StrategyError>,
}

impl Group {
    /// Build the group, or say why its rows cannot form an input (the reference's `build_group`).
    pub fn build(rows: &GroupRows, reset: OffsetReset) -> Result<Group, GroupError> {
        if rows.members.is_empty() {
            return Err(GroupError::NoMembers);
        }
        let mut seen: FastSet<&str> = FastSet::with_capacity_and_hasher(rows.members.len(), Default::default());
        let mut sub_index: FastMap<Vec<u32>, u32> = FastMap::default();
        let mut subscriptions: Vec<Vec<u32>> = Vec::new();
        let mut sub_of_row = Vec::with_capacity(rows.members.len());
        let mut subscribed = vec![false; rows.topics.names.len()];
        for (i, m) in rows.members.iter().enumerate() {
            let id = match m.id.as_deref() {
                None | Some("") => return Err(GroupError::EmptyMemberId { row: i }),
                Some(id) => id,
            };
            if !seen.insert(id) {
                return Err(GroupError::DuplicateMember { id: id.to_string() });
            }
            let topics = m
                .topics
                .as_ref()
                .ok_or_else(|| GroupError::NullTopics { id: id.to_string() })?;
            let owned: &[OwnedClaim] = m.owned.as_deref().unwrap_or(&[]);
            if owned.iter().any(|c| c.is_none()) {
                return Err(GroupError::NullOwnedEntry { id: id.to_string() });
            }
            let mut sub: Vec<u32> = Vec::with_capacity(topics.len());
            for t in topics {
                sub.push(t.ok_or_else(|| GroupError::NullTopicName { id: id.to_string() })?);
            }
            for (t, p) in owned.iter().flatten() {
                if t.is_none() {
                    return Err(GroupError::NullOwnedTopic { id: id.to_string() });
                }
                if p.is_none() {
                    return Err(GroupError::NullOwnedPartition { id: id.to_string() });
                }
            }
            // Sorted by name (Member.topics), deduplicated.
            sub.sort_unstable_by(|a, b| rows.topics.get(*a).cmp(rows.topics.get(*b)));
            sub.dedup();
            for &t in &sub {
                subscribed[t as usize] = true;
            }
            let s = match sub_index.get(&sub) {
                Some(&s) => s,
                None => {
                    let s = subscriptions.len() as u32;
                    sub_index.insert(sub.clone(), s);
                    subscriptions.push(sub);
                    s
                }
            };
            sub_of_row.push(s);
        }

        // Partition rows: the first row of each subscribed (topic, partition >= 0) counts.
        let mut count: FastMap<u32, u64> = FastMap::default();
        let mut topic_order: Vec<u32> = Vec::new(); // partitions_per_topic's insertion order
        let mut kept: Vec<usize> = Vec::with_capacity(rows.parts.len());
        let mut key_seen: FastSet<(u32, i32)> = FastSet::with_capacity_and_hasher(rows.parts.len(), Default::default());
        for (i, r) in rows.parts.iter().enumerate() {
            let (Some(t), Some(p)) = (r.topic, r.partition) else {
                continue;
            };
            if p < 0 || !subscribed[t as usize] {
                continue;
            }
            if !key_seen.insert((t, p)) {
                continue;
            }
            let c = count.entry(t).or_insert_with(|| {
                topic_order.push(t);
                0
            });
            *c = (*c).max(p as u64 + 1);
            kept.push(i);
        }
        let n_subscribed = subscribed.iter().filter(|&&s| s).count();
        let missing = n_subscribed - count.len();
        let total: u64 = count.values().sum();
        // kassign.assign's checks, in its order: each topic's count, then the total.
        let input_error = topic_order
            .iter()
            .find(|t| count[t] > i32::MAX as u64)
            .map(|&t| {
                // (a count beyond i64 cannot occur: partition indexes are int32)
                StrategyError::Input(InputError::PartitionCountBeyondInt32(
                    rows.topics.get(t).to_string(),
                    count[&t] as i64,
                ))
            })
            .or_else(|| (total > MAX_PARTITIONS).then_some(StrategyError::Input(InputError::TooManyPartitions(total))));

        let mut stats = (0i64, 0i64, 0usize); // sum_lag, max_lag, uncommitted
        let mut first_null_rack: Option<(u32, i32)> = None;
        for &i in &kept {
            let r = &rows.parts[i];
            let lag = partition_lag(r.committed, r.beginning, r.end, reset);
            match r.committed {
                Some(c) if c >= 0 => {
                    stats.0 = stats.0.saturating_add(lag);
                    stats.1 = stats.1.max(lag);
                }
                _ => stats.2 += 1,
            }
            if first_null_rack.is_none() {
                if let Some(rs) = &r.racks {
                    if rs.iter().any(Option::is_none) {
                        first_null_rack = Some((r.topic.unwrap_or(0), r.partition.unwrap_or(0)));
                    }
                }
            }
        }
        let input_error = input_error.or_else(|| {
            first_null_rack.map(|(t, p)| StrategyError::NullRackName {
                topic: rows.topics.get(t).to_string(),
                partition: p,
            })
        });
        problem::build_group(
            rows,
            reset,
            GroupParts {
                subscriptions,
                sub_of_row,
                count,
                kept,
                topics: n_subscribed,
                missing,
                sum_lag: stats.0,
                max_lag: stats.1,
                uncommitted: stats.2,
                input_error,
            },
        )
    }

    pub fn num_members(&self) -> usize {
        self.row_of.len()
    }
}

/// What [`Group::build`] found before the problem is built (handed to [`problem::build_group`]).
pub struct GroupParts {
    pub subscriptions: Vec<Vec<u32>>,
    pub sub_of_row: Vec<u32>,
    pub count: FastMap<u32, u64>,
    pub kept: Vec<usize>,
    pub topics: usize,
    pub missing: usize,
    pub sum_lag: i64,
    pub max_lag: i64,
    pub uncommitted: usize,
    pub input_error: Option<StrategyError>,
}

/// A strategy's result on a problem: per problem member, the flat partitions it got, plus
/// placements that name no partition of the group (counted as violations).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placed {
    pub per_member: Vec<Vec<PartId>>,
    pub invalid: Vec<u32>,
}

impl Placed {
    pub fn from_lists(per_member: Vec<Vec<PartId>>) -> Placed {
        let invalid = vec![0; per_member.len()];
        Placed { per_member, invalid }
    }

    pub fn assigned(&self) -> u64 {
        self.per_member.iter().map(|v| v.len() as u64).sum::<u64>()
            + self.invalid.iter().map(|&c| c as u64).sum::<u64>()
    }
}

/// Runs strategies on problems. `origins` are aligned with `problem.members`.
pub trait Assigner {
    /// The strategy's result, or why there is none.
    fn assign(&mut self, strategy: &str, problem: &Problem, origins: &[Origin]) -> Result<Placed, StrategyError>;
}

/// The Rust strategies (`crate::strategy`), with a panic turned into an error of that strategy.
pub struct RustAssigner;

impl Assigner for RustAssigner {
    fn assign(&mut self, strategy: &str, problem: &Problem, _origins: &[Origin]) -> Result<Placed, StrategyError> {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| problem::run_rust(strategy, problem)));
        match run {
            Ok(Ok(p)) => Ok(p),
            Ok(Err(e)) => Err(StrategyError::Input(e)),
            Err(panic) => Err(StrategyError::Panic(crate::panic_message(panic.as_ref()))),
        }
    }
}

/// Options of one evaluation (the job's arguments).
#[derive(Clone, Debug)]
pub struct EvalOptions {
    pub churn_rounds: u32,
    /// The group's churn seed (`crc32(cluster \0 group_id \0 seed)`, computed by the caller).
    pub churn_seed: u64,
    pub with_assignment: bool,
}

/// One result row (one strategy on one group). `error` set means status "error".
#[derive(Clone, Debug, Default)]
pub struct ResultRow {
    pub strategy: String,
    pub error: Option<String>,
    pub members: i64,
    /// Group statistics (absent on rows of a group whose rows cannot form an input).
    pub stats: Option<GroupStats>,
    pub quality: Option<metrics::Quality>,
    pub time_ms: Option<f64>,
    pub churn: Option<churn::ChurnResult>,
    /// (member row, flat partition) in output order: members in row order, partitions sorted.
    pub assignment: Option<Vec<(u32, PartId)>>,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct GroupStats {
    pub topics: i64,
    pub missing_topics: i64,
    pub sum_lag: i64,
    pub max_lag: i64,
    pub uncommitted: i64,
}

impl ResultRow {
    /// The row's `members` value: the measured result's member count, else the group's size
    /// (error rows: the member rows of the group).
    pub fn members_value(&self) -> i64 {
        self.quality.as_ref().map_or(self.members, |q| q.members)
    }
}

/// Error rows for every strategy of a group whose rows cannot form an input.
pub fn error_rows(strategies: &[String], message: &str, member_rows: usize) -> Vec<ResultRow> {
    strategies
        .iter()
        .map(|s| ResultRow {
            strategy: s.clone(),
            error: Some(message.to_string()),
            members: member_rows as i64,
            ..Default::default()
        })
        .collect()
}

/// Evaluate `strategy` on the group: its result, metrics, churn replay. Errors become an error row
/// (`"{strategy}: {Type}: {message}"`), as in the reference.
pub fn evaluate_strategy(
    group: &Group,
    strategy: &str,
    opts: &EvalOptions,
    assigner: &mut dyn Assigner,
    repr: &dyn Fn(&str) -> String,
) -> ResultRow {
    let n = group.num_members();
    let fail = |e: &StrategyError| ResultRow {
        strategy: strategy.to_string(),
        error: Some(format!("{strategy}: {}: {}", e.label(), e.message(repr))),
        members: n as i64,
        ..Default::default()
    };
    if let Some(e) = &group.input_error {
        return fail(e);
    }
    let origins: Vec<Origin> = group.row_of.iter().map(|&r| Origin::Row(r)).collect();
    let t0 = std::time::Instant::now();
    let placed = match assigner.assign(strategy, &group.problem, &origins) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let time_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let quality = metrics::evaluate(group, &placed);
    let churn = if opts.churn_rounds > 0 {
        match churn::replay(group, strategy, &placed, opts.churn_rounds, opts.churn_seed, assigner) {
            Ok(c) => Some(c),
            Err(e) => return fail(&e),
        }
    } else {
        None
    };
    let assignment = opts.with_assignment.then(|| {
        let mut out = Vec::with_capacity(placed.assigned() as usize);
        for &m in &group.member_order {
            let mut parts = placed.per_member[m as usize].clone();
            parts.sort_unstable();
            out.extend(parts.into_iter().map(|p| (group.row_of[m as usize], p)));
        }
        out
    });
    ResultRow {
        strategy: strategy.to_string(),
        error: None,
        members: n as i64,
        stats: Some(group.stats()),
        quality: Some(quality),
        time_ms: Some(time_ms),
        churn,
        assignment,
    }
}

impl Group {
    pub fn stats(&self) -> GroupStats {
        GroupStats {
            topics: self.topics as i64,
            missing_topics: self.missing_topics as i64,
            sum_lag: self.sum_lag,
            max_lag: self.max_lag,
            uncommitted: self.uncommitted as i64,
        }
    }
}

/// Rows of every strategy on one group's rows, Rust strategies only (the Python ones need the
/// boundary's assigner; see `rust/python/src/fleet.rs`).
pub fn evaluate_rows(
    rows: &GroupRows,
    strategies: &[String],
    reset: OffsetReset,
    opts: &EvalOptions,
) -> Vec<ResultRow> {
    match Group::build(rows, reset) {
        Err(e) => error_rows(strategies, &e.message(&py_repr), rows.members.len()),
        Ok(group) => strategies
            .iter()
            .map(|s| evaluate_strategy(&group, s, opts, &mut RustAssigner, &py_repr))
            .collect(),
    }
}

/// No previous owner / no partition.
pub const NONE: u32 = NO_OWNER;

#[cfg(test)]
mod tests;
