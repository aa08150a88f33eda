//! The interned assignment problem.
//!
//! Strings are turned into dense integers once, here; every strategy works on those integers and
//! never touches a string in its hot loop.
//!
//! * Topics are sorted by name and numbered `0..T`.
//! * Partitions live in one flat id space: partition `p` of topic `t` is `topic_base[t] + p`.
//!   Because topics are sorted by name, sorting flat ids sorts by (topic, partition).
//! * Members are sorted by member id and numbered `0..M`.
//! * Distinct subscription sets are interned: members with the same topics share one `SubId`.
//!
//! Owned partitions are validated at this single entry point: claims of unknown topics or
//! out-of-range indexes are dropped (Java crashes or double-assigns on the latter; see
//! docs/java-differences.md), duplicates inside one member's list are removed.

use std::collections::HashMap;
use std::fmt;

pub type TopicId = u32;
pub type PartId = u32;
pub type MemberIdx = u32;
pub type SubId = u32;
pub type RackId = u32;

/// Sentinel for "no owner" in dense owner arrays.
pub const NO_OWNER: u32 = u32::MAX;

/// A member as given by the caller, before interning.
#[derive(Clone, Debug, Default)]
pub struct MemberInput {
    pub id: String,
    pub topics: Vec<String>,
    pub owned: Vec<(String, i64)>,
    pub generation: i32,
    pub rack: Option<String>,
    pub group_instance_id: Option<String>,
}

/// A member whose subscription is an index into a shared list of subscriptions (the columnar
/// shape the Python boundary passes: many members, few distinct subscriptions).
#[derive(Clone, Debug, Default)]
pub struct MemberColumns {
    pub id: String,
    /// Index into the `subscriptions` passed to [`Problem::build_interned`].
    pub sub: usize,
    pub owned: Vec<(String, i64)>,
    /// More owned partitions, as (index into the `topics` passed to [`Problem::build_interned`],
    /// partition): the shape the Python boundary produces without allocating topic names.
    pub owned_by_index: Vec<(u32, i64)>,
    pub generation: i32,
    pub rack: Option<String>,
    pub group_instance_id: Option<String>,
}

