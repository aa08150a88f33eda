//! The history the drop-in leader step reads from kafka-python's decoded objects: the
//! subscription's owned-partitions field, into one buffer for the whole group
//! ([`Histories`]). Only reads and converts; which history counts is [`kassign_core::wire::history`].

use std::ops::Range;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PyString};

use crate::member::repr;
use crate::slot_attr::SlotAttr;

/// The attributes of an owned-partitions entry (kafka-python's `TopicPartition`), each found
/// once per type.
pub(super) struct EntryAttrs<'py> {
    pub(super) topic: SlotAttr<'py>,
    pub(super) partitions: SlotAttr<'py>,
}

impl<'py> EntryAttrs<'py> {
    pub(super) fn new(py: Python<'py>) -> Self {
        EntryAttrs {
            topic: SlotAttr::new(intern!(py, "topic")),
            partitions: SlotAttr::new(intern!(py, "partitions")),
        }
    }
}

/// A history group's topic: a name in [`Histories::names`] (decoded from user data) or the str
/// read from the owned-partitions field.
pub(super) enum GroupTopic<'py> {
    Name(Range<usize>),
    Str(Bound<'py, PyString>),
}

/// Every member's history in the form the core reads: (topic, partitions) groups whose
/// partition indexes are ranges of one `Vec` and whose decoded topic names are ranges of one
/// `String` (no allocation per member or group). A member's history is a range of `groups`.
#[derive(Default)]
pub(super) struct Histories<'py> {
    pub(super) names: String,
    pub(super) parts: Vec<i64>,
    pub(super) groups: Vec<(GroupTopic<'py>, Range<usize>)>,
}

impl<'py> Histories<'py> {
    /// The lengths to [`Self::truncate`] back to.
    pub(super) fn mark(&self) -> (usize, usize, usize) {
        (self.names.len(), self.parts.len(), self.groups.len())
    }

    pub(super) fn truncate(&mut self, (names, parts, groups): (usize, usize, usize)) {
        self.names.truncate(names);
        self.parts.truncate(parts);
        self.groups.truncate(groups);
    }

    /// The groups in `range`, as (topic, partitions).
    pub(super) fn groups<'a>(
        &'a self,
        range: &Range<usize>,
    ) -> impl Iterator<Item = (&'a GroupTopic<'py>, &'a [i64])> + 'a {
        self.groups[range.clone()]
            .iter()
            .map(|(t, p)| (t, &self.parts[p.clone()]))
    }

    /// A group topic's name.
    pub(super) fn name<'a>(&'a self, topic: &'a GroupTopic<'py>) -> PyResult<&'a str> {
        match topic {
            GroupTopic::Name(r) => Ok(&self.names[r.clone()]),
            GroupTopic::Str(s) => s.to_str(),
        }
    }
}

/// Append the partition indexes of one owned entry to `out`, or `Err(message)` when they are
/// not ints in the int64 range.
fn partition_list(parts: &Bound<'_, PyAny>, out: &mut Vec<i64>) -> Result<(), String> {
    if let Ok(list) = parts.cast_exact::<PyList>() {
        out.reserve(list.len());
        for p in list.iter() {
            out.push(partition_index(&p)?);
        }
        return Ok(());
    }
    let iter = parts
        .try_iter()
        .map_err(|_| format!("partitions must be a list of ints, got {}", repr(parts)))?;
    for p in iter {
        let p = p.map_err(|e| e.to_string())?;
        out.push(partition_index(&p)?);
    }
    Ok(())
}

/// One partition index: an int in the int64 range, or `Err(message)`.
fn partition_index(p: &Bound<'_, PyAny>) -> Result<i64, String> {
    if p.is_exact_instance_of::<PyInt>() {
        if let Ok(v) = p.extract::<i64>() {
            return Ok(v);
        }
    }
    if !p.is_instance_of::<PyInt>() || p.is_instance_of::<PyBool>() {
        return Err(format!("partition must be an int, got {}", repr(p)));
    }
    p.extract::<i64>()
        .map_err(|_| format!("partition index {} is out of range", repr(p)))
}

/// Append one entry of an owned-partitions field to `out` (see [`owned_field`]).
fn owned_entry<'py>(
    entry_attrs: &mut EntryAttrs<'py>,
    id: &str,
    entry: &Bound<'py, PyAny>,
    out: &mut Histories<'py>,
    warn: &mut impl FnMut(String) -> PyResult<()>,
) -> PyResult<Result<(), String>> {
    let (topic, parts) = match (
        entry_attrs.topic.get_if_present(entry)?,
        entry_attrs.partitions.get_if_present(entry)?,
    ) {
        (Some(t), Some(p)) => (t, p),
        _ => {
            warn(format!(
                "member {id}: unreadable owned partitions entry {}",
                repr(entry)
            ))?;
            return Ok(Ok(()));
        }
    };
    let Ok(topic) = topic.cast_into::<PyString>() else {
        return Ok(Err("topic must be a str".into()));
    };
    let start = out.parts.len();
    if let Err(e) = partition_list(&parts, &mut out.parts) {
        return Ok(Err(e));
    }
    out.groups.push((GroupTopic::Str(topic), start..out.parts.len()));
    Ok(Ok(()))
}

/// Append the subscription's owned-partitions field (kafka-python) to `out`, or `Err(message)`
/// when it cannot be read as history (`out` then holds part of it: the caller truncates).
/// Entries without `topic`/`partitions` are skipped with a warning.
pub(super) fn owned_field<'py>(
    entry_attrs: &mut EntryAttrs<'py>,
    id: &str,
    owned: Option<Bound<'py, PyAny>>,
    out: &mut Histories<'py>,
    warn: &mut impl FnMut(String) -> PyResult<()>,
) -> PyResult<Result<(), String>> {
    let Some(owned) = owned else {
        return Ok(Ok(()));
    };
    // A list (what the clients decode) is read without an iterator object.
    if let Ok(list) = owned.cast_exact::<PyList>() {
        for entry in list.iter() {
            if let Err(e) = owned_entry(entry_attrs, id, &entry, out, warn)? {
                return Ok(Err(e));
            }
        }
        return Ok(Ok(()));
    }
    let Ok(iter) = owned.try_iter() else {
        return Ok(Err("unreadable owned partitions".into()));
    };
    for entry in iter {
        if let Err(e) = owned_entry(entry_attrs, id, &entry?, out, warn)? {
            return Ok(Err(e));
        }
    }
    Ok(Ok(()))
}
