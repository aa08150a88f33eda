//! The group leader's path on wire bytes: every member's `ConsumerProtocolSubscription` in,
//! every member's `ConsumerProtocolAssignment` out, with no Python object in between.
//!
//! Each member's history is read by its strategy's rules, the same rules the drop-in classes
//! apply to decoded metadata (docs/wire.md): a member whose bytes cannot be decoded never fails
//! the leader; it gets an empty assignment and a warning.

use crate::model::{InputError, PartId, ProblemBuilder, SubId};
use crate::protocol::{self, EncodeError, Reader, StickyUserDataRef, SubscriptionRef, TopicPartitionsRef, Writer};
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
    let mut out = Encoder::new(problem_topics, topic_base);
    out.push(parts)?;
    Ok(out.finish().bytes)
}

/// Every member's `ConsumerProtocolAssignment`, back to back in one buffer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoded {
    pub bytes: Vec<u8>,
    /// `ends[i]` is where member `i`'s bytes end (they start where member `i - 1`'s end).
    pub ends: Vec<usize>,
}

impl Encoded {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Member `i`'s bytes.
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }
}

/// The topic of flat id `p` (`base` as [`crate::model::Problem::topic_base`]), searching from
/// topic `t` on (ids come sorted): the same and the next topic are checked first, then a binary
/// search over the rest.
#[inline]
fn topic_from(base: &[PartId], t: usize, p: PartId) -> usize {
    if base[t + 1] > p {
        t
    } else if base[t + 2] > p {
        t + 1
    } else {
        t + base[t + 1..].partition_point(|&b| b <= p)
    }
}

/// Writes assignments (v3, null user data) into one buffer. Each topic's name is encoded once
/// (its int16 length and bytes); a member's sorted flat ids are cut into per-topic runs as they
/// are written.
struct Encoder<'p> {
    topics: &'p [String],
    topic_base: &'p [PartId],
    /// The encoded names (2-byte length + bytes), back to back.
    names: Vec<u8>,
    /// Topic => its span in `names`; empty for a name over the int16 limit, which fails when a
    /// member holds its topic.
    spans: Vec<(usize, usize)>,
    out: Encoded,
}

impl<'p> Encoder<'p> {
    fn new(topics: &'p [String], topic_base: &'p [PartId]) -> Encoder<'p> {
        let mut names = Vec::with_capacity(topics.iter().map(|t| t.len() + 2).sum());
        let mut spans = Vec::with_capacity(topics.len());
        for t in topics {
            let start = names.len();
            if let Ok(len) = i16::try_from(t.len()) {
                names.extend_from_slice(&len.to_be_bytes());
                names.extend_from_slice(t.as_bytes());
            }
            spans.push((start, names.len()));
        }
        Encoder {
            topics,
            topic_base,
            names,
            spans,
            out: Encoded::default(),
        }
    }

    /// Append one member's assignment; `parts` are sorted flat ids. On an error the buffer holds
    /// a partial member and must be dropped (every caller fails as a whole).
    fn push(&mut self, parts: &[PartId]) -> Result<(), EncodeError> {
        let base = self.topic_base;
        let bytes = &mut self.out.bytes;
        bytes.reserve(2 + 4 + 4 + 4 * parts.len());
        bytes.extend_from_slice(&protocol::MAX_VERSION.to_be_bytes());
        // The group count is known at the end; its slot is filled in then.
        let count_at = bytes.len();
        bytes.extend_from_slice(&0i32.to_be_bytes());
        let mut groups = 0i32;
        let mut t = 0usize;
        let mut i = 0;
        while i < parts.len() {
            t = topic_from(base, t, parts[i]);
            let (a, b) = self.spans[t];
            if a == b {
                // Only a name over the int16 limit has no bytes; Writer words the error.
                Writer::new().write_string(&self.topics[t], "partitions")?;
            }
            let (limit, first) = (base[t + 1], base[t]);
            let mut end = i + 1;
            while end < parts.len() && parts[end] < limit {
                end += 1;
            }
            bytes.extend_from_slice(&self.names[a..b]);
            bytes.extend_from_slice(&((end - i) as i32).to_be_bytes());
            for &p in &parts[i..end] {
                bytes.extend_from_slice(&((p - first) as i32).to_be_bytes());
            }
            // Counts fit: a member holds at most MAX_PARTITIONS (< 2^31) partitions.
            groups += 1;
            i = end;
        }
        bytes[count_at..count_at + 4].copy_from_slice(&groups.to_be_bytes());
        // Null user data.
        bytes.extend_from_slice(&(-1i32).to_be_bytes());
        self.out.ends.push(bytes.len());
        Ok(())
    }

    fn finish(self) -> Encoded {
        self.out
    }
}

