//! The drop-in classes' leader step (`kassign.kafka_python`, `kassign.aiokafka`): the members'
//! metadata as the client decoded it, read here in one call, never a `kassign.Member` per member
//! for the Rust strategies.
//!
//! This file reads the clients' objects and forwards: the history rule is
//! [`kassign_core::wire::history`], the assignment and its encoding [`kassign_core::wire::assign_decoded`].
//!
//! * kafka-python hands the leader a list of `JoinGroupResponseMember` (`member_id`,
//!   `group_instance_id`, `metadata`: a decoded `ConsumerProtocolSubscription` with `topics`,
//!   `user_data`, `owned_partitions` (entries with `topic` and `partitions`), `generation_id`,
//!   `rack_id`);
//! * aiokafka a mapping of member id to `ConsumerProtocolMemberMetadata` (`subscription`,
//!   `user_data`: it decodes v0 only, so no owned field, generation, rack or static id).

use std::ops::Range;
use std::str::FromStr;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyInt, PyList, PyMemoryView, PyString};

use crate::assign::{mapping_items, read_topics};
use crate::drop_in_fast::{self, ReadAttrs};
use crate::drop_in_owned::{owned_field, GroupTopic, Histories};
use crate::errors::run_detached;
use crate::errors::OrRaise;
use crate::member::{hash_names, repr, Member, OwnedGroup};
use crate::objects::{bytes_dict, dict_for, GilYield};
use kassign_core::members;
use kassign_core::model::FastMap;
use kassign_core::strategy::Strategy;
use kassign_core::wire::{self, DecodedMember, History, HistoryFrom};

/// The client whose objects are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Client {
    KafkaPython,
    Aiokafka,
}

impl Client {
    fn parse(name: &str) -> PyResult<Client> {
        match name {
            "kafka-python" => Ok(Client::KafkaPython),
            "aiokafka" => Ok(Client::Aiokafka),
            _ => Err(PyValueError::new_err(format!("client: unknown client {name:?}"))),
        }
    }
}

/// One member entry of the client: (member id, its metadata, its group instance id).
type Entry<'py> = (Bound<'py, PyAny>, Option<Bound<'py, PyAny>>, Option<Bound<'py, PyAny>>);

/// Replica racks, as `kassign.assign` checks them: (topic, partition, racks).
type RackList = Vec<(String, i64, Vec<String>)>;

/// One member's fields, read from the client's objects, its history by the strategy's rule.
struct MemberFields<'py> {
    id: Bound<'py, PyString>,
    /// Its topics: a range of [`ClientMembers::topics`].
    topics: Range<usize>,
    user_data: Option<Bound<'py, PyBytes>>,
    /// The history: (topic, partitions) groups of the call's [`Histories`], in the order given.
    owned: Range<usize>,
    generation: i32,
    rack: Option<Bound<'py, PyString>>,
    instance: Option<Bound<'py, PyString>>,
}

/// A non-empty str attribute value, else None.
fn nonempty_str<'py>(v: Option<Bound<'py, PyAny>>) -> Option<Bound<'py, PyString>> {
    let s = v?.cast_into::<PyString>().ok()?;
    match s.to_str() {
        Ok("") | Err(_) => None,
        Ok(_) => Some(s),
    }
}

/// The user data as `bytes` (bytearray and memoryview copied), anything else None.
fn user_data_bytes<'py>(py: Python<'py>, v: Option<Bound<'py, PyAny>>) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let Some(v) = v else { return Ok(None) };
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(Some(b.clone()));
    }
    if v.is_instance_of::<PyByteArray>() || v.is_instance_of::<PyMemoryView>() {
        let copied = py.get_type::<PyBytes>().call1((v,))?;
        return Ok(Some(copied.cast_into::<PyBytes>()?));
    }
    Ok(None)
}

/// Append the str items of a topic list to `out` (others skipped); a value that is not
/// iterable gives none, with a warning.
fn topic_list<'py>(
    id: &str,
    topics: Option<Bound<'py, PyAny>>,
    out: &mut Vec<Bound<'py, PyString>>,
    warn: &mut impl FnMut(String) -> PyResult<()>,
) -> PyResult<()> {
    let Some(topics) = topics else { return Ok(()) };
    if let Ok(list) = topics.cast::<PyList>() {
        out.extend(list.iter().filter_map(|t| t.cast_into::<PyString>().ok()));
        return Ok(());
    }
    match topics.try_iter() {
        Ok(iter) => {
            for t in iter {
                if let Ok(s) = t?.cast_into::<PyString>() {
                    out.push(s);
                }
            }
            Ok(())
        }
        Err(_) => warn(format!(
            "member {id}: unreadable topic list {}; treated as subscribing to nothing",
            repr(&topics)
        )),
    }
}

