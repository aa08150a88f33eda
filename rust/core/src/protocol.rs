//! Kafka consumer-protocol wire formats (docs/wire.md).
//!
//! * [`Subscription`]: `ConsumerProtocolSubscription` v0-v3, the metadata a member sends in
//!   JoinGroup.
//! * [`Assignment`]: `ConsumerProtocolAssignment` v0-v3, what the leader hands back in SyncGroup.
//! * [`StickyUserData`]: the eager sticky assignor's user data (`StickyAssignorUserData` v0/v1).
//! * Cooperative-sticky user data (an int32 generation) and failover user data (an int32
//!   priority): [`encode_int32_user_data`], [`decode_generation`], [`decode_priority`].
//!
//! Classic (non-flexible) Kafka encoding: big-endian; a string is an int16 length and UTF-8 bytes;
//! bytes and arrays have an int32 length; `-1` marks null where a field is nullable.
//!
//! # Decoding rules
//!
//! Every read is bounds-checked and returns a typed [`DecodeError`] carrying the byte offset and
//! what was expected there; nothing panics. A declared array length is checked against the bytes
//! that remain (each element needs a known minimum number of bytes) before anything is allocated,
//! so an input can never make the decoder allocate much more than its own size.
//!
//! Choices where Java is silent or lenient (each deliberate):
//! * **Trailing bytes are ignored for every version**, as Java's `ConsumerProtocol` does (its
//!   generated readers never check for leftover bytes). Versions above 3 are read as v3, so a
//!   future version that appends fields still decodes; the decoded `version` keeps the number on
//!   the wire.
//! * **A negative version is an error** ([`DecodeError::UnsupportedVersion`]).
//! * **Only `-1` means null.** Java reads any negative length of a nullable field as null; here
//!   other negative lengths are [`DecodeError::NegativeLength`]. Java never writes them.
//! * **A null where the field is not nullable** (topics, topic names, partition arrays) is
//!   [`DecodeError::UnexpectedNull`], as in Java.
//! * **Strings must be valid UTF-8** ([`DecodeError::InvalidUtf8`]); Java substitutes U+FFFD, which
//!   would turn garbage into a topic name nobody has.
//!
//! # Encoding rules
//!
//! The subscription writer sorts topics and owned partitions, as Java does; an assignment keeps its
//! partitions grouped by topic in order of first appearance (Java does not sort them either).
//! Writing an older version drops the newer fields silently, as Java does. Strings longer than
//! 32767 bytes, or versions outside 0..=3, are an [`EncodeError`].

use std::fmt;

/// The highest subscription/assignment version this module writes (and reads natively).
pub const MAX_VERSION: i16 = 3;

// ------------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------------

