//! Exceptions of `kassign._core`, one class per kind of core error, all under
//! `kassign.KassignError` and each still a subclass of the builtin it was before (so a caller's
//! `except ValueError` keeps working), and the guarded, GIL-free call every heavy entry point goes
//! through.
//!
//! | core error | class | also a |
//! |---|---|---|
//! | [`InputError`] (counts, the cap, duplicates, an unknown strategy) | `kassign.InputError` | `ValueError` |
//! | [`DecodeError`] (undecodable consumer-protocol bytes) | `kassign.ProtocolError` | `ValueError` |
//! | [`EncodeError`] (a value the wire formats cannot carry) | `kassign.EncodeError` | `ValueError` |
//! | a panic (a bug) | `kassign.InternalError` | `RuntimeError` |

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use kassign_core::model::InputError;
use kassign_core::protocol::{DecodeError, EncodeError};

create_exception!(
    kassign,
    KassignError,
    PyException,
    "The base class of every error the kassign core raises."
);

/// The classes with two bases (`KassignError` and a builtin), made once per interpreter.
struct Classes {
    input: Py<PyType>,
    protocol: Py<PyType>,
    encode: Py<PyType>,
    internal: Py<PyType>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

/// `class name(KassignError, builtin)` with `doc`, in module `kassign`.
fn subclass(py: Python<'_>, name: &str, builtin: Bound<'_, PyType>, doc: &str) -> PyResult<Py<PyType>> {
    let bases = PyTuple::new(py, [py.get_type::<KassignError>(), builtin])?;
    let namespace = PyDict::new(py);
    namespace.set_item("__module__", "kassign")?;
    namespace.set_item("__doc__", doc)?;
    let class = py.get_type::<PyType>().call1((name, bases, namespace))?;
    Ok(class.cast_into::<PyType>()?.unbind())
}

fn classes(py: Python<'_>) -> PyResult<&'static Classes> {
    CLASSES.get_or_try_init(py, || {
        Ok(Classes {
            input: subclass(
                py,
                "InputError",
                py.get_type::<PyValueError>(),
                "Raised when the core rejects an input: partition counts, the partition or member cap, \
                 a duplicate member or topic, an unknown strategy. A ValueError.",
            )?,
            protocol: subclass(
                py,
                "ProtocolError",
                py.get_type::<PyValueError>(),
                "Raised when Kafka consumer-protocol bytes (another member's metadata) cannot be \
                 decoded. A ValueError.",
            )?,
            encode: subclass(
                py,
                "EncodeError",
                py.get_type::<PyValueError>(),
                "Raised when a value cannot be written in the consumer protocol's wire formats (a \
                 string over 32767 bytes, ...). A ValueError.",
            )?,
            internal: subclass(
                py,
                "InternalError",
                py.get_type::<PyRuntimeError>(),
                "Raised when the Rust core hits an internal error (a bug); the process keeps \
                 running. A RuntimeError.",
            )?,
        })
    })
}

/// An exception of the class `pick` chooses, with `message`; the builtin base itself should the
/// classes not be made (they are made when the module is imported, so that cannot happen after).
fn raise(pick: fn(&Classes) -> &Py<PyType>, fallback: fn(String) -> PyErr, message: String) -> PyErr {
    Python::attach(|py| match classes(py) {
        Ok(c) => PyErr::from_type(pick(c).bind(py).clone(), message),
        Err(_) => fallback(message),
    })
}

/// A core error as the Python exception of its kind. (The orphan rule keeps `From<core error> for
/// PyErr` out of this crate: both types are foreign here.)
pub(crate) trait CoreError {
    fn into_pyerr(self) -> PyErr;
}

/// Invalid input (counts, the partition cap, duplicates): `kassign.InputError` naming the field.
impl CoreError for InputError {
    fn into_pyerr(self) -> PyErr {
        raise(|c| &c.input, PyValueError::new_err, self.to_string())
    }
}

/// Undecodable consumer-protocol bytes: `kassign.ProtocolError` with the offset and field.
impl CoreError for DecodeError {
    fn into_pyerr(self) -> PyErr {
        raise(|c| &c.protocol, PyValueError::new_err, self.to_string())
    }
}

/// A value the wire formats cannot carry (a string over 32767 bytes, ...): `kassign.EncodeError`.
impl CoreError for EncodeError {
    fn into_pyerr(self) -> PyErr {
        raise(|c| &c.encode, PyValueError::new_err, self.to_string())
    }
}

/// What reading a Python member source ([`kassign_core::members::MemberSource`]) can fail with:
/// the core's checks, or an exception reading the objects (a name that is not UTF-8).
pub(crate) enum ReadError {
    Core(InputError),
    Python(PyErr),
}

impl From<InputError> for ReadError {
    fn from(e: InputError) -> Self {
        ReadError::Core(e)
    }
}

impl From<PyErr> for ReadError {
    fn from(e: PyErr) -> Self {
        ReadError::Python(e)
    }
}

/// The core's error as its own class ([`CoreError`]), a Python exception as it was raised.
impl From<ReadError> for PyErr {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Core(e) => e.into_pyerr(),
            ReadError::Python(e) => e,
        }
    }
}

/// `result.or_raise()?`: a core result in a function that returns `PyResult`.
pub(crate) trait OrRaise<T> {
    fn or_raise(self) -> PyResult<T>;
}

impl<T, E: CoreError> OrRaise<T> for Result<T, E> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(CoreError::into_pyerr)
    }
}

/// A panic's payload as text.
pub(crate) fn internal_error(message: String) -> PyErr {
    raise(|c| &c.internal, PyRuntimeError::new_err, message)
}

/// Add the classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let c = classes(py)?;
    m.add("KassignError", py.get_type::<KassignError>())?;
    m.add("InputError", c.input.bind(py))?;
    m.add("ProtocolError", c.protocol.bind(py))?;
    m.add("EncodeError", c.encode.bind(py))?;
    m.add("InternalError", c.internal.bind(py))?;
    Ok(())
}

/// Run `f` without the GIL, with a panic turned into `kassign.InternalError` instead of
/// aborting the consumer process.
pub(crate) fn run_detached<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, f: F) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f))).map_err(|panic| {
        internal_error(format!(
            "kassign core panicked (this is a bug, please report it): {}",
            kassign_core::panic_message(panic.as_ref())
        ))
    })
}
