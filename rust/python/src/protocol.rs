//! Bindings of [`kassign_core::protocol`] behind `kassign.protocol`, and the bytes-in, bytes-out leader
//! path `assign_wire`.
//!
//! Decoders take `bytes`, `bytearray` or `memoryview` (anything else, a `str` included, is a
//! `TypeError` naming the argument). Decoded partitions come back as ready `TopicPartition`s,
//! built once, with one str object per topic name and shared index ints.

use std::borrow::Cow;
use std::collections::HashMap;
use std::str::FromStr;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString, PyTuple};

use crate::assign::{mapping_items, read_topics};
use crate::errors::run_detached;
use crate::errors::OrRaise;
use crate::member::{hash_names, Member, OwnedGroup};
use crate::objects::{bytes_dict, topic_partition_class, TpFactory};
use kassign_core::model::{py_repr, FastMap};
use kassign_core::protocol::{
    self, Assignment, AssignmentRef, StickyUserData, StickyUserDataRef, Subscription, SubscriptionRef,
    TopicPartitionsRef,
};
use kassign_core::strategy::Strategy;
use kassign_core::wire;

/// Borrow the bytes of a bytes-like argument, or raise `TypeError` naming it.
fn bytes_arg<'a>(obj: &'a Bound<'_, PyAny>, name: &str) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    if obj.is_instance_of::<PyMemoryView>() {
        let copied = obj.py().get_type::<PyBytes>().call1((obj,))?;
        return Ok(Cow::Owned(copied.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Err(PyTypeError::new_err(format!(
        "{name}: expected bytes, bytearray or memoryview, got {}",
        obj.get_type().name()?
    )))
}

fn optional_bytes_arg(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<Vec<u8>>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => Ok(Some(bytes_arg(o, name)?.into_owned())),
    }
}

/// Turns decoded groups into `TopicPartition`s, one str object per topic name.
struct Flattener<'a, 'py> {
    factory: TpFactory<'py>,
    names: FastMap<&'a str, Bound<'py, PyString>>,
}

impl<'a, 'py> Flattener<'a, 'py> {
    fn new(py: Python<'py>, groups: &[TopicPartitionsRef<'a>]) -> PyResult<Self> {
        let longest = groups.iter().flat_map(|g| g.partitions.iter()).max().unwrap_or(-1);
        let cls = topic_partition_class(py)?;
        Ok(Flattener {
            factory: TpFactory::new(py, cls, (longest + 1).max(0) as usize)?,
            names: FastMap::default(),
        })
    }

    fn name(&mut self, py: Python<'py>, topic: &'a str) -> Bound<'py, PyString> {
        self.names
            .entry(topic)
            .or_insert_with(|| PyString::new(py, topic))
            .clone()
    }

    fn flatten(&mut self, py: Python<'py>, groups: &[TopicPartitionsRef<'a>]) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let mut out = Vec::with_capacity(groups.iter().map(|g| g.partitions.len()).sum());
        for g in groups {
            let name = self.name(py, g.topic);
            for p in g.partitions.iter() {
                out.push(self.factory.make(py, &name, p as i64)?);
            }
        }
        Ok(out)
    }
}

/// Encode a ConsumerProtocolSubscription (topics and owned partitions are sorted).
#[pyfunction]
#[pyo3(signature = (topics, user_data, owned_partitions, generation, rack, version))]
fn encode_subscription<'py>(
    py: Python<'py>,
    topics: Vec<String>,
    user_data: Option<Bound<'py, PyAny>>,
    owned_partitions: Vec<(String, i32)>,
    generation: i32,
    rack: Option<String>,
    version: i16,
) -> PyResult<Bound<'py, PyBytes>> {
    let s = Subscription {
        version,
        topics,
        user_data: optional_bytes_arg(user_data.as_ref(), "user_data")?,
        owned_partitions: protocol::group_sorted(&owned_partitions),
        generation,
        rack,
    };
    Ok(PyBytes::new(py, &s.encode().or_raise()?))
}

type SubscriptionTuple<'py> = (
    i16,
    Bound<'py, PyTuple>,
    Option<Bound<'py, PyBytes>>,
    Bound<'py, PyTuple>,
    i32,
    Option<String>,
);