/// Every member read from the client's objects ([`read_members`]).
struct ClientMembers<'py> {
    members: Vec<MemberFields<'py>>,
    /// Every member's topics, a range of them per member ([`MemberFields::topics`]).
    topics: Vec<Bound<'py, PyString>>,
    hist: Histories<'py>,
}

/// Read every member of `members` (see the module doc), applying the history rule `kind`. A
/// member id given twice keeps its first position and its last metadata (as a dict built by
/// assignment). Warnings go to `warn` as they arise. The user data is read when the rule needs
/// it or `keep_user_data` asks for it (a Python strategy may read it: failover's priority).
fn read_members<'py>(
    py: Python<'py>,
    client: Client,
    kind: History,
    members: &Bound<'py, PyAny>,
    warn: &Bound<'py, PyAny>,
    keep_user_data: bool,
) -> PyResult<ClientMembers<'py>> {
    let mut hist = Histories::default();
    let mut names: Vec<Bound<'py, PyString>> = Vec::new();
    let mut emit = |msg: String| -> PyResult<()> { warn.call1((msg,)).map(|_| ()) };
    let mut attrs = ReadAttrs::new(
        py,
        match client {
            Client::KafkaPython => intern!(py, "topics"),
            Client::Aiokafka => intern!(py, "subscription"),
        },
    );
    let entries: Vec<Entry<'py>> = match client {
        Client::KafkaPython => {
            let mut out = Vec::new();
            for m in members.try_iter()? {
                let m = m?;
                let id = attrs.member_id.get(&m)?;
                let metadata = attrs.metadata.opt(&m)?;
                let instance = attrs.group_instance_id.opt(&m)?;
                out.push((id, metadata, instance));
            }
            out
        }
        Client::Aiokafka => mapping_items(members, "members: expected a mapping of member id to metadata")?
            .into_iter()
            .map(|(k, v)| (k, (!v.is_none()).then_some(v), None))
            .collect(),
    };
    let mut out: Vec<MemberFields<'py>> = Vec::with_capacity(entries.len());
    // Members mostly subscribe to one topic and hold one history group.
    names.reserve(entries.len());
    hist.groups.reserve(entries.len());
    hist.parts.reserve(entries.len());
    let mut gil = GilYield::new();
    let mut warnings = Vec::new();
    for (id, md, instance) in entries {
        let id = id.cast_into::<PyString>().map_err(|e| {
            PyTypeError::new_err(format!(
                "members: member ids must be str, got {}",
                repr(&e.into_inner())
            ))
        })?;
        let id_str = id.to_str()?;
        let first_topic = names.len();
        let mark = hist.mark();
        // The common case without Python calls (drop_in_fast), else the general read.
        let fast = match (&md, client) {
            (Some(md), Client::KafkaPython) => drop_in_fast::read(&attrs, md, kind, &mut names, &mut hist),
            (Some(md), Client::Aiokafka) => drop_in_fast::read_dict(&attrs, md, &mut names),
            _ => None,
        };
        let (user_data, field, generation, rack) = match fast {
            Some(f) => (f.user_data, Ok(()), f.generation, f.rack),
            None => {
                names.truncate(first_topic);
                hist.truncate(mark);
                let (topics, user_data) = match &md {
                    Some(md) if keep_user_data || kind != History::None => {
                        (attrs.topics.opt(md)?, attrs.user_data.opt(md)?)
                    }
                    Some(md) => (attrs.topics.opt(md)?, None),
                    None => (None, None),
                };
                topic_list(id_str, topics, &mut names, &mut emit)?;
                let user_data = user_data_bytes(py, user_data)?;
                let (field, generation, rack) = match (&md, client) {
                    (Some(md), Client::KafkaPython) => {
                        // The owned field and the generation are read only when the rule may
                        // take them (sticky's user data wins over them).
                        let ud = user_data.as_ref().map(|b| b.as_bytes());
                        let (field, generation) = if !kind.reads_fields(ud) {
                            (Ok(()), -1)
                        } else {
                            let owned = attrs.owned_partitions.opt(md)?;
                            let field = owned_field(&mut attrs.entry, id_str, owned, &mut hist, &mut emit)?;
                            let generation = match attrs.generation_id.opt(md)? {
                                Some(g) if g.is_instance_of::<PyInt>() && !g.is_instance_of::<PyBool>() => {
                                    g.extract::<i32>().unwrap_or(-1)
                                }
                                _ => -1,
                            };
                            (field, generation)
                        };
                        (field, generation, nonempty_str(attrs.rack_id.opt(md)?))
                    }
                    _ => (Ok(()), -1, None),
                };
                (user_data, field, generation, rack)
            }
        };
        let topics = first_topic..names.len();
        let ud = user_data.as_ref().map(|b| b.as_bytes());
        let generation = match field {
            Ok(()) => {
                // The field's partitions are those appended since `mark`.
                let has_partitions = hist.parts.len() > mark.1;
                let (from, generation) = wire::history(id_str, kind, ud, has_partitions, generation, &mut warnings);
                match from {
                    HistoryFrom::Field => {}
                    HistoryFrom::UserData(groups) => {
                        hist.truncate(mark);
                        for g in &groups {
                            let (n0, p0) = (hist.names.len(), hist.parts.len());
                            hist.names.push_str(g.topic);
                            hist.parts.extend(g.partitions.iter().map(i64::from));
                            hist.groups
                                .push((GroupTopic::Name(n0..hist.names.len()), p0..hist.parts.len()));
                        }
                    }
                    HistoryFrom::Nothing => hist.truncate(mark),
                }
                generation
            }
            Err(e) => {
                hist.truncate(mark);
                warnings.push(format!(
                    "member {id_str}: invalid history ({e}); treated as having no history"
                ));
                -1
            }
        };
        let user_data = if keep_user_data { user_data } else { None };
        let owned = mark.2..hist.groups.len();
        let n_owned = hist.parts.len() - mark.1;
        for w in warnings.drain(..) {
            emit(w)?;
        }
        let read = MemberFields {
            topics,
            user_data,
            owned,
            generation,
            rack,
            instance: nonempty_str(instance),
            id,
        };
        gil.tick(py, 1 + n_owned / 8);
        out.push(read);
    }
    // A repeated id keeps its first position and its last fields (the core's rule,
    // `kassign_core::members`). None is possible when the ids are a dict's keys, all exact str.
    let exact = out.iter().all(|m| m.id.is_exact_instance_of::<PyString>());
    // Exact str ids whose hashes (which str caches, and the result dict needs) all differ do not
    // repeat; equal hashes are compared by value below. A dict's exact str keys never repeat.
    let keys_of_a_dict = client == Client::Aiokafka && members.is_instance_of::<PyDict>();
    let distinct = exact
        && (keys_of_a_dict || {
            let mut hashes: FastMap<isize, ()> = FastMap::default();
            hashes.reserve(out.len());
            let mut all = true;
            for m in &out {
                if hashes.insert(m.id.hash()?, ()).is_some() {
                    all = false;
                    break;
                }
            }
            all
        });
    if distinct {
        return Ok(ClientMembers {
            members: out,
            topics: names,
            hist,
        });
    }
    // The rule for a repeated id is the core's (`members::repeated_ids`); here the entries are
    // only moved, each kept id object with the fields it takes.
    let ids = out.iter().map(|m| m.id.to_str()).collect::<PyResult<Vec<&str>>>()?;
    let repeats = members::repeated_ids(ids);
    let out = members::merge_repeated(out, &repeats, |first, later| MemberFields { id: first.id, ..later });
    Ok(ClientMembers {
        members: out,
        topics: names,
        hist,
    })
}