/// One member as the leader receives it.
pub struct WireInput<'a> {
    pub id: &'a str,
    /// Its JoinGroup metadata: a ConsumerProtocolSubscription of any version.
    pub subscription: &'a [u8],
    pub group_instance_id: Option<String>,
}

/// A member resolved straight into the builder's ids.
struct Resolved<'a> {
    sub: SubId,
    generation: i32,
    rack: Option<&'a str>,
}

/// How many distinct topic arrays [`Resolver`] remembers.
const RECENT_SUBSCRIPTIONS: usize = 8;

/// The leader path's decoder for well-formed members: it reads a subscription straight into the
/// builder's ids, with every check [`member`] makes, and gives up (`None`) on anything
/// [`member`] would warn about, so that [`member`] words the warning. What it saves:
/// - a topic array equal, byte for byte, to one of the last few distinct arrays is not parsed
///   again (members usually share a handful of subscriptions);
/// - owned topic names are resolved as bytes: a name that is a known topic needs no UTF-8 check;
/// - owned partitions go straight to flat ids, with no intermediate list of groups.
struct Resolver<'a> {
    /// Raw topic arrays (count and names) already interned, oldest first.
    recent: Vec<(&'a [u8], SubId)>,
    owned: Vec<PartId>,
    embedded: Vec<PartId>,
}

impl<'a> Resolver<'a> {
    fn new() -> Self {
        Resolver {
            recent: Vec::with_capacity(RECENT_SUBSCRIPTIONS),
            owned: Vec::new(),
            embedded: Vec::new(),
        }
    }

