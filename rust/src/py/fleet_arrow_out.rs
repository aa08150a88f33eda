//! Arrow out: the result rows of a group's evaluation as one Arrow record batch, in the one
//! result schema of the fleet evaluation ([`result_schema`]; Python reads it through
//! `kassign._core.fleet_result_schema`).

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, ListArray, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use pyo3::prelude::*;

use super::fleet_arrow_in::arrow_err;
use crate::fleet::{self, Group, GroupRows, ResultRow};

/// The columns of the fleet evaluation's result, one row per (group, strategy): the one
/// definition (`kassign.fleet.group.result_schema` reads it from here).
pub(super) fn result_schema(with_assignment: bool) -> Arc<Schema> {
    use DataType::*;
    let f = |n: &str, t: DataType| Field::new(n, t, true);
    let mut fields = vec![
        f("cluster", Utf8),
        f("group_id", Utf8),
        f("strategy", Utf8),
        f("status", Utf8),
        f("error", Utf8),
        f("state", Utf8),
        f("current_protocol", Utf8),
        // KIP-848 migration inputs: the group protocol ("classic" / "consumer", groups table) and
        // the number of members whose current assignment carries user data
        f("group_protocol", Utf8),
        f("custom_user_data", Int32),
    ];
    for n in [
        "members",
        "topics",
        "missing_topics",
        "partitions",
        "assigned",
        "unassigned",
        "min_count",
        "max_count",
        "count_spread",
    ] {
        fields.push(f(n, Int32));
    }
    fields.push(f("count_ratio", Float64));
    fields.push(f("sum_lag", Int64));
    fields.push(f("max_lag", Int64));
    fields.push(f("uncommitted", Int32));
    fields.push(f("max_member_lag", Int64));
    fields.push(f("mean_member_lag", Float64));
    fields.push(f("lag_ratio", Float64));
    fields.push(f("lag_ratio_bound", Float64));
    // busiest member lag / max(top partition lag, mean): lag_ratio / lag_ratio_bound
    fields.push(f("lag_vs_bound", Float64));
    fields.push(f("lag_imbalanced", Boolean));
    for n in ["moves", "kept", "rack_local", "rack_eligible"] {
        fields.push(f(n, Int32));
    }
    fields.push(f("rack_locality", Float64));
    fields.push(f("violations", Int32));
    fields.push(f("time_ms", Float64));
    fields.push(f("churn_rounds", Int32));
    fields.push(f("churn_rebalances", Int32));
    fields.push(f("churn_moves", Int64));
    fields.push(f("churn_time_ms", Float64));
    if with_assignment {
        fields.push(f("assignment", List(Arc::new(f("item", Struct(assignment_fields()))))));
    }
    Arc::new(Schema::new(fields))
}

fn assignment_fields() -> Fields {
    Fields::from(vec![
        Field::new("member_id", DataType::Utf8, true),
        Field::new("topic", DataType::Utf8, true),
        Field::new("partition", DataType::Int32, true),
    ])
}

