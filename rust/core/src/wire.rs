//! The group leader's path on wire bytes: every member's `ConsumerProtocolSubscription` in,
//! every member's `ConsumerProtocolAssignment` out, with no Python object in between.
//!
//! Each member's history is read by its strategy's rules, the same rules the drop-in classes
//! apply to decoded metadata (docs/wire.md): a member whose bytes cannot be decoded never fails
//! the leader; it gets an empty assignment and a warning.

use crate::members::{MemberReader, MemberSource};
use crate::model::{Assignment, InputError, PartId, Problem, ProblemBuilder, SubId, NO_OWNER};
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

    /// The history rules the drop-in classes' leader applies for a protocol name: as
    /// [`History::of`], and `lag-aware` reads sticky's (its members send `StickyAssignorUserData`
    /// when configured with `sticky=True`; the leader reads it whenever it is sent).
    pub fn of_drop_in(strategy: &str) -> History {
        match strategy {
            "lag-aware" => History::Sticky,
            other => History::of(other),
        }
    }

    /// Whether [`history`] can take anything from the subscription's owned-partitions and
    /// generation fields, given the member's user data: never for the strategies without
    /// history, always for cooperative-sticky, and for sticky only when the user data is null or
    /// empty (otherwise the user data wins). A reader of decoded objects may skip the fields
    /// when this is false: `history` gives the same whatever they hold.
    pub fn reads_fields(self, user_data: Option<&[u8]>) -> bool {
        match self {
            History::None => false,
            History::Cooperative => true,
            History::Sticky => matches!(user_data, None | Some([])),
        }
    }
}

/// Where a member's history comes from, by its strategy's rule ([`history`]).
#[derive(Debug)]
pub enum HistoryFrom<'a> {
    /// The subscription's own owned-partitions field.
    Field,
    /// Partitions decoded from the member's user data.
    UserData(Vec<TopicPartitionsRef<'a>>),
    /// No history.
    Nothing,
}

/// The wire-history rule: which owned partitions and generation a member's subscription fields
/// and user data give, for a strategy that carries history as `kind` (as Java's assignors read
/// them; docs/wire.md). The one place this rule lives: the bytes path ([`member`]) and the
/// drop-in classes' path (decoded metadata, `kassign.kafka_python` / `kassign.aiokafka`) both
/// call it.
///
/// - `user_data`: the member's user data (None when null);
/// - `field_has_partitions`: whether the subscription's owned-partitions field names any
///   partition;
/// - `generation`: the subscription's generation field (-1 when absent).
///
/// Returns the source of the history and its generation (-1 when unknown). Never fails: an
/// undecodable history is a warning naming the member.
pub fn history<'a>(
    id: &str,
    kind: History,
    user_data: Option<&'a [u8]>,
    field_has_partitions: bool,
    generation: i32,
    warnings: &mut Vec<String>,
) -> (HistoryFrom<'a>, i32) {
    let (from, generation) = match kind {
        History::None => (HistoryFrom::Nothing, -1),
        History::Cooperative => {
            // Java: a v2+ generation >= 0 wins; otherwise the user data's int32 (undecodable: -1).
            let mut generation = generation;
            let mut from = HistoryFrom::Field;
            if let Some(ud) = user_data {
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
                // kassign's aiokafka members append their owned list to the generation (their
                // leader may not see the v1+ fields); ignored unless it decodes whole.
                if !field_has_partitions && ud.len() > 4 {
                    if let Ok(embedded) = StickyUserDataRef::decode(&ud[4..]) {
                        from = HistoryFrom::UserData(embedded.partitions);
                    }
                }
            }
            (from, generation)
        }
        // Java's StickyAssignor: user data wins; null or empty: the subscription's fields;
        // undecodable: no history.
        History::Sticky if kind.reads_fields(user_data) => (HistoryFrom::Field, generation),
        History::Sticky => match StickyUserDataRef::decode(user_data.unwrap_or_default()) {
            Ok(u) => (HistoryFrom::UserData(u.partitions), u.generation.unwrap_or(-1)),
            Err(e) => {
                warnings.push(format!(
                    "member {id}: undecodable sticky user data ({e}); treated as having no history"
                ));
                (HistoryFrom::Nothing, -1)
            }
        },
    };
    (from, if generation >= 0 { generation } else { -1 })
}

/// Decode one member's subscription; never fails. Warnings name the member.
pub fn member<'a>(id: &str, data: &'a [u8], history_kind: History, warnings: &mut Vec<String>) -> WireMember<'a> {
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
    let has_partitions = s.owned_partitions.iter().any(|g| !g.partitions.is_empty());
    let (from, generation) = history(id, history_kind, s.user_data, has_partitions, s.generation, warnings);
    let owned = match from {
        HistoryFrom::Field => s.owned_partitions,
        HistoryFrom::UserData(groups) => groups,
        HistoryFrom::Nothing => Vec::new(),
    };
    WireMember {
        topics: s.topics,
        owned,
        generation,
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

/// Every member's `ConsumerProtocolAssignment`, in the members' order. Most are written into one
/// buffer; a member whose assignment is exactly its history, and whose history bytes are laid
/// out as this encoder would write the assignment, is answered with those bytes (`'a` is the
/// input's lifetime): the same bytes, without encoding them again.
#[derive(Clone, Debug, Default)]
pub struct Encoded<'a> {
    bytes: Vec<u8>,
    answers: Vec<Answer<'a>>,
}

