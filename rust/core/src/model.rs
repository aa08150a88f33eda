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

use std::fmt;

pub type TopicId = u32;
pub type PartId = u32;
pub type MemberIdx = u32;
pub type SubId = u32;
pub type RackId = u32;

/// Sentinel for "no owner" in dense owner arrays.
pub const NO_OWNER: u32 = u32::MAX;

/// A member as a Rust caller gives it to [`Problem::build`] (topic names, owned partitions by
/// name). The Python boundary and the wire path feed [`ProblemBuilder`] directly instead.
#[derive(Clone, Debug, Default)]
pub struct MemberInput {
    pub id: String,
    pub topics: Vec<String>,
    pub owned: Vec<(String, i64)>,
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
    PartitionCountBeyondInt32(String, i64),
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
            InputError::NegativePartitionCount(t, n) => write!(
                f,
                "partitions_per_topic[{}]: partition count must be >= 0, got {n}",
                py_repr(t)
            ),
            InputError::PartitionCountBeyondInt32(t, n) => write!(
                f,
                "partitions_per_topic[{}]: partition count {n} exceeds the int32 range",
                py_repr(t)
            ),
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

/// A string as Python's `repr` shows it (quotes and escapes), so messages name values the way
/// Python users write them.
pub fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (0x80..0xa0).contains(&(c as u32)) => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

pub use crate::hash::{FastHasher, FastMap};

/// `a == b` for short slices such as topic names, eight bytes at a time and without a call
/// into `memcmp` (the leader path compares a name per owned group: a million in the largest
/// groups).
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Two overlapping loads cover 8 to 16 bytes (4 to 8 bytes).
    let u64_at = |s: &[u8], i: usize| u64::from_ne_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |s: &[u8], i: usize| u32::from_ne_bytes(s[i..i + 4].try_into().expect("4 bytes"));
    match n {
        8..=16 => u64_at(a, 0) == u64_at(b, 0) && u64_at(a, n - 8) == u64_at(b, n - 8),
        4..=7 => u32_at(a, 0) == u32_at(b, 0) && u32_at(a, n - 4) == u32_at(b, n - 4),
        _ => a == b,
    }
}

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
    /// The caller's member order => member index (results are answered in the caller's order).
    pub input_order: Vec<MemberIdx>,
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

/// The one builder of the interned [`Problem`]: every entry point (the Python boundary, the wire
/// path, Rust callers) checks the semantics of its input here and nowhere else.
///
/// Use: [`ProblemBuilder::new`] checks the topics (duplicates, negative counts, the partition
/// cap); [`ProblemBuilder::topic`] and [`ProblemBuilder::partition`] resolve owned partitions
/// without allocating (claims of unknown topics or out-of-range indexes are odd but legal history
/// and resolve to `None`); [`ProblemBuilder::subscription`] interns a subscription;
/// [`ProblemBuilder::add_member`] adds members in the caller's order; [`ProblemBuilder::build`]
/// sorts members by id, rejects duplicate ids and records the caller's order
/// ([`Problem::input_order`]) so results can be answered in it.
pub struct ProblemBuilder {
    topics: Vec<String>,
    topic_len: Vec<u32>,
    topic_base: Vec<PartId>,
    /// Topic name bytes => TopicId (byte keys: the wire path resolves names before checking UTF-8).
    topic_index: FastMap<Box<[u8]>, TopicId>,
    /// The caller's topic order => TopicId.
    given_topic: Vec<TopicId>,
    subs: Vec<Vec<TopicId>>,
    sub_raw: Vec<Vec<String>>,
    /// Hash of a sorted subscription => its SubIds (equal hashes are compared by content).
    sub_index: FastMap<u64, Vec<SubId>>,
    /// The last subscription interned (members usually come in runs of one subscription).
    last_sub: Option<(u64, SubId)>,
    racks: Vec<String>,
    rack_index: FastMap<String, RackId>,
    members: Vec<Member>,
    partition_racks: Vec<Vec<RackId>>,
}

