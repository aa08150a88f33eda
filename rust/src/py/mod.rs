//! The Python extension module `kassign._core`: the boundary between Python objects and the
//! Rust core.
//!
//! * `member`: the `kassign.Member` type, which owns every shape and type check of a member.
//! * `assign`: `assign` (Python objects in, result objects out) and the Python strategies' helpers.
//! * `protocol`: the wire formats and the bytes-in, bytes-out leader path `assign_wire`.
//! * `errors`: the exceptions, one conversion per core error kind, and the guarded GIL-free call.
//! * `objects`: fast result objects and GIL hand-over during long conversions.
//! * `fleet`, `fleet_stream`, `greedy`: the fleet job's group evaluation (its stream plan's inputs);
//!   the Python strategies' placement loops.
//!
//! Heavy work runs with the GIL released, inside `catch_unwind`, so a consumer's heartbeat
//! thread keeps running and a Rust panic becomes `kassign.InternalError`.

mod assign;
mod churn;
mod errors;
pub(crate) mod fleet;
mod fleet_stream;
mod greedy;
mod member;
mod objects;
mod protocol;

use pyo3::prelude::*;

use errors::{run_detached, InternalError, ProtocolError};

/// Panic inside the core on purpose, through the same guarded path every heavy call uses.
/// Exists so tests can prove a panic surfaces as `kassign.InternalError` and the process survives.
#[pyfunction]
fn _trigger_panic(py: Python<'_>) -> PyResult<()> {
    run_detached(py, || -> () { panic!("deliberate panic for tests") })
}

/// Names of the strategies the Rust core computes.
#[pyfunction]
fn rust_strategies() -> Vec<&'static str> {
    crate::strategy::names()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ProtocolError", m.py().get_type::<ProtocolError>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    m.add_class::<member::Member>()?;
    m.add_function(wrap_pyfunction!(assign::assign, m)?)?;
    m.add_function(wrap_pyfunction!(assign::assign_owners, m)?)?;
    m.add_function(wrap_pyfunction!(assign::check_partitions, m)?)?;
    m.add_function(wrap_pyfunction!(assign::result_lists, m)?)?;
    m.add_function(wrap_pyfunction!(rust_strategies, m)?)?;
    m.add_function(wrap_pyfunction!(_trigger_panic, m)?)?;
    protocol::register(m)?;
    fleet::register(m)?;
    greedy::register(m)?;
    churn::register(m)?;
    m.add("MAX_PARTITIONS", crate::model::MAX_PARTITIONS)?;
    m.add("MAX_MEMBERS", crate::model::MAX_MEMBERS)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