#[derive(Clone, Copy, Debug)]
enum Answer<'a> {
    /// `bytes[start..end]`.
    Written { start: usize, end: usize },
    /// The version, these bytes (a `[]{topic, []int32}` array from the member's own
    /// subscription), then null user data.
    Kept(&'a [u8]),
}

/// The bytes an assignment starts with (its version) and ends with (null user data).
const PREFIX: [u8; 2] = protocol::MAX_VERSION.to_be_bytes();
const SUFFIX: [u8; 4] = (-1i32).to_be_bytes();

impl<'a> Encoded<'a> {
    pub fn len(&self) -> usize {
        self.answers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    /// The length of member `i`'s bytes.
    pub fn byte_len(&self, i: usize) -> usize {
        match self.answers[i] {
            Answer::Written { start, end } => end - start,
            Answer::Kept(raw) => PREFIX.len() + raw.len() + SUFFIX.len(),
        }
    }

    /// Copy member `i`'s bytes into `dst`, which is [`Encoded::byte_len`] long.
    pub fn write_into(&self, i: usize, dst: &mut [u8]) {
        match self.answers[i] {
            Answer::Written { start, end } => dst.copy_from_slice(&self.bytes[start..end]),
            Answer::Kept(raw) => {
                let (head, rest) = dst.split_at_mut(PREFIX.len());
                let (mid, tail) = rest.split_at_mut(raw.len());
                head.copy_from_slice(&PREFIX);
                mid.copy_from_slice(raw);
                tail.copy_from_slice(&SUFFIX);
            }
        }
    }

    /// Member `i`'s bytes.
    pub fn get(&self, i: usize) -> std::borrow::Cow<'_, [u8]> {
        match self.answers[i] {
            Answer::Written { start, end } => std::borrow::Cow::Borrowed(&self.bytes[start..end]),
            Answer::Kept(_) => {
                let mut v = vec![0; self.byte_len(i)];
                self.write_into(i, &mut v);
                std::borrow::Cow::Owned(v)
            }
        }
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = std::borrow::Cow<'_, [u8]>> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// How many members were answered with their own history bytes.
    pub fn kept(&self) -> usize {
        self.answers.iter().filter(|a| matches!(a, Answer::Kept(_))).count()
    }

    fn keep(&mut self, raw: &'a [u8]) {
        self.answers.push(Answer::Kept(raw));
    }
}

/// Equal when every member's bytes are equal, however they are held.
impl PartialEq for Encoded<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

impl Eq for Encoded<'_> {}

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
struct Encoder<'p, 'a> {
    topics: &'p [String],
    topic_base: &'p [PartId],
    /// The encoded names (2-byte length + bytes), back to back.
    names: Vec<u8>,
    /// Topic => its span in `names`; empty for a name over the int16 limit, which fails when a
    /// member holds its topic.
    spans: Vec<(usize, usize)>,
    out: Encoded<'a>,
}

impl<'p, 'a> Encoder<'p, 'a> {
    fn new(topics: &'p [String], topic_base: &'p [PartId]) -> Encoder<'p, 'a> {
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

    /// Make room for `members` more assignments holding `parts` partitions in all, each of one
    /// topic group (more groups grow the buffer as they come): one allocation, not a doubling
    /// series of copies.
    fn reserve(&mut self, members: usize, parts: usize) {
        let longest = self.spans.iter().map(|(a, b)| b - a).max().unwrap_or(0);
        let per_member = PREFIX.len() + 4 + longest + 4 + SUFFIX.len();
        self.out.bytes.reserve(
            members
                .saturating_mul(per_member)
                .saturating_add(parts.saturating_mul(4)),
        );
        self.out.answers.reserve(members);
    }

    /// Append one member's assignment; `parts` are sorted flat ids. On an error the buffer holds
    /// a partial member and must be dropped (every caller fails as a whole).
    fn push(&mut self, parts: &[PartId]) -> Result<(), EncodeError> {
        let base = self.topic_base;
        let bytes = &mut self.out.bytes;
        let start = bytes.len();
        bytes.reserve(2 + 4 + 4 + 4 * parts.len());
        bytes.extend_from_slice(&PREFIX);
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
        bytes.extend_from_slice(&SUFFIX);
        let end = bytes.len();
        self.out.answers.push(Answer::Written { start, end });
        Ok(())
    }

    fn finish(self) -> Encoded<'a> {
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
struct InternedMember<'a> {
    sub: SubId,
    generation: i32,
    rack: Option<&'a str>,
    /// The history's bytes when they are laid out exactly as [`Encoder`] would write the same
    /// partitions (see [`Groups::canonical`]).
    canonical: Option<&'a [u8]>,
}

/// How many distinct topic arrays [`InterningDecoder`] remembers.
const RECENT_SUBSCRIPTIONS: usize = 8;

/// The leader path's decoder for well-formed members: it reads a subscription straight into the
/// builder's ids, with every check [`member`] makes, and gives up (`None`) on anything
/// [`member`] would warn about, so that [`member`] words the warning. What it saves:
/// - a topic array equal, byte for byte, to one of the last few distinct arrays is not parsed
///   again (members usually share a handful of subscriptions);
/// - owned topic names are resolved as bytes: a name that is a known topic needs no UTF-8 check;
/// - owned partitions go straight to flat ids, with no intermediate list of groups.
struct InterningDecoder<'a> {
    /// Raw topic arrays (count and names) already interned, oldest first.
    recent: Vec<(&'a [u8], SubId)>,
    owned: Vec<PartId>,
    embedded: Vec<PartId>,
}

impl<'a> InterningDecoder<'a> {
    fn new() -> Self {
        InterningDecoder {
            recent: Vec::with_capacity(RECENT_SUBSCRIPTIONS),
            owned: Vec::new(),
            embedded: Vec::new(),
        }
    }

