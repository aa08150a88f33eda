//! Reading a group's members into the problem builder, once for every source.
//!
//! * [`MemberSource`] is one member as a source gives it (pydantic-core's `Input` idea): its id,
//!   subscribed topics, history, generation, rack and static id, as the source holds them. The
//!   sources: a subscription decoded from wire bytes ([`crate::wire::WireMember`]) and a member
//!   a client library decoded ([`crate::wire::DecodedMember`], which the drop-in classes' reader
//!   of kafka-python and aiokafka objects fills).
//! * [`MemberReader::add`] checks and interns any source into a [`ProblemBuilder`]: the
//!   subscription interned (the previous member's tried first), the history's topics resolved
//!   (the previous group's topic tried first), partitions out of range dropped, then
//!   [`ProblemBuilder::add_member`]'s checks. Written once, monomorphized per source.
//! * [`repeated_ids`] and [`merge_repeated`]: a client may hand its leader a member id more than
//!   once (kafka-python gives a list of JoinGroup members). The id keeps its first position and
//!   takes the fields of its last entry, as a dict built by assignment (`d[id] = metadata`)
//!   would: the result, like aiokafka's mapping, has each id once.

use crate::hash::FastMap;
use crate::model::{InputError, PartId, ProblemBuilder, SubId, TopicId};

/// One member as a source gives it; [`MemberReader::add`] checks and interns it.
///
/// Sources that hold checked Rust values read infallibly (`Error = InputError`, every `Ok` folds
/// away); a source over another language's objects (the Python binding's `kassign.Member`) may
/// fail to read a field, and its error type carries the builder's [`InputError`] too.
pub trait MemberSource {
    /// What reading this source can fail with: the builder's checks ([`InputError`]) or the
    /// source's own.
    type Error: From<InputError>;
    /// What the reader remembers of the previous member's subscription: members whose keys are
    /// equal subscribe to the same topics (the names themselves, or an identity the source
    /// guarantees for as long as the members are borrowed). Unequal keys may still be equal
    /// subscriptions: the builder interns them by content.
    type TopicsKey<'a>: PartialEq + Copy
    where
        Self: 'a;
    /// The member id.
    fn id(&self) -> &str;
    /// The key of [`MemberSource::topics`] (see [`MemberSource::TopicsKey`]).
    fn topics_key(&self) -> Self::TopicsKey<'_>;
    /// The subscribed topic names, in the source's order (duplicates and unknown topics allowed:
    /// the builder drops them). Read only when the key differs from the previous member's.
    fn topics(&self) -> Result<impl AsRef<[&str]>, Self::Error>;
    /// How many (topic, partitions) groups [`MemberSource::owned_group`] has.
    fn owned_groups(&self) -> usize;
    /// History group `i`: a topic name and its partition indexes as given (unknown topics and
    /// partitions out of range are dropped by the reader).
    fn owned_group(&self, i: usize) -> Result<(&str, impl Iterator<Item = i64>), Self::Error>;
    /// How many partitions the history names (room reserved once).
    fn owned_hint(&self) -> usize {
        0
    }
    /// The generation of the history (-1 when unknown).
    fn generation(&self) -> i32;
    /// The member's rack (None or `""` for none).
    fn rack(&self) -> Result<Option<&str>, Self::Error>;
    /// The static member id (`group.instance.id`).
    fn group_instance_id(&self) -> Result<Option<&str>, Self::Error>;
}

/// Reads members of one [`MemberSource`] type into one builder, remembering the previous
/// member's subscription key and the previous history group's topic (members mostly subscribe
/// alike, and histories name the topic the previous group named, or the one after it). `'s` is
/// how long the members read stay borrowed.
pub struct MemberReader<'s, M: MemberSource + 's> {
    /// The previous member's subscription key and its subscription.
    last_sub: Option<(M::TopicsKey<'s>, SubId)>,
    /// The previous history group's topic name and what it resolved to.
    last_topic: Option<(&'s str, Option<TopicId>)>,
    /// The topic after the last one a history group resolved to (tried before the index).
    next_topic: usize,
}

impl<'s, M: MemberSource + 's> Default for MemberReader<'s, M> {
    fn default() -> Self {
        MemberReader {
            last_sub: None,
            last_topic: None,
            next_topic: 0,
        }
    }
}

impl<'s, M: MemberSource + 's> MemberReader<'s, M> {
    pub fn new() -> Self {
        MemberReader::default()
    }

