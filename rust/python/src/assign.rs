//! `kassign._core.assign` and the helpers of the Python strategies: Python objects in, one
//! GIL-free call into the core, result objects out in the caller's member order.

use std::str::FromStr;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyMapping, PyString, PyTuple, PyType};

use crate::errors::run_detached;
use crate::errors::OrRaise;
use crate::member::{repr, type_name, Member, MemberObject};
use crate::objects::{dict_for, GilYield, TpFactory};
use kassign_core::members::MemberReader;
use kassign_core::model::{py_repr, Assignment, PartId, Problem, ProblemBuilder, TopicId, NO_OWNER};
use kassign_core::strategy::Strategy;

/// (key, value) pairs of a mapping argument, or `TypeError` naming it.
pub(crate) fn mapping_items<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    if let Ok(d) = obj.cast::<PyDict>() {
        return Ok(d.iter().collect());
    }
    if obj.cast::<PyMapping>().is_err() {
        return Err(PyTypeError::new_err(format!("{what}, got {}", type_name(obj))));
    }
    let mut out = Vec::new();
    for item in obj.call_method0("items")?.try_iter()? {
        let item = item?;
        let pair = item.cast::<PyTuple>()?;
        out.push((pair.get_item(0)?, pair.get_item(1)?));
    }
    Ok(out)
}

/// The topics of `partitions_per_topic`, type-checked (the model checks the counts): the
/// caller's key objects, their names and counts, in the caller's order.
pub(crate) struct Topics<'py> {
    pub(crate) keys: Vec<Bound<'py, PyString>>,
    pub(crate) counts: Vec<(String, i64)>,
}

pub(crate) fn read_topics<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Topics<'py>> {
    let items = mapping_items(
        obj,
        "partitions_per_topic: expected a mapping of topic to partition count",
    )?;
    let mut keys = Vec::with_capacity(items.len());
    let mut counts = Vec::with_capacity(items.len());
    for (k, v) in items {
        let k = k.cast_into::<PyString>().map_err(|e| {
            PyTypeError::new_err(format!(
                "partitions_per_topic: topic names must be str, got {}",
                repr(e.into_inner().as_any())
            ))
        })?;
        let name = k.to_str()?.to_owned();
        if !v.is_instance_of::<PyInt>() || v.is_instance_of::<PyBool>() {
            return Err(PyTypeError::new_err(format!(
                "partitions_per_topic[{}]: expected an int, got {}",
                py_repr(&name),
                type_name(&v)
            )));
        }
        let n: i64 = match v.extract() {
            Ok(n) => n,
            Err(_) => {
                let negative = v.lt(0)?;
                return Err(PyValueError::new_err(if negative {
                    format!(
                        "partitions_per_topic[{}]: partition count must be >= 0, got {}",
                        py_repr(&name),
                        repr(&v)
                    )
                } else {
                    format!(
                        "partitions_per_topic[{}]: partition count {} exceeds the int32 range",
                        py_repr(&name),
                        repr(&v)
                    )
                }));
            }
        };
        keys.push(k);
        counts.push((name, n));
    }
    Ok(Topics { keys, counts })
}

/// Replica racks, as `kassign.assign` validated them: a list of (topic, partition, [rack, ...]).
fn add_partition_racks(b: &mut ProblemBuilder, partition_racks: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    let Some(list) = partition_racks.filter(|l| !l.is_none()) else {
        return Ok(());
    };
    let entries: Vec<(String, i64, Vec<String>)> = list.extract()?;
    if !entries.is_empty() {
        b.with_partition_racks();
    }
    for (t, p, racks) in entries {
        if let Some(t) = b.topic(&t) {
            b.add_partition_racks(t, p, &racks);
        }
    }
    Ok(())
}