    fn member(&mut self, b: &mut ProblemBuilder, data: &'a [u8], history: History) -> Option<InternedMember<'a>> {
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
        let mut canonical = None;
        if version >= 1 {
            let g = groups(&mut r, b, field_is_history.then_some(&mut self.owned))?;
            field_all_empty = g.all_empty;
            canonical = g.canonical;
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
                        if let Some(g) = groups(&mut u, b, Some(&mut self.embedded)) {
                            std::mem::swap(&mut self.owned, &mut self.embedded);
                            canonical = g.canonical;
                        }
                    }
                }
            }
            History::Sticky => {
                if !field_is_history {
                    let ud = user_data.unwrap_or_default();
                    let mut u = Reader::new(ud);
                    canonical = groups(&mut u, b, Some(&mut self.owned))?.canonical;
                    generation = if u.remaining() >= 4 { u.read_i32(E).ok()? } else { -1 };
                }
            }
        }
        Some(InternedMember {
            sub,
            generation: if generation >= 0 { generation } else { -1 },
            rack: rack.filter(|r| !r.is_empty()),
            canonical: if history == History::None { None } else { canonical },
        })
    }
}

/// What [`groups`] read.
struct Groups<'a> {
    /// Every group's partition list was empty.
    all_empty: bool,
    /// The array's bytes, when the partitions were read (`out` given) and the array is what
    /// [`Encoder`] writes for them: one group per topic, every topic known, topics in the
    /// problem's order, partitions known, ascending and distinct, no empty group.
    canonical: Option<&'a [u8]>,
}

/// Read a `[]{topic string, partitions []int32}` array with the checks of the owned decoders;
/// with `out`, push the flat ids of the partitions that exist. Returns whether every group's
/// partition list was empty, or `None` where the owned decoders fail.
///
/// This is the leader path's inner loop (a million groups in the largest groups): it reads the
/// bytes with a local cursor rather than through [`Reader`]'s error-reporting reads, since a
/// failure here only means "hand the member to [`member`]", which words the error.
fn groups<'a>(r: &mut Reader<'a>, b: &ProblemBuilder, mut out: Option<&mut Vec<PartId>>) -> Option<Groups<'a>> {
    let buf = r.rest();
    let mut canonical = out.is_some();
    // The topic of the previous group, plus one (0 before the first).
    let mut after: usize = 0;
    let mut at = 0usize;
    let n = be_i32(buf, &mut at)?;
    // Each group takes at least 6 bytes (name length, partition count).
    if n < 0 || (n as usize).saturating_mul(6) > buf.len() - at {
        return None;
    }
    let mut all_empty = true;
    if let Some(out) = out.as_deref_mut() {
        // Room for every partition the bytes can hold, once (the vector is reused across
        // members), rather than a reservation per group.
        out.reserve((buf.len() - at) / 4);
    }
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
            canonical = false;
            continue;
        };
        hint = t as usize + 1;
        canonical &= m > 0 && t as usize >= after;
        after = t as usize + 1;
        let (first, count) = b.topic_span(t);
        // -1 so that partition 0 may come first.
        let mut prev: i64 = -1;
        for c in bytes.chunks_exact(4) {
            let p = i32::from_be_bytes([c[0], c[1], c[2], c[3]]);
            if p >= 0 && (p as u32) < count {
                out.push(first + p as u32);
            } else {
                canonical = false;
            }
            canonical &= i64::from(p) > prev;
            prev = i64::from(p);
        }
    }
    let raw = r.read_slice(at, "").ok()?;
    Some(Groups {
        all_empty,
        canonical: canonical.then_some(raw),
    })
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
pub fn assign<'a>(
    strategy: Strategy,
    members: &[WireInput<'a>],
    topics: Vec<(String, i64)>,
    with_racks: bool,
    partition_racks: &[(String, i64, Vec<String>)],
) -> Result<(Encoded<'a>, Vec<String>), InputError> {
    run(strategy, members, topics, with_racks, partition_racks, true)
}

/// [`assign`] with every member decoded by [`member`] (no [`InterningDecoder`]): the reference the
/// tests and the `wire` fuzz target compare [`assign`] with, byte for byte.
pub fn assign_unresolved<'a>(
    strategy: Strategy,
    members: &[WireInput<'a>],
    topics: Vec<(String, i64)>,
    with_racks: bool,
    partition_racks: &[(String, i64, Vec<String>)],
) -> Result<(Encoded<'a>, Vec<String>), InputError> {
    run(strategy, members, topics, with_racks, partition_racks, false)
}