/// Errors in the caller's input (not in odd-but-legal history, which is filtered silently).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputError {
    DuplicateMember(String),
    DuplicateTopic(String),
    NegativePartitionCount(String, i64),
    TooManyPartitions(u64),
    TooManyMembers(usize),
    UnknownStrategy(String),
    Invalid(String),
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::DuplicateMember(m) => write!(f, "members: duplicate member id {m:?}"),
            InputError::DuplicateTopic(t) => write!(f, "partitions_per_topic: duplicate topic {t:?}"),
            InputError::NegativePartitionCount(t, n) => {
                write!(
                    f,
                    "partitions_per_topic: topic {t:?} has a negative partition count ({n})"
                )
            }
            InputError::TooManyPartitions(n) => write!(
                f,
                "partitions_per_topic: {n} partitions in total exceeds the supported maximum of {MAX_PARTITIONS}"
            ),
            InputError::TooManyMembers(n) => {
                write!(f, "members: {n} members exceeds the supported maximum of {MAX_MEMBERS}")
            }
            InputError::UnknownStrategy(s) => write!(f, "strategy: unknown strategy {s:?}"),
            InputError::Invalid(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for InputError {}

/// Flat partition ids are u32 with `u32::MAX` reserved; we cap well below to keep memory bounded.
pub const MAX_PARTITIONS: u64 = 100_000_000;
pub const MAX_MEMBERS: usize = 10_000_000;

#[derive(Clone, Debug)]
pub struct Member {
    pub id: String,
    pub group_instance_id: Option<String>,
    pub generation: i32,
    pub rack: Option<RackId>,
    pub sub: SubId,
    /// Valid owned partitions (known topic, index in range, deduplicated), sorted.
    /// Ownership of topics the member no longer subscribes to is kept here; strategies that
    /// care (sticky) drop it themselves.
    pub owned: Vec<PartId>,
}

#[derive(Clone, Debug)]
pub struct Problem {
    /// Topic names, sorted.
    pub topics: Vec<String>,
    /// TopicId => number of partitions.
    pub topic_len: Vec<u32>,
    /// TopicId => first flat partition id; has T+1 entries (last = total partitions).
    pub topic_base: Vec<PartId>,
    /// Members sorted by id.
    pub members: Vec<Member>,
    /// SubId => sorted topic ids that exist (subscribed topics without metadata are dropped).
    pub subs: Vec<Vec<TopicId>>,
    /// SubId => whether the raw subscription named a topic that does not exist; Java's
    /// constrained-path test compares raw topic sets, so this matters for path choice.
    pub sub_raw: Vec<Vec<String>>,
    /// Rack names, interned (RackId indexes this).
    pub racks: Vec<String>,
    /// Flat PartId => replica racks (sorted, deduplicated). Empty when no rack data was given.
    pub partition_racks: Vec<Vec<RackId>>,
}

impl Problem {
    /// Build the interned problem. `topics` are (name, partition count) pairs in any order.
    pub fn build(
        topics: Vec<(String, i64)>,
        members: Vec<MemberInput>,
        partition_racks: Vec<(String, i64, Vec<String>)>,
    ) -> Result<Problem, InputError> {
        let mut subscriptions: Vec<Vec<String>> = Vec::new();
        let mut index: HashMap<Vec<String>, usize> = HashMap::new();
        let mut cols = Vec::with_capacity(members.len());
        for m in members {
            let mut raw = m.topics;
            raw.sort();
            raw.dedup();
            let sub = match index.get(&raw) {
                Some(&s) => s,
                None => {
                    subscriptions.push(raw.clone());
                    index.insert(raw, subscriptions.len() - 1);
                    subscriptions.len() - 1
                }
            };
            cols.push(MemberColumns {
                id: m.id,
                sub,
                owned: m.owned,
                owned_by_index: Vec::new(),
                generation: m.generation,
                rack: m.rack,
                group_instance_id: m.group_instance_id,
            });
        }
        Problem::build_interned(topics, subscriptions, cols, partition_racks)
    }

    /// Build the interned problem from members whose subscriptions index `subscriptions` (each a
    /// list of topic names in any order, duplicates allowed). Equal subscriptions may repeat in
    /// the list; they are merged here.
    pub fn build_interned(
        topics: Vec<(String, i64)>,
        subscriptions: Vec<Vec<String>>,
        members: Vec<MemberColumns>,
        partition_racks: Vec<(String, i64, Vec<String>)>,
    ) -> Result<Problem, InputError> {
        if members.len() > MAX_MEMBERS {
            return Err(InputError::TooManyMembers(members.len()));
        }
        let mut topics: Vec<(String, i64, u32)> = topics
            .into_iter()
            .enumerate()
            .map(|(i, (name, n))| (name, n, i as u32))
            .collect();
        topics.sort_by(|a, b| a.0.cmp(&b.0));
        for w in topics.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(InputError::DuplicateTopic(w[0].0.clone()));
            }
        }
        // caller's topic index => TopicId
        let mut given_topic = vec![0 as TopicId; topics.len()];
        for (tid, t) in topics.iter().enumerate() {
            given_topic[t.2 as usize] = tid as TopicId;
        }
        let mut total: u64 = 0;
        let mut topic_len = Vec::with_capacity(topics.len());
        let mut topic_base = Vec::with_capacity(topics.len() + 1);
        for (name, n, _) in &topics {
            if *n < 0 {
                return Err(InputError::NegativePartitionCount(name.clone(), *n));
            }
            topic_base.push(total as PartId);
            total += *n as u64;
            if total > MAX_PARTITIONS {
                return Err(InputError::TooManyPartitions(total));
            }
            topic_len.push(*n as u32);
        }
        topic_base.push(total as PartId);
        let names: Vec<String> = topics.into_iter().map(|(n, _, _)| n).collect();
        let topic_index: HashMap<&str, TopicId> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as TopicId))
            .collect();

        let mut members = members;
        members.sort_by(|a, b| a.id.cmp(&b.id));
        for w in members.windows(2) {
            if w[0].id == w[1].id {
                return Err(InputError::DuplicateMember(w[0].id.clone()));
            }
        }
        // The given subscriptions, normalised (sorted, deduplicated) and merged when equal.
        let mut normal: Vec<Option<Vec<String>>> = subscriptions
            .into_iter()
            .map(|mut raw| {
                raw.sort();
                raw.dedup();
                Some(raw)
            })
            .collect();
        let mut given_to_sub: Vec<SubId> = vec![SubId::MAX; normal.len()];

        let mut racks: Vec<String> = Vec::new();
        let mut rack_index: HashMap<String, RackId> = HashMap::new();
        let mut intern_rack = |r: &str, racks: &mut Vec<String>| -> RackId {
            if let Some(&id) = rack_index.get(r) {
                return id;
            }
            let id = racks.len() as RackId;
            racks.push(r.to_string());
            rack_index.insert(r.to_string(), id);
            id
        };

        let mut subs: Vec<Vec<TopicId>> = Vec::new();
        let mut sub_raw: Vec<Vec<String>> = Vec::new();
        let mut sub_index: HashMap<Vec<String>, SubId> = HashMap::new();
        let mut out_members = Vec::with_capacity(members.len());
        for m in members {
            let given = m.sub;
            if given >= given_to_sub.len() {
                return Err(InputError::Invalid(format!(
                    "members[{:?}]: subscription index {given} out of range",
                    m.id
                )));
            }
            if given_to_sub[given] == SubId::MAX {
                let raw = normal[given].take().unwrap_or_default();
                let s = match sub_index.get(&raw) {
                    Some(&s) => s,
                    None => {
                        let s = subs.len() as SubId;
                        let ids: Vec<TopicId> = raw
                            .iter()
                            .filter_map(|t| topic_index.get(t.as_str()).copied())
                            .collect();
                        subs.push(ids);
                        sub_raw.push(raw.clone());
                        sub_index.insert(raw, s);
                        s
                    }
                };
                given_to_sub[given] = s;
            }
            let sub = given_to_sub[given];
            let mut owned: Vec<PartId> = Vec::with_capacity(m.owned.len() + m.owned_by_index.len());
            for &(ti, p) in &m.owned_by_index {
                if let Some(&tid) = given_topic.get(ti as usize) {
                    if p >= 0 && (p as u64) < topic_len[tid as usize] as u64 {
                        owned.push(topic_base[tid as usize] + p as u32);
                    }
                }
            }
            // Owned lists usually come grouped by topic: look a name up once per run of equal names.
            let mut last: Option<(&str, Option<TopicId>)> = None;
            for (t, p) in &m.owned {
                let tid = match last {
                    Some((name, tid)) if name == t.as_str() => tid,
                    _ => {
                        let tid = topic_index.get(t.as_str()).copied();
                        last = Some((t.as_str(), tid));
                        tid
                    }
                };
                if let Some(tid) = tid {
                    if *p >= 0 && (*p as u64) < topic_len[tid as usize] as u64 {
                        owned.push(topic_base[tid as usize] + *p as u32);
                    }
                }
            }
            if !owned.windows(2).all(|w| w[0] < w[1]) {
                owned.sort_unstable();
                owned.dedup();
            }
            let rack = match m.rack.as_deref() {
                None | Some("") => None,
                Some(r) => Some(intern_rack(r, &mut racks)),
            };
            out_members.push(Member {
                id: m.id,
                group_instance_id: m.group_instance_id,
                generation: m.generation,
                rack,
                sub,
                owned,
            });
        }

        let mut prack: Vec<Vec<RackId>> = Vec::new();
        if !partition_racks.is_empty() {
            prack = vec![Vec::new(); total as usize];
            for (t, p, rs) in partition_racks {
                if let Some(&tid) = topic_index.get(t.as_str()) {
                    if p >= 0 && (p as u64) < topic_len[tid as usize] as u64 {
                        let slot = &mut prack[(topic_base[tid as usize] + p as u32) as usize];
                        for r in rs {
                            if !r.is_empty() {
                                slot.push(intern_rack(&r, &mut racks));
                            }
                        }
                        slot.sort_unstable();
                        slot.dedup();
                    }
                }
            }
        }

        Ok(Problem {
            topics: names,
            topic_len,
            topic_base,
            members: out_members,
            subs,
            sub_raw,
            racks,
            partition_racks: prack,
        })
    }

    pub fn num_partitions(&self) -> u32 {
        *self.topic_base.last().unwrap_or(&0)
    }

    pub fn num_members(&self) -> usize {
        self.members.len()
    }

    /// Topic of a flat partition id (binary search over topic bases).
    pub fn topic_of(&self, p: PartId) -> TopicId {
        // topic_base is non-decreasing; find the last topic whose base <= p and that has p in range.
        let idx = self.topic_base.partition_point(|&b| b <= p);
        // idx-1 is the last base <= p; skip empty topics sharing the same base by going to the
        // largest index with base <= p, which is exactly idx-1 and is the non-empty topic.
        (idx - 1) as TopicId
    }

    /// (topic, partition index) of a flat id.
    pub fn split(&self, p: PartId) -> (TopicId, u32) {
        let t = self.topic_of(p);
        (t, p - self.topic_base[t as usize])
    }

    /// Flat id range of a topic.
    pub fn topic_range(&self, t: TopicId) -> std::ops::Range<PartId> {
        self.topic_base[t as usize]..self.topic_base[t as usize + 1]
    }

    /// Whether member `m` subscribes to topic `t`.
    pub fn subscribes(&self, m: MemberIdx, t: TopicId) -> bool {
        self.subs[self.members[m as usize].sub as usize]
            .binary_search(&t)
            .is_ok()
    }

    /// TopicId => subscribed members (in member index order, i.e. by member id).
    pub fn subscribers(&self) -> Vec<Vec<MemberIdx>> {
        let mut out = vec![Vec::new(); self.topics.len()];
        for (i, m) in self.members.iter().enumerate() {
            for &t in &self.subs[m.sub as usize] {
                out[t as usize].push(i as MemberIdx);
            }
        }
        out
    }

    /// Java's "member order": static members (with a group instance id) sorted by instance id,
    /// then dynamic members sorted by member id.
    pub fn member_order(&self) -> Vec<MemberIdx> {
        let mut order: Vec<MemberIdx> = (0..self.members.len() as MemberIdx).collect();
        order.sort_by(|&a, &b| {
            let ma = &self.members[a as usize];
            let mb = &self.members[b as usize];
            match (&ma.group_instance_id, &mb.group_instance_id) {
                (Some(x), Some(y)) => x.cmp(y).then_with(|| ma.id.cmp(&mb.id)),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => ma.id.cmp(&mb.id),
            }
        });
        order
    }

    /// Whether every member's raw subscription is the same set (Java's constrained-path test).
    pub fn uniform_subscriptions(&self) -> bool {
        self.subs.len() <= 1
    }

    /// Whether rack-aware logic applies (KIP-881 conditions, docs/java-differences.md), judged on the
    /// partitions being assigned (topics some member subscribes to, as Java's assignors only see
    /// those): some member has a rack, member racks and those partitions' racks intersect, and not
    /// every such partition has a replica on every rack that appears among them.
    pub fn rack_aware(&self) -> bool {
        if self.partition_racks.is_empty() {
            return false;
        }
        let member_racks: std::collections::BTreeSet<RackId> = self.members.iter().filter_map(|m| m.rack).collect();
        if member_racks.is_empty() {
            return false;
        }
        let mut subscribed = vec![false; self.topics.len()];
        for m in &self.members {
            for &t in &self.subs[m.sub as usize] {
                subscribed[t as usize] = true;
            }
        }
        let assigned = || {
            (0..self.topics.len() as TopicId)
                .filter(|&t| subscribed[t as usize])
                .flat_map(|t| self.topic_range(t))
                .map(|p| &self.partition_racks[p as usize])
        };
        let mut all_racks: std::collections::BTreeSet<RackId> = std::collections::BTreeSet::new();
        for rs in assigned() {
            all_racks.extend(rs.iter().copied());
        }
        if member_racks.is_disjoint(&all_racks) {
            return false;
        }
        let n = all_racks.len();
        assigned().any(|rs| rs.len() < n)
    }
}

