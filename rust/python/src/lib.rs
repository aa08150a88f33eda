//! The Python extension module `kassign._core`: the boundary between Python objects and the
//! Rust core.
//!
//! * `member`: the `kassign.Member` type, which owns every shape and type check of a member.
//! * `assign`: `assign` (Python objects in, result objects out) and the Python strategies' helpers.
//! * `claims`: the claim rule (`kassign_core::claims`) for the Python strategies and `kassign.quality`.
//! * `quality`: the fleet metrics (`kassign_core::fleet::metrics`) for `kassign.quality`.
//! * `lag`: the lag rule (`kassign_core::lag`) for `kassign.lag`.
//! * `protocol`: the wire formats and the bytes-in, bytes-out leader path `assign_wire`.
//! * `drop_in`: the drop-in classes' leader step, from the clients' decoded member metadata.
//! * `errors`: the exceptions, one conversion per core error kind, and the guarded GIL-free call.
//! * `objects`: fast result objects and GIL hand-over during long conversions.
//! * `fleet` (entry points), `fleet_arrow_in`, `fleet_arrow_out`, `fleet_callback`, `fleet_stream`:
//!   the fleet job's group evaluation, split by concern; `greedy`: the Python strategies' loops.
//!
//! Heavy work runs with the GIL released, inside `catch_unwind`, so a consumer's heartbeat
//! thread keeps running and a Rust panic becomes `kassign.InternalError`.
//!
//! Every rule lives in `kassign_core`, which cannot see this crate: the modules here read Python
//! objects, call the core and build Python objects from its answers.

// The Python boundary turns a panic into a Python exception through PyO3's unwinding; with
// panic = "abort" a panic would kill the interpreter.
#[cfg(not(panic = "unwind"))]
compile_error!("the Python extension needs panic = \"unwind\": a panic must become a Python exception");

mod assign;
mod churn;
mod claims;
mod drop_in;
mod drop_in_fast;
mod drop_in_owned;
mod errors;
mod fleet;
mod fleet_arrow_in;
mod fleet_arrow_out;
mod fleet_callback;
mod fleet_stream;
mod greedy;
mod lag;
mod member;
mod objects;
mod protocol;
mod quality;
mod slot_attr;

use pyo3::prelude::*;

use errors::run_detached;

/// The extension's Rust allocations go through mimalloc: the boundary makes a few small
/// allocations per member (ids, owned partitions), and under that churn glibc's malloc spent
/// about a fifth of a 2100-member `kassign.assign` consolidating its bins. Python objects still
/// come from Python's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Panic inside the core on purpose, through the same guarded path every heavy call uses.
/// Exists so tests can prove a panic surfaces as `kassign.InternalError` and the process survives.
#[pyfunction]
fn _trigger_panic(py: Python<'_>) -> PyResult<()> {
    run_detached(py, || -> () { panic!("deliberate panic for tests") })
}

/// Names of the strategies the Rust core computes.
#[pyfunction]
fn rust_strategies() -> Vec<&'static str> {
    kassign_core::strategy::names()
}

/// `gil_used = true`: on a free-threaded CPython, importing the module turns the GIL back on (with a
/// RuntimeWarning) unless the user forces it off (`PYTHON_GIL=0`, `-X gil=0`). PyO3 0.30 defaults
/// to `false`, which would be untrue here: the drop-in leader step reads the client's objects
/// through borrowed references (list items, instance dict entries, `__slots__` read at their
/// offsets: `drop_in_fast`, `slot_attr`) that another thread could replace and free without the
/// GIL, and `objects::TpFactory` fills tuples in place. docs/cpython-layout.md, "Free-threaded CPython".
#[pymodule(gil_used = true)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<member::Member>()?;
    m.add_function(wrap_pyfunction!(assign::assign, m)?)?;
    m.add_function(wrap_pyfunction!(assign::assign_owners, m)?)?;
    m.add_function(wrap_pyfunction!(assign::check_partitions, m)?)?;
    m.add_function(wrap_pyfunction!(assign::result_lists, m)?)?;
    m.add_function(wrap_pyfunction!(rust_strategies, m)?)?;
    m.add_function(wrap_pyfunction!(_trigger_panic, m)?)?;
    protocol::register(m)?;
    drop_in::register(m)?;
    fleet::register(m)?;
    fleet_stream::register(m)?;
    claims::register(m)?;
    greedy::register(m)?;
    lag::register(m)?;
    churn::register(m)?;
    quality::register(m)?;
    m.add("MAX_PARTITIONS", kassign_core::model::MAX_PARTITIONS)?;
    m.add("MAX_MEMBERS", kassign_core::model::MAX_MEMBERS)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