/// Per-member result lists in the caller's order, from the owner array (one pass to group, one
/// to build objects; topic names are the caller's own str objects). `template` is the caller's
/// mapping of `ids` (see [`dict_for`]).
pub(crate) fn result_dict<'py>(
    py: Python<'py>,
    problem: &Problem,
    assignment: &Assignment,
    ids: &[Bound<'py, PyAny>],
    topic_names: &[Bound<'py, PyString>],
    tp_class: &Bound<'py, PyType>,
    template: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let (starts, parts) = assignment.grouped(problem.members.len());
    let longest = problem.topic_len.iter().copied().max().unwrap_or(0) as usize;
    let mut factory = TpFactory::new(py, tp_class, longest)?;
    let out = dict_for(py, template, ids)?;
    let mut gil = GilYield::new();
    for (pos, id) in ids.iter().enumerate() {
        let m = problem.input_order[pos] as usize;
        let mine: &[PartId] = &parts[starts[m]..starts[m + 1]];
        // SAFETY: a new list of `mine.len()` empty slots, each filled exactly once below with a
        // new reference (PyList_SetItem steals it) before the list is seen by anyone.
        let list = unsafe {
            let l = ffi::PyList_New(mine.len() as ffi::Py_ssize_t);
            if l.is_null() {
                return Err(PyErr::fetch(py));
            }
            Bound::from_owned_ptr(py, l)
        };
        let mut t = 0usize;
        for (i, &p) in mine.iter().enumerate() {
            while problem.topic_base[t + 1] <= p {
                t += 1;
            }
            let item = factory.make(py, &topic_names[t], (p - problem.topic_base[t]) as i64)?;
            // SAFETY: `i` is in range for the list made above; the reference is stolen.
            if unsafe { ffi::PyList_SetItem(list.as_ptr(), i as ffi::Py_ssize_t, item.into_ptr()) } != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        gil.tick(py, mine.len() + 1);
        out.set_item(id, list)?;
    }
    Ok(out)
}

/// TopicId => the caller's str object for that topic.
pub(crate) fn names_by_topic<'py>(b: &ProblemBuilder, keys: &[Bound<'py, PyString>]) -> Vec<Bound<'py, PyString>> {
    let mut out: Vec<Option<Bound<'py, PyString>>> = vec![None; keys.len()];
    for (i, k) in keys.iter().enumerate() {
        if let Some(t) = b.given_topic(i) {
            out[t as usize] = Some(k.clone());
        }
    }
    out.into_iter().map(|k| k.expect("every topic was given")).collect()
}

/// The caller's members and topics, read into the one problem builder, and the strategy run on
/// the problem with the GIL released: the problem, the assignment, the member id objects in the
/// caller's order, the caller's topic str objects by TopicId, and the TopicIds in the caller's
/// order of `partitions_per_topic`.
struct Solved<'py> {
    problem: Problem,
    assignment: Assignment,
    ids: Vec<Bound<'py, PyAny>>,
    names: Vec<Bound<'py, PyString>>,
    given: Vec<TopicId>,
}

/// A group read from Python objects into a [`ProblemBuilder`] (not built yet), with what the
/// result conversion needs.
pub(crate) struct ReadGroup<'py> {
    pub(crate) builder: ProblemBuilder,
    /// Member ids in the caller's order.
    pub(crate) ids: Vec<Bound<'py, PyAny>>,
    /// `partitions_per_topic`'s key objects by topic id.
    pub(crate) names: Vec<Bound<'py, PyString>>,
    /// Topic ids in the caller's order of `partitions_per_topic`.
    pub(crate) given: Vec<TopicId>,
}

/// A `members` entry as the core's reader reads it: the id a `str`, the value a
/// `kassign.Member` (`TypeError` naming the entry otherwise).
fn member_object<'a, 'py>(
    py: Python<'py>,
    key: &'a Bound<'py, PyAny>,
    value: &'a Bound<'py, PyAny>,
) -> PyResult<MemberObject<'a, 'py>> {
    let id = key
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err(format!("members: member ids must be str, got {}", repr(key))))?;
    let id = id.to_str()?;
    let member = value.cast::<Member>().map_err(|_| {
        PyTypeError::new_err(format!(
            "members[{}]: expected a kassign.Member, got {}",
            py_repr(id),
            type_name(value)
        ))
    })?;
    Ok(MemberObject {
        py,
        id,
        member: member.get(),
    })
}