impl ProblemBuilder {
    /// Check and intern the topics: (name, partition count) pairs in any order. Counts are
    /// checked in the given order (negative, beyond int32), then the total against
    /// [`MAX_PARTITIONS`], then names for duplicates.
    pub fn new<S: Into<String>>(topics: impl IntoIterator<Item = (S, i64)>) -> Result<ProblemBuilder, InputError> {
        let mut named: Vec<(String, i64, u32)> = topics
            .into_iter()
            .enumerate()
            .map(|(i, (name, n))| (name.into(), n, i as u32))
            .collect();
        let mut total: u64 = 0;
        for (name, n, _) in &named {
            if *n < 0 {
                return Err(InputError::NegativePartitionCount(name.clone(), *n));
            }
            if *n > i32::MAX as i64 {
                return Err(InputError::PartitionCountBeyondInt32(name.clone(), *n));
            }
            total += *n as u64;
        }
        if total > MAX_PARTITIONS {
            return Err(InputError::TooManyPartitions(total));
        }
        if !named.windows(2).all(|w| w[0].0 < w[1].0) {
            named.sort_by(|a, b| a.0.cmp(&b.0));
            if let Some(w) = named.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(InputError::DuplicateTopic(w[0].0.clone()));
            }
        }
        let mut given_topic = vec![0 as TopicId; named.len()];
        let mut base: u32 = 0;
        let mut topic_len = Vec::with_capacity(named.len());
        let mut topic_base = Vec::with_capacity(named.len() + 1);
        for (tid, (_, n, given)) in named.iter().enumerate() {
            given_topic[*given as usize] = tid as TopicId;
            topic_base.push(base);
            base += *n as u32;
            topic_len.push(*n as u32);
        }
        topic_base.push(base);
        let topics: Vec<String> = named.into_iter().map(|(n, _, _)| n).collect();
        let topic_index = topics
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_bytes().into(), i as TopicId))
            .collect();
        Ok(ProblemBuilder {
            topics,
            topic_len,
            topic_base,
            topic_index,
            given_topic,
            subs: Vec::new(),
            sub_raw: Vec::new(),
            sub_index: FastMap::default(),
            last_sub: None,
            racks: Vec::new(),
            rack_index: FastMap::default(),
            members: Vec::new(),
            partition_racks: Vec::new(),
        })
    }

    /// The TopicId of a topic name, if the topic exists.
    #[inline]
    pub fn topic(&self, name: &str) -> Option<TopicId> {
        self.topic_bytes(name.as_bytes())
    }

    /// The TopicId of a topic name given as bytes, if the topic exists. A name that resolves is
    /// valid UTF-8 (it equals a `String`), so decoders may skip that check for it.
    #[inline]
    pub fn topic_bytes(&self, name: &[u8]) -> Option<TopicId> {
        self.topic_index.get(name).copied()
    }

    /// The TopicId of a topic name given as bytes, trying topic `hint` first (one comparison;
    /// callers resolving names in topic order pass the topic after the last one they found).
    #[inline(always)]
    pub fn topic_bytes_near(&self, hint: usize, name: &[u8]) -> Option<TopicId> {
        match self.topics.get(hint) {
            Some(t) if same_bytes(t.as_bytes(), name) => Some(hint as TopicId),
            _ => self.topic_bytes(name),
        }
    }

    /// Topic `t`'s first flat id and partition count.
    #[inline]
    pub fn topic_span(&self, t: TopicId) -> (PartId, u32) {
        (self.topic_base[t as usize], self.topic_len[t as usize])
    }

    /// The TopicId of the `i`-th topic in the order given to [`ProblemBuilder::new`].
    #[inline]
    pub fn given_topic(&self, i: usize) -> Option<TopicId> {
        self.given_topic.get(i).copied()
    }

    /// The flat id of partition `p` of topic `t`, or `None` when `p` is out of range.
    #[inline]
    pub fn partition(&self, t: TopicId, p: i64) -> Option<PartId> {
        let len = self.topic_len[t as usize];
        if p >= 0 && (p as u64) < len as u64 {
            Some(self.topic_base[t as usize] + p as u32)
        } else {
            None
        }
    }

    /// Intern a subscription (topic names in any order, duplicates allowed). Members with equal
    /// subscriptions share one SubId; topics that do not exist are kept in the raw set (Java's
    /// constrained-path test compares raw topic sets) and dropped from the TopicId list. A
    /// subscription seen before costs a hash and a comparison, no allocation.
    pub fn subscription<S: AsRef<str>>(&mut self, topics: &[S]) -> SubId {
        if topics.windows(2).all(|w| w[0].as_ref() < w[1].as_ref()) {
            self.intern_sorted(topics.iter().map(|t| t.as_ref()), topics.len())
        } else {
            let mut v: Vec<&str> = topics.iter().map(|t| t.as_ref()).collect();
            v.sort_unstable();
            v.dedup();
            let n = v.len();
            self.intern_sorted(v.into_iter(), n)
        }
    }

    fn intern_sorted<'t>(&mut self, view: impl Iterator<Item = &'t str> + Clone, n: usize) -> SubId {
        let mut h = FastHasher::default();
        for t in view.clone() {
            std::hash::Hash::hash(t, &mut h);
        }
        let key = std::hash::Hasher::finish(&h);
        let same = |raw: &[String]| raw.len() == n && raw.iter().map(String::as_str).eq(view.clone());
        if let Some(&(k, s)) = self.last_sub.as_ref() {
            if k == key && same(&self.sub_raw[s as usize]) {
                return s;
            }
        }
        let found = self
            .sub_index
            .get(&key)
            .and_then(|ids| ids.iter().copied().find(|&s| same(&self.sub_raw[s as usize])));
        let s = match found {
            Some(s) => s,
            None => {
                let s = self.subs.len() as SubId;
                let ids: Vec<TopicId> = view.clone().filter_map(|t| self.topic(t)).collect();
                self.subs.push(ids);
                self.sub_raw.push(view.map(str::to_string).collect());
                self.sub_index.entry(key).or_default().push(s);
                s
            }
        };
        self.last_sub = Some((key, s));
        s
    }

    fn intern_rack(&mut self, r: &str) -> RackId {
        if let Some(&id) = self.rack_index.get(r) {
            return id;
        }
        let id = self.racks.len() as RackId;
        self.racks.push(r.to_string());
        self.rack_index.insert(r.to_string(), id);
        id
    }

    /// Room for `n` more members (callers that know the group size avoid regrowing the list).
    pub fn reserve_members(&mut self, n: usize) {
        self.members.reserve(n.min(MAX_MEMBERS));
    }

    /// Add a member, in the caller's order. `owned` holds flat ids from
    /// [`ProblemBuilder::partition`] in any order; duplicates are removed here.
    pub fn add_member(
        &mut self,
        id: String,
        sub: SubId,
        mut owned: Vec<PartId>,
        generation: i32,
        rack: Option<&str>,
        group_instance_id: Option<String>,
    ) -> Result<(), InputError> {
        if sub as usize >= self.subs.len() {
            return Err(InputError::Invalid(format!(
                "members[{id:?}]: subscription index {sub} out of range"
            )));
        }
        if self.members.len() >= MAX_MEMBERS {
            return Err(InputError::TooManyMembers(self.members.len() + 1));
        }
        if !owned.windows(2).all(|w| w[0] < w[1]) {
            owned.sort_unstable();
            owned.dedup();
        }
        let rack = match rack {
            None | Some("") => None,
            Some(r) => Some(self.intern_rack(r)),
        };
        self.members.push(Member {
            id,
            group_instance_id,
            generation,
            rack,
            sub,
            owned,
        });
        Ok(())
    }

    /// Declare that replica racks are given (even if none of them turns out valid): strategies
    /// then run their rack-awareness test, which is what Java does when rack data is present.
    pub fn with_partition_racks(&mut self) {
        if self.partition_racks.is_empty() {
            self.partition_racks = vec![Vec::new(); *self.topic_base.last().unwrap_or(&0) as usize];
        }
    }

    /// Record the replica racks of one partition (unknown topics and out-of-range indexes are
    /// ignored, as for owned partitions; empty rack names are skipped).
    pub fn add_partition_racks<S: AsRef<str>>(&mut self, t: TopicId, p: i64, racks: &[S]) {
        let Some(flat) = self.partition(t, p) else {
            return;
        };
        self.with_partition_racks();
        let mut ids: Vec<RackId> = Vec::with_capacity(racks.len());
        for r in racks {
            let r = r.as_ref();
            if !r.is_empty() {
                ids.push(self.intern_rack(r));
            }
        }
        let slot = &mut self.partition_racks[flat as usize];
        slot.extend(ids);
        slot.sort_unstable();
        slot.dedup();
    }

    /// Record a list of (topic, partition, replica racks), as the leader paths receive it
    /// (unknown topics skipped; see [`ProblemBuilder::add_partition_racks`]); with `given`, rack
    /// data counts as given even when none of it is valid ([`ProblemBuilder::with_partition_racks`]).
    pub fn add_partition_rack_list(&mut self, given: bool, racks: &[(String, i64, Vec<String>)]) {
        if given {
            self.with_partition_racks();
        }
        for (t, p, rs) in racks {
            if let Some(t) = self.topic(t) {
                self.add_partition_racks(t, *p, rs);
            }
        }
    }

    /// Sort members by id (rejecting duplicates) and finish the problem.
    pub fn build(self) -> Result<Problem, InputError> {
        self.build_in(false)
    }

    /// Finish the problem with its members in `server-kassign`'s order ([`by_hash`]: by
    /// [`java_hash`], then by id), rejecting duplicate ids. [`Problem::by_hash`] answers `None` on it.
    pub fn build_by_hash(self) -> Result<Problem, InputError> {
        self.build_in(true)
    }

    fn build_in(self, by_hash: bool) -> Result<Problem, InputError> {
        let mut members = self.members;
        let order = if by_hash {
            positions_by_hash(&members)?
        } else if members.windows(2).all(|w| w[0].id < w[1].id) {
            None
        } else {
            Some(positions_by_id(&members)?)
        };
        let input_order = match order {
            Some(order) => permute(&mut members, &order),
            None => (0..members.len() as MemberIdx).collect(),
        };
        Ok(finish_problem(
            self.topics,
            self.topic_len,
            self.topic_base,
            members,
            input_order,
            self.subs,
            self.sub_raw,
            self.racks,
            self.partition_racks,
        ))
    }
}

