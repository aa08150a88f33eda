//! The lag rule ([`kassign_core::lag`]) for `kassign.lag`: conversions only.

use pyo3::prelude::*;

use kassign_core::lag::{self, OffsetReset};

/// The offset a group consumes next on a partition (`kassign.lag.next_offset`).
#[pyfunction]
#[pyo3(signature = (committed, begin, end, auto_offset_reset))]
fn next_offset(committed: Option<i128>, begin: Option<i128>, end: Option<i128>, auto_offset_reset: &str) -> i128 {
    lag::next_offset(committed, begin, end, OffsetReset::from_config(auto_offset_reset))
}

/// Lag of one partition, exact (`kassign.lag.compute_lag`).
#[pyfunction]
#[pyo3(signature = (committed, begin, end, auto_offset_reset))]
fn compute_lag(committed: Option<i128>, begin: Option<i128>, end: Option<i128>, auto_offset_reset: &str) -> i128 {
    lag::lag(committed, begin, end, OffsetReset::from_config(auto_offset_reset))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(next_offset, m)?)?;
    m.add_function(wrap_pyfunction!(compute_lag, m)?)?;
    Ok(())
}