/// The result of a strategy: member index => assigned flat partition ids (sorted).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assignment {
    pub per_member: Vec<Vec<PartId>>,
}

impl Assignment {
    pub fn from_owner(problem: &Problem, owner: &[u32]) -> Assignment {
        let mut per_member = vec![Vec::new(); problem.members.len()];
        for (p, &m) in owner.iter().enumerate() {
            if m != NO_OWNER {
                per_member[m as usize].push(p as PartId);
            }
        }
        Assignment { per_member }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn member(id: &str, topics: &[&str]) -> MemberInput {
        MemberInput {
            id: id.to_string(),
            topics: topics.iter().map(|s| s.to_string()).collect(),
            generation: -1,
            ..Default::default()
        }
    }

    pub fn topics(spec: &[(&str, i64)]) -> Vec<(String, i64)> {
        spec.iter().map(|(n, c)| (n.to_string(), *c)).collect()
    }

    #[test]
    fn flat_ids_and_topic_lookup() {
        let p = Problem::build(
            topics(&[("b", 2), ("a", 3), ("empty", 0), ("c", 1)]),
            vec![member("m", &["a"])],
            vec![],
        )
        .unwrap();
        assert_eq!(p.topics, vec!["a", "b", "c", "empty"]);
        assert_eq!(p.topic_base, vec![0, 3, 5, 6, 6]);
        assert_eq!(p.split(0), (0, 0));
        assert_eq!(p.split(4), (1, 1));
        assert_eq!(p.split(5), (2, 0));
    }

    #[test]
    fn empty_topic_in_the_middle() {
        let p = Problem::build(topics(&[("a", 1), ("b", 0), ("c", 2)]), vec![], vec![]).unwrap();
        assert_eq!(p.split(1), (2, 0));
        assert_eq!(p.split(2), (2, 1));
    }

    #[test]
    fn invalid_claims_are_dropped() {
        let mut m = member("m", &["a"]);
        m.owned = vec![
            ("a".into(), 0),
            ("a".into(), 9),
            ("zz".into(), 0),
            ("a".into(), -1),
            ("a".into(), 0),
        ];
        let p = Problem::build(topics(&[("a", 2)]), vec![m], vec![]).unwrap();
        assert_eq!(p.members[0].owned, vec![0]);
    }

    #[test]
    fn duplicate_member_is_an_error() {
        let e = Problem::build(
            topics(&[("a", 1)]),
            vec![member("m", &["a"]), member("m", &["a"])],
            vec![],
        );
        assert_eq!(e.unwrap_err(), InputError::DuplicateMember("m".into()));
    }

    #[test]
    fn negative_count_is_an_error() {
        let e = Problem::build(topics(&[("a", -1)]), vec![], vec![]);
        assert!(matches!(e, Err(InputError::NegativePartitionCount(_, -1))));
    }

    #[test]
    fn member_order_puts_static_first() {
        let mut a = member("a", &["t"]);
        a.group_instance_id = Some("z".into());
        let b = member("b", &["t"]);
        let mut c = member("c", &["t"]);
        c.group_instance_id = Some("y".into());
        let p = Problem::build(topics(&[("t", 1)]), vec![a, b, c], vec![]).unwrap();
        let ids: Vec<&str> = p
            .member_order()
            .iter()
            .map(|&i| p.members[i as usize].id.as_str())
            .collect();
        assert_eq!(ids, vec!["c", "a", "b"]);
    }
}