/// Put `members` into `order` (`order[idx]` is the position of the member that becomes member
/// `idx`); returns each position's new index.
fn permute(members: &mut [Member], order: &[MemberIdx]) -> Vec<MemberIdx> {
    let n = members.len();
    let mut input_order: Vec<MemberIdx> = vec![0; n];
    for (idx, &pos) in order.iter().enumerate() {
        input_order[pos as usize] = idx as MemberIdx;
    }
    // In place, cycle by cycle: the member at position `pos` goes to `input_order[pos]`.
    for start in 0..n {
        while input_order[start] as usize != start {
            let to = input_order[start] as usize;
            members.swap(start, to);
            input_order.swap(start, to);
        }
    }
    for (idx, &pos) in order.iter().enumerate() {
        input_order[pos as usize] = idx as MemberIdx;
    }
    input_order
}

/// The problem of members already in their order: subscriptions and racks numbered by first
/// appearance in that order (then partition racks in the order given), so ids do not depend on
/// the caller's member order.
#[allow(clippy::too_many_arguments)]
fn finish_problem(
    topics: Vec<String>,
    topic_len: Vec<u32>,
    topic_base: Vec<PartId>,
    mut members: Vec<Member>,
    input_order: Vec<MemberIdx>,
    old_subs: Vec<Vec<TopicId>>,
    old_sub_raw: Vec<Vec<String>>,
    old_racks: Vec<String>,
    partition_racks: Vec<Vec<RackId>>,
) -> Problem {
    let mut sub_new = vec![SubId::MAX; old_subs.len()];
    let mut subs = Vec::new();
    let mut sub_raw = Vec::new();
    let mut old_subs: Vec<Option<(Vec<TopicId>, Vec<String>)>> =
        old_subs.into_iter().zip(old_sub_raw).map(Some).collect();
    let mut rack_new = vec![RackId::MAX; old_racks.len()];
    let mut racks = Vec::with_capacity(old_racks.len());
    let mut old_racks: Vec<Option<String>> = old_racks.into_iter().map(Some).collect();
    let mut renumber_rack = |r: RackId, racks: &mut Vec<String>, rack_new: &mut Vec<RackId>| -> RackId {
        if rack_new[r as usize] == RackId::MAX {
            rack_new[r as usize] = racks.len() as RackId;
            racks.push(old_racks[r as usize].take().unwrap_or_default());
        }
        rack_new[r as usize]
    };
    for m in members.iter_mut() {
        let s = m.sub as usize;
        if sub_new[s] == SubId::MAX {
            sub_new[s] = subs.len() as SubId;
            let (ids, raw) = old_subs[s].take().unwrap_or_default();
            subs.push(ids);
            sub_raw.push(raw);
        }
        m.sub = sub_new[s];
        m.rack = m.rack.map(|r| renumber_rack(r, &mut racks, &mut rack_new));
    }
    for r in 0..rack_new.len() as RackId {
        renumber_rack(r, &mut racks, &mut rack_new);
    }
    let mut partition_racks = partition_racks;
    for slot in partition_racks.iter_mut().filter(|s| !s.is_empty()) {
        for r in slot.iter_mut() {
            *r = rack_new[*r as usize];
        }
        slot.sort_unstable();
    }
    Problem {
        topics,
        topic_len,
        topic_base,
        members,
        input_order,
        subs,
        sub_raw,
        racks,
        partition_racks,
    }
}

