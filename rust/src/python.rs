//! The PyO3 module `kassign._core`.
//!
//! Heavy work runs with the GIL released (`Python::detach`) so a consumer's heartbeat thread keeps
//! running, and inside `catch_unwind` so a Rust panic, should one ever happen, becomes a Python
//! `kassign.InternalError` instead of aborting the consumer process.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple, PyType};

use crate::model::{InputError, MemberColumns, Problem};

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
        InternalError::new_err(format!(
            "kassign core panicked (this is a bug, please report it): {msg}"
        ))
    })
}

/// Columnar member input, as `kassign.assign` prepares it: subscriptions are interned on the Python
/// side (members with the same topic tuple share an index), so 2100 members with one topic cost one
/// list of topic names, not 2100.
#[derive(FromPyObject)]
struct Members {
    ids: Vec<String>,
    /// member => index into `subscriptions`
    subs: Vec<usize>,
    subscriptions: Vec<Vec<String>>,
    /// member => owned (topic, partition) pairs; None when the member owns nothing
    owned: Vec<Option<Vec<(String, i64)>>>,
    generations: Vec<i32>,
    racks: Vec<Option<String>>,
    instance_ids: Vec<Option<String>>,
}

impl Members {
    /// (subscriptions, members) for [`Problem::build_interned`]; subscriptions stay shared.
    fn into_columns(self) -> Result<(Vec<Vec<String>>, Vec<MemberColumns>), InputError> {
        let n = self.ids.len();
        if [
            self.subs.len(),
            self.owned.len(),
            self.generations.len(),
            self.racks.len(),
            self.instance_ids.len(),
        ]
        .iter()
        .any(|&l| l != n)
        {
            return Err(InputError::Invalid("members: column lengths differ".into()));
        }
        let mut out = Vec::with_capacity(n);
        let cols = self
            .ids
            .into_iter()
            .zip(self.subs)
            .zip(self.owned)
            .zip(self.generations);
        for ((((id, sub), owned), generation), (rack, group_instance_id)) in
            cols.zip(self.racks.into_iter().zip(self.instance_ids))
        {
            out.push(MemberColumns {
                id,
                sub,
                owned: owned.unwrap_or_default(),
                generation,
                rack,
                group_instance_id,
            });
        }
        Ok((self.subscriptions, out))
    }
}

/// Assign partitions with a Rust strategy.
///
/// `members` is a `Members`-shaped object (attributes `ids`, `subs`, `subscriptions`, `owned`,
/// `generations`, `racks`, `instance_ids`), `topics` are `(name, partition_count)`,
/// `partition_racks` are `(topic, partition, racks)`. Returns one list per member, aligned with
/// `members.ids`, of `tp_class` instances sorted by (topic, partition). `tp_class` must be a tuple
/// subclass (built with `tuple.__new__`, skipping a Python-level `__new__`).
#[pyfunction]
#[pyo3(signature = (strategy, topics, members, partition_racks, tp_class))]
fn assign<'py>(
    py: Python<'py>,
    strategy: &str,
    topics: Vec<(String, i64)>,
    members: Members,
    partition_racks: Vec<(String, i64, Vec<String>)>,
    tp_class: Bound<'py, PyType>,
) -> PyResult<Bound<'py, PyList>> {
    if !crate::strategy::RUST_STRATEGIES.contains(&strategy) {
        return Err(input_error(InputError::UnknownStrategy(strategy.to_string())));
    }
    let tuple_type = py.get_type::<PyTuple>();
    if !tp_class.is_subclass(&tuple_type)? {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "tp_class: expected a tuple subclass",
        ));
    }
    let tuple_new = tuple_type.getattr("__new__")?;
    let strategy = strategy.to_string();
    let ids_order: Vec<String> = members.ids.clone();
    let (problem, result) = run_detached(py, move || {
        let (subscriptions, columns) = members.into_columns()?;
        let problem = Problem::build_interned(topics, subscriptions, columns, partition_racks)?;
        let result = crate::strategy::run(&strategy, &problem)?;
        Ok::<_, InputError>((problem, result))
    })?
    .map_err(input_error)?;

    // The problem holds members sorted by id; answer in the caller's order.
    let mut position = std::collections::HashMap::with_capacity(problem.members.len());
    for (i, m) in problem.members.iter().enumerate() {
        position.insert(m.id.as_str(), i);
    }
    let topic_names: Vec<Bound<'py, PyString>> = problem.topics.iter().map(|t| PyString::new(py, t)).collect();
    let out = PyList::empty(py);
    for id in &ids_order {
        let parts = &result.per_member[position[id.as_str()]];
        let mut sorted = parts.clone();
        sorted.sort_unstable();
        let list = PyList::empty(py);
        let mut t = 0usize;
        for p in sorted {
            while problem.topic_base[t + 1] <= p {
                t += 1;
            }
            let idx = p - problem.topic_base[t];
            let pair = PyTuple::new(
                py,
                [topic_names[t].clone().into_any(), idx.into_pyobject(py)?.into_any()],
            )?;
            list.append(tuple_new.call1((&tp_class, pair))?)?;
        }
        out.append(list)?;
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
    crate::python_protocol::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
