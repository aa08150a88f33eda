//! Arrow out: the result rows of a group's evaluation as one Arrow record batch, in the one
//! result schema of the fleet evaluation ([`result_schema`]; Python reads it through
//! `kassign._core.fleet_result_schema`).

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, ListArray, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use pyo3::prelude::*;

use crate::fleet_arrow_in::arrow_err;
use kassign_core::fleet::{self, Group, GroupRows, ResultRow};

/// The columns of the fleet evaluation's result, one row per (group, strategy): the one
/// definition (`kassign.fleet.group.result_schema` reads it from here).
pub(super) fn result_schema(with_assignment: bool) -> Arc<Schema> {
    use DataType::*;
    let field = |name: &str, t: DataType| Field::new(name, t, true);
    let mut fields = vec![
        field("cluster", Utf8),
        field("group_id", Utf8),
        field("strategy", Utf8),
        field("status", Utf8),
        field("error", Utf8),
        field("state", Utf8),
        field("current_protocol", Utf8),
        // KIP-848 migration inputs: the group protocol ("classic" / "consumer", groups table) and
        // the number of members whose current assignment carries user data
        field("group_protocol", Utf8),
        field("custom_user_data", Int32),
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
        fields.push(field(n, Int32));
    }
    fields.push(field("count_ratio", Float64));
    fields.push(field("sum_lag", Int64));
    fields.push(field("max_lag", Int64));
    fields.push(field("uncommitted", Int32));
    fields.push(field("max_member_lag", Int64));
    fields.push(field("mean_member_lag", Float64));
    fields.push(field("lag_ratio", Float64));
    fields.push(field("lag_ratio_bound", Float64));
    // busiest member lag / max(top partition lag, mean): lag_ratio / lag_ratio_bound
    fields.push(field("lag_vs_bound", Float64));
    fields.push(field("lag_imbalanced", Boolean));
    for n in ["moves", "kept", "rack_local", "rack_eligible"] {
        fields.push(field(n, Int32));
    }
    fields.push(field("rack_locality", Float64));
    fields.push(field("violations", Int32));
    fields.push(field("time_ms", Float64));
    fields.push(field("churn_rounds", Int32));
    fields.push(field("churn_rebalances", Int32));
    fields.push(field("churn_moves", Int64));
    fields.push(field("churn_time_ms", Float64));
    if with_assignment {
        fields.push(field(
            "assignment",
            List(Arc::new(field("item", Struct(assignment_fields())))),
        ));
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
    let repeated_str = |v: Option<&str>| -> ArrayRef { Arc::new(StringArray::from(vec![v; n])) };
    let quality_i32 = |get: &dyn Fn(&fleet::metrics::Quality) -> i64| -> ArrayRef {
        Arc::new(Int32Array::from(
            rows.iter()
                .map(|r| r.quality.as_ref().map(|q| i32c(get(q))))
                .collect::<Vec<_>>(),
        ))
    };
    let quality_f64 = |get: &dyn Fn(&fleet::metrics::Quality) -> Option<f64>| -> ArrayRef {
        Arc::new(Float64Array::from(
            rows.iter()
                .map(|r| r.quality.as_ref().and_then(get))
                .collect::<Vec<_>>(),
        ))
    };
    let stats_col = |get: &dyn Fn(&fleet::GroupStats) -> i64| -> Vec<Option<i64>> {
        rows.iter().map(|r| r.stats.as_ref().map(get)).collect()
    };
    let churn_col = |get: &dyn Fn(&fleet::churn::ChurnResult) -> i64| -> Vec<Option<i64>> {
        rows.iter().map(|r| r.churn.as_ref().map(get)).collect()
    };
    let to32 = |v: Vec<Option<i64>>| -> ArrayRef {
        Arc::new(Int32Array::from(v.into_iter().map(|x| x.map(i32c)).collect::<Vec<_>>()))
    };
    let to64 = |v: Vec<Option<i64>>| -> ArrayRef { Arc::new(Int64Array::from(v)) };
    let mut cols: Vec<ArrayRef> = vec![
        repeated_str(Some(cluster)),
        repeated_str(Some(group_id)),
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
        repeated_str(group_rows.state.as_deref()),
        repeated_str(group_rows.protocol.as_deref()),
        repeated_str(group_rows.group_protocol.as_deref()),
        Arc::new(Int32Array::from(vec![Some(group_rows.custom_user_data); n])),
        to32(rows.iter().map(|r| Some(r.members_value())).collect()),
        to32(stats_col(&|g| g.topics)),
        to32(stats_col(&|g| g.missing_topics)),
        quality_i32(&|q| q.partitions),
        quality_i32(&|q| q.assigned),
        quality_i32(&|q| q.unassigned),
        quality_i32(&|q| q.min_count),
        quality_i32(&|q| q.max_count),
        quality_i32(&|q| q.count_spread),
        quality_f64(&|q| q.count_ratio),
        to64(stats_col(&|g| g.sum_lag)),
        to64(stats_col(&|g| g.max_lag)),
        to32(stats_col(&|g| g.uncommitted)),
        Arc::new(Int64Array::from(
            rows.iter()
                .map(|r| r.quality.as_ref().map(|q| q.max_member_lag))
                .collect::<Vec<_>>(),
        )),
        quality_f64(&|q| Some(q.mean_member_lag)),
        quality_f64(&|q| q.lag_ratio),
        quality_f64(&|q| q.lag_ratio_bound),
        quality_f64(&|q| q.lag_vs_bound()),
        Arc::new(BooleanArray::from(
            rows.iter()
                .map(|r| r.quality.as_ref().map(|q| q.lag_imbalanced))
                .collect::<Vec<_>>(),
        )),
        quality_i32(&|q| q.moves),
        quality_i32(&|q| q.kept),
        quality_i32(&|q| q.rack_local),
        quality_i32(&|q| q.rack_eligible),
        quality_f64(&|q| q.rack_locality),
        quality_i32(&|q| q.violations),
        Arc::new(Float64Array::from(rows.iter().map(|r| r.time_ms).collect::<Vec<_>>())),
        to32(churn_col(&|c| c.rounds)),
        to32(churn_col(&|c| c.rebalances)),
        to64(churn_col(&|c| c.moves)),
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