/// Decode a ConsumerProtocolSubscription into
/// `(version, topics, user_data, owned TopicPartitions, generation, rack)`.
#[pyfunction]
fn decode_subscription<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<SubscriptionTuple<'py>> {
    let bytes = bytes_arg(data, "data")?;
    let s = SubscriptionRef::decode(&bytes).or_raise()?;
    let mut flat = Flattener::new(py, &s.owned_partitions)?;
    let topics: Vec<Bound<'py, PyString>> = s.topics.iter().map(|t| flat.name(py, t)).collect();
    let owned = flat.flatten(py, &s.owned_partitions)?;
    Ok((
        s.version,
        PyTuple::new(py, topics)?,
        s.user_data.map(|d| PyBytes::new(py, d)),
        PyTuple::new(py, owned)?,
        s.generation,
        s.rack.map(str::to_owned),
    ))
}

/// Encode a ConsumerProtocolAssignment (partitions grouped by topic in order of first appearance).
#[pyfunction]
#[pyo3(signature = (partitions, user_data, version))]
fn encode_assignment<'py>(
    py: Python<'py>,
    partitions: Vec<(String, i32)>,
    user_data: Option<Bound<'py, PyAny>>,
    version: i16,
) -> PyResult<Bound<'py, PyBytes>> {
    let a = Assignment {
        version,
        partitions: protocol::group_by_first_appearance(&partitions),
        user_data: optional_bytes_arg(user_data.as_ref(), "user_data")?,
    };
    Ok(PyBytes::new(py, &a.encode().or_raise()?))
}

/// Decode a ConsumerProtocolAssignment into `(version, TopicPartitions, user_data)`.
#[pyfunction]
fn decode_assignment<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<(i16, Bound<'py, PyTuple>, Option<Bound<'py, PyBytes>>)> {
    let bytes = bytes_arg(data, "data")?;
    let a = AssignmentRef::decode(&bytes).or_raise()?;
    let parts = Flattener::new(py, &a.partitions)?.flatten(py, &a.partitions)?;
    Ok((
        a.version,
        PyTuple::new(py, parts)?,
        a.user_data.map(|d| PyBytes::new(py, d)),
    ))
}

/// Encode StickyAssignorUserData: v1 with a generation, v0 without; sorted by (topic, partition).
#[pyfunction]
#[pyo3(signature = (partitions, generation))]
fn encode_sticky_user_data<'py>(
    py: Python<'py>,
    partitions: Vec<(String, i32)>,
    generation: Option<i32>,
) -> PyResult<Bound<'py, PyBytes>> {
    let u = StickyUserData {
        partitions: protocol::group_sorted(&partitions),
        generation,
    };
    Ok(PyBytes::new(py, &u.encode().or_raise()?))
}

/// Decode StickyAssignorUserData (v1, else v0) into `([TopicPartition, ...], generation)`.
#[pyfunction]
fn decode_sticky_user_data<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<(Vec<Bound<'py, PyAny>>, Option<i32>)> {
    let bytes = bytes_arg(data, "data")?;
    let u = StickyUserDataRef::decode(&bytes).or_raise()?;
    let parts = Flattener::new(py, &u.partitions)?.flatten(py, &u.partitions)?;
    Ok((parts, u.generation))
}