/// The drop-in leader step for a Rust strategy: read every member from the client's objects
/// (history by the rule of `protocol_name`), ask `metadata(topics, any_rack)` for
/// `(partitions_per_topic, partition_racks list or None)` of the subscribed topics (sorted),
/// assign with `strategy` and encode every assignment. Returns {member id: assignment bytes}
/// in the members' order. `warn(message)` is called for each member whose metadata is partly
/// unreadable, as it is read. The GIL is released while the core assigns and encodes.
#[pyfunction]
#[pyo3(signature = (strategy, protocol_name, client, members, metadata, warn))]
fn drop_in_assign<'py>(
    py: Python<'py>,
    strategy: &str,
    protocol_name: &str,
    client: &str,
    members: &Bound<'py, PyAny>,
    metadata: &Bound<'py, PyAny>,
    warn: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let strat = Strategy::from_str(strategy).or_raise()?;
    let client = Client::parse(client)?;
    let ClientMembers {
        members: read,
        topics: names,
        hist,
    } = read_members(py, client, History::of_drop_in(protocol_name), members, warn, false)?;
    // Every member's topics and history in one buffer each, sliced per member.
    let mut all_topics: Vec<&str> = Vec::with_capacity(read.iter().map(|m| m.topics.len()).sum());
    let mut all_owned: Vec<(&str, &[i64])> = Vec::with_capacity(read.iter().map(|m| m.owned.len()).sum());
    for m in &read {
        for t in &names[m.topics.clone()] {
            all_topics.push(t.to_str()?);
        }
        for (t, ps) in hist.groups(&m.owned) {
            all_owned.push((hist.name(t)?, ps));
        }
    }
    // The distinct topics, sorted (a topic repeating the one before it is skipped first: members
    // mostly subscribe alike).
    let mut topics: Vec<&str> = Vec::new();
    for &t in &all_topics {
        if topics.last() != Some(&t) {
            topics.push(t);
        }
    }
    topics.sort_unstable();
    topics.dedup();
    let any_rack = read.iter().any(|m| m.rack.is_some());
    let answer = metadata.call1((PyList::new(py, &topics)?, any_rack))?;
    let (counts, racks): (Bound<'py, PyAny>, Option<RackList>) = answer.extract()?;
    let counts = read_topics(&counts)?.counts;
    let racks = racks.unwrap_or_default();
    let has_racks = !racks.is_empty();
    let mut decoded: Vec<DecodedMember<'_>> = Vec::with_capacity(read.len());
    let (mut topics_rest, mut owned_rest) = (all_topics.as_slice(), all_owned.as_slice());
    for m in &read {
        let (topics, t_rest) = topics_rest.split_at(m.topics.len());
        let (owned, o_rest) = owned_rest.split_at(m.owned.len());
        (topics_rest, owned_rest) = (t_rest, o_rest);
        decoded.push(DecodedMember {
            id: m.id.to_str()?,
            topics,
            owned,
            generation: m.generation,
            rack: m.rack.as_ref().map(|r| r.to_str()).transpose()?,
            group_instance_id: m.instance.as_ref().map(|r| r.to_str()).transpose()?,
        });
    }
    let encoded = run_detached(py, move || {
        wire::assign_decoded(strat, &decoded, counts, has_racks, &racks)
    })?
    .or_raise()?;
    let ids: Vec<Bound<'py, PyString>> = read.iter().map(|m| m.id.clone()).collect();
    bytes_dict(py, members, &ids, &encoded)
}

