//! PyO3 bindings of [`crate::protocol`]: the raw functions behind `kassign.protocol`.
//!
//! Decoders take `bytes`, `bytearray` or `memoryview` (anything else, a `str` included, is a
//! `TypeError` naming the argument) and return plain tuples; `kassign.protocol` wraps them in typed
//! classes. Decoding errors become `kassign.ProtocolError`, encoding errors `ValueError`.
//! Grouped partitions cross the boundary as `(topic, [partition, ...])` so each topic name becomes
//! one Python string however many partitions refer to it.

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView};

use crate::protocol::{self, Assignment, DecodeError, EncodeError, StickyUserData, Subscription, TopicPartitions};
use crate::python::ProtocolError;

fn decode_error(e: DecodeError) -> PyErr {
    ProtocolError::new_err(e.to_string())
}

fn encode_error(e: EncodeError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Borrow the bytes of a bytes-like argument, or raise `TypeError` naming it.
fn bytes_arg<'a, 'py>(obj: &'a Bound<'py, PyAny>, name: &str) -> PyResult<Cow<'a, [u8]>> {
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

type Groups = Vec<(String, Vec<i32>)>;

fn to_groups(groups: Vec<TopicPartitions>) -> Groups {
    groups.into_iter().map(|g| (g.topic, g.partitions)).collect()
}

fn to_py_bytes<'py>(py: Python<'py>, data: Option<Vec<u8>>) -> Option<Bound<'py, PyBytes>> {
    data.map(|d| PyBytes::new(py, &d))
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
    Ok(PyBytes::new(py, &s.encode().map_err(encode_error)?))
}

type SubscriptionTuple<'py> = (
    i16,
    Vec<String>,
    Option<Bound<'py, PyBytes>>,
    Groups,
    i32,
    Option<String>,
);

/// Decode a ConsumerProtocolSubscription into
/// `(version, topics, user_data, [(topic, [partition, ...]), ...], generation, rack)`.
#[pyfunction]
fn decode_subscription<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<SubscriptionTuple<'py>> {
    let bytes = bytes_arg(data, "data")?;
    let s = Subscription::decode(&bytes).map_err(decode_error)?;
    Ok((
        s.version,
        s.topics,
        to_py_bytes(py, s.user_data),
        to_groups(s.owned_partitions),
        s.generation,
        s.rack,
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
    Ok(PyBytes::new(py, &a.encode().map_err(encode_error)?))
}

/// Decode a ConsumerProtocolAssignment into `(version, [(topic, [partition, ...]), ...], user_data)`.
#[pyfunction]
fn decode_assignment<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
) -> PyResult<(i16, Groups, Option<Bound<'py, PyBytes>>)> {
    let bytes = bytes_arg(data, "data")?;
    let a = Assignment::decode(&bytes).map_err(decode_error)?;
    Ok((a.version, to_groups(a.partitions), to_py_bytes(py, a.user_data)))
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
    Ok(PyBytes::new(py, &u.encode().map_err(encode_error)?))
}

/// Decode StickyAssignorUserData (v1, else v0) into `([(topic, [partition, ...]), ...], generation)`.
#[pyfunction]
fn decode_sticky_user_data(data: &Bound<'_, PyAny>) -> PyResult<(Groups, Option<i32>)> {
    let bytes = bytes_arg(data, "data")?;
    let u = StickyUserData::decode(&bytes).map_err(decode_error)?;
    Ok((to_groups(u.partitions), u.generation))
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
    protocol::decode_generation(&bytes).map_err(decode_error)
}

/// Failover user data: the priority in exactly four bytes, or None for any other length.
#[pyfunction]
fn decode_priority(data: &Bound<'_, PyAny>) -> PyResult<Option<i32>> {
    let bytes = bytes_arg(data, "data")?;
    Ok(protocol::decode_priority(&bytes))
}

/// Add the protocol functions to `kassign._core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode_subscription, m)?)?;
    m.add_function(wrap_pyfunction!(decode_subscription, m)?)?;
    m.add_function(wrap_pyfunction!(encode_assignment, m)?)?;
    m.add_function(wrap_pyfunction!(decode_assignment, m)?)?;
    m.add_function(wrap_pyfunction!(encode_sticky_user_data, m)?)?;
    m.add_function(wrap_pyfunction!(decode_sticky_user_data, m)?)?;
    m.add_function(wrap_pyfunction!(encode_int32_user_data, m)?)?;
    m.add_function(wrap_pyfunction!(decode_generation, m)?)?;
    m.add_function(wrap_pyfunction!(decode_priority, m)?)?;
    Ok(())
}