/// Member positions in `server-kassign`'s order ([`by_hash`]), or `None` when they are in it
/// already; or the first duplicate id.
fn positions_by_hash(members: &[Member]) -> Result<Option<Vec<MemberIdx>>, InputError> {
    let hashes: Vec<u32> = members.iter().map(|m| java_hash(m.id.as_bytes())).collect();
    let sorted = (1..members.len()).all(|i| (hashes[i - 1], &members[i - 1].id) < (hashes[i], &members[i].id));
    if sorted {
        return Ok(None);
    }
    let all: Vec<usize> = (0..members.len()).collect();
    let id = |i: usize| members[i].id.as_bytes();
    by_hash(&all, None, |i| hashes[i], Some(&id))
}

impl Problem {
    /// This problem with its members in `server-kassign`'s order ([`by_hash`]), and for each of
    /// its members that member's index here; `None` when they are in that order already (a
    /// problem from [`ProblemBuilder::build_by_hash`]).
    pub fn by_hash(&self) -> Result<Option<(Problem, Vec<MemberIdx>)>, InputError> {
        let Some(order) = positions_by_hash(&self.members)? else {
            return Ok(None);
        };
        let mut members = self.members.clone();
        let moved = permute(&mut members, &order);
        let input_order = self.input_order.iter().map(|&i| moved[i as usize]).collect();
        let problem = finish_problem(
            self.topics.clone(),
            self.topic_len.clone(),
            self.topic_base.clone(),
            members,
            input_order,
            self.subs.clone(),
            self.sub_raw.clone(),
            self.racks.clone(),
            self.partition_racks.clone(),
        );
        Ok(Some((problem, order)))
    }
}

/// Member positions sorted by id (byte order), or the first duplicate id.
fn positions_by_id(members: &[Member]) -> Result<Vec<MemberIdx>, InputError> {
    order_by_id(members.len(), |i| members[i].id.as_bytes())
}

/// How many bytes all of the ids `id(0)`, ..., `id(n - 1)` begin with: one slice comparison per
/// id that starts with the prefix found so far (the usual case), a walk to the first difference
/// otherwise.
pub fn common_prefix<'i>(n: usize, id: impl Fn(usize) -> &'i [u8]) -> usize {
    let first = if n == 0 { &[][..] } else { id(0) };
    let mut common = first.len();
    for i in 1..n {
        let other = id(i);
        if !other.starts_with(&first[..common]) {
            common = first[..common].iter().zip(other).take_while(|(a, b)| a == b).count();
        }
    }
    common
}

/// The sort key of an id among ids that share their first `common` bytes ([`common_prefix`]):
/// the 8 bytes that follow, big-endian and zero-padded. A smaller key means a smaller id; only
/// equal keys need the whole ids compared.
pub fn id_key(id: &[u8], common: usize) -> u64 {
    let tail = &id[common..];
    let mut k = [0u8; 8];
    let n = tail.len().min(8);
    k[..n].copy_from_slice(&tail[..n]);
    u64::from_be_bytes(k)
}

/// Tests' random numbers: a xorshift generator from a non-zero `state`; `next(n)` is in `0..n`
/// (0 when `n` is 0).
#[cfg(test)]
pub(crate) fn xorshift(mut state: u64) -> impl FnMut(u64) -> u64 {
    move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n.max(1)
    }
}