fn run<'a>(
    strategy: Strategy,
    members: &[WireInput<'a>],
    topics: Vec<(String, i64)>,
    with_racks: bool,
    partition_racks: &[(String, i64, Vec<String>)],
    resolve: bool,
) -> Result<(Encoded<'a>, Vec<String>), InputError> {
    let history = History::of(strategy.name());
    let mut warnings = Vec::new();
    let mut b = ProblemBuilder::new(topics)?;
    b.reserve_members(members.len());
    let mut decoder = InterningDecoder::new();
    let mut canonical: Vec<Option<&'a [u8]>> = Vec::with_capacity(members.len());
    for w in members {
        let resolved = if resolve {
            decoder.member(&mut b, w.subscription, history)
        } else {
            None
        };
        match resolved {
            Some(m) => {
                canonical.push(m.canonical);
                b.add_member(
                    w.id.to_string(),
                    m.sub,
                    decoder.owned.clone(),
                    m.generation,
                    m.rack,
                    w.group_instance_id.clone(),
                )?;
            }
            None => {
                canonical.push(None);
                let member = member(w.id, w.subscription, history, &mut warnings);
                MemberReader::new().add(
                    &mut b,
                    &WireSource {
                        input: w,
                        member: &member,
                    },
                )?;
            }
        }
    }
    Ok((
        assign_and_encode(b, strategy, with_racks, partition_racks, canonical)?,
        warnings,
    ))
}

/// The tail of both leader paths ([`assign`], [`assign_decoded`]), once every member is in `b`:
/// the partition racks ([`ProblemBuilder::add_partition_rack_list`]), the problem, the strategy's run, and every member's `ConsumerProtocolAssignment` in input
/// order. `canonical[pos]` is the input member's history bytes when they are laid out as
/// [`Encoder`] writes (else `None`): a member whose assignment is exactly that history is
/// answered with those bytes ([`unchanged`]).
fn assign_and_encode<'a>(
    mut b: ProblemBuilder,
    strategy: Strategy,
    with_racks: bool,
    partition_racks: &[(String, i64, Vec<String>)],
    canonical: Vec<Option<&'a [u8]>>,
) -> Result<Encoded<'a>, InputError> {
    b.add_partition_rack_list(with_racks, partition_racks);
    let problem = b.build()?;
    let assignment = strategy.run(&problem);
    let kept = unchanged(&problem, &assignment, canonical);
    let (starts, parts) = grouped_except(&problem, &assignment, &kept);
    let mut out = Encoder::new(&problem.topics, &problem.topic_base);
    out.reserve(kept.len(), parts.len());
    for (pos, raw) in kept.into_iter().enumerate() {
        match raw {
            Some(raw) => out.out.keep(raw),
            None => {
                let m = problem.input_order[pos] as usize;
                out.push(&parts[starts[m]..starts[m + 1]])
                    .map_err(|e| InputError::Invalid(e.to_string()))?;
            }
        }
    }
    Ok(out.finish())
}

/// One member as a client library decoded it (kafka-python's `ConsumerProtocolSubscription`,
/// aiokafka's `ConsumerProtocolMemberMetadata`), its history already read by [`history`].
pub struct DecodedMember<'a> {
    pub id: &'a str,
    pub topics: &'a [&'a str],
    /// The history: (topic, partitions) groups in the order given.
    pub owned: &'a [(&'a str, &'a [i64])],
    /// -1 when unknown.
    pub generation: i32,
    /// None for no rack or `""`.
    pub rack: Option<&'a str>,
    pub group_instance_id: Option<&'a str>,
}

impl MemberSource for DecodedMember<'_> {
    type Error = InputError;
    type TopicsKey<'k>
        = &'k [&'k str]
    where
        Self: 'k;
    fn id(&self) -> &str {
        self.id
    }
    fn topics_key(&self) -> &[&str] {
        self.topics
    }
    fn topics(&self) -> Result<impl AsRef<[&str]>, InputError> {
        Ok(self.topics)
    }
    fn owned_groups(&self) -> usize {
        self.owned.len()
    }
    fn owned_group(&self, i: usize) -> Result<(&str, impl Iterator<Item = i64>), InputError> {
        let (topic, parts) = self.owned[i];
        Ok((topic, parts.iter().copied()))
    }
    fn owned_hint(&self) -> usize {
        self.owned.iter().map(|(_, parts)| parts.len()).sum()
    }
    fn generation(&self) -> i32 {
        self.generation
    }
    fn rack(&self) -> Result<Option<&str>, InputError> {
        Ok(self.rack)
    }
    fn group_instance_id(&self) -> Result<Option<&str>, InputError> {
        Ok(self.group_instance_id)
    }
}

/// A member as the leader received it ([`WireInput`]: its id and static id) with its
/// subscription decoded by [`member`].
struct WireSource<'m, 'a> {
    input: &'m WireInput<'a>,
    member: &'m WireMember<'a>,
}

