//! The PyO3 module `kassign._core`.
//!
//! Heavy work runs with the GIL released (`Python::detach`) so a consumer's heartbeat thread keeps
//! running, and inside `catch_unwind` so a Rust panic, should one ever happen, becomes a Python
//! `kassign.InternalError` instead of aborting the consumer process.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use crate::model::{InputError, MemberInput, Problem};

create_exception!(
    kassign,
    ProtocolError,
    PyValueError,
    "Raised when Kafka consumer-protocol bytes (another member's metadata) cannot be decoded."
);
create_exception!(
    kassign,
    InternalError,
    PyRuntimeError,
    "Raised when the Rust core hits an internal error (a bug); the process keeps running."
);

pub(crate) fn input_error(e: InputError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Run `f` without the GIL and with panics turned into `InternalError`.
pub(crate) fn run_detached<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, f: F) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f))).map_err(|panic| {
        let msg = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        InternalError::new_err(format!("kassign core panicked (this is a bug, please report it): {msg}"))
    })
}

type MemberTuple = (String, Vec<String>, Vec<(String, i64)>, i32, Option<String>, Option<String>);

/// Assign partitions with a Rust strategy.
///
/// `members` are `(member_id, topics, owned, generation, rack, group_instance_id)` tuples,
/// `topics` are `(name, partition_count)`, `partition_racks` are `(topic, partition, racks)`.
/// Returns `{member_id: [tp_class(topic, partition), ...]}` with every member present and each
/// list sorted by (topic, partition).
#[pyfunction]
#[pyo3(signature = (strategy, topics, members, partition_racks, tp_class))]
fn assign<'py>(
    py: Python<'py>,
    strategy: &str,
    topics: Vec<(String, i64)>,
    members: Vec<MemberTuple>,
    partition_racks: Vec<(String, i64, Vec<String>)>,
    tp_class: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    if !crate::strategy::RUST_STRATEGIES.contains(&strategy) {
        return Err(input_error(InputError::UnknownStrategy(strategy.to_string())));
    }
    let strategy = strategy.to_string();
    let inputs: Vec<MemberInput> = members
        .into_iter()
        .map(|(id, topics, owned, generation, rack, group_instance_id)| MemberInput {
            id,
            topics,
            owned,
            generation,
            rack,
            group_instance_id,
        })
        .collect();
    let (problem, result) = run_detached(py, move || {
        let problem = Problem::build(topics, inputs, partition_racks)?;
        let result = crate::strategy::run(&strategy, &problem)?;
        Ok::<_, InputError>((problem, result))
    })?
    .map_err(input_error)?;

    let topic_names: Vec<Bound<'py, PyString>> = problem.topics.iter().map(|t| PyString::new(py, t)).collect();
    let out = PyDict::new(py);
    for (m, parts) in problem.members.iter().zip(result.per_member.iter()) {
        let mut sorted = parts.clone();
        sorted.sort_unstable();
        let list = PyList::empty(py);
        let mut t = 0usize;
        for p in sorted {
            while problem.topic_base[t + 1] <= p {
                t += 1;
            }
            let idx = p - problem.topic_base[t];
            let args = PyTuple::new(py, [topic_names[t].clone().into_any(), idx.into_pyobject(py)?.into_any()])?;
            list.append(tp_class.call1(args)?)?;
        }
        out.set_item(&m.id, list)?;
    }
    Ok(out)
}

/// Panic inside the core on purpose, through the same guarded path every heavy call uses.
/// Exists so tests can prove a panic surfaces as `kassign.InternalError` and the process survives.
#[pyfunction]
fn _trigger_panic(py: Python<'_>) -> PyResult<()> {
    run_detached(py, || -> () { panic!("deliberate panic for tests") })
}

/// Names of the strategies the Rust core computes.
#[pyfunction]
fn rust_strategies() -> Vec<&'static str> {
    crate::strategy::RUST_STRATEGIES.to_vec()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ProtocolError", m.py().get_type::<ProtocolError>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    m.add_function(wrap_pyfunction!(assign, m)?)?;
    m.add_function(wrap_pyfunction!(rust_strategies, m)?)?;
    m.add_function(wrap_pyfunction!(_trigger_panic, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