/// Four big-endian bytes of a signed int32 (cooperative generation, failover priority).
#[pyfunction]
fn encode_int32_user_data(py: Python<'_>, value: i32) -> Bound<'_, PyBytes> {
    PyBytes::new(py, &protocol::encode_int32_user_data(value))
}

/// Cooperative-sticky user data: the generation in its first four bytes; ProtocolError if shorter.
#[pyfunction]
fn decode_generation(data: &Bound<'_, PyAny>) -> PyResult<i32> {
    let bytes = bytes_arg(data, "data")?;
    protocol::decode_generation(&bytes).or_raise()
}

/// Failover user data: the priority in exactly four bytes, or None for any other length.
#[pyfunction]
fn decode_priority(data: &Bound<'_, PyAny>) -> PyResult<Option<i32>> {
    let bytes = bytes_arg(data, "data")?;
    Ok(protocol::decode_priority(&bytes))
}

// ------------------------------------------------------------------------------------------------
// The leader path: subscriptions in, assignments out
// ------------------------------------------------------------------------------------------------

/// (member id objects, their subscription objects, their instance ids) from the arguments.
type WireInput<'py> = (Vec<Bound<'py, PyString>>, Vec<Bound<'py, PyAny>>, Vec<Option<String>>);

fn read_wire_input<'py>(
    subscriptions: &Bound<'py, PyAny>,
    group_instance_ids: Option<&Bound<'py, PyAny>>,
) -> PyResult<WireInput<'py>> {
    let items = mapping_items(
        subscriptions,
        "subscriptions: expected a mapping of member id to subscription bytes",
    )?;
    let instances: HashMap<String, Option<String>> = match group_instance_ids.filter(|g| !g.is_none()) {
        None => HashMap::new(),
        Some(g) => {
            let mut out = HashMap::new();
            for (k, v) in mapping_items(g, "group_instance_ids: expected a mapping of member id to instance id")? {
                let k: String = k.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "group_instance_ids: member ids must be str, got {}",
                        k.repr().map(|r| r.to_string()).unwrap_or_default()
                    ))
                })?;
                let v: Option<String> = v.extract().map_err(|_| {
                    PyTypeError::new_err(format!("group_instance_ids[{}]: expected a str or None", py_repr(&k)))
                })?;
                out.insert(k, v.filter(|s| !s.is_empty()));
            }
            out
        }
    };
    let mut ids = Vec::with_capacity(items.len());
    let mut values = Vec::with_capacity(items.len());
    let mut inst = Vec::with_capacity(items.len());
    for (k, v) in items {
        let id = k.cast_into::<PyString>().map_err(|e| {
            PyTypeError::new_err(format!(
                "subscriptions: member ids must be str, got {}",
                e.into_inner().repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        let name = id.to_str()?;
        if !(v.is_instance_of::<PyBytes>() || v.is_instance_of::<PyByteArray>() || v.is_instance_of::<PyMemoryView>()) {
            return Err(PyTypeError::new_err(format!(
                "subscriptions[{}]: expected bytes, bytearray or memoryview, got {}",
                py_repr(name),
                v.get_type().name()?
            )));
        }
        inst.push(instances.get(name).cloned().flatten());
        ids.push(id);
        values.push(v);
    }
    Ok((ids, values, inst))
}

/// The leader's whole job for a Rust strategy: decode every member's ConsumerProtocolSubscription,
/// assign, encode every ConsumerProtocolAssignment. Returns ({member id: bytes} in the caller's
/// order, warnings). The GIL is released for decoding, assigning and encoding.
#[pyfunction]
#[pyo3(signature = (strategy, subscriptions, partitions_per_topic, group_instance_ids, partition_racks))]
fn assign_wire<'py>(
    py: Python<'py>,
    strategy: &str,
    subscriptions: &Bound<'py, PyAny>,
    partitions_per_topic: &Bound<'py, PyAny>,
    group_instance_ids: Option<&Bound<'py, PyAny>>,
    partition_racks: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyDict>, Vec<String>)> {
    let strat = Strategy::from_str(strategy).or_raise()?;
    let topics = read_topics(partitions_per_topic)?;
    let (ids, values, instances) = read_wire_input(subscriptions, group_instance_ids)?;
    let datas: Vec<Cow<'_, [u8]>> = values
        .iter()
        .map(|v| bytes_arg(v, "subscriptions"))
        .collect::<PyResult<_>>()?;
    let racks: Vec<(String, i64, Vec<String>)> = match partition_racks.filter(|r| !r.is_none()) {
        Some(r) => r.extract()?,
        None => Vec::new(),
    };
    let has_racks = !racks.is_empty();
    // Member ids are read in place: the str objects are immutable and held by `ids`.
    let names: Vec<&str> = ids.iter().map(|i| i.to_str()).collect::<PyResult<_>>()?;
    let counts = topics.counts;
    let members: Vec<wire::WireInput<'_>> = names
        .iter()
        .zip(&datas)
        .zip(instances)
        .map(|((id, data), instance)| wire::WireInput {
            id,
            subscription: data.as_ref(),
            group_instance_id: instance,
        })
        .collect();
    let outcome = run_detached(py, move || wire::assign(strat, &members, counts, has_racks, &racks))?;
    let (encoded, warnings) = outcome.or_raise()?;
    let out = bytes_dict(py, subscriptions, &ids, &encoded)?;
    Ok((out, warnings))
}

/// The leader's view of every member as `kassign.Member`s, from subscription bytes, for the
/// strategies written in Python: ({member id: Member} in the caller's order, warnings).
#[pyfunction]
#[pyo3(signature = (strategy, subscriptions, group_instance_ids))]
fn members_from_wire<'py>(
    py: Python<'py>,
    strategy: &str,
    subscriptions: &Bound<'py, PyAny>,
    group_instance_ids: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyDict>, Vec<String>)> {
    let history = wire::History::of(strategy);
    let (ids, values, instances) = read_wire_input(subscriptions, group_instance_ids)?;
    let datas: Vec<Cow<'_, [u8]>> = values
        .iter()
        .map(|v| bytes_arg(v, "subscriptions"))
        .collect::<PyResult<_>>()?;
    let mut warnings = Vec::new();
    let out = PyDict::new(py);
    let mut names: HashMap<String, Bound<'py, PyString>> = HashMap::new();
    let mut name = |t: &str| -> Bound<'py, PyString> {
        names
            .entry(t.to_owned())
            .or_insert_with(|| PyString::new(py, t))
            .clone()
    };
    for ((id, data), instance) in ids.iter().zip(&datas).zip(instances) {
        let m = wire::member(id.to_str()?, data, history, &mut warnings);
        let mut topics = m.topics;
        topics.sort();
        topics.dedup();
        let topics_hash = hash_names(topics.iter().copied());
        let topic_objs: Vec<Bound<'py, PyString>> = topics.iter().map(|t| name(t)).collect();
        let mut owned: Vec<OwnedGroup> = Vec::new();
        let mut n_owned = 0;
        for g in m.owned {
            n_owned += g.partitions.len();
            let parts: Vec<i64> = g.partitions.iter().map(|p| p as i64).collect();
            match owned.last_mut() {
                Some(last) if last.topic.bind(py).to_str()? == g.topic => {
                    let mut v = std::mem::take(&mut last.partitions).into_vec();
                    v.extend(parts);
                    last.partitions = v.into_boxed_slice();
                }
                _ => owned.push(OwnedGroup {
                    topic: name(g.topic).unbind(),
                    partitions: parts.into_boxed_slice(),
                }),
            }
        }
        let member = Member::from_parts(
            py,
            topic_objs,
            topics_hash,
            owned.into_boxed_slice(),
            n_owned,
            m.generation,
            m.rack.map(|r| PyString::new(py, r).unbind()),
            instance.map(|i| PyString::new(py, &i).unbind()),
            m.user_data.map(|u| PyBytes::new(py, u).unbind()),
        )?;
        out.set_item(id, Bound::new(py, member)?)?;
    }
    Ok((out, warnings))
}