impl MemberSource for WireSource<'_, '_> {
    type Error = InputError;
    type TopicsKey<'k>
        = &'k [&'k str]
    where
        Self: 'k;
    fn id(&self) -> &str {
        self.input.id
    }
    fn topics_key(&self) -> &[&str] {
        &self.member.topics
    }
    fn topics(&self) -> Result<impl AsRef<[&str]>, InputError> {
        Ok(&self.member.topics)
    }
    fn owned_groups(&self) -> usize {
        self.member.owned.len()
    }
    fn owned_group(&self, i: usize) -> Result<(&str, impl Iterator<Item = i64>), InputError> {
        let g = &self.member.owned[i];
        Ok((g.topic, g.partitions.iter().map(i64::from)))
    }
    fn generation(&self) -> i32 {
        self.member.generation
    }
    fn rack(&self) -> Result<Option<&str>, InputError> {
        Ok(self.member.rack)
    }
    fn group_instance_id(&self) -> Result<Option<&str>, InputError> {
        Ok(self.input.group_instance_id.as_deref())
    }
}

/// The drop-in classes' leader step for a Rust strategy, from decoded members: assign, and
/// encode every member's assignment (v3, null user data, grouped by topic, sorted: the bytes the
/// classes send). Returns the bytes in the order of `members`. `topics` and `partition_racks`
/// are as for [`assign`].
pub fn assign_decoded(
    strategy: Strategy,
    members: &[DecodedMember<'_>],
    topics: Vec<(String, i64)>,
    with_racks: bool,
    partition_racks: &[(String, i64, Vec<String>)],
) -> Result<Encoded<'static>, InputError> {
    let mut b = ProblemBuilder::new(topics)?;
    b.reserve_members(members.len());
    let mut reader = MemberReader::new();
    for m in members {
        reader.add(&mut b, m)?;
    }
    // No history bytes are kept: every assignment is encoded.
    assign_and_encode(b, strategy, with_racks, partition_racks, vec![None; members.len()])
}

/// [`Assignment::grouped`] for the members that are not kept (by input position, `kept[pos]`
/// is `Some`); kept members get an empty range. Without a kept member this is `grouped`.
fn grouped_except(problem: &Problem, assignment: &Assignment, kept: &[Option<&[u8]>]) -> (Vec<usize>, Vec<PartId>) {
    let n = problem.members.len();
    if kept.iter().all(Option::is_none) {
        return assignment.grouped(n);
    }
    let mut wanted = vec![false; n];
    for (pos, raw) in kept.iter().enumerate() {
        wanted[problem.input_order[pos] as usize] = raw.is_none();
    }
    let mut starts = vec![0usize; n + 1];
    let mut any = false;
    for &m in &assignment.owner {
        if m != NO_OWNER && wanted[m as usize] {
            starts[m as usize + 1] += 1;
            any = true;
        }
    }
    if !any {
        return (starts, Vec::new());
    }
    for i in 0..n {
        starts[i + 1] += starts[i];
    }
    let mut fill = starts.clone();
    let mut parts = vec![0 as PartId; starts[n]];
    for (p, &m) in assignment.owner.iter().enumerate() {
        if m != NO_OWNER && wanted[m as usize] {
            parts[fill[m as usize]] = p as PartId;
            fill[m as usize] += 1;
        }
    }
    (starts, parts)
}