/// The positions `0..n` sorted by the ids `id(i)` (byte order, the order of [`Problem::members`]),
/// or the first duplicate id. The broker's flat path sorts its ids here without making a `String`
/// of each.
///
/// Ids often share a long prefix (client ids such as `consumer-<group>-<n>-<uuid>`), so each id
/// is keyed by the 8 bytes that follow the prefix common to all ids ([`id_key`]): only equal keys
/// compare whole ids. This is the same order as sorting the ids themselves, in a fraction of the
/// string comparisons.
pub fn order_by_id<'i>(n: usize, id: impl Fn(usize) -> &'i [u8]) -> Result<Vec<MemberIdx>, InputError> {
    if n > MAX_MEMBERS {
        return Err(InputError::TooManyMembers(n));
    }
    let common = common_prefix(n, &id);
    // Key and position in one integer: one plain integer sort, then the runs of equal keys (rare)
    // ordered by the whole ids.
    let mut keyed: Vec<u128> = (0..n)
        .map(|i| ((id_key(id(i), common) as u128) << 64) | i as u128)
        .collect();
    keyed.sort_unstable();
    let mut out: Vec<MemberIdx> = keyed.iter().map(|&k| k as u64 as MemberIdx).collect();
    let mut start = 0;
    while start < n {
        let k = keyed[start] >> 64;
        let end = start + keyed[start..].iter().take_while(|&&x| x >> 64 == k).count();
        if end - start > 1 {
            let run = &mut out[start..end];
            run.sort_unstable_by(|&a, &b| id(a as usize).cmp(id(b as usize)));
            if let Some(w) = run.windows(2).find(|w| id(w[0] as usize) == id(w[1] as usize)) {
                return Err(InputError::DuplicateMember(
                    String::from_utf8_lossy(id(w[0] as usize)).into_owned(),
                ));
            }
        }
        start = end;
    }
    Ok(out)
}

/// Java's `String.hashCode` of an id given as UTF-8, as an unsigned 32-bit number: `h = 31 h + u`
/// over the id's UTF-16 code units, wrapping. `server-kassign` orders its members by this hash,
/// then by id ([`by_hash`]): the broker plugin reads the hash off each member id `String` (the JVM
/// keeps it in the string once computed, and the coordinator's member map has computed it), so a
/// tie between members needs no id crossing into native memory. Bytes that are not UTF-8 are read
/// as `String::from_utf8_lossy` reads them.
pub fn java_hash(id: &[u8]) -> u32 {
    if id.is_ascii() {
        // Four bytes a step (h * 31^4 + b0 * 31^3 + b1 * 31^2 + b2 * 31 + b3): the same sum with a
        // quarter of the dependent multiplications.
        let mut chunks = id.chunks_exact(4);
        let mut h = 0u32;
        for c in &mut chunks {
            let part = (c[0] as u32)
                .wrapping_mul(29_791)
                .wrapping_add((c[1] as u32).wrapping_mul(961))
                .wrapping_add((c[2] as u32).wrapping_mul(31))
                .wrapping_add(c[3] as u32);
            h = h.wrapping_mul(923_521).wrapping_add(part);
        }
        return chunks
            .remainder()
            .iter()
            .fold(h, |h, &b| h.wrapping_mul(31).wrapping_add(b as u32));
    }
    String::from_utf8_lossy(id)
        .encode_utf16()
        .fold(0u32, |h, u| h.wrapping_mul(31).wrapping_add(u as u32))
}

/// The members `subset` (positions `i`, with hashes `hash(i)` and, when given, ids `id(i)`) in
/// `server-kassign`'s member order: by [`java_hash`], then by id (byte order). `first` None: the
/// whole order; `Some(k)`: the `k` first ahead of the others, each part in no particular order (a
/// selection in linear time). `Ok(None)` when the answer depends on the order of ids that are not
/// given (two members with equal hashes whose order matters). A repeated id is reported where the
/// order compares it (two members with one id have one hash).
pub fn by_hash<'i>(
    subset: &[usize],
    first: Option<usize>,
    hash: impl Fn(usize) -> u32,
    id: Option<&dyn Fn(usize) -> &'i [u8]>,
) -> Result<Option<Vec<MemberIdx>>, InputError> {
    let n = subset.len();
    if n > MAX_MEMBERS {
        return Err(InputError::TooManyMembers(n));
    }
    match first {
        Some(k) if k == 0 || k >= n => Ok(Some(subset.iter().map(|&i| i as MemberIdx).collect())),
        None => {
            // Hash and position in one integer: one plain integer sort, then the runs of equal
            // hashes (rare) ordered by the whole ids.
            let mut keyed: Vec<u64> = subset
                .iter()
                .enumerate()
                .map(|(j, &i)| ((hash(i) as u64) << 32) | j as u64)
                .collect();
            keyed.sort_unstable();
            let mut out: Vec<MemberIdx> = keyed
                .iter()
                .map(|&k| subset[(k as u32) as usize] as MemberIdx)
                .collect();
            let mut start = 0;
            while start < n {
                let h = keyed[start] >> 32;
                let end = start + keyed[start..].iter().take_while(|&&x| x >> 32 == h).count();
                if end - start > 1 {
                    let Some(id) = id else { return Ok(None) };
                    let run = &mut out[start..end];
                    run.sort_unstable_by(|&a, &b| id(a as usize).cmp(id(b as usize)));
                    repeated(run.iter().map(|&i| i as usize), id)?;
                }
                start = end;
            }
            Ok(Some(out))
        }
        Some(k) => {
            let mut keyed: Vec<(u32, usize)> = subset.iter().map(|&i| (hash(i), i)).collect();
            keyed.select_nth_unstable_by_key(k - 1, |e| e.0);
            // Members with the k-th hash on both sides of the cut: their ids decide.
            let h = keyed[k - 1].0;
            if keyed[k..].iter().any(|e| e.0 == h) {
                let Some(id) = id else { return Ok(None) };
                let mut front: Vec<(u32, usize)> = keyed[..k].iter().copied().filter(|e| e.0 < h).collect();
                let mut tied: Vec<(u32, usize)> = keyed.iter().copied().filter(|e| e.0 == h).collect();
                let mut rest: Vec<(u32, usize)> = keyed[k..].iter().copied().filter(|e| e.0 != h).collect();
                tied.sort_unstable_by(|a, b| id(a.1).cmp(id(b.1)));
                repeated(tied.iter().map(|e| e.1), id)?;
                let take = k - front.len();
                front.extend_from_slice(&tied[..take]);
                rest.extend_from_slice(&tied[take..]);
                front.append(&mut rest);
                keyed = front;
            }
            Ok(Some(keyed.into_iter().map(|(_, i)| i as MemberIdx).collect()))
        }
    }
}