    fn member(&mut self, b: &mut ProblemBuilder, data: &'a [u8], history: History) -> Option<Resolved<'a>> {
        const E: &str = "";
        let mut r = Reader::new(data);
        let version = r.read_i16(E).ok()?;
        if version < 0 {
            return None;
        }
        let start = r.position();
        let rest = &data[start..];
        let sub = match self.recent.iter().rev().find(|(raw, _)| rest.starts_with(raw)) {
            Some(&(raw, sub)) => {
                r.read_slice(raw.len(), E).ok()?;
                sub
            }
            None => {
                let n = r.read_array_len(E, 2).ok()?;
                let mut topics = Vec::with_capacity(n);
                for _ in 0..n {
                    topics.push(r.read_str(E).ok()?);
                }
                let sub = b.subscription(&topics);
                if self.recent.len() == RECENT_SUBSCRIPTIONS {
                    self.recent.remove(0);
                }
                self.recent.push((&data[start..r.position()], sub));
                sub
            }
        };
        let user_data = r.read_nullable_byte_slice(E).ok()?;
        // Whether the owned-partitions field is the history (else it is only checked).
        let field_is_history = match history {
            History::None => false,
            History::Cooperative => true,
            History::Sticky => matches!(user_data, None | Some([])),
        };
        self.owned.clear();
        let mut field_all_empty = true;
        if version >= 1 {
            field_all_empty = groups(&mut r, b, field_is_history.then_some(&mut self.owned))?;
        }
        let mut generation = if version >= 2 { r.read_i32(E).ok()? } else { -1 };
        let rack = if version >= 3 {
            r.read_nullable_str(E).ok()?
        } else {
            None
        };
        match history {
            History::None => generation = -1,
            History::Cooperative => {
                if let Some(ud) = user_data {
                    if generation < 0 {
                        generation = protocol::decode_generation(ud).ok()?;
                    }
                    if field_all_empty && ud.len() > 4 {
                        // The owned list kassign's aiokafka members append to the generation;
                        // ignored unless it decodes whole.
                        self.embedded.clear();
                        let mut u = Reader::new(&ud[4..]);
                        if groups(&mut u, b, Some(&mut self.embedded)).is_some() {
                            std::mem::swap(&mut self.owned, &mut self.embedded);
                        }
                    }
                }
            }
            History::Sticky => {
                if !field_is_history {
                    let ud = user_data.unwrap_or_default();
                    let mut u = Reader::new(ud);
                    groups(&mut u, b, Some(&mut self.owned))?;
                    generation = if u.remaining() >= 4 { u.read_i32(E).ok()? } else { -1 };
                }
            }
        }
        Some(Resolved {
            sub,
            generation: if generation >= 0 { generation } else { -1 },
            rack: rack.filter(|r| !r.is_empty()),
        })
    }
}

/// Read a `[]{topic string, partitions []int32}` array with the checks of the owned decoders;
/// with `out`, push the flat ids of the partitions that exist. Returns whether every group's
/// partition list was empty, or `None` where the owned decoders fail.
///
/// This is the leader path's inner loop (a million groups in the largest groups): it reads the
/// bytes with a local cursor rather than through [`Reader`]'s error-reporting reads, since a
/// failure here only means "hand the member to [`member`]", which words the error.
fn groups(r: &mut Reader<'_>, b: &ProblemBuilder, mut out: Option<&mut Vec<PartId>>) -> Option<bool> {
    let buf = r.rest();
    let mut at = 0usize;
    let n = be_i32(buf, &mut at)?;
    // Each group takes at least 6 bytes (name length, partition count).
    if n < 0 || (n as usize).saturating_mul(6) > buf.len() - at {
        return None;
    }
    let mut all_empty = true;
    // Groups usually come in topic order: try the topic after the last one first.
    let mut hint = 0;
    for _ in 0..n {
        let len = be_i16(buf, &mut at)?;
        if len < 0 {
            return None;
        }
        let name = buf.get(at..at + len as usize)?;
        at += len as usize;
        let m = be_i32(buf, &mut at)?;
        if m < 0 {
            return None;
        }
        let size = (m as usize).checked_mul(4)?;
        let bytes = buf.get(at..at.checked_add(size)?)?;
        at += size;
        all_empty &= m == 0;
        let Some(out) = out.as_deref_mut() else {
            protocol::utf8(name)?;
            continue;
        };
        let topic = b.topic_bytes_near(hint, name);
        let Some(t) = topic else {
            // Not a topic of this group: checked, then ignored as history.
            protocol::utf8(name)?;
            continue;
        };
        hint = t as usize + 1;
        let (first, count) = b.topic_span(t);
        out.reserve(m as usize);
        for c in bytes.chunks_exact(4) {
            let p = i32::from_be_bytes([c[0], c[1], c[2], c[3]]);
            if p >= 0 && (p as u32) < count {
                out.push(first + p as u32);
            }
        }
    }
    r.read_slice(at, "").ok()?;
    Some(all_empty)
}

/// The big-endian int32 at `*at`, moving past it.
#[inline]
fn be_i32(buf: &[u8], at: &mut usize) -> Option<i32> {
    let b = buf.get(*at..*at + 4)?;
    *at += 4;
    Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// The big-endian int16 at `*at`, moving past it.
#[inline]
fn be_i16(buf: &[u8], at: &mut usize) -> Option<i16> {
    let b = buf.get(*at..*at + 2)?;
    *at += 2;
    Some(i16::from_be_bytes([b[0], b[1]]))
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
) -> Result<(Encoded, Vec<String>), InputError> {
    run(strategy, members, topics, with_racks, partition_racks, true)
}

/// [`assign`] with every member decoded by [`member`] (no [`Resolver`]): the reference the
/// tests and the `wire` fuzz target compare [`assign`] with, byte for byte.
pub fn assign_unresolved(
    strategy: Strategy,
    members: &[WireInput<'_>],
    topics: Vec<(String, i64)>,
    with_racks: bool,
    partition_racks: &[(String, i64, Vec<String>)],
) -> Result<(Encoded, Vec<String>), InputError> {
    run(strategy, members, topics, with_racks, partition_racks, false)
}

fn run(
    strategy: Strategy,
    members: &[WireInput<'_>],
    topics: Vec<(String, i64)>,
    with_racks: bool,
    partition_racks: &[(String, i64, Vec<String>)],
    resolve: bool,
) -> Result<(Encoded, Vec<String>), InputError> {
    let history = History::of(strategy.name());
    let mut warnings = Vec::new();
    let mut b = ProblemBuilder::new(topics)?;
    b.reserve_members(members.len());
    let mut fast = Resolver::new();
    for w in members {
        let resolved = if resolve {
            fast.member(&mut b, w.subscription, history)
        } else {
            None
        };
        let (sub, owned, generation, rack) = match resolved {
            Some(m) => (m.sub, fast.owned.clone(), m.generation, m.rack),
            None => {
                let m = member(w.id, w.subscription, history, &mut warnings);
                let sub = b.subscription(&m.topics);
                let mut owned = Vec::new();
                for g in &m.owned {
                    if let Some(t) = b.topic(g.topic) {
                        owned.extend(g.partitions.iter().filter_map(|p| b.partition(t, p as i64)));
                    }
                }
                (sub, owned, m.generation, m.rack)
            }
        };
        b.add_member(
            w.id.to_string(),
            sub,
            owned,
            generation,
            rack,
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
    let mut out = Encoder::new(&problem.topics, &problem.topic_base);
    for pos in 0..problem.members.len() {
        let m = problem.input_order[pos] as usize;
        out.push(&parts[starts[m]..starts[m + 1]])
            .map_err(|e| InputError::Invalid(e.to_string()))?;
    }
    Ok((out.finish(), warnings))
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
        let b = Assignment::decode(out.get(0)).unwrap();
        assert_eq!(
            b.partitions,
            vec![TopicPartitions {
                topic: "t".into(),
                partitions: vec![0, 1]
            }]
        );
        assert_eq!(b.user_data, None);
        assert!(Assignment::decode(out.get(1)).unwrap().partitions.is_empty());
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
        let parts = |i: usize| Assignment::decode(out.get(i)).unwrap().partitions[0].partitions.clone();
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
            (
                0u8..6,
                0i16..4,
                proptest::collection::vec((prop_oneof![Just("t"), Just("u"), Just("\u{e9}")], 0i32..6), 0..4),
            ),
        )
            .prop_map(
                |(topics, owned, generation, user_data, cut, flip, mode, (ud_mode, version, history))| {
                    let group = |pairs: Vec<(&str, i32)>| {
                        let mut by_topic: Vec<TopicPartitions> = Vec::new();
                        for (t, p) in pairs {
                            match by_topic.iter_mut().find(|g| g.topic == t) {
                                Some(g) => g.partitions.push(p),
                                None => by_topic.push(TopicPartitions {
                                    topic: t.into(),
                                    partitions: vec![p],
                                }),
                            }
                        }
                        by_topic
                    };
                    let by_topic = group(owned);
                    // User data: random bytes, or real history (sticky v0/v1, or cooperative's
                    // generation with the owned list kassign's aiokafka members append).
                    let sticky = |generation: Option<i32>| {
                        StickyUserData {
                            partitions: group(history.clone()),
                            generation,
                        }
                        .encode()
                        .unwrap()
                    };
                    let user_data = match ud_mode {
                        0 => user_data,
                        1 => Some(sticky(None)),
                        2 => Some(sticky(Some(generation))),
                        3 => Some([generation.to_be_bytes().to_vec(), sticky(None)].concat()),
                        // Sticky user data repeating the owned-partitions field byte for byte.
                        4 => Some(
                            StickyUserData {
                                partitions: by_topic.clone(),
                                generation: Some(generation),
                            }
                            .encode()
                            .unwrap(),
                        ),
                        _ => Some(generation.to_be_bytes().to_vec()),
                    };
                    let mut b = Subscription {
                        version,
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
                },
            )
    }

    proptest! {
        /// The resolving decoder takes every member [`member`] decodes without a warning (it
        /// only hands the ones [`member`] warns about back).
        #[test]
        fn resolver_takes_every_member_without_a_warning(bytes in member_bytes()) {
            for history in [History::None, History::Cooperative, History::Sticky] {
                let mut warnings = Vec::new();
                member("m", &bytes, history, &mut warnings);
                let mut b = ProblemBuilder::new(vec![("t".to_string(), 4), ("u".to_string(), 2)]).unwrap();
                let resolved = Resolver::new().member(&mut b, &bytes, history);
                prop_assert_eq!(resolved.is_some(), warnings.is_empty(), "{:?}: {:?}", history, warnings);
            }
        }

        #[test]
        fn any_bytes_give_a_valid_answer_for_every_member(members in proptest::collection::vec(member_bytes(), 0..6)) {
            let ids: Vec<String> = (0..members.len()).map(|i| format!("m{i}")).collect();
            let input: Vec<WireInput<'_>> = ids.iter().zip(&members)
                .map(|(id, m)| WireInput { id, subscription: m, group_instance_id: None })
                .collect();
            for strategy in Strategy::ALL {
                let (out, warnings) = assign(strategy, &input, vec![("t".into(), 4), ("u".into(), 2)], false, &[]).unwrap();
                let reference = assign_unresolved(strategy, &input, vec![("t".into(), 4), ("u".into(), 2)], false, &[]).unwrap();
                prop_assert_eq!(&out, &reference.0);
                prop_assert_eq!(&warnings, &reference.1);
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