/// By input position: the member's canonical history bytes when its assignment is exactly that
/// history (so those bytes are what [`Encoder`] would write), else `None`. A member's
/// [`crate::model::Member::owned`] is its canonical history's partitions, unchanged: they are
/// known, ascending and distinct.
fn unchanged<'a>(
    problem: &Problem,
    assignment: &Assignment,
    canonical: Vec<Option<&'a [u8]>>,
) -> Vec<Option<&'a [u8]>> {
    if canonical.iter().all(Option::is_none) {
        return canonical;
    }
    let owner = &assignment.owner;
    let mut count = vec![0u32; problem.members.len()];
    for &m in owner {
        if m != NO_OWNER {
            count[m as usize] += 1;
        }
    }
    let mut canonical = canonical;
    for (pos, raw) in canonical.iter_mut().enumerate() {
        if raw.is_none() {
            continue;
        }
        let m = problem.input_order[pos];
        let owned = &problem.members[m as usize].owned;
        if count[m as usize] as usize != owned.len() || !owned.iter().all(|&p| owner[p as usize] == m) {
            *raw = None;
        }
    }
    canonical
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
        let b = Assignment::decode(&out.get(0)).unwrap();
        assert_eq!(
            b.partitions,
            vec![TopicPartitions {
                topic: "t".into(),
                partitions: vec![0, 1]
            }]
        );
        assert_eq!(b.user_data, None);
        assert!(Assignment::decode(&out.get(1)).unwrap().partitions.is_empty());
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
        let parts = |i: usize| {
            Assignment::decode(&out.get(i)).unwrap().partitions[0]
                .partitions
                .clone()
        };
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

    /// Members with these ids and subscription bytes, without instance ids.
    fn inputs<'a>(ids: &'a [String], subscriptions: &'a [Vec<u8>]) -> Vec<WireInput<'a>> {
        ids.iter()
            .zip(subscriptions)
            .map(|(id, m)| WireInput {
                id,
                subscription: m,
                group_instance_id: None,
            })
            .collect()
    }

    /// Round 2 of a group of `subs.len()` members (0: t, 1: u, 2: t and u, 3: t, u and x): every
    /// member but `leave` sends its round-1 assignment back as history (cooperative-sticky: the
    /// owned field; sticky: its user data, or the owned field when `in_field`), rewritten by
    /// `edits[i]` (0-3: as received; 4: one topic split over two groups; 5: partitions reversed;
    /// 6: an empty group; 7: a topic the group does not have). Returns the reference's bytes, the
    /// resolved answer's bytes, how many members it answered with their own bytes, and how many
    /// members sent a history as received.
    fn round_two(
        strategy: Strategy,
        subs: &[u8],
        edits: &[u8],
        leave: usize,
        in_field: bool,
    ) -> (Vec<Vec<u8>>, Vec<Vec<u8>>, usize, usize) {
        let topics = vec![("t".to_string(), 5), ("u".to_string(), 3)];
        let names: [&[&str]; 4] = [&["t"], &["u"], &["t", "u"], &["t", "u", "x"]];
        let ids: Vec<String> = (0..subs.len()).map(|i| format!("m{i}")).collect();
        let first: Vec<Vec<u8>> = subs.iter().map(|&k| sub(names[k as usize], &[], -1, None)).collect();
        let (out, _) = assign(strategy, &inputs(&ids, &first), topics.clone(), false, &[]).unwrap();
        let mut second = Vec::new();
        let mut second_ids = Vec::new();
        let mut unedited = 0;
        for (i, &k) in subs.iter().enumerate() {
            if i == leave {
                continue;
            }
            let mut groups = Assignment::decode(&out.get(i)).unwrap().partitions;
            let long = groups.iter().position(|g| g.partitions.len() >= 2);
            unedited += 1;
            match (edits[i], long) {
                (4, Some(g)) => {
                    unedited -= 1;
                    let last = groups[g].partitions.pop().unwrap();
                    let topic = groups[g].topic.clone();
                    groups.insert(
                        g + 1,
                        TopicPartitions {
                            topic,
                            partitions: vec![last],
                        },
                    );
                }
                (5, Some(g)) => {
                    unedited -= 1;
                    groups[g].partitions.reverse();
                }
                (6, _) => {
                    unedited -= 1;
                    groups.push(TopicPartitions {
                        topic: "u".into(),
                        partitions: vec![],
                    });
                }
                (7, _) => {
                    unedited -= 1;
                    groups.push(TopicPartitions {
                        topic: "x".into(),
                        partitions: vec![0],
                    });
                }
                _ => {}
            }
            // Written by hand: the protocol's encoders would sort the groups.
            let mut raw = (groups.len() as i32).to_be_bytes().to_vec();
            for g in &groups {
                raw.extend((g.topic.len() as i16).to_be_bytes());
                raw.extend(g.topic.as_bytes());
                raw.extend((g.partitions.len() as i32).to_be_bytes());
                g.partitions.iter().for_each(|p| raw.extend(p.to_be_bytes()));
            }
            let empty = 0i32.to_be_bytes().to_vec();
            let (field, user_data) = match strategy {
                // StickyUserData v1.
                Strategy::Sticky if !in_field => (empty, Some([raw, 1i32.to_be_bytes().to_vec()].concat())),
                _ => (raw, None),
            };
            // Subscription v3: topics, user data, owned partitions, generation 1, null rack.
            let mut bytes = 3i16.to_be_bytes().to_vec();
            bytes.extend((names[k as usize].len() as i32).to_be_bytes());
            for t in names[k as usize] {
                bytes.extend((t.len() as i16).to_be_bytes());
                bytes.extend(t.as_bytes());
            }
            match user_data {
                Some(ud) => {
                    bytes.extend((ud.len() as i32).to_be_bytes());
                    bytes.extend(ud);
                }
                None => bytes.extend((-1i32).to_be_bytes()),
            }
            bytes.extend(field);
            bytes.extend(1i32.to_be_bytes());
            bytes.extend((-1i16).to_be_bytes());
            second.push(bytes);
            second_ids.push(ids[i].clone());
        }
        let input = inputs(&second_ids, &second);
        let (out, warnings) = assign(strategy, &input, topics.clone(), false, &[]).unwrap();
        let (reference, ref_warnings) = assign_unresolved(strategy, &input, topics, false, &[]).unwrap();
        assert_eq!(warnings, ref_warnings);
        let bytes = |e: &Encoded<'_>| e.iter().map(|b| b.into_owned()).collect::<Vec<_>>();
        (bytes(&reference), bytes(&out), out.kept(), unedited)
    }

    #[test]
    fn an_unchanged_group_is_answered_with_its_own_bytes() {
        for strategy in [Strategy::Sticky, Strategy::CooperativeSticky] {
            for in_field in [false, true] {
                let (reference, out, kept, _) = round_two(strategy, &[2, 2, 0, 1, 3], &[0; 5], 99, in_field);
                assert_eq!(out, reference);
                assert_eq!(kept, 5, "{strategy:?}");
            }
        }
        // No history, nothing kept.
        let (reference, out, kept, _) = round_two(Strategy::Range, &[2, 2, 0], &[0; 3], 99, false);
        assert_eq!((out, kept), (reference, 0));
    }

    proptest! {
        #[test]
        fn round_two_bytes_equal_the_reference(
            subs in proptest::collection::vec(0u8..4, 1..7),
            edits in proptest::collection::vec(0u8..8, 7),
            leave in 0usize..9,
            in_field in any::<bool>(),
        ) {
            for strategy in Strategy::ALL {
                let (reference, out, kept, unedited) = round_two(strategy, &subs, &edits, leave, in_field);
                prop_assert_eq!(out, reference, "{:?}", strategy);
                // A rewritten history is never sent back as it came.
                prop_assert!(kept <= unedited, "{:?}: {} kept, {} unedited", strategy, kept, unedited);
            }
        }
    }

    proptest! {
        /// The decoded-metadata path (the drop-in classes') sends what the bytes path sends for
        /// the same members: history read by the same rule from the decoded fields.
        #[test]
        fn decoded_members_get_the_bytes_path_answer(members in proptest::collection::vec(member_bytes(), 0..6)) {
            let ids: Vec<String> = (0..members.len()).map(|i| format!("m{i}")).collect();
            let input = inputs(&ids, &members);
            let topics = || vec![("t".to_string(), 4), ("u".to_string(), 2)];
            for strategy in Strategy::ALL {
                let kind = History::of(strategy.name());
                let mut warnings = Vec::new();
                // (topics, history groups, generation, rack) of each member, then borrowed.
                type Fields<'a> = (Vec<&'a str>, Vec<(&'a str, Vec<i64>)>, i32, Option<&'a str>);
                let fields: Vec<Fields<'_>> = ids
                    .iter()
                    .zip(&members)
                    .map(|(id, data)| {
                        let Ok(s) = SubscriptionRef::decode(data) else {
                            warnings.push(format!("member {id}: undecodable"));
                            return (vec![], vec![], -1, None);
                        };
                        let has = s.owned_partitions.iter().any(|g| !g.partitions.is_empty());
                        let (from, generation) = history(id, kind, s.user_data, has, s.generation, &mut warnings);
                        let groups = match from {
                            HistoryFrom::Field => s.owned_partitions,
                            HistoryFrom::UserData(g) => g,
                            HistoryFrom::Nothing => vec![],
                        };
                        let owned = groups.iter().map(|g| (g.topic, g.partitions.iter().map(i64::from).collect())).collect();
                        (s.topics, owned, generation, s.rack.filter(|r| !r.is_empty()))
                    })
                    .collect();
                let owned_groups: Vec<Vec<(&str, &[i64])>> = fields
                    .iter()
                    .map(|(_, owned, _, _)| owned.iter().map(|(t, ps)| (*t, ps.as_slice())).collect())
                    .collect();
                let decoded: Vec<DecodedMember<'_>> = ids
                    .iter()
                    .zip(&fields)
                    .zip(&owned_groups)
                    .map(|((id, (topics, _, generation, rack)), owned)| DecodedMember {
                        id,
                        topics,
                        owned,
                        generation: *generation,
                        rack: *rack,
                        group_instance_id: None,
                    })
                    .collect();
                let out = assign_decoded(strategy, &decoded, topics(), false, &[]).unwrap();
                let (reference, ref_warnings) = assign(strategy, &input, topics(), false, &[]).unwrap();
                prop_assert_eq!(&out, &reference, "{:?}", strategy);
                prop_assert_eq!(warnings.len(), ref_warnings.len());
            }
        }
    }

    /// The member readers as they were before [`MemberReader`] (each path checked and interned
    /// on its own), with the tail each path had: the oracle of
    /// `member_reader_gives_the_old_readers_answers`.
    mod old_readers {
        use super::super::*;
        use crate::model::TopicId;

        /// Every member's assignment bytes in input order, encoded member by member
        /// ([`encode_member_assignment`]).
        fn tail(
            mut b: ProblemBuilder,
            strategy: Strategy,
            with_racks: bool,
            partition_racks: &[(String, i64, Vec<String>)],
        ) -> Result<Vec<Vec<u8>>, InputError> {
            b.add_partition_rack_list(with_racks, partition_racks);
            let problem = b.build()?;
            let per_member = strategy.run(&problem).per_member(problem.members.len());
            Ok(problem
                .input_order
                .iter()
                .map(|&m| {
                    encode_member_assignment(&problem.topics, &problem.topic_base, &per_member[m as usize]).unwrap()
                })
                .collect())
        }

        /// The bytes path's general reader ([`member`] per member).
        pub fn unresolved(
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
            Ok((tail(b, strategy, with_racks, partition_racks)?, warnings))
        }

        /// The decoded-members reader.
        pub fn decoded(
            strategy: Strategy,
            members: &[DecodedMember<'_>],
            topics: Vec<(String, i64)>,
            with_racks: bool,
            partition_racks: &[(String, i64, Vec<String>)],
        ) -> Result<Vec<Vec<u8>>, InputError> {
            let mut b = ProblemBuilder::new(topics)?;
            let mut last_topic: Option<(&str, Option<TopicId>)> = None;
            let mut last_sub: Option<(&[&str], SubId)> = None;
            for m in members {
                let sub = match last_sub {
                    Some((topics, sub)) if topics == m.topics => sub,
                    _ => {
                        let sub = b.subscription(m.topics);
                        last_sub = Some((m.topics, sub));
                        sub
                    }
                };
                let mut owned = Vec::new();
                for &(topic, parts) in m.owned {
                    let t = match last_topic {
                        Some((name, t)) if name == topic => t,
                        _ => {
                            let t = b.topic(topic);
                            last_topic = Some((topic, t));
                            t
                        }
                    };
                    if let Some(t) = t {
                        owned.extend(parts.iter().filter_map(|&p| b.partition(t, p)));
                    }
                }
                b.add_member(
                    m.id.to_string(),
                    sub,
                    owned,
                    m.generation,
                    m.rack,
                    m.group_instance_id.map(str::to_string),
                )?;
            }
            tail(b, strategy, with_racks, partition_racks)
        }
    }

    /// A member of a random group: an id from a small set (so ids repeat and the builder's
    /// duplicate error is met), a static id or none, subscription bytes, and decoded fields
    /// (topics, history groups with partitions in and out of range, generation, rack).
    #[allow(clippy::type_complexity)]
    fn random_member() -> impl Gen<
        Value = (
            u8,
            Option<u8>,
            Vec<u8>,
            Vec<&'static str>,
            Vec<(&'static str, Vec<i64>)>,
            i32,
            Option<&'static str>,
        ),
    > {
        let name = || prop_oneof![Just("t"), Just("u"), Just("x"), Just("")];
        (
            0u8..8,
            proptest::option::of(0u8..3),
            member_bytes(),
            proptest::collection::vec(name(), 0..4),
            proptest::collection::vec((name(), proptest::collection::vec(-2i64..7, 0..4)), 0..4),
            -3i32..4,
            proptest::option::of(prop_oneof![Just("r1"), Just("r2"), Just("")]),
        )
    }

    proptest! {
        /// The one member reader ([`MemberReader`], through [`assign_unresolved`] and
        /// [`assign_decoded`]) gives what the old readers gave: the same bytes and warnings, or
        /// the same error, on random members (repeated ids, unknown topics, partitions out of
        /// range, racks, static ids, undecodable bytes).
        #[test]
        fn member_reader_gives_the_old_readers_answers(
            members in proptest::collection::vec(random_member(), 0..8),
            with_racks in any::<bool>(),
        ) {
            let ids: Vec<String> = members.iter().map(|m| format!("m{}", m.0)).collect();
            let statics: Vec<Option<String>> = members.iter().map(|m| m.1.map(|s| format!("s{s}"))).collect();
            let input: Vec<WireInput<'_>> = members
                .iter()
                .zip(&ids)
                .zip(&statics)
                .map(|((m, id), s)| WireInput { id, subscription: &m.2, group_instance_id: s.clone() })
                .collect();
            let owned: Vec<Vec<(&str, &[i64])>> = members
                .iter()
                .map(|m| m.4.iter().map(|(t, ps)| (*t, ps.as_slice())).collect())
                .collect();
            let decoded: Vec<DecodedMember<'_>> = members
                .iter()
                .zip(&ids)
                .zip(&statics)
                .zip(&owned)
                .map(|(((m, id), s), owned)| DecodedMember {
                    id,
                    topics: &m.3,
                    owned,
                    generation: m.5,
                    rack: m.6,
                    group_instance_id: s.as_deref(),
                })
                .collect();
            let topics = || vec![("t".to_string(), 4), ("u".to_string(), 2)];
            let racks = vec![("t".to_string(), 0, vec!["r1".to_string()]), ("u".to_string(), 1, vec!["r2".to_string()])];
            for strategy in Strategy::ALL {
                let new = assign_unresolved(strategy, &input, topics(), with_racks, &racks);
                let old = old_readers::unresolved(strategy, &input, topics(), with_racks, &racks);
                match (&new, &old) {
                    (Ok(new), Ok(old)) => {
                        prop_assert_eq!(new.0.iter().map(|b| b.into_owned()).collect::<Vec<_>>(), old.0.clone(), "{:?}", strategy);
                        prop_assert_eq!(&new.1, &old.1);
                    }
                    (Err(new), Err(old)) => prop_assert_eq!(new.to_string(), old.to_string()),
                    _ => prop_assert!(false, "{:?}: {:?} against {:?}", strategy, new.as_ref().err(), old.as_ref().err()),
                }
                let new = assign_decoded(strategy, &decoded, topics(), with_racks, &racks);
                let old = old_readers::decoded(strategy, &decoded, topics(), with_racks, &racks);
                match (&new, &old) {
                    (Ok(new), Ok(old)) => prop_assert_eq!(new.iter().map(|b| b.into_owned()).collect::<Vec<_>>(), old.clone(), "{:?}", strategy),
                    (Err(new), Err(old)) => prop_assert_eq!(new.to_string(), old.to_string()),
                    _ => prop_assert!(false, "{:?}: {:?} against {:?}", strategy, new.as_ref().err(), old.as_ref().err()),
                }
            }
        }
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
                let resolved = InterningDecoder::new().member(&mut b, &bytes, history);
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
                    let a = Assignment::decode(&bytes).unwrap();
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