/// Why some bytes could not be decoded. `offset` is where the offending item starts; `expected`
/// names it (e.g. `"subscription.topics[] (string)"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The input ends before a fixed-size item or a string/bytes body.
    Truncated {
        offset: usize,
        expected: &'static str,
        needed: usize,
        available: usize,
    },
    /// A length prefix is negative and is not the null marker of a nullable field.
    NegativeLength {
        offset: usize,
        expected: &'static str,
        length: i32,
    },
    /// A length of `-1` (null) in a field that is not nullable.
    UnexpectedNull { offset: usize, expected: &'static str },
    /// An array declares more elements than the remaining input could hold, even at the smallest
    /// possible element size. Detected before allocating.
    LengthExceedsInput {
        offset: usize,
        expected: &'static str,
        length: usize,
        min_bytes: usize,
        available: usize,
    },
    /// A string is not valid UTF-8.
    InvalidUtf8 { offset: usize, expected: &'static str },
    /// The message's version is negative.
    UnsupportedVersion {
        offset: usize,
        expected: &'static str,
        version: i16,
    },
}

impl DecodeError {
    /// Byte offset (from the start of the input) of the item that failed.
    pub fn offset(&self) -> usize {
        match *self {
            DecodeError::Truncated { offset, .. }
            | DecodeError::NegativeLength { offset, .. }
            | DecodeError::UnexpectedNull { offset, .. }
            | DecodeError::LengthExceedsInput { offset, .. }
            | DecodeError::InvalidUtf8 { offset, .. }
            | DecodeError::UnsupportedVersion { offset, .. } => offset,
        }
    }

    /// What the decoder expected at [`offset`](Self::offset).
    pub fn expected(&self) -> &'static str {
        match *self {
            DecodeError::Truncated { expected, .. }
            | DecodeError::NegativeLength { expected, .. }
            | DecodeError::UnexpectedNull { expected, .. }
            | DecodeError::LengthExceedsInput { expected, .. }
            | DecodeError::InvalidUtf8 { expected, .. }
            | DecodeError::UnsupportedVersion { expected, .. } => expected,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { offset, expected, needed, available } => write!(
                f,
                "truncated input at byte {offset}: expected {expected} ({needed} bytes), only {available} left"
            ),
            DecodeError::NegativeLength { offset, expected, length } => {
                write!(f, "invalid length {length} at byte {offset} for {expected}")
            }
            DecodeError::UnexpectedNull { offset, expected } => {
                write!(f, "null (length -1) at byte {offset} for non-nullable {expected}")
            }
            DecodeError::LengthExceedsInput { offset, expected, length, min_bytes, available } => write!(
                f,
                "length {length} at byte {offset} for {expected} needs at least {min_bytes} bytes, only {available} left"
            ),
            DecodeError::InvalidUtf8 { offset, expected } => {
                write!(f, "invalid UTF-8 at byte {offset} in {expected}")
            }
            DecodeError::UnsupportedVersion { offset, expected, version } => {
                write!(f, "unsupported {expected} {version} at byte {offset} (must be >= 0)")
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// Why a value cannot be written in the classic encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// A string is longer than the int16 length prefix allows (32767 bytes).
    StringTooLong { field: &'static str, len: usize },
    /// An array or byte string is longer than the int32 length prefix allows.
    TooLong { field: &'static str, len: usize },
    /// The requested version is not one this module writes (0..=3).
    UnsupportedVersion { version: i16 },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::StringTooLong { field, len } => {
                write!(f, "{field}: string of {len} bytes exceeds the 32767-byte limit")
            }
            EncodeError::TooLong { field, len } => {
                write!(f, "{field}: {len} elements exceed the int32 length limit")
            }
            EncodeError::UnsupportedVersion { version } => {
                write!(f, "version: can only write versions 0..={MAX_VERSION}, got {version}")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

// ------------------------------------------------------------------------------------------------
// Reader / writer
// ------------------------------------------------------------------------------------------------

/// `bytes` as `str` if valid UTF-8. Topic names are almost always ASCII, and checking that
/// first is several times cheaper than the general validator on short strings (it showed as a
/// fifth of the leader's wire path on 1M partitions).
#[inline]
pub fn utf8(bytes: &[u8]) -> Option<&str> {
    if bytes.is_ascii() {
        // SAFETY: every ASCII byte sequence is valid UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(bytes) })
    } else {
        std::str::from_utf8(bytes).ok()
    }
}

/// A bounds-checked big-endian reader over a byte slice.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes consumed so far (the offset of the next read).
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The bytes not yet consumed (read them, then skip them with [`Reader::read_slice`]).
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    fn take(&mut self, n: usize, expected: &'static str) -> Result<&'a [u8], DecodeError> {
        self.take_at(self.pos, n, expected)
    }

    /// Take `n` bytes, reporting `offset` (the start of the enclosing item) on failure.
    fn take_at(&mut self, offset: usize, n: usize, expected: &'static str) -> Result<&'a [u8], DecodeError> {
        let available = self.remaining();
        if n > available {
            return Err(DecodeError::Truncated {
                offset,
                expected,
                needed: n,
                available,
            });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    pub fn read_i16(&mut self, expected: &'static str) -> Result<i16, DecodeError> {
        let b = self.take(2, expected)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    pub fn read_i32(&mut self, expected: &'static str) -> Result<i32, DecodeError> {
        let b = self.take(4, expected)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn str_bytes(&mut self, offset: usize, len: usize, expected: &'static str) -> Result<&'a [u8], DecodeError> {
        // The whole item (prefix + body) starts at `offset`; report truncation there.
        let available = self.remaining();
        if len > available {
            return Err(DecodeError::Truncated {
                offset,
                expected,
                needed: 2 + len,
                available: 2 + available,
            });
        }
        self.take_at(offset, len, expected)
    }

    fn str_body(&mut self, offset: usize, len: usize, expected: &'static str) -> Result<&'a str, DecodeError> {
        let body = self.str_bytes(offset, len, expected)?;
        utf8(body).ok_or(DecodeError::InvalidUtf8 { offset, expected })
    }

    /// The body of a non-nullable string, every check of [`Reader::read_str`] made except
    /// UTF-8 validity (for callers that resolve the bytes against known names first), and the
    /// offset at which the string starts (for [`DecodeError::InvalidUtf8`]).
    pub fn read_str_bytes(&mut self, expected: &'static str) -> Result<(&'a [u8], usize), DecodeError> {
        let offset = self.pos;
        let len = self.read_i16(expected)?;
        match len {
            -1 => Err(DecodeError::UnexpectedNull { offset, expected }),
            n if n < 0 => Err(DecodeError::NegativeLength {
                offset,
                expected,
                length: n as i32,
            }),
            n => Ok((self.str_bytes(offset, n as usize, expected)?, offset)),
        }
    }

    /// A non-nullable string, borrowed from the input.
    pub fn read_str(&mut self, expected: &'static str) -> Result<&'a str, DecodeError> {
        let (body, offset) = self.read_str_bytes(expected)?;
        utf8(body).ok_or(DecodeError::InvalidUtf8 { offset, expected })
    }

    /// A non-nullable string.
    pub fn read_string(&mut self, expected: &'static str) -> Result<String, DecodeError> {
        self.read_str(expected).map(str::to_owned)
    }

    /// A nullable string (`-1` = null), borrowed from the input.
    pub fn read_nullable_str(&mut self, expected: &'static str) -> Result<Option<&'a str>, DecodeError> {
        let offset = self.pos;
        let len = self.read_i16(expected)?;
        match len {
            -1 => Ok(None),
            n if n < 0 => Err(DecodeError::NegativeLength {
                offset,
                expected,
                length: n as i32,
            }),
            n => self.str_body(offset, n as usize, expected).map(Some),
        }
    }

    /// A nullable string (`-1` = null).
    pub fn read_nullable_string(&mut self, expected: &'static str) -> Result<Option<String>, DecodeError> {
        Ok(self.read_nullable_str(expected)?.map(str::to_owned))
    }

    /// Nullable bytes (`-1` = null), borrowed from the input.
    pub fn read_nullable_byte_slice(&mut self, expected: &'static str) -> Result<Option<&'a [u8]>, DecodeError> {
        let offset = self.pos;
        let len = self.read_i32(expected)?;
        match len {
            -1 => Ok(None),
            n if n < 0 => Err(DecodeError::NegativeLength {
                offset,
                expected,
                length: n,
            }),
            n => {
                let n = n as usize;
                let available = self.remaining();
                if n > available {
                    return Err(DecodeError::Truncated {
                        offset,
                        expected,
                        needed: 4 + n,
                        available: 4 + available,
                    });
                }
                Ok(Some(self.take_at(offset, n, expected)?))
            }
        }
    }

    /// Nullable bytes (`-1` = null).
    pub fn read_nullable_bytes(&mut self, expected: &'static str) -> Result<Option<Vec<u8>>, DecodeError> {
        Ok(self.read_nullable_byte_slice(expected)?.map(<[u8]>::to_vec))
    }

    /// `n` raw bytes.
    pub fn read_slice(&mut self, n: usize, expected: &'static str) -> Result<&'a [u8], DecodeError> {
        self.take(n, expected)
    }

    /// The length of a non-nullable array whose elements take at least `min_elem_bytes` each.
    /// Fails, before anything is allocated, when the rest of the input cannot hold that many.
    pub fn read_array_len(&mut self, expected: &'static str, min_elem_bytes: usize) -> Result<usize, DecodeError> {
        let offset = self.pos;
        let len = self.read_i32(expected)?;
        match len {
            -1 => Err(DecodeError::UnexpectedNull { offset, expected }),
            n if n < 0 => Err(DecodeError::NegativeLength {
                offset,
                expected,
                length: n,
            }),
            n => {
                let n = n as usize;
                let min_bytes = n.saturating_mul(min_elem_bytes.max(1));
                let available = self.remaining();
                if min_bytes > available {
                    return Err(DecodeError::LengthExceedsInput {
                        offset,
                        expected,
                        length: n,
                        min_bytes,
                        available,
                    });
                }
                Ok(n)
            }
        }
    }
}

/// A big-endian writer for the classic encoding.
#[derive(Clone, Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    pub fn new() -> Self {
        Writer::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        Writer {
            buf: Vec::with_capacity(n),
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    pub fn write_i16(&mut self, v: i16) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn write_i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    pub fn write_string(&mut self, s: &str, field: &'static str) -> Result<(), EncodeError> {
        let len = i16::try_from(s.len()).map_err(|_| EncodeError::StringTooLong { field, len: s.len() })?;
        self.write_i16(len);
        self.buf.extend_from_slice(s.as_bytes());
        Ok(())
    }

    pub fn write_nullable_string(&mut self, s: Option<&str>, field: &'static str) -> Result<(), EncodeError> {
        match s {
            None => {
                self.write_i16(-1);
                Ok(())
            }
            Some(s) => self.write_string(s, field),
        }
    }

    pub fn write_nullable_bytes(&mut self, b: Option<&[u8]>, field: &'static str) -> Result<(), EncodeError> {
        match b {
            None => self.write_i32(-1),
            Some(b) => {
                self.write_array_len(b.len(), field)?;
                self.buf.extend_from_slice(b);
            }
        }
        Ok(())
    }

    pub fn write_array_len(&mut self, len: usize, field: &'static str) -> Result<(), EncodeError> {
        let n = i32::try_from(len).map_err(|_| EncodeError::TooLong { field, len })?;
        self.write_i32(n);
        Ok(())
    }
}

// ------------------------------------------------------------------------------------------------
// Shared pieces
// ------------------------------------------------------------------------------------------------

/// One topic and some of its partition indexes: the `{topic string, partitions []int32}` element
/// shared by owned partitions, assignments and sticky user data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicPartitions {
    pub topic: String,
    pub partitions: Vec<i32>,
}

/// Smallest encoded `TopicPartitions`: an empty name (2 bytes) and an empty array (4 bytes).
const MIN_TOPIC_PARTITIONS_BYTES: usize = 6;

/// The partitions of one topic as they sit on the wire: big-endian int32s, read on demand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionsRef<'a> {
    bytes: &'a [u8],
}

impl<'a> PartitionsRef<'a> {
    pub fn len(&self) -> usize {
        self.bytes.len() / 4
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = i32> + 'a {
        self.bytes
            .chunks_exact(4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// One topic and some of its partitions, borrowed from the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopicPartitionsRef<'a> {
    pub topic: &'a str,
    pub partitions: PartitionsRef<'a>,
}

impl TopicPartitionsRef<'_> {
    pub fn to_owned(&self) -> TopicPartitions {
        TopicPartitions {
            topic: self.topic.to_owned(),
            partitions: self.partitions.iter().collect(),
        }
    }
}

fn read_topic_partitions_ref<'a>(
    r: &mut Reader<'a>,
    array: &'static str,
    topic: &'static str,
    partitions: &'static str,
) -> Result<Vec<TopicPartitionsRef<'a>>, DecodeError> {
    let n = r.read_array_len(array, MIN_TOPIC_PARTITIONS_BYTES)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let topic = r.read_str(topic)?;
        let m = r.read_array_len(partitions, 4)?;
        let bytes = r.read_slice(4 * m, partitions)?;
        out.push(TopicPartitionsRef {
            topic,
            partitions: PartitionsRef { bytes },
        });
    }
    Ok(out)
}

fn owned_groups(groups: &[TopicPartitionsRef<'_>]) -> Vec<TopicPartitions> {
    groups.iter().map(TopicPartitionsRef::to_owned).collect()
}

fn write_topic_partitions(
    w: &mut Writer,
    groups: &[TopicPartitions],
    array: &'static str,
    topic: &'static str,
    partitions: &'static str,
) -> Result<(), EncodeError> {
    w.write_array_len(groups.len(), array)?;
    for g in groups {
        w.write_string(&g.topic, topic)?;
        w.write_array_len(g.partitions.len(), partitions)?;
        for &p in &g.partitions {
            w.write_i32(p);
        }
    }
    Ok(())
}

/// Group (topic, partition) pairs by topic in order of first appearance, keeping each topic's
/// partitions in the given order (the assignment writer's layout).
pub fn group_by_first_appearance<S: AsRef<str>>(pairs: &[(S, i32)]) -> Vec<TopicPartitions> {
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut out: Vec<TopicPartitions> = Vec::new();
    for (topic, p) in pairs {
        let topic = topic.as_ref();
        let i = *index.entry(topic).or_insert_with(|| {
            out.push(TopicPartitions {
                topic: topic.to_owned(),
                partitions: Vec::new(),
            });
            out.len() - 1
        });
        out[i].partitions.push(*p);
    }
    out
}

/// Sort by (topic, partition) and group by topic (the subscription and sticky writers' layout).
/// Duplicates are kept: the writer is lossless, the readers accept any order.
pub fn group_sorted<S: AsRef<str>>(pairs: &[(S, i32)]) -> Vec<TopicPartitions> {
    let mut sorted: Vec<(&str, i32)> = pairs.iter().map(|(t, p)| (t.as_ref(), *p)).collect();
    sorted.sort_unstable();
    let mut out: Vec<TopicPartitions> = Vec::new();
    for (topic, p) in sorted {
        match out.last_mut() {
            Some(last) if last.topic == topic => last.partitions.push(p),
            _ => out.push(TopicPartitions {
                topic: topic.to_owned(),
                partitions: vec![p],
            }),
        }
    }
    out
}

/// Flatten groups back into (topic, partition) pairs, in order.
pub fn flatten(groups: &[TopicPartitions]) -> Vec<(&str, i32)> {
    groups
        .iter()
        .flat_map(|g| g.partitions.iter().map(move |&p| (g.topic.as_str(), p)))
        .collect()
}

/// Whether groups are in the writers' layout already: topics strictly increasing, partitions
/// non-decreasing within a topic.
fn is_sorted_grouping(groups: &[TopicPartitions]) -> bool {
    groups.windows(2).all(|w| w[0].topic < w[1].topic)
        && groups.iter().all(|g| g.partitions.windows(2).all(|w| w[0] <= w[1]))
}

/// The groups in the writers' layout: borrowed when already sorted (one linear check), sorted and
/// regrouped otherwise.
fn sort_groups(groups: &[TopicPartitions]) -> std::borrow::Cow<'_, [TopicPartitions]> {
    if is_sorted_grouping(groups) {
        std::borrow::Cow::Borrowed(groups)
    } else {
        std::borrow::Cow::Owned(group_sorted(&flatten(groups)))
    }
}

fn read_version(r: &mut Reader<'_>, expected: &'static str) -> Result<i16, DecodeError> {
    let offset = r.position();
    let version = r.read_i16(expected)?;
    if version < 0 {
        return Err(DecodeError::UnsupportedVersion {
            offset,
            expected,
            version,
        });
    }
    Ok(version)
}

fn check_write_version(version: i16) -> Result<(), EncodeError> {
    if (0..=MAX_VERSION).contains(&version) {
        Ok(())
    } else {
        Err(EncodeError::UnsupportedVersion { version })
    }
}

// ------------------------------------------------------------------------------------------------
// Subscription
// ------------------------------------------------------------------------------------------------

/// `ConsumerProtocolSubscription` v0-v3.
///
/// Fields a version lacks take their defaults when decoding (`owned_partitions` empty,
/// `generation` -1, `rack` None) and are dropped when encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscription {
    /// The version on the wire (decoding) or the version to write (encoding, 0..=3).
    pub version: i16,
    pub topics: Vec<String>,
    pub user_data: Option<Vec<u8>>,
    /// v1+.
    pub owned_partitions: Vec<TopicPartitions>,
    /// v2+; -1 when absent. Java's reader treats any negative value as absent.
    pub generation: i32,
    /// v3+; Java's reader treats `""` like None.
    pub rack: Option<String>,
}

impl Default for Subscription {
    fn default() -> Self {
        Subscription {
            version: MAX_VERSION,
            topics: Vec::new(),
            user_data: None,
            owned_partitions: Vec::new(),
            generation: -1,
            rack: None,
        }
    }
}

/// A subscription borrowed from its bytes (no copy of names or partition arrays): the leader's
/// path reads every member's subscription this way. Same rules and errors as
/// [`Subscription::decode`], which is built on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionRef<'a> {
    pub version: i16,
    pub topics: Vec<&'a str>,
    pub user_data: Option<&'a [u8]>,
    pub owned_partitions: Vec<TopicPartitionsRef<'a>>,
    pub generation: i32,
    pub rack: Option<&'a str>,
}

impl<'a> SubscriptionRef<'a> {
    /// Decode a subscription. Versions above 3 are read as v3; trailing bytes are ignored.
    pub fn decode(data: &'a [u8]) -> Result<SubscriptionRef<'a>, DecodeError> {
        let mut r = Reader::new(data);
        let version = read_version(&mut r, "subscription version (int16)")?;
        // Every topic name takes at least its 2-byte length.
        let n = r.read_array_len("subscription.topics (array)", 2)?;
        let mut topics = Vec::with_capacity(n);
        for _ in 0..n {
            topics.push(r.read_str("subscription.topics[] (string)")?);
        }
        let user_data = r.read_nullable_byte_slice("subscription.user_data (bytes)")?;
        let owned_partitions = if version >= 1 {
            read_topic_partitions_ref(
                &mut r,
                "subscription.owned_partitions (array)",
                "subscription.owned_partitions[].topic (string)",
                "subscription.owned_partitions[].partitions (int32 array)",
            )?
        } else {
            Vec::new()
        };
        let generation = if version >= 2 {
            r.read_i32("subscription.generation_id (int32)")?
        } else {
            -1
        };
        let rack = if version >= 3 {
            r.read_nullable_str("subscription.rack_id (string)")?
        } else {
            None
        };
        Ok(SubscriptionRef {
            version,
            topics,
            user_data,
            owned_partitions,
            generation,
            rack,
        })
    }
}

impl Subscription {
    /// Decode a subscription. Versions above 3 are read as v3; trailing bytes are ignored.
    pub fn decode(data: &[u8]) -> Result<Subscription, DecodeError> {
        let s = SubscriptionRef::decode(data)?;
        Ok(Subscription {
            version: s.version,
            topics: s.topics.iter().map(|t| t.to_string()).collect(),
            user_data: s.user_data.map(<[u8]>::to_vec),
            owned_partitions: owned_groups(&s.owned_partitions),
            generation: s.generation,
            rack: s.rack.map(str::to_owned),
        })
    }

    /// Encode at `self.version` (0..=3): topics sorted, owned partitions sorted by
    /// (topic, partition) and grouped by topic; fields newer than the version are dropped.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let version = self.version;
        check_write_version(version)?;
        let mut w = Writer::with_capacity(64);
        w.write_i16(version);
        let mut topics: Vec<&str> = self.topics.iter().map(String::as_str).collect();
        topics.sort_unstable();
        w.write_array_len(topics.len(), "topics")?;
        for t in topics {
            w.write_string(t, "topics")?;
        }
        w.write_nullable_bytes(self.user_data.as_deref(), "user_data")?;
        if version >= 1 {
            let owned = sort_groups(&self.owned_partitions);
            write_topic_partitions(
                &mut w,
                &owned,
                "owned_partitions",
                "owned_partitions",
                "owned_partitions",
            )?;
        }
        if version >= 2 {
            w.write_i32(self.generation);
        }
        if version >= 3 {
            w.write_nullable_string(self.rack.as_deref(), "rack")?;
        }
        Ok(w.into_bytes())
    }
}

// ------------------------------------------------------------------------------------------------
// Assignment
// ------------------------------------------------------------------------------------------------

/// `ConsumerProtocolAssignment` v0-v3 (every version has the same body).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    pub version: i16,
    /// Grouped by topic, written in the order given (not sorted, as in Java).
    pub partitions: Vec<TopicPartitions>,
    pub user_data: Option<Vec<u8>>,
}

impl Default for Assignment {
    fn default() -> Self {
        Assignment {
            version: MAX_VERSION,
            partitions: Vec::new(),
            user_data: None,
        }
    }
}

/// An assignment borrowed from its bytes (see [`SubscriptionRef`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssignmentRef<'a> {
    pub version: i16,
    pub partitions: Vec<TopicPartitionsRef<'a>>,
    pub user_data: Option<&'a [u8]>,
}

impl<'a> AssignmentRef<'a> {
    /// Decode an assignment. Versions above 3 are read as v3; trailing bytes are ignored.
    pub fn decode(data: &'a [u8]) -> Result<AssignmentRef<'a>, DecodeError> {
        let mut r = Reader::new(data);
        let version = read_version(&mut r, "assignment version (int16)")?;
        let partitions = read_topic_partitions_ref(
            &mut r,
            "assignment.assigned_partitions (array)",
            "assignment.assigned_partitions[].topic (string)",
            "assignment.assigned_partitions[].partitions (int32 array)",
        )?;
        let user_data = r.read_nullable_byte_slice("assignment.user_data (bytes)")?;
        Ok(AssignmentRef {
            version,
            partitions,
            user_data,
        })
    }
}

impl Assignment {
    /// Decode an assignment. Versions above 3 are read as v3; trailing bytes are ignored.
    pub fn decode(data: &[u8]) -> Result<Assignment, DecodeError> {
        let a = AssignmentRef::decode(data)?;
        Ok(Assignment {
            version: a.version,
            partitions: owned_groups(&a.partitions),
            user_data: a.user_data.map(<[u8]>::to_vec),
        })
    }

    /// Encode at `self.version` (0..=3), groups in the order given.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        check_write_version(self.version)?;
        let mut w = Writer::with_capacity(64);
        w.write_i16(self.version);
        write_topic_partitions(&mut w, &self.partitions, "partitions", "partitions", "partitions")?;
        w.write_nullable_bytes(self.user_data.as_deref(), "user_data")?;
        Ok(w.into_bytes())
    }
}

// ------------------------------------------------------------------------------------------------
// User data
// ------------------------------------------------------------------------------------------------

/// The eager sticky assignor's user data (`StickyAssignorUserData`, no version prefix):
/// `[] {topic string, partitions []int32}`, then (v1) an int32 generation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StickyUserData {
    pub partitions: Vec<TopicPartitions>,
    /// `Some` for v1, `None` for v0.
    pub generation: Option<i32>,
}

/// Sticky user data borrowed from its bytes (see [`SubscriptionRef`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StickyUserDataRef<'a> {
    pub partitions: Vec<TopicPartitionsRef<'a>>,
    pub generation: Option<i32>,
}

impl<'a> StickyUserDataRef<'a> {
    /// Decode as Java does: try v1 (partitions then generation), then v0 (partitions only);
    /// trailing bytes are ignored. Empty input means no history (`[]`, `None`), as in Java.
    pub fn decode(data: &'a [u8]) -> Result<StickyUserDataRef<'a>, DecodeError> {
        if data.is_empty() {
            return Ok(StickyUserDataRef::default());
        }
        let mut r = Reader::new(data);
        let partitions = read_topic_partitions_ref(
            &mut r,
            "sticky_user_data.partitions (array)",
            "sticky_user_data.partitions[].topic (string)",
            "sticky_user_data.partitions[].partitions (int32 array)",
        )?;
        // v1 parses iff four more bytes follow; otherwise v0 parses the same prefix.
        let generation = if r.remaining() >= 4 {
            Some(r.read_i32("sticky_user_data.generation (int32)")?)
        } else {
            None
        };
        Ok(StickyUserDataRef { partitions, generation })
    }
}

impl StickyUserData {
    /// Decode as Java does: try v1 (partitions then generation), then v0 (partitions only);
    /// trailing bytes are ignored. Empty input means no history (`[]`, `None`), as in Java.
    pub fn decode(data: &[u8]) -> Result<StickyUserData, DecodeError> {
        let u = StickyUserDataRef::decode(data)?;
        Ok(StickyUserData {
            partitions: owned_groups(&u.partitions),
            generation: u.generation,
        })
    }

    /// Encode v1 (when `generation` is `Some`) or v0, topics and partitions sorted.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut w = Writer::with_capacity(32);
        let groups = sort_groups(&self.partitions);
        write_topic_partitions(&mut w, &groups, "partitions", "partitions", "partitions")?;
        if let Some(g) = self.generation {
            w.write_i32(g);
        }
        Ok(w.into_bytes())
    }
}

/// Four big-endian bytes: cooperative-sticky's generation or failover's priority.
pub fn encode_int32_user_data(value: i32) -> [u8; 4] {
    value.to_be_bytes()
}

/// Cooperative-sticky user data: the first four bytes as a big-endian int32 generation (Java
/// reads them with `getInt`, so trailing bytes are ignored). Fewer than four bytes is an error;
/// Java then uses generation -1.
pub fn decode_generation(data: &[u8]) -> Result<i32, DecodeError> {
    Reader::new(data).read_i32("cooperative user data generation (int32)")
}

/// Failover user data: exactly four bytes, a big-endian int32 priority; `None` (lowest priority)
/// for any other length. Stricter than the generation: the `failover` strategy ranks such a member
/// last, and this decoder must agree with it (the streamthoughts original reads unchecked).
pub fn decode_priority(data: &[u8]) -> Option<i32> {
    let bytes: [u8; 4] = data.try_into().ok()?;
    Some(i32::from_be_bytes(bytes))
}

// ------------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn tp(topic: &str, partitions: &[i32]) -> TopicPartitions {
        TopicPartitions {
            topic: topic.to_string(),
            partitions: partitions.to_vec(),
        }
    }

    /// The worked example of docs/wire.md.
    const WORKED: &str = "00 03 | 00 00 00 01 00 01 74 | 00 00 00 04 00 00 00 05 | \
        00 00 00 01 00 01 74 00 00 00 02 00 00 00 00 00 00 00 01 | 00 00 00 05 | 00 02 72 31";

    fn worked() -> Subscription {
        Subscription {
            version: 3,
            topics: vec!["t".into()],
            user_data: Some(vec![0, 0, 0, 5]),
            owned_partitions: vec![tp("t", &[0, 1])],
            generation: 5,
            rack: Some("r1".into()),
        }
    }

    #[test]
    fn worked_example_encodes_exactly() {
        assert_eq!(worked().encode().unwrap(), hex(WORKED));
    }

    #[test]
    fn worked_example_decodes() {
        assert_eq!(Subscription::decode(&hex(WORKED)).unwrap(), worked());
        assert_eq!(decode_generation(&worked().user_data.unwrap()).unwrap(), 5);
    }

    #[test]
    fn writer_sorts_topics_and_owned_partitions() {
        let s = Subscription {
            version: 1,
            topics: vec!["b".into(), "a".into()],
            user_data: None,
            owned_partitions: vec![tp("b", &[1, 0]), tp("a", &[2])],
            ..Default::default()
        };
        let expected = hex("00 01 | 00 00 00 02 00 01 61 00 01 62 | ff ff ff ff | 00 00 00 02 \
             00 01 61 00 00 00 01 00 00 00 02 | 00 01 62 00 00 00 02 00 00 00 00 00 00 00 01");
        assert_eq!(s.encode().unwrap(), expected);
    }

    #[test]
    fn older_versions_drop_newer_fields() {
        let mut s = worked();
        // v0: topics, user data.
        s.version = 0;
        let v0 = hex("00 00 | 00 00 00 01 00 01 74 | 00 00 00 04 00 00 00 05");
        assert_eq!(s.encode().unwrap(), v0);
        let d = Subscription::decode(&v0).unwrap();
        assert_eq!(
            (d.version, d.owned_partitions.len(), d.generation, d.rack),
            (0, 0, -1, None)
        );
        // v2: plus owned partitions and generation, no rack.
        s.version = 2;
        let v2 = hex("00 02 | 00 00 00 01 00 01 74 | 00 00 00 04 00 00 00 05 | \
             00 00 00 01 00 01 74 00 00 00 02 00 00 00 00 00 00 00 01 | 00 00 00 05");
        assert_eq!(s.encode().unwrap(), v2);
        let d = Subscription::decode(&v2).unwrap();
        assert_eq!((d.generation, d.rack.clone()), (5, None));
        assert_eq!(d.owned_partitions, vec![tp("t", &[0, 1])]);
    }

    #[test]
    fn higher_version_reads_as_v3_ignoring_trailing_bytes() {
        let mut b = hex(WORKED);
        b[1] = 5;
        b.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0x00]);
        let d = Subscription::decode(&b).unwrap();
        assert_eq!(d, Subscription { version: 5, ..worked() });
    }

    #[test]
    fn negative_version_is_an_error() {
        let mut b = hex(WORKED);
        b[0] = 0xff;
        b[1] = 0xff;
        assert!(matches!(
            Subscription::decode(&b),
            Err(DecodeError::UnsupportedVersion {
                offset: 0,
                version: -1,
                ..
            })
        ));
        assert!(matches!(
            Assignment::decode(&hex("80 00 00 00 00 00 ff ff ff ff")),
            Err(DecodeError::UnsupportedVersion { version: i16::MIN, .. })
        ));
    }

    #[test]
    fn assignment_reference_vector() {
        let b = hex("00 03 | 00 00 00 01 00 01 74 00 00 00 02 00 00 00 00 00 00 00 01 | ff ff ff ff");
        let a = Assignment {
            version: 3,
            partitions: vec![tp("t", &[0, 1])],
            user_data: None,
        };
        assert_eq!(a.encode().unwrap(), b);
        assert_eq!(Assignment::decode(&b).unwrap(), a);
    }

    #[test]
    fn assignment_keeps_first_appearance_order() {
        let groups = group_by_first_appearance(&[("b", 3), ("a", 1), ("b", 0)]);
        assert_eq!(groups, vec![tp("b", &[3, 0]), tp("a", &[1])]);
        let a = Assignment {
            version: 0,
            partitions: groups,
            user_data: Some(vec![0xab]),
        };
        let expected = hex("00 00 | 00 00 00 02 | 00 01 62 00 00 00 02 00 00 00 03 00 00 00 00 | \
             00 01 61 00 00 00 01 00 00 00 01 | 00 00 00 01 ab");
        assert_eq!(a.encode().unwrap(), expected);
    }

    #[test]
    fn sticky_user_data_reference_vectors() {
        let v1 = hex("00 00 00 01 | 00 01 74 | 00 00 00 02 | 00 00 00 00 | 00 00 00 01 | 00 00 00 05");
        let u = StickyUserData {
            partitions: vec![tp("t", &[0, 1])],
            generation: Some(5),
        };
        assert_eq!(u.encode().unwrap(), v1);
        assert_eq!(StickyUserData::decode(&v1).unwrap(), u);
        // v0: same without the generation.
        let v0 = &v1[..v1.len() - 4];
        let u0 = StickyUserData {
            partitions: vec![tp("t", &[0, 1])],
            generation: None,
        };
        assert_eq!(
            StickyUserData {
                generation: None,
                ..u.clone()
            }
            .encode()
            .unwrap(),
            v0
        );
        assert_eq!(StickyUserData::decode(v0).unwrap(), u0);
        // v0 + 00 00 00 09 + one byte reads as generation 9 (Java's StickyAssignorUserData reader ignores trailing bytes; docs/wire.md).
        let mut odd = v0.to_vec();
        odd.extend_from_slice(&[0, 0, 0, 9, 0x77]);
        assert_eq!(StickyUserData::decode(&odd).unwrap().generation, Some(9));
        // v0 plus fewer than four bytes: v1 fails, v0 succeeds.
        let mut short = v0.to_vec();
        short.extend_from_slice(&[0, 0, 9]);
        assert_eq!(StickyUserData::decode(&short).unwrap().generation, None);
        // Empty means no history.
        assert_eq!(StickyUserData::decode(&[]).unwrap(), StickyUserData::default());
    }

    #[test]
    fn sticky_writer_sorts_by_topic() {
        let u = StickyUserData {
            partitions: vec![tp("b", &[0]), tp("a", &[1])],
            generation: Some(-1),
        };
        let expected =
            hex("00 00 00 02 | 00 01 61 00 00 00 01 00 00 00 01 | 00 01 62 00 00 00 01 00 00 00 00 | ff ff ff ff");
        assert_eq!(u.encode().unwrap(), expected);
    }

    #[test]
    fn int32_user_data() {
        assert_eq!(encode_int32_user_data(-1), [0xff; 4]);
        assert_eq!(encode_int32_user_data(10), [0, 0, 0, 0x0a]);
        assert_eq!(decode_generation(&[0xff, 0xff, 0xff, 0xff]).unwrap(), -1);
        assert_eq!(decode_generation(&[0, 0, 0, 5, 1]).unwrap(), 5);
        assert!(matches!(
            decode_generation(&[0, 0, 5]),
            Err(DecodeError::Truncated {
                offset: 0,
                needed: 4,
                available: 3,
                ..
            })
        ));
        assert_eq!(decode_priority(&[0, 0, 0, 0x0a]), Some(10));
        assert_eq!(decode_priority(&[0x80, 0, 0, 0]), Some(i32::MIN));
        assert_eq!(decode_priority(&[0, 0]), None);
        assert_eq!(decode_priority(&[0, 0, 0, 0x0a, 0]), None);
        assert_eq!(decode_priority(&[]), None);
    }

    #[test]
    fn truncation_reports_offset_and_item() {
        let full = hex(WORKED);
        // Cut inside the generation (starts at byte 36).
        let e = Subscription::decode(&full[..38]).unwrap_err();
        assert_eq!(
            e,
            DecodeError::Truncated {
                offset: 36,
                expected: "subscription.generation_id (int32)",
                needed: 4,
                available: 2
            }
        );
        // Cut inside the rack string body: the string item starts at byte 40.
        let e = Subscription::decode(&full[..43]).unwrap_err();
        assert_eq!(e.offset(), 40);
        assert_eq!(e.expected(), "subscription.rack_id (string)");
        // Every strict prefix fails (no field is optional within a version).
        for n in 0..full.len() {
            assert!(Subscription::decode(&full[..n]).is_err(), "prefix {n} decoded");
        }
    }

    #[test]
    fn huge_declared_lengths_fail_before_allocating() {
        // Topics array of 2^31 - 1 elements in a 20-byte input.
        let b = hex("00 03 7f ff ff ff 00 01 74 00 00 00 00 00 00 00 00 00 00 00");
        assert_eq!(
            Subscription::decode(&b).unwrap_err(),
            DecodeError::LengthExceedsInput {
                offset: 2,
                expected: "subscription.topics (array)",
                length: i32::MAX as usize,
                min_bytes: 2 * i32::MAX as usize,
                available: 14
            }
        );
        // 0x80000000 as an int32 is negative: a NegativeLength, not a null.
        let b = hex("00 03 80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
        assert!(matches!(
            Subscription::decode(&b),
            Err(DecodeError::NegativeLength { offset: 2, .. })
        ));
        // A partitions array too long for the input.
        let b = hex("00 00 00 00 00 01 00 01 74 10 00 00 00 00 00 00 01");
        assert!(matches!(
            Assignment::decode(&b),
            Err(DecodeError::LengthExceedsInput { offset: 9, .. })
        ));
        // User data bytes longer than the input.
        let b = hex("00 00 00 00 00 00 7f ff ff ff 00 00");
        assert!(matches!(
            Subscription::decode(&b),
            Err(DecodeError::Truncated {
                offset: 6,
                needed: 0x8000_0003,
                available: 6,
                ..
            })
        ));
    }

    #[test]
    fn null_and_negative_lengths() {
        // Null topics array: non-nullable.
        assert!(matches!(
            Subscription::decode(&hex("00 00 ff ff ff ff")),
            Err(DecodeError::UnexpectedNull { offset: 2, .. })
        ));
        // Null topic name.
        assert!(matches!(
            Subscription::decode(&hex("00 00 00 00 00 01 ff ff")),
            Err(DecodeError::UnexpectedNull { offset: 6, .. })
        ));
        // Negative (not -1) topic-name length.
        assert!(matches!(
            Subscription::decode(&hex("00 00 00 00 00 01 ff fe")),
            Err(DecodeError::NegativeLength {
                offset: 6,
                length: -2,
                ..
            })
        ));
        // user_data -2: Java would read null; we reject.
        assert!(matches!(
            Subscription::decode(&hex("00 00 00 00 00 00 ff ff ff fe")),
            Err(DecodeError::NegativeLength {
                offset: 6,
                length: -2,
                ..
            })
        ));
        // Null rack is fine.
        let s = Subscription::decode(&hex("00 03 00 00 00 00 ff ff ff ff 00 00 00 00 ff ff ff ff ff ff")).unwrap();
        assert_eq!((s.rack, s.generation, s.user_data), (None, -1, None));
        // Null partitions array in an assignment.
        assert!(matches!(
            Assignment::decode(&hex("00 00 00 00 00 01 00 01 74 ff ff ff ff")),
            Err(DecodeError::UnexpectedNull { offset: 9, .. })
        ));
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let b = hex("00 00 00 00 00 01 00 02 c3 28 ff ff ff ff");
        assert_eq!(
            Subscription::decode(&b).unwrap_err(),
            DecodeError::InvalidUtf8 {
                offset: 6,
                expected: "subscription.topics[] (string)"
            }
        );
    }

    #[test]
    fn encode_errors() {
        let long = "x".repeat(32768);
        let s = Subscription {
            topics: vec![long.clone()],
            ..Default::default()
        };
        assert_eq!(
            s.encode().unwrap_err(),
            EncodeError::StringTooLong {
                field: "topics",
                len: 32768
            }
        );
        let ok = Subscription {
            topics: vec!["x".repeat(32767)],
            ..Default::default()
        };
        assert_eq!(ok.encode().unwrap().len(), 2 + 4 + 2 + 32767 + 4 + 4 + 4 + 2);
        let s = Subscription {
            version: 4,
            ..Default::default()
        };
        assert_eq!(s.encode().unwrap_err(), EncodeError::UnsupportedVersion { version: 4 });
        let a = Assignment {
            version: -1,
            ..Default::default()
        };
        assert_eq!(a.encode().unwrap_err(), EncodeError::UnsupportedVersion { version: -1 });
    }

    #[test]
    fn error_messages_name_offset_and_item() {
        let e = Subscription::decode(&hex("00 03 00 00")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "truncated input at byte 2: expected subscription.topics (array) (4 bytes), only 2 left"
        );
    }

    // -------------------------------------------------------------------- properties

    fn topic() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-c]{1,3}",
            "[a-zA-Z0-9._-]{0,12}",
            any::<String>().prop_filter("fits int16", |s| s.len() <= 40),
        ]
    }

    fn groups() -> impl Strategy<Value = Vec<TopicPartitions>> {
        prop::collection::vec(
            (topic(), prop::collection::vec(any::<i32>(), 0..5))
                .prop_map(|(topic, partitions)| TopicPartitions { topic, partitions }),
            0..5,
        )
    }

    fn bytes() -> impl Strategy<Value = Option<Vec<u8>>> {
        prop::option::of(prop::collection::vec(any::<u8>(), 0..20))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn subscription_round_trip(
            version in 0i16..=3,
            topics in prop::collection::vec(topic(), 0..6),
            user_data in bytes(),
            owned in groups(),
            generation in any::<i32>(),
            rack in prop::option::of(topic()),
        ) {
            let s = Subscription { version, topics, user_data, owned_partitions: owned, generation, rack };
            let encoded = s.encode().unwrap();
            let d = Subscription::decode(&encoded).unwrap();
            // What the reader must see: sorted topics, fields the version lacks at defaults.
            let mut topics = s.topics.clone();
            topics.sort();
            let mut owned: Vec<(String, i32)> =
                flatten(&s.owned_partitions).into_iter().map(|(t, p)| (t.to_string(), p)).collect();
            owned.sort();
            let got: Vec<(String, i32)> =
                flatten(&d.owned_partitions).into_iter().map(|(t, p)| (t.to_string(), p)).collect();
            prop_assert_eq!(d.version, version);
            prop_assert_eq!(&d.topics, &topics);
            prop_assert_eq!(&d.user_data, &s.user_data);
            prop_assert_eq!(got, if version >= 1 { owned } else { vec![] });
            prop_assert_eq!(d.generation, if version >= 2 { s.generation } else { -1 });
            prop_assert_eq!(&d.rack, if version >= 3 { &s.rack } else { &None });
            // Owned partitions come back grouped: no topic repeats.
            let mut names: Vec<&str> = d.owned_partitions.iter().map(|g| g.topic.as_str()).collect();
            let before = names.len();
            names.dedup();
            prop_assert_eq!(names.len(), before);
            // Re-encoding the decoded message is a fixed point.
            prop_assert_eq!(d.encode().unwrap(), encoded.clone());
            // Trailing bytes and a higher version do not change the fields.
            let mut longer = encoded.clone();
            longer.extend_from_slice(&[1, 2, 3]);
            prop_assert_eq!(Subscription::decode(&longer).unwrap(), d.clone());
        }

        #[test]
        fn assignment_round_trip(version in 0i16..=3, partitions in groups(), user_data in bytes()) {
            let a = Assignment { version, partitions, user_data };
            let encoded = a.encode().unwrap();
            prop_assert_eq!(Assignment::decode(&encoded).unwrap(), a);
        }

        #[test]
        fn sticky_round_trip(partitions in groups(), generation in prop::option::of(any::<i32>())) {
            let u = StickyUserData { partitions, generation };
            let encoded = u.encode().unwrap();
            let d = StickyUserData::decode(&encoded).unwrap();
            let mut want: Vec<(&str, i32)> = flatten(&u.partitions);
            want.sort();
            prop_assert_eq!(flatten(&d.partitions), want);
            // An empty v0 message is the empty array (4 bytes), never empty input.
            prop_assert_eq!(d.generation, generation);
        }

        #[test]
        fn decoders_never_panic(data in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = Subscription::decode(&data);
            let _ = Assignment::decode(&data);
            let _ = StickyUserData::decode(&data);
            let _ = decode_generation(&data);
            let _ = decode_priority(&data);
        }

        #[test]
        fn decoded_messages_re_encode_and_decode_identically(data in prop::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(s) = Subscription::decode(&data) {
                if s.version <= MAX_VERSION {
                    let again = Subscription::decode(&s.encode().unwrap()).unwrap();
                    prop_assert_eq!(&again.topics.len(), &s.topics.len());
                    prop_assert_eq!(again.generation, s.generation);
                    prop_assert_eq!(again.rack, s.rack);
                }
            }
            if let Ok(a) = Assignment::decode(&data) {
                if a.version <= MAX_VERSION {
                    prop_assert_eq!(Assignment::decode(&a.encode().unwrap()).unwrap(), a);
                }
            }
        }
    }
}
