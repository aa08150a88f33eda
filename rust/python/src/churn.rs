//! `_core.churn_events`: the events of the fleet's churn replay ([`kassign_core::fleet::churn::events`]),
//! so that a replay outside the core (the tests' Python one) replays the same ones.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::run_detached;
use kassign_core::fleet::churn::{self, Event};

/// An event as `(kind, member id, like)`: `("leave", id, None)` or `("join", id, like_id)`, where
/// `like_id` is the member (of `member_ids`) whose subscription, rack and user data the joiner has.
type EventTuple = (&'static str, String, Option<String>);

/// The churn replay's events for a group whose members (in row order) are `member_ids` (unique),
/// `rounds` events seeded with `seed` (a u64; the fleet job's per-group seed is
/// `kassign.fleet.evaluate.churn_seed`).
#[pyfunction]
fn churn_events(py: Python<'_>, member_ids: Vec<String>, rounds: u32, seed: u64) -> PyResult<Vec<EventTuple>> {
    let mut sorted: Vec<&String> = member_ids.iter().collect();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(PyValueError::new_err(format!(
            "member_ids: {:?} appears more than once",
            w[0]
        )));
    }
    let events = run_detached(py, || churn::events(&member_ids, rounds, seed))?;
    Ok(events
        .into_iter()
        .map(|e| match e {
            Event::Leave { id } => ("leave", id, None),
            Event::Join { id, like_row } => ("join", id, Some(member_ids[like_row as usize].clone())),
        })
        .collect())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(churn_events, m)?)?;
    Ok(())
}