/// Encode `{member id: [TopicPartition, ...]}` results as ConsumerProtocolAssignment v3 bytes
/// (grouped by topic, sorted; null user data).
#[pyfunction]
fn encode_assignments<'py>(py: Python<'py>, result: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (id, parts) in mapping_items(result, "result: expected a mapping of member id to partitions")? {
        let pairs: Vec<(String, i32)> = parts.extract()?;
        let a = Assignment {
            version: protocol::MAX_VERSION,
            partitions: protocol::group_sorted(&pairs),
            user_data: None,
        };
        out.set_item(id, PyBytes::new(py, &a.encode().or_raise()?))?;
    }
    Ok(out)
}

/// Add the protocol functions to `kassign._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode_subscription, m)?)?;
    m.add_function(wrap_pyfunction!(decode_subscription, m)?)?;
    m.add_function(wrap_pyfunction!(encode_assignment, m)?)?;
    m.add_function(wrap_pyfunction!(decode_assignment, m)?)?;
    m.add_function(wrap_pyfunction!(encode_sticky_user_data, m)?)?;
    m.add_function(wrap_pyfunction!(decode_sticky_user_data, m)?)?;
    m.add_function(wrap_pyfunction!(encode_int32_user_data, m)?)?;
    m.add_function(wrap_pyfunction!(decode_generation, m)?)?;
    m.add_function(wrap_pyfunction!(decode_priority, m)?)?;
    m.add_function(wrap_pyfunction!(assign_wire, m)?)?;
    m.add_function(wrap_pyfunction!(members_from_wire, m)?)?;
    m.add_function(wrap_pyfunction!(encode_assignments, m)?)?;
    Ok(())
}
