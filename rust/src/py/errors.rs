//! Exceptions of `kassign._core`, one conversion per error kind of the core, and the guarded,
//! GIL-free call every heavy entry point goes through.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::model::InputError;
use crate::protocol::{DecodeError, EncodeError};

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

/// Invalid input (counts, the partition cap, duplicates): `ValueError` naming the field.
impl From<InputError> for PyErr {
    fn from(e: InputError) -> PyErr {
        PyValueError::new_err(e.to_string())
    }
}

/// Undecodable consumer-protocol bytes: `kassign.ProtocolError` with the offset and field.
impl From<DecodeError> for PyErr {
    fn from(e: DecodeError) -> PyErr {
        ProtocolError::new_err(e.to_string())
    }
}

/// A value the wire formats cannot carry (a string over 32767 bytes, ...): `ValueError`.
impl From<EncodeError> for PyErr {
    fn from(e: EncodeError) -> PyErr {
        PyValueError::new_err(e.to_string())
    }
}

/// Run `f` without the GIL, with a panic turned into `kassign.InternalError` instead of
/// aborting the consumer process.
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