/// Read `members` (member id -> `kassign.Member`), `partitions_per_topic` and the validated
/// `partition_racks` into a problem builder: the members through the core's member reader
/// ([`MemberReader`]), every Python object read once, here.
pub(crate) fn read_group<'py>(
    py: Python<'py>,
    members: &Bound<'py, PyAny>,
    partitions_per_topic: &Bound<'py, PyAny>,
    partition_racks: Option<&Bound<'py, PyAny>>,
) -> PyResult<ReadGroup<'py>> {
    let items = mapping_items(members, "members: expected a mapping of member id to Member")?;
    let topics = read_topics(partitions_per_topic)?;
    let mut b = ProblemBuilder::new(topics.counts).or_raise()?;
    b.reserve_members(items.len());
    // The entries as sources, up to the first that is not one: its error is raised after the
    // members before it are read, where reading member by member would meet it.
    let mut sources = Vec::with_capacity(items.len());
    let mut not_a_member = None;
    for (key, value) in &items {
        match member_object(py, key, value) {
            Ok(m) => sources.push(m),
            Err(e) => {
                not_a_member = Some(e);
                break;
            }
        }
    }
    let mut reader = MemberReader::new();
    let mut gil = GilYield::new();
    for m in &sources {
        reader.add(&mut b, m)?;
        gil.tick(py, m.member.n_owned / 8 + 1);
    }
    if let Some(e) = not_a_member {
        return Err(e);
    }
    drop(sources);
    add_partition_racks(&mut b, partition_racks)?;
    let names = names_by_topic(&b, &topics.keys);
    let given = (0..topics.keys.len()).filter_map(|i| b.given_topic(i)).collect();
    Ok(ReadGroup {
        builder: b,
        // The values stay alive with `members`, which the caller holds.
        ids: items.into_iter().map(|(k, _)| k).collect(),
        names,
        given,
    })
}

fn solve<'py>(
    py: Python<'py>,
    strategy: &str,
    members: &Bound<'py, PyAny>,
    partitions_per_topic: &Bound<'py, PyAny>,
    partition_racks: Option<&Bound<'py, PyAny>>,
) -> PyResult<Solved<'py>> {
    let strategy = Strategy::from_str(strategy).or_raise()?;
    let ReadGroup {
        builder: b,
        ids,
        names,
        given,
    } = read_group(py, members, partitions_per_topic, partition_racks)?;
    let (problem, assignment) = run_detached(py, move || {
        let problem = b.build()?;
        let assignment = strategy.run(&problem);
        Ok::<_, kassign_core::model::InputError>((problem, assignment))
    })?
    .or_raise()?;
    Ok(Solved {
        problem,
        assignment,
        ids,
        names,
        given,
    })
}

/// Assign partitions with a Rust strategy.
///
/// `members` maps member ids (str) to `kassign.Member`; `partitions_per_topic` maps topics to
/// partition counts; `partition_racks` is None or the validated list of (topic, partition,
/// racks). Returns {member id: [tp_class(topic, partition), ...]} in the caller's member order,
/// each list sorted by (topic, partition). The GIL is released while the core runs.
#[pyfunction]
#[pyo3(signature = (strategy, members, partitions_per_topic, partition_racks, tp_class))]
pub(crate) fn assign<'py>(
    py: Python<'py>,
    strategy: &str,
    members: &Bound<'py, PyAny>,
    partitions_per_topic: &Bound<'py, PyAny>,
    partition_racks: Option<&Bound<'py, PyAny>>,
    tp_class: &Bound<'py, PyType>,
) -> PyResult<Bound<'py, PyDict>> {
    let s = solve(py, strategy, members, partitions_per_topic, partition_racks)?;
    result_dict(py, &s.problem, &s.assignment, &s.ids, &s.names, tp_class, members)
}

