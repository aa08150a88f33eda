//! `kassign.quality`'s metrics: Python mappings converted to the core's metrics by names
//! ([`kassign_core::fleet::metrics::Named`]) and the results back. Conversion only: every definition is
//! the core's.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::assign::mapping_items;
use crate::member::{type_name, Member};
use kassign_core::fleet::metrics::{self, Key, Named, NamedMember, Quality};

/// A `(topic, partition)` key: anything indexable (a tuple, a `TopicPartition`).
fn key(obj: &Bound<'_, PyAny>) -> PyResult<Key> {
    Ok((obj.get_item(0)?.extract()?, obj.get_item(1)?.extract()?))
}

fn read_members(obj: &Bound<'_, PyAny>) -> PyResult<Vec<NamedMember>> {
    let items = mapping_items(obj, "members: expected a mapping of member id to Member")?;
    let mut out = Vec::with_capacity(items.len());
    for (id, value) in items {
        let member = value.cast::<Member>().map_err(|_| {
            PyTypeError::new_err(format!(
                "members: expected kassign.Member values, got {}",
                type_name(&value)
            ))
        })?;
        let m = member.get();
        let py = obj.py();
        out.push(NamedMember {
            id: id.extract()?,
            topics: m.topics.bind(py).iter().map(|t| t.extract()).collect::<PyResult<_>>()?,
            rack: m.rack.as_ref().map(|r| r.bind(py).to_string()),
        });
    }
    Ok(out)
}