#[allow(clippy::too_many_arguments)]
pub(super) fn to_batch(
    cluster: &str,
    group_id: &str,
    rows: &[ResultRow],
    group_rows: &GroupRows,
    group: Option<&Group>,
    member_ids: &[Option<String>],
    with_assignment: bool,
) -> PyResult<RecordBatch> {
    let n = rows.len();
    let i32c = |v: i64| v.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    let s = |v: Option<&str>| -> ArrayRef { Arc::new(StringArray::from(vec![v; n])) };
    let q = |f: &dyn Fn(&fleet::metrics::Quality) -> i64| -> ArrayRef {
        Arc::new(Int32Array::from(
            rows.iter()
                .map(|r| r.quality.as_ref().map(|q| i32c(f(q))))
                .collect::<Vec<_>>(),
        ))
    };
    let qf = |f: &dyn Fn(&fleet::metrics::Quality) -> Option<f64>| -> ArrayRef {
        Arc::new(Float64Array::from(
            rows.iter().map(|r| r.quality.as_ref().and_then(f)).collect::<Vec<_>>(),
        ))
    };
    let st = |f: &dyn Fn(&fleet::GroupStats) -> i64| -> Vec<Option<i64>> {
        rows.iter().map(|r| r.stats.as_ref().map(f)).collect()
    };
    let ch = |f: &dyn Fn(&fleet::churn::ChurnResult) -> i64| -> Vec<Option<i64>> {
        rows.iter().map(|r| r.churn.as_ref().map(f)).collect()
    };
    let to32 = |v: Vec<Option<i64>>| -> ArrayRef {
        Arc::new(Int32Array::from(v.into_iter().map(|x| x.map(i32c)).collect::<Vec<_>>()))
    };
    let to64 = |v: Vec<Option<i64>>| -> ArrayRef { Arc::new(Int64Array::from(v)) };
    let mut cols: Vec<ArrayRef> = vec![
        s(Some(cluster)),
        s(Some(group_id)),
        Arc::new(StringArray::from(
            rows.iter().map(|r| Some(r.strategy.as_str())).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            rows.iter()
                .map(|r| Some(if r.error.is_some() { "error" } else { "ok" }))
                .collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            rows.iter().map(|r| r.error.as_deref()).collect::<Vec<_>>(),
        )),
        s(group_rows.state.as_deref()),
        s(group_rows.protocol.as_deref()),
        s(group_rows.group_protocol.as_deref()),
        Arc::new(Int32Array::from(vec![Some(group_rows.custom_user_data); n])),
        // members: the metric when measured, else the group's (or row count's) size
        to32(
            rows.iter()
                .map(|r| Some(r.quality.as_ref().map_or(r.members, |q| q.members)))
                .collect(),
        ),
        to32(st(&|g| g.topics)),
        to32(st(&|g| g.missing_topics)),
        q(&|q| q.partitions),
        q(&|q| q.assigned),
        q(&|q| q.unassigned),
        q(&|q| q.min_count),
        q(&|q| q.max_count),
        q(&|q| q.count_spread),
        qf(&|q| q.count_ratio),
        to64(st(&|g| g.sum_lag)),
        to64(st(&|g| g.max_lag)),
        to32(st(&|g| g.uncommitted)),
        Arc::new(Int64Array::from(
            rows.iter()
                .map(|r| r.quality.as_ref().map(|q| q.max_member_lag))
                .collect::<Vec<_>>(),
        )),
        qf(&|q| Some(q.mean_member_lag)),
        qf(&|q| q.lag_ratio),
        qf(&|q| q.lag_ratio_bound),
        qf(&|q| q.lag_ratio.zip(q.lag_ratio_bound).map(|(r, b)| r / b)),
        Arc::new(BooleanArray::from(
            rows.iter()
                .map(|r| r.quality.as_ref().map(|q| q.lag_imbalanced))
                .collect::<Vec<_>>(),
        )),
        q(&|q| q.moves),
        q(&|q| q.kept),
        q(&|q| q.rack_local),
        q(&|q| q.rack_eligible),
        qf(&|q| q.rack_locality),
        q(&|q| q.violations),
        Arc::new(Float64Array::from(rows.iter().map(|r| r.time_ms).collect::<Vec<_>>())),
        to32(ch(&|c| c.rounds)),
        to32(ch(&|c| c.rebalances)),
        to64(ch(&|c| c.moves)),
        Arc::new(Float64Array::from(
            rows.iter()
                .map(|r| r.churn.as_ref().map(|c| c.time_ms))
                .collect::<Vec<_>>(),
        )),
    ];
    if with_assignment {
        let mut offsets = vec![0i32];
        let (mut mid, mut top, mut part) = (Vec::new(), Vec::new(), Vec::new());
        let mut valid = Vec::with_capacity(n);
        for r in rows {
            if let (Some(a), Some(g)) = (&r.assignment, group) {
                for &(row, f) in a {
                    let (t, p) = fleet::problem::topic_partition(&g.problem, f);
                    mid.push(member_ids[row as usize].clone());
                    top.push(Some(t.to_string()));
                    part.push(Some(p as i32));
                }
                valid.push(true);
            } else {
                valid.push(false);
            }
            offsets.push(mid.len() as i32);
        }
        let values = StructArray::new(
            assignment_fields(),
            vec![
                Arc::new(StringArray::from(mid)) as ArrayRef,
                Arc::new(StringArray::from(top)),
                Arc::new(Int32Array::from(part)),
            ],
            None,
        );
        let list = ListArray::try_new(
            Arc::new(Field::new("item", DataType::Struct(assignment_fields()), true)),
            arrow_buffer::OffsetBuffer::new(offsets.into()),
            Arc::new(values),
            Some(valid.into()),
        )
        .map_err(arrow_err)?;
        cols.push(Arc::new(list));
    }
    RecordBatch::try_new(result_schema(with_assignment), cols).map_err(arrow_err)
}

/// The schema of `fleet_evaluate`'s result (with the `assignment` column when asked).
#[pyfunction]
pub(super) fn fleet_result_schema(py: Python<'_>, with_assignment: bool) -> PyResult<Bound<'_, PyAny>> {
    pyo3_arrow::PySchema::new(result_schema(with_assignment)).into_pyarrow(py)
}