/// The leader's view of every member as `kassign.Member`s, read from the client's objects with
/// the history rule of `protocol_name`, for the strategies written in Python: {member id:
/// Member} in the members' order. `warn` as for [`drop_in_assign`].
#[pyfunction]
#[pyo3(signature = (protocol_name, client, members, warn))]
fn drop_in_members<'py>(
    py: Python<'py>,
    protocol_name: &str,
    client: &str,
    members: &Bound<'py, PyAny>,
    warn: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let client = Client::parse(client)?;
    let ClientMembers {
        members: read,
        topics: subscribed,
        hist,
    } = read_members(py, client, History::of_drop_in(protocol_name), members, warn, true)?;
    let ids: Vec<Bound<'py, PyString>> = read.iter().map(|m| m.id.clone()).collect();
    let out = dict_for(py, members, &ids)?;
    for m in read {
        let mut topics = subscribed[m.topics.clone()].to_vec();
        let mut groups: Vec<(Bound<'py, PyString>, Vec<i64>)> = Vec::with_capacity(m.owned.len());
        for (topic, parts) in hist.groups(&m.owned) {
            let name = match topic {
                GroupTopic::Str(s) => s.clone(),
                // A topic the member subscribes to reuses its subscription's str (looked for
                // among a few topics only: no scan that grows with topics x groups).
                GroupTopic::Name(r) => {
                    let topic = &hist.names[r.clone()];
                    topics[..topics.len().min(8)]
                        .iter()
                        .find(|t| t.to_str().is_ok_and(|s| s == topic))
                        .cloned()
                        .unwrap_or_else(|| PyString::new(py, topic))
                }
            };
            groups.push((name, parts.to_vec()));
        }
        let mut names: Vec<&str> = Vec::with_capacity(topics.len());
        topics.sort_by(|a, b| a.to_str().unwrap_or("").cmp(b.to_str().unwrap_or("")));
        topics.dedup_by(|a, b| a.to_str().ok() == b.to_str().ok());
        for t in &topics {
            names.push(t.to_str()?);
        }
        let topics_hash = hash_names(names.iter().copied());
        // Consecutive entries of one topic are merged, as `Member` stores them.
        let mut owned: Vec<OwnedGroup> = Vec::new();
        let mut n_owned = 0;
        for (topic, parts) in groups {
            n_owned += parts.len();
            match owned.last_mut() {
                Some(last) if last.topic.bind(py).to_str()? == topic.to_str()? => {
                    let mut v = std::mem::take(&mut last.partitions).into_vec();
                    v.extend(parts);
                    last.partitions = v.into_boxed_slice();
                }
                _ => owned.push(OwnedGroup {
                    topic: topic.unbind(),
                    partitions: parts.into_boxed_slice(),
                }),
            }
        }
        let member = Member::from_parts(
            py,
            topics,
            topics_hash,
            owned.into_boxed_slice(),
            n_owned,
            m.generation,
            m.rack.map(Bound::unbind),
            m.instance.map(Bound::unbind),
            m.user_data.map(Bound::unbind),
        )?;
        out.set_item(&m.id, Bound::new(py, member)?)?;
    }
    Ok(out)
}

/// Add the drop-in functions to `kassign._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(drop_in_assign, m)?)?;
    m.add_function(wrap_pyfunction!(drop_in_members, m)?)?;
    Ok(())
}