/// [`assign`] with the result as owner arrays: (member ids in the caller's order, {topic: the
/// native int32 bytes of one owner per partition, as a position in that list or -1}), topics in
/// the caller's order of `partitions_per_topic`. No object per partition is made.
#[pyfunction]
#[pyo3(signature = (strategy, members, partitions_per_topic, partition_racks))]
pub(crate) fn assign_owners<'py>(
    py: Python<'py>,
    strategy: &str,
    members: &Bound<'py, PyAny>,
    partitions_per_topic: &Bound<'py, PyAny>,
    partition_racks: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
    let s = solve(py, strategy, members, partitions_per_topic, partition_racks)?;
    let (problem, assignment) = (&s.problem, &s.assignment);
    // MemberIdx => the caller's position.
    let mut position = vec![-1i32; problem.members.len()];
    for (pos, &m) in problem.input_order.iter().enumerate() {
        position[m as usize] = pos as i32;
    }
    let out = PyDict::new(py);
    for &t in &s.given {
        let range = problem.topic_range(t);
        let bytes = PyBytes::new_with(py, range.len() * 4, |dst| {
            for (chunk, &m) in dst
                .chunks_exact_mut(4)
                .zip(&assignment.owner[range.start as usize..range.end as usize])
            {
                let pos = if m == NO_OWNER { -1 } else { position[m as usize] };
                chunk.copy_from_slice(&pos.to_ne_bytes());
            }
            Ok(())
        })?;
        out.set_item(&s.names[t as usize], bytes)?;
    }
    Ok((PyList::new(py, s.ids)?, out))
}

/// The model's checks of `partitions_per_topic` (types, counts, the partition cap) for the
/// strategies written in Python; returns a new dict of the same items.
#[pyfunction]
pub(crate) fn check_partitions<'py>(
    py: Python<'py>,
    partitions_per_topic: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let topics = read_topics(partitions_per_topic)?;
    let out = PyDict::new(py);
    for (k, (_, n)) in topics.keys.iter().zip(&topics.counts) {
        out.set_item(k, *n)?;
    }
    ProblemBuilder::new(topics.counts).or_raise()?;
    Ok(out)
}

/// Per-member lists of `tp_class` instances from per-topic owner arrays, for the strategies
/// written in Python: `owners[i][p]` is the member index (into the returned lists) owning
/// partition `p` of `topics[i]`, or -1. Topics are visited in the given order, so lists come out
/// sorted when `topics` is. Objects are built as in `assign`.
#[pyfunction]
#[pyo3(signature = (tp_class, n_members, topics, owners))]
pub(crate) fn result_lists<'py>(
    py: Python<'py>,
    tp_class: &Bound<'py, PyType>,
    n_members: usize,
    topics: Vec<Bound<'py, PyString>>,
    owners: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    if topics.len() != owners.len() {
        return Err(PyValueError::new_err(
            "result_lists: topics and owners differ in length",
        ));
    }
    let mut factory = TpFactory::new(py, tp_class, 0)?;
    let lists: Vec<Bound<'py, PyList>> = (0..n_members).map(|_| PyList::empty(py)).collect();
    let mut gil = GilYield::new();
    for (topic, own) in topics.iter().zip(owners) {
        let own: Vec<i64> = own.extract()?;
        for (p, &o) in own.iter().enumerate() {
            if o < 0 {
                continue;
            }
            let list = lists
                .get(o as usize)
                .ok_or_else(|| PyValueError::new_err(format!("result_lists: owner {o} of {topic}-{p} out of range")))?;
            list.append(factory.make(py, topic, p as i64)?)?;
            gil.tick(py, 1);
        }
    }
    PyList::new(py, lists)
}