/// The first id repeated in a row of positions sorted by id.
fn repeated<'i>(sorted: impl Iterator<Item = usize>, id: &dyn Fn(usize) -> &'i [u8]) -> Result<(), InputError> {
    let mut prev: Option<&[u8]> = None;
    for i in sorted {
        let cur = id(i);
        if prev == Some(cur) {
            return Err(InputError::DuplicateMember(String::from_utf8_lossy(cur).into_owned()));
        }
        prev = Some(cur);
    }
    Ok(())
}

impl Problem {
    /// Build the interned problem from Rust values: topics as (name, partition count) pairs in
    /// any order, members with owned partitions by topic name, and (topic, partition, racks).
    pub fn build(
        topics: Vec<(String, i64)>,
        members: Vec<MemberInput>,
        partition_racks: Vec<(String, i64, Vec<String>)>,
    ) -> Result<Problem, InputError> {
        let mut b = ProblemBuilder::new(topics)?;
        for m in members {
            let sub = b.subscription(&m.topics);
            let owned: Vec<PartId> = m
                .owned
                .iter()
                .filter_map(|(t, p)| b.topic(t).and_then(|t| b.partition(t, *p)))
                .collect();
            b.add_member(m.id, sub, owned, m.generation, m.rack.as_deref(), m.group_instance_id)?;
        }
        if !partition_racks.is_empty() {
            b.with_partition_racks();
        }
        for (t, p, racks) in partition_racks {
            if let Some(t) = b.topic(&t) {
                b.add_partition_racks(t, p, &racks);
            }
        }
        b.build()
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

/// The result of a strategy: a dense owner array, flat partition id => member index, or
/// [`NO_OWNER`] (a partition nobody subscribes to, or one withheld by cooperative-sticky).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assignment {
    pub owner: Vec<MemberIdx>,
}

impl Assignment {
    /// Every partition of `problem` without an owner yet.
    pub fn empty(problem: &Problem) -> Assignment {
        Assignment {
            owner: vec![NO_OWNER; problem.num_partitions() as usize],
        }
    }

    /// Member index => its partitions, each list sorted (one pass over the owner array).
    pub fn per_member(&self, n_members: usize) -> Vec<Vec<PartId>> {
        let mut out = vec![Vec::new(); n_members];
        for (p, &m) in self.owner.iter().enumerate() {
            if m != NO_OWNER {
                out[m as usize].push(p as PartId);
            }
        }
        out
    }

    /// The same lists in compressed form: `(starts, parts)` where member `m` owns
    /// `parts[starts[m]..starts[m + 1]]`, sorted. Two passes, two allocations.
    pub fn grouped(&self, n_members: usize) -> (Vec<usize>, Vec<PartId>) {
        let mut starts = vec![0usize; n_members + 1];
        for &m in &self.owner {
            if m != NO_OWNER {
                starts[m as usize + 1] += 1;
            }
        }
        for i in 0..n_members {
            starts[i + 1] += starts[i];
        }
        let mut fill = starts.clone();
        let mut parts = vec![0 as PartId; starts[n_members]];
        for (p, &m) in self.owner.iter().enumerate() {
            if m != NO_OWNER {
                parts[fill[m as usize]] = p as PartId;
                fill[m as usize] += 1;
            }
        }
        (starts, parts)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn same_bytes_is_slice_equality(a in proptest::collection::vec(0u8..3, 0..24), b in proptest::collection::vec(0u8..3, 0..24)) {
            proptest::prop_assert_eq!(same_bytes(&a, &b), a == b);
            proptest::prop_assert!(same_bytes(&a, &a.clone()));
        }
    }

    pub fn member(id: &str, topics: &[&str]) -> MemberInput {
        MemberInput {
            id: id.to_string(),
            topics: topics.iter().map(|s| s.to_string()).collect(),
            generation: -1,
            ..Default::default()
        }
    }

    /// A member with its owned partitions and generation (the history the claim rule reads).
    pub fn member_owning(id: &str, topics: &[&str], owned: &[(&str, i64)], generation: i32) -> MemberInput {
        MemberInput {
            owned: owned.iter().map(|(t, p)| (t.to_string(), *p)).collect(),
            generation,
            ..member(id, topics)
        }
    }

    pub fn topics(spec: &[(&str, i64)]) -> Vec<(String, i64)> {
        spec.iter().map(|(n, c)| (n.to_string(), *c)).collect()
    }

