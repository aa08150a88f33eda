//! The claim rule ([`kassign_core::claims`]) for Python callers: conversions only.
//!
//! * `previous_by_topic(members, partitions_per_topic)`: what the lag-aware strategy's sticky
//!   mode reads of the members' history (`kassign.assignors._greedy.Inputs.previous`).
//! * `previous_owners(members)`: each claimed `(topic, partition)` key's previous owner
//!   (`kassign.quality.previous_owners`).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::assign::{mapping_items, read_group};
use crate::errors::run_detached;
use crate::errors::OrRaise;
use crate::member::{repr, type_name, Member};
use kassign_core::claims::{self, Resolver};
use kassign_core::fleet::FastMap;
use kassign_core::model::{py_repr, Problem, NO_OWNER};

/// [`claims::previous_by_topic`] as topic -> {member index: [partition]} (member index = position
/// in the sorted member ids; topic names are the problem's).
pub(crate) fn previous_dict<'py>(py: Python<'py>, problem: &Problem) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (t, members) in claims::previous_by_topic(problem) {
        let d = PyDict::new(py);
        for (m, ps) in members {
            d.set_item(m, ps)?;
        }
        out.set_item(problem.topics[t as usize].as_str(), d)?;
    }
    Ok(out)
}

/// Previous owners of the members' partitions, grouped for the sticky Python strategies.
///
/// `members` maps member ids to `kassign.Member`; `partitions_per_topic` maps topics to partition
/// counts (checked as `kassign.assign` checks them). Returns topic -> {member index: [partition,
/// ascending]}: member index is the position of the member's id in `sorted(members)`; only the
/// topics some member subscribes to and partitions in range; a partition claimed by several
/// members goes to the highest generation, a tie at it to nobody.
#[pyfunction]
pub(crate) fn previous_by_topic<'py>(
    py: Python<'py>,
    members: &Bound<'py, PyAny>,
    partitions_per_topic: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let read = read_group(py, members, partitions_per_topic, None)?;
    let builder = read.builder;
    let problem = run_detached(py, move || builder.build())?.or_raise()?;
    previous_dict(py, &problem)
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
    m.add_function(wrap_pyfunction!(previous_by_topic, m)?)?;
    m.add_function(wrap_pyfunction!(previous_owners, m)?)?;
    Ok(())
}
