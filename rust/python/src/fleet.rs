//! `kassign._core.fleet_evaluate`: one group of the fleet job, Arrow in, Arrow out; the entry
//! points of the fleet bindings.
//!
//! The job's `applyInArrow` function passes the group's two pyarrow tables (members, partition
//! side). The bindings are split by concern, and each only converts and forwards:
//!
//! * [`crate::fleet_arrow_in`]: the tables into the core's rows (Arrow C stream interface, no
//!   Python object per row);
//! * [`crate::fleet_callback`]: the Python strategies (lag-aware, fair, failover) as a core
//!   `Assigner`;
//! * [`crate::fleet_arrow_out`]: the result rows as one Arrow batch in the one result schema;
//! * [`crate::fleet_stream`]: the stream plan's index and entry point (it uses this module's
//!   [`evaluate_decoded`]; this module does not use it).
//!
//! The group is built once ([`kassign_core::fleet::Group`]), every Rust strategy is evaluated with the
//! GIL released, the Python ones are called back with the GIL held, and the core measures every
//! result alike.

use std::collections::HashMap;

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyType};
use pyo3_arrow::PyTable;

use crate::errors::run_detached;
use crate::errors::OrRaise;
use crate::fleet_arrow_in::{decode, one_batch};
use crate::fleet_arrow_out::{fleet_result_schema, to_batch};
use crate::fleet_callback::{PyAssigner, PyAssignerAdapter};
use kassign_core::fleet::{self, EvalOptions, Group, GroupRows, OffsetReset, ResultRow, RustAssigner};
use kassign_core::model::py_repr;

/// Evaluate one group of the fleet job (see the module documentation). Returns a pyarrow Table
/// with one row per strategy, in the order of `strategies`, with the columns of
/// `kassign.fleet.group.result_schema(with_assignment)`.
#[pyfunction]
fn fleet_evaluate<'py>(
    py: Python<'py>,
    cluster: &str,
    group_id: &str,
    members: PyTable,
    parts: PyTable,
    strategies: Vec<String>,
    settings: EvalSettings<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let (members, parts) = (one_batch(members)?, one_batch(parts)?);
    let args = EvalArgs {
        cluster,
        group_id,
        strategies,
        settings,
    };
    evaluate_decoded(py, args, move || decode(&members, &parts))
}

/// The settings of a group's evaluation, the same for every group of a job: the dict
/// `kassign.fleet.evaluate` builds once (`_core_options`), read by key.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct EvalSettings<'py> {
    churn_rounds: u32,
    /// The group's churn seed (`crc32(cluster \0 group_id \0 seed)`).
    churn_seed: u64,
    with_assignment: bool,
    auto_offset_reset: String,
    /// Label -> (the Python strategy's function, whether it reads the previous owners).
    python_strategies: Bound<'py, PyDict>,
    /// `kassign.Member`, for the Python strategies' inputs.
    member_class: Bound<'py, PyType>,
    /// `kassign.assignors._greedy.Inputs`.
    inputs_class: Bound<'py, PyAny>,
}

/// The arguments of a group's evaluation besides its rows.
pub(crate) struct EvalArgs<'a, 'py> {
    pub cluster: &'a str,
    pub group_id: &'a str,
    pub strategies: Vec<String>,
    pub settings: EvalSettings<'py>,
}

/// Decode a group's rows (`decode`, run without the GIL), build it, evaluate every strategy and
/// return the result rows as a pyarrow table (`fleet_evaluate`'s contract).
pub(super) fn evaluate_decoded<'py>(
    py: Python<'py>,
    args: EvalArgs<'_, 'py>,
    decode: impl FnOnce() -> PyResult<GroupRows> + Send,
) -> PyResult<Bound<'py, PyAny>> {
    let EvalArgs {
        cluster,
        group_id,
        strategies,
        settings:
            EvalSettings {
                churn_rounds,
                churn_seed,
                with_assignment,
                auto_offset_reset,
                python_strategies,
                member_class,
                inputs_class,
            },
    } = args;
    let opts = EvalOptions {
        churn_rounds,
        churn_seed,
        with_assignment,
    };
    let reset = OffsetReset::parse(&auto_offset_reset).or_raise()?;
    let mut funcs: HashMap<String, (Bound<'py, PyAny>, bool)> = HashMap::new();
    for (name, spec) in python_strategies.iter() {
        let (f, history): (Bound<'py, PyAny>, bool) = spec.extract()?;
        funcs.insert(name.extract()?, (f, history));
    }
    let rust_names: Vec<String> = strategies.iter().filter(|s| !funcs.contains_key(*s)).cloned().collect();
    // Decode, build, and evaluate the Rust strategies without the GIL.
    let opts_rust = opts.clone();
    let (rows, built, rust_rows) = run_detached(py, move || -> PyResult<_> {
        let rows = decode()?;
        let built = Group::build(&rows, reset);
        let mut out = Vec::new();
        if let Ok(group) = &built {
            if group.input_error.is_none() {
                for s in &rust_names {
                    out.push(fleet::evaluate_strategy(
                        group,
                        s,
                        &opts_rust,
                        &mut RustAssigner,
                        &py_repr,
                    ));
                }
            }
        }
        Ok((rows, built, out))
    })??;
    let repr = |s: &str| -> String {
        PyString::new(py, s)
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| kassign_core::model::py_repr(s))
    };
    let member_ids: Vec<Option<String>> = rows.members.iter().map(|m| m.id.clone()).collect();
    let result_rows: Vec<ResultRow> = match &built {
        Err(e) => fleet::error_rows(&strategies, &e.message(&repr), rows.members.len()),
        Ok(group) => {
            let mut rust_rows = rust_rows.into_iter();
            let mut py_assigner = None;
            let mut out = Vec::with_capacity(strategies.len());
            for s in &strategies {
                if group.input_error.is_some() {
                    out.push(fleet::evaluate_strategy(group, s, &opts, &mut RustAssigner, &repr));
                } else if !funcs.contains_key(s) {
                    out.push(rust_rows.next().expect("one row per Rust strategy"));
                } else {
                    if py_assigner.is_none() {
                        py_assigner = Some(PyAssigner::new(
                            py,
                            group,
                            funcs.clone(),
                            member_class.clone(),
                            inputs_class.clone(),
                        )?);
                    }
                    let mut calling = PyAssignerAdapter {
                        inner: py_assigner.as_mut().unwrap(),
                        failure: None,
                    };
                    let row = fleet::evaluate_strategy(group, s, &opts, &mut calling, &repr);
                    if let Some(e) = calling.failure {
                        // a failure of the boundary itself (not of the strategy): surface it
                        if !e.is_instance_of::<PyException>(py) {
                            return Err(e);
                        }
                    }
                    out.push(row);
                }
            }
            out
        }
    };
    let batch = to_batch(
        cluster,
        group_id,
        &result_rows,
        &rows,
        built.as_ref().ok(),
        &member_ids,
        with_assignment,
    )?;
    let schema = batch.schema();
    PyTable::try_new(vec![batch], schema)?.into_pyarrow(py)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fleet_evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(fleet_result_schema, m)?)?;
    Ok(())
}