    /// Each member's partitions as "topic-partition" names, members in problem order.
    pub fn names(p: &Problem, a: &Assignment) -> Vec<Vec<String>> {
        a.per_member(p.members.len())
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

    proptest::proptest! {
        /// The keyed sort orders positions exactly as sorting the ids does, and finds duplicates.
        #[test]
        fn positions_by_id_is_a_sort_by_id(
            prefix in "(consumer-[a-z]{0,12}-)?",
            tails in proptest::collection::vec("[a-c\\x00\u{e9}\u{1F600}]{0,11}", 0..40),
        ) {
            let members: Vec<Member> = tails
                .iter()
                .map(|t| Member {
                    id: format!("{prefix}{t}"),
                    group_instance_id: None,
                    generation: -1,
                    rack: None,
                    sub: 0,
                    owned: vec![],
                })
                .collect();
            let mut expected: Vec<MemberIdx> = (0..members.len() as MemberIdx).collect();
            expected.sort_by(|&a, &b| members[a as usize].id.cmp(&members[b as usize].id).then(a.cmp(&b)));
            let duplicate = expected
                .windows(2)
                .any(|w| members[w[0] as usize].id == members[w[1] as usize].id);
            match positions_by_id(&members) {
                Ok(got) => {
                    proptest::prop_assert!(!duplicate);
                    proptest::prop_assert_eq!(got, expected);
                }
                Err(InputError::DuplicateMember(id)) => {
                    proptest::prop_assert!(duplicate);
                    proptest::prop_assert!(members.iter().filter(|m| m.id == id).count() > 1);
                }
                Err(e) => proptest::prop_assert!(false, "unexpected error {e:?}"),
            }
        }
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

    /// A test id: `prefix`, then nothing or one of two middles that tie on 8 bytes, then a number
    /// below `small` (half of the time, so ids repeat) or below 1000.
    fn random_id(next: &mut impl FnMut(u64) -> u64, prefix: &str, small: u64) -> String {
        let middle = ["", "abcdefghij", "abcdefgh"][next(3) as usize];
        let range = if next(2) == 0 { small } else { 1000 };
        format!("{prefix}{middle}{}", next(range))
    }

    /// `order_by_id` is the order of the ids themselves (the slices sorted by `Ord`), on random
    /// ids that share long prefixes, tie on their 8-byte keys (equal past the prefix for 8 bytes
    /// and more), are prefixes of each other, or repeat (the first duplicate is the error).
    #[test]
    fn order_by_id_sorts_the_ids() {
        for seed in 0..3000u64 {
            let mut next = xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let n = next(40) as usize;
            let prefix = ["", "consumer-", "\u{e9}x-"][next(3) as usize];
            let ids: Vec<String> = (0..n).map(|_| random_id(&mut next, prefix, 8)).collect();
            let got = order_by_id(n, |i| ids[i].as_bytes());
            let mut sorted: Vec<&str> = ids.iter().map(String::as_str).collect();
            sorted.sort_unstable();
            match sorted.windows(2).find(|w| w[0] == w[1]) {
                Some(w) => match got {
                    Err(InputError::DuplicateMember(d)) => assert!(sorted.contains(&d.as_str()), "seed {seed}"),
                    other => panic!("seed {seed}: duplicate {:?} not reported: {other:?}", w[0]),
                },
                None => {
                    let order: Vec<&str> = got.unwrap().iter().map(|&i| ids[i as usize].as_str()).collect();
                    assert_eq!(order, sorted, "seed {seed}");
                }
            }
        }
    }

    /// Java's `String.hashCode`, from its definition over UTF-16 units (the oracle of
    /// `java_hash`, which reads ASCII bytes directly).
    fn string_hash_code(s: &str) -> u32 {
        s.encode_utf16()
            .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(u as i32)) as u32
    }

    #[test]
    fn java_hash_is_javas_string_hash_code() {
        // Values Java gives: "Aa" and "BB" collide; a character beyond the BMP is two units.
        assert_eq!(java_hash(b""), 0);
        assert_eq!(java_hash(b"a"), 97);
        assert_eq!(java_hash(b"Aa"), 2112);
        assert_eq!(java_hash(b"BB"), 2112);
        assert_eq!(java_hash(b"hello") as i32, 99_162_322);
        assert_eq!(java_hash("\u{e9}".as_bytes()), 233);
        assert_eq!(java_hash("\u{1F600}".as_bytes()), 0xD83D * 31 + 0xDE00);
        let mut next = xorshift(7);
        for _ in 0..2000 {
            let prefix = ["", "consumer-", "\u{e9}x-", "\u{1F600}"][next(4) as usize];
            let id = random_id(&mut next, prefix, 50);
            assert_eq!(java_hash(id.as_bytes()), string_hash_code(&id), "{id:?}");
        }
    }

    /// Ids of blocks "Aa" and "BB" (equal hashes) and others, so that many ids share a hash.
    fn colliding_id(next: &mut impl FnMut(u64) -> u64) -> String {
        let blocks = 1 + next(3);
        let mut id: String = (0..blocks).map(|_| ["Aa", "BB", "C#"][next(3) as usize]).collect();
        if next(3) == 0 {
            id.push_str(&next(5).to_string());
        }
        id
    }

    /// `by_hash` against sorting by (hash, id): the whole order, the selection of the first k,
    /// and, without the ids, either the same answer or `None` exactly when tied hashes decide.
    #[test]
    fn by_hash_orders_by_hash_then_id() {
        let (mut undecided, mut decided) = (0, 0);
        for seed in 0..3000u64 {
            let mut next = xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 5);
            let n = next(30) as usize;
            let mut ids: Vec<String> = Vec::new();
            while ids.len() < n {
                let id = if next(2) == 0 {
                    colliding_id(&mut next)
                } else {
                    random_id(&mut next, "m-", 30)
                };
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            let key = |i: usize| (string_hash_code(&ids[i]), ids[i].clone());
            let subset: Vec<usize> = (0..n).filter(|_| next(4) != 0).collect();
            let mut sorted = subset.clone();
            sorted.sort_by_key(|&i| key(i));
            let hash = |i: usize| java_hash(ids[i].as_bytes());
            let id = |i: usize| ids[i].as_bytes();
            let whole = by_hash(&subset, None, hash, Some(&id)).unwrap().unwrap();
            assert_eq!(
                whole.iter().map(|&i| i as usize).collect::<Vec<_>>(),
                sorted,
                "seed {seed}"
            );
            let ties = sorted.windows(2).any(|w| key(w[0]).0 == key(w[1]).0);
            match by_hash(&subset, None, hash, None).unwrap() {
                None => assert!(ties, "seed {seed}: asked for ids without a tie"),
                Some(got) => {
                    assert!(!ties, "seed {seed}: ordered tied hashes without ids");
                    assert_eq!(got, whole, "seed {seed}");
                }
            }
            let k = next(subset.len() as u64 + 2) as usize;
            let split = k.min(subset.len());
            let halves = |got: Vec<MemberIdx>| {
                let mut head: Vec<usize> = got[..split].iter().map(|&i| i as usize).collect();
                let mut tail: Vec<usize> = got[split..].iter().map(|&i| i as usize).collect();
                head.sort_unstable();
                tail.sort_unstable();
                (head, tail)
            };
            let mut want_head = sorted[..split].to_vec();
            let mut want_tail = sorted[split..].to_vec();
            want_head.sort_unstable();
            want_tail.sort_unstable();
            let got = by_hash(&subset, Some(k), hash, Some(&id)).unwrap().unwrap();
            assert_eq!(
                halves(got),
                (want_head.clone(), want_tail.clone()),
                "seed {seed}: k {k}"
            );
            // Without ids: the k-th hash on both sides of the cut needs them.
            let cut = split > 0 && split < sorted.len() && key(sorted[split - 1]).0 == key(sorted[split]).0;
            match by_hash(&subset, Some(k), hash, None).unwrap() {
                None => {
                    assert!(cut, "seed {seed}: k {k}: asked for ids without a tie at the cut");
                    undecided += 1;
                }
                Some(got) => {
                    assert!(!cut, "seed {seed}: k {k}: selected across tied hashes without ids");
                    assert_eq!(halves(got), (want_head, want_tail), "seed {seed}: k {k}");
                    decided += 1;
                }
            }
        }
        assert!(
            undecided > 100 && decided > 1000,
            "undecided {undecided}, decided {decided}"
        );
        // A repeated id is an error where the order compares it.
        let ids = ["Aa", "BB", "Aa"];
        let id = |i: usize| ids[i].as_bytes();
        let got = by_hash(&[0, 1, 2], None, |i| java_hash(id(i)), Some(&id));
        assert_eq!(got, Err(InputError::DuplicateMember("Aa".to_string())));
    }

    /// A problem built by id and then put in `server-kassign`'s order is the problem built in that
    /// order: members, the caller's order, subscriptions and racks numbered alike.
    #[test]
    fn problem_by_hash_is_the_problem_built_by_hash() {
        let mut reordered = 0;
        for seed in 0..500u64 {
            let mut next = xorshift(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 9);
            let topics: Vec<(String, i64)> = (0..3).map(|t| (format!("t{t}"), next(5) as i64)).collect();
            let n = next(12) as usize;
            let mut ids: Vec<String> = Vec::new();
            while ids.len() < n {
                let id = colliding_id(&mut next);
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            let racks = ["r1", "r2", "r3"];
            let builder = || {
                let mut b = ProblemBuilder::new(topics.clone()).unwrap();
                let mut next = xorshift(seed | 1);
                for id in &ids {
                    let names: Vec<String> = (0..3).filter(|_| next(2) == 0).map(|t| format!("t{t}")).collect();
                    let sub = b.subscription(&names);
                    let rack = (next(3) != 0).then(|| racks[next(3) as usize]);
                    b.add_member(id.clone(), sub, Vec::new(), 1, rack, None).unwrap();
                }
                b
            };
            let by_id = builder().build().unwrap();
            let by_hash = builder().build_by_hash().unwrap();
            assert!(by_hash.by_hash().unwrap().is_none(), "seed {seed}");
            let Some((again, was)) = by_id.by_hash().unwrap() else {
                assert_eq!(format!("{by_id:?}"), format!("{by_hash:?}"), "seed {seed}");
                continue;
            };
            reordered += 1;
            assert_eq!(format!("{again:?}"), format!("{by_hash:?}"), "seed {seed}");
            for (k, &w) in was.iter().enumerate() {
                assert_eq!(again.members[k].id, by_id.members[w as usize].id, "seed {seed}");
            }
        }
        assert!(reordered > 300, "only {reordered} problems were reordered");
    }
}