    /// Check and intern `m` into `b`, after the members added before. Fields are read in this
    /// order, the first error returned: subscription, history, rack, static id, then
    /// [`ProblemBuilder::add_member`]'s checks.
    pub fn add(&mut self, b: &mut ProblemBuilder, m: &'s M) -> Result<(), M::Error> {
        let key = m.topics_key();
        let sub = match self.last_sub {
            Some((last, sub)) if last == key => sub,
            _ => {
                let sub = b.subscription(m.topics()?.as_ref());
                self.last_sub = Some((key, sub));
                sub
            }
        };
        let mut owned: Vec<PartId> = Vec::with_capacity(m.owned_hint());
        for i in 0..m.owned_groups() {
            let (topic, parts) = m.owned_group(i)?;
            let t = match self.last_topic {
                Some((name, t)) if name == topic => t,
                _ => {
                    let t = b.topic_bytes_near(self.next_topic, topic.as_bytes());
                    if let Some(t) = t {
                        self.next_topic = t as usize + 1;
                    }
                    self.last_topic = Some((topic, t));
                    t
                }
            };
            if let Some(t) = t {
                owned.extend(parts.filter_map(|p| b.partition(t, p)));
            }
        }
        let rack = m.rack()?;
        let group_instance_id = m.group_instance_id()?.map(str::to_string);
        Ok(b.add_member(m.id().to_string(), sub, owned, m.generation(), rack, group_instance_id)?)
    }
}

/// Where ids repeat in `ids` (in list order): `(first, later)` for every entry `later` whose id
/// was first given at `first`, in the order of `later`. Empty when every id is distinct.
pub fn repeated_ids<'s>(ids: impl IntoIterator<Item = &'s str>) -> Vec<(usize, usize)> {
    let ids = ids.into_iter();
    let mut first: FastMap<&str, usize> = FastMap::default();
    first.reserve(ids.size_hint().0);
    let mut repeats = Vec::new();
    for (i, id) in ids.enumerate() {
        match first.get(id) {
            Some(&at) => repeats.push((at, i)),
            None => {
                first.insert(id, i);
            }
        }
    }
    repeats
}

/// The member list with each repeated id once ([`repeated_ids`] gives `repeats`): every
/// `(first, later)` in turn puts `keep_first(entry at first, entry at later)` at `first` (the
/// caller keeps the first entry's id and takes the later entry's fields) and drops `later`. The
/// other entries keep their order. `repeats` indexes `items` (as [`repeated_ids`] of their ids
/// does).
pub fn merge_repeated<T>(items: Vec<T>, repeats: &[(usize, usize)], mut keep_first: impl FnMut(T, T) -> T) -> Vec<T> {
    if repeats.is_empty() {
        return items;
    }
    let mut taken: Vec<Option<T>> = items.into_iter().map(Some).collect();
    for &(at, later) in repeats {
        // `repeated_ids` names each later entry once, after its first: both are present.
        match (taken[at].take(), taken[later].take()) {
            (Some(first), Some(entry)) => taken[at] = Some(keep_first(first, entry)),
            (first, entry) => (taken[at], taken[later]) = (first, entry),
        }
    }
    taken.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_ids_have_no_repeats() {
        assert!(repeated_ids(["a", "b", "c"]).is_empty());
        assert_eq!(merge_repeated(vec![1, 2, 3], &[], |_, _| 0), vec![1, 2, 3]);
    }

    #[test]
    fn a_repeated_id_keeps_its_first_position_and_its_last_fields() {
        let ids = ["a", "b", "a", "c", "a", "b"];
        let repeats = repeated_ids(ids);
        assert_eq!(repeats, vec![(0, 2), (0, 4), (1, 5)]);
        // (id, fields): the fields are each entry's position.
        let items: Vec<(&str, usize)> = ids.iter().copied().zip(0..).collect();
        let merged = merge_repeated(items, &repeats, |first, later| (first.0, later.1));
        assert_eq!(merged, vec![("a", 4), ("b", 5), ("c", 3)]);
    }
}