fn read_counts_per_topic(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(String, i64)>> {
    mapping_items(
        obj,
        "partitions_per_topic: expected a mapping of topic to partition count",
    )?
    .into_iter()
    .map(|(t, c)| Ok((t.extract()?, c.extract()?)))
    .collect()
}

fn read_assignment(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(String, Vec<Key>)>> {
    mapping_items(obj, "assignment: expected a mapping of member id to partitions")?
        .into_iter()
        .map(|(m, tps)| {
            Ok((
                m.extract()?,
                tps.try_iter()?.map(|tp| key(&tp?)).collect::<PyResult<_>>()?,
            ))
        })
        .collect()
}

fn read_lags(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(Key, i64)>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    mapping_items(obj, "lags: expected a mapping of (topic, partition) to lag")?
        .into_iter()
        .map(|(k, l)| Ok((key(&k)?, l.extract()?)))
        .collect()
}

fn read_racks(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(Key, Vec<String>)>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for (k, rs) in mapping_items(
        obj,
        "partition_racks: expected a mapping of (topic, partition) to racks",
    )? {
        let names = if rs.is_none() {
            Vec::new()
        } else {
            rs.try_iter()?.map(|r| r?.extract()).collect::<PyResult<_>>()?
        };
        out.push((key(&k)?, names));
    }
    Ok(out)
}

fn read_previous(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(Key, String)>> {
    mapping_items(obj, "previous: expected a mapping of (topic, partition) to member id")?
        .into_iter()
        .map(|(k, m)| Ok((key(&k)?, m.extract()?)))
        .collect()
}

/// The group side of one call, owned; [`Named`] borrows it.
struct Inputs {
    members: Vec<NamedMember>,
    counts: Vec<(String, i64)>,
    lags: Vec<(Key, i64)>,
    racks: Vec<(Key, Vec<String>)>,
}

impl Inputs {
    fn read(
        members: Option<&Bound<'_, PyAny>>,
        partitions_per_topic: Option<&Bound<'_, PyAny>>,
        lags: Option<&Bound<'_, PyAny>>,
        partition_racks: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Inputs> {
        Ok(Inputs {
            members: members.map(read_members).transpose()?.unwrap_or_default(),
            counts: partitions_per_topic
                .map(read_counts_per_topic)
                .transpose()?
                .unwrap_or_default(),
            lags: read_lags(lags)?,
            racks: read_racks(partition_racks)?,
        })
    }

    fn named(&self) -> Named<'_> {
        Named::new(&self.members, &self.counts, &self.lags, &self.racks)
    }
}

/// Number of partitions of each member, in the assignment's order.
#[pyfunction]
fn quality_counts(assignment: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    Ok(metrics::counts(&read_assignment(assignment)?))
}

/// max - min partitions per member (0 for an empty assignment).
#[pyfunction]
fn quality_count_spread(assignment: &Bound<'_, PyAny>) -> PyResult<i64> {
    Ok(metrics::count_spread(&metrics::counts(&read_assignment(assignment)?)))
}

/// max / mean, or None when the mean is not positive.
#[pyfunction]
fn quality_ratio(max_value: f64, mean_value: f64) -> Option<f64> {
    metrics::ratio(max_value, mean_value)
}

/// Lag sum per member of the assignment, in its order.
#[pyfunction]
#[pyo3(signature = (assignment, lags=None))]
fn quality_member_lags(assignment: &Bound<'_, PyAny>, lags: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<i128>> {
    let inputs = Inputs::read(None, None, lags, None)?;
    Ok(inputs.named().member_lags(&read_assignment(assignment)?))
}

#[pyfunction]
#[pyo3(signature = (members, partitions_per_topic, lags=None))]
fn quality_lag_ratio_bound(
    members: &Bound<'_, PyAny>,
    partitions_per_topic: &Bound<'_, PyAny>,
    lags: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<f64>> {
    let inputs = Inputs::read(Some(members), Some(partitions_per_topic), lags, None)?;
    Ok(inputs.named().lag_ratio_bound())
}

#[pyfunction]
fn quality_assignable_partitions(members: &Bound<'_, PyAny>, partitions_per_topic: &Bound<'_, PyAny>) -> PyResult<i64> {
    let inputs = Inputs::read(Some(members), Some(partitions_per_topic), None, None)?;
    Ok(inputs.named().assignable_partitions())
}

#[pyfunction]
fn quality_moves(
    previous: &Bound<'_, PyAny>,
    assignment: &Bound<'_, PyAny>,
    members: &Bound<'_, PyAny>,
    partitions_per_topic: &Bound<'_, PyAny>,
) -> PyResult<(i64, i64)> {
    let inputs = Inputs::read(Some(members), Some(partitions_per_topic), None, None)?;
    Ok(inputs
        .named()
        .moves(&read_previous(previous)?, &read_assignment(assignment)?))
}

#[pyfunction]
#[pyo3(signature = (assignment, members, partition_racks=None))]
fn quality_rack_locality(
    assignment: &Bound<'_, PyAny>,
    members: &Bound<'_, PyAny>,
    partition_racks: Option<&Bound<'_, PyAny>>,
) -> PyResult<(i64, i64)> {
    let inputs = Inputs::read(Some(members), None, None, partition_racks)?;
    Ok(inputs.named().rack_locality(&read_assignment(assignment)?))
}

#[pyfunction]
fn quality_violations(
    assignment: &Bound<'_, PyAny>,
    members: &Bound<'_, PyAny>,
    partitions_per_topic: &Bound<'_, PyAny>,
) -> PyResult<i64> {
    let inputs = Inputs::read(Some(members), Some(partitions_per_topic), None, None)?;
    Ok(inputs.named().violations(&read_assignment(assignment)?))
}

/// Every metric of `assignment`, as a dict of `kassign.quality.GroupQuality`'s fields.
/// `lag_bound_known`: `lag_bound` is the caller's (possibly None), else the core computes it.
#[pyfunction]
#[pyo3(signature = (members, partitions_per_topic, assignment, lags, partition_racks, previous, assignable, lag_bound_known, lag_bound))]
#[allow(clippy::too_many_arguments)]
fn quality_evaluate<'py>(
    py: Python<'py>,
    members: &Bound<'py, PyAny>,
    partitions_per_topic: &Bound<'py, PyAny>,
    assignment: &Bound<'py, PyAny>,
    lags: Option<&Bound<'py, PyAny>>,
    partition_racks: Option<&Bound<'py, PyAny>>,
    previous: &Bound<'py, PyAny>,
    assignable: Option<i64>,
    lag_bound_known: bool,
    lag_bound: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let inputs = Inputs::read(Some(members), Some(partitions_per_topic), lags, partition_racks)?;
    let q = inputs.named().evaluate(
        &read_assignment(assignment)?,
        &read_previous(previous)?,
        assignable,
        lag_bound_known.then_some(lag_bound),
    );
    quality_dict(py, &q)
}

fn quality_dict<'py>(py: Python<'py>, q: &Quality) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let ints = [
        ("members", q.members),
        ("partitions", q.partitions),
        ("assigned", q.assigned),
        ("unassigned", q.unassigned),
        ("min_count", q.min_count),
        ("max_count", q.max_count),
        ("count_spread", q.count_spread),
        ("max_member_lag", q.max_member_lag),
        ("moves", q.moves),
        ("kept", q.kept),
        ("rack_local", q.rack_local),
        ("rack_eligible", q.rack_eligible),
        ("violations", q.violations),
    ];
    for (k, v) in ints {
        d.set_item(PyString::intern(py, k), v)?;
    }
    let floats = [
        ("count_ratio", q.count_ratio),
        ("lag_ratio", q.lag_ratio),
        ("lag_ratio_bound", q.lag_ratio_bound),
        ("rack_locality", q.rack_locality),
    ];
    for (k, v) in floats {
        d.set_item(PyString::intern(py, k), v)?;
    }
    d.set_item("mean_member_lag", q.mean_member_lag)?;
    d.set_item("lag_imbalanced", q.lag_imbalanced)?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(quality_counts, m)?)?;
    m.add_function(wrap_pyfunction!(quality_count_spread, m)?)?;
    m.add_function(wrap_pyfunction!(quality_ratio, m)?)?;
    m.add_function(wrap_pyfunction!(quality_member_lags, m)?)?;
    m.add_function(wrap_pyfunction!(quality_lag_ratio_bound, m)?)?;
    m.add_function(wrap_pyfunction!(quality_assignable_partitions, m)?)?;
    m.add_function(wrap_pyfunction!(quality_moves, m)?)?;
    m.add_function(wrap_pyfunction!(quality_rack_locality, m)?)?;
    m.add_function(wrap_pyfunction!(quality_violations, m)?)?;
    m.add_function(wrap_pyfunction!(quality_evaluate, m)?)?;
    m.add("IMBALANCE_THRESHOLD", metrics::IMBALANCE_THRESHOLD)?;
    Ok(())
}
