//! The claim rule ([`kassign_core::claims`]) for Python callers: conversions only.
//!
//! * `sticky_inputs(members, partitions_per_topic)`: what the sticky Python strategies read of a
//!   group (`kassign.assignors._greedy.Inputs.read_previous`): the subscribers of each topic and
//!   the previous owners, from one read of the group.
//! * `previous_owners(members)`: each claimed `(topic, partition)` key's previous owner
//!   (`kassign.quality.previous_owners`).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::assign::{mapping_items, read_group, ReadGroup};
use crate::errors::run_detached;
use crate::errors::OrRaise;
use crate::member::{repr, type_name, Member};
use kassign_core::claims::{self, Resolver, TopicClaims};
use kassign_core::fleet::FastMap;
use kassign_core::greedy;
use kassign_core::model::{py_repr, NO_OWNER};

/// [`claims::previous_by_topic`]'s result as topic -> {member index: [partition]} (member index =
/// position in the sorted member ids); `names` holds the topic names by topic id.
pub(crate) fn previous_dict<'py>(
    py: Python<'py>,
    claims: Vec<TopicClaims>,
    names: &[Bound<'py, PyString>],
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (t, members) in claims {
        let d = PyDict::new(py);
        for (m, ps) in members {
            d.set_item(m, ps)?;
        }
        out.set_item(&names[t as usize], d)?;
    }
    Ok(out)
}

/// [`greedy::subscribers_by_topic`]'s result as topic -> (subscriber indices), topics with
/// the same subscribers sharing one tuple; `names` holds the topic names by topic id.
pub(crate) fn subscribers_dict<'py>(
    py: Python<'py>,
    (topics, sets): (Vec<(u32, u32)>, Vec<Vec<u32>>),
    names: &[Bound<'py, PyString>],
) -> PyResult<Bound<'py, PyDict>> {
    let tuples = sets.iter().map(|s| PyTuple::new(py, s)).collect::<PyResult<Vec<_>>>()?;
    let out = PyDict::new(py);
    for (t, s) in topics {
        out.set_item(&names[t as usize], &tuples[s as usize])?;
    }
    Ok(out)
}

/// The sticky Python strategies' inputs from one read of the group: `members` (member id ->
/// `kassign.Member`) and `partitions_per_topic` (topic -> partition count) are checked and interned
/// once, as `kassign.assign` reads them. Returns (subs, previous):
///
/// * subs: topic -> the indices of its subscribers (ascending; index = position of the member's
///   id in `sorted(members)`), for the subscribed topics with at least one partition, in order of
///   first appearance over the sorted members; topics with the same subscribers share one tuple;
/// * previous: topic -> {member index: [partition, ascending]}, the previous owners of the
///   subscribed topics' partitions in range: a partition claimed by several members goes to the
///   highest generation, a tie at it to nobody.
#[pyfunction]
pub(crate) fn sticky_inputs<'py>(
    py: Python<'py>,
    members: &Bound<'py, PyAny>,
    partitions_per_topic: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let ReadGroup { builder, names, .. } = read_group(py, members, partitions_per_topic, None)?;
    let (subs, previous) = run_detached(py, move || {
        let problem = builder.build()?;
        Ok::<_, kassign_core::model::InputError>((
            greedy::subscribers_by_topic(&problem),
            claims::previous_by_topic(&problem),
        ))
    })?
    .or_raise()?;
    Ok((
        subscribers_dict(py, subs, &names)?,
        previous_dict(py, previous, &names)?,
    ))
}

/// The previous owner of every claimed `(topic, partition)` key of `members` (member id ->
/// `kassign.Member`), unfiltered: {(topic, partition): member id}, keys in the order first
/// claimed; partitions whose top-generation claims tie are left out.
#[pyfunction]
pub(crate) fn previous_owners<'py>(py: Python<'py>, members: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let items = mapping_items(members, "members: expected a mapping of member id to Member")?;
    let mut resolver = Resolver::new(0);
    let mut slot_of: FastMap<(String, i64), usize> = FastMap::default();
    let mut keys: Vec<Bound<'py, PyTuple>> = Vec::new();
    let mut ids: Vec<Bound<'py, PyAny>> = Vec::with_capacity(items.len());
    for (i, (key, value)) in items.into_iter().enumerate() {
        let member = value.cast::<Member>().map_err(|_| {
            let id = key
                .cast::<PyString>()
                .map(|s| py_repr(&s.to_string_lossy()))
                .unwrap_or_else(|_| repr(&key));
            PyTypeError::new_err(format!(
                "members[{id}]: expected a kassign.Member, got {}",
                type_name(&value)
            ))
        })?;
        let m = member.get();
        for g in m.owned.iter() {
            let topic = g.topic.bind(py);
            let name = topic.to_str()?;
            for &p in g.partitions.iter() {
                let slot = match slot_of.get(&(name.to_string(), p)) {
                    Some(&s) => s,
                    None => {
                        let s = resolver.push_slot();
                        slot_of.insert((name.to_string(), p), s);
                        keys.push(PyTuple::new(
                            py,
                            [topic.clone().into_any(), p.into_pyobject(py)?.into_any()],
                        )?);
                        s
                    }
                };
                resolver.claim(slot, i as u32, m.generation);
            }
        }
        ids.push(key);
    }
    let out = PyDict::new(py);
    for (key, owner) in keys.iter().zip(resolver.owners()) {
        if owner != NO_OWNER {
            out.set_item(key, &ids[owner as usize])?;
        }
    }
    Ok(out)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sticky_inputs, m)?)?;
    m.add_function(wrap_pyfunction!(previous_owners, m)?)?;
    Ok(())
}
