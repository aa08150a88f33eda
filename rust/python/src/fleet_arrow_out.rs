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
use kassign_core::fleet::churn::ChurnResult;
use kassign_core::fleet::metrics::Quality;
use kassign_core::fleet::{self, Group, GroupRows, GroupStats, ResultRow};

/// What a column is filled from: one group's evaluation.
struct Rows<'a> {
    cluster: &'a str,
    group_id: &'a str,
    rows: &'a [ResultRow],
    group_rows: &'a GroupRows,
}

/// How a column is filled from a group's evaluation, one value per result row.
type Fill = fn(&Rows<'_>) -> ArrayRef;

/// One column of the result: its name, its Arrow type (every column is nullable) and its values.
struct Column {
    name: &'static str,
    kind: DataType,
    fill: Fill,
}

fn col(name: &'static str, kind: DataType, fill: Fill) -> Column {
    Column { name, kind, fill }
}

/// Saturating to the Int32 columns' range.
fn i32c(v: i64) -> i32 {
    v.clamp(i32::MIN as i64, i32::MAX as i64) as i32
}

impl Rows<'_> {
    /// The same string on every row.
    fn repeated(&self, v: Option<&str>) -> ArrayRef {
        Arc::new(StringArray::from(vec![v; self.rows.len()]))
    }

    fn each_str(&self, get: fn(&ResultRow) -> Option<&str>) -> ArrayRef {
        Arc::new(StringArray::from(self.rows.iter().map(get).collect::<Vec<_>>()))
    }

    fn each_i32(&self, get: fn(&ResultRow) -> Option<i64>) -> ArrayRef {
        Arc::new(Int32Array::from(
            self.rows.iter().map(|r| get(r).map(i32c)).collect::<Vec<_>>(),
        ))
    }

    fn each_i64(&self, get: fn(&ResultRow) -> Option<i64>) -> ArrayRef {
        Arc::new(Int64Array::from(self.rows.iter().map(get).collect::<Vec<_>>()))
    }

    fn each_f64(&self, get: fn(&ResultRow) -> Option<f64>) -> ArrayRef {
        Arc::new(Float64Array::from(self.rows.iter().map(get).collect::<Vec<_>>()))
    }

    fn quality_i32(&self, get: fn(&Quality) -> i64) -> ArrayRef {
        self.each_i32_opt(|r| r.quality.as_ref(), get)
    }

    fn quality_f64(&self, get: fn(&Quality) -> Option<f64>) -> ArrayRef {
        Arc::new(Float64Array::from(
            self.rows
                .iter()
                .map(|r| r.quality.as_ref().and_then(get))
                .collect::<Vec<_>>(),
        ))
    }

    fn stats_i32(&self, get: fn(&GroupStats) -> i64) -> ArrayRef {
        self.each_i32_opt(|r| r.stats.as_ref(), get)
    }

    fn stats_i64(&self, get: fn(&GroupStats) -> i64) -> ArrayRef {
        Arc::new(Int64Array::from(
            self.rows.iter().map(|r| r.stats.as_ref().map(get)).collect::<Vec<_>>(),
        ))
    }

    fn churn_i32(&self, get: fn(&ChurnResult) -> i64) -> ArrayRef {
        self.each_i32_opt(|r| r.churn.as_ref(), get)
    }

    fn each_i32_opt<T>(&self, part: fn(&ResultRow) -> Option<&T>, get: fn(&T) -> i64) -> ArrayRef {
        Arc::new(Int32Array::from(
            self.rows
                .iter()
                .map(|r| part(r).map(|v| i32c(get(v))))
                .collect::<Vec<_>>(),
        ))
    }
}

/// The columns of the fleet evaluation's result, one row per (group, strategy), in order: the one
/// definition of the result schema (`kassign.fleet.group.result_schema` reads it from here) and of
/// where each value comes from. The `assignment` column, when asked, follows them.
fn columns() -> Vec<Column> {
    use DataType::{Boolean, Float64, Int32, Int64, Utf8};
    vec![
        col("cluster", Utf8, |c| c.repeated(Some(c.cluster))),
        col("group_id", Utf8, |c| c.repeated(Some(c.group_id))),
        col("strategy", Utf8, |c| c.each_str(|r| Some(r.strategy.as_str()))),
        col("status", Utf8, |c| {
            c.each_str(|r| Some(if r.error.is_some() { "error" } else { "ok" }))
        }),
        col("error", Utf8, |c| c.each_str(|r| r.error.as_deref())),
        col("state", Utf8, |c| c.repeated(c.group_rows.state.as_deref())),
        col("current_protocol", Utf8, |c| {
            c.repeated(c.group_rows.protocol.as_deref())
        }),
        // KIP-848 migration inputs: the group protocol ("classic" / "consumer", groups table) and
        // the number of members whose current assignment carries user data
        col("group_protocol", Utf8, |c| {
            c.repeated(c.group_rows.group_protocol.as_deref())
        }),
        col("custom_user_data", Int32, |c| {
            Arc::new(Int32Array::from(vec![
                Some(c.group_rows.custom_user_data);
                c.rows.len()
            ]))
        }),
        col("members", Int32, |c| c.each_i32(|r| Some(r.members_value()))),
        col("topics", Int32, |c| c.stats_i32(|g| g.topics)),
        col("missing_topics", Int32, |c| c.stats_i32(|g| g.missing_topics)),
        col("partitions", Int32, |c| c.quality_i32(|q| q.partitions)),
        col("assigned", Int32, |c| c.quality_i32(|q| q.assigned)),
        col("unassigned", Int32, |c| c.quality_i32(|q| q.unassigned)),
        col("min_count", Int32, |c| c.quality_i32(|q| q.min_count)),
        col("max_count", Int32, |c| c.quality_i32(|q| q.max_count)),
        col("count_spread", Int32, |c| c.quality_i32(|q| q.count_spread)),
        col("count_ratio", Float64, |c| c.quality_f64(|q| q.count_ratio)),
        col("sum_lag", Int64, |c| c.stats_i64(|g| g.sum_lag)),
        col("max_lag", Int64, |c| c.stats_i64(|g| g.max_lag)),
        col("uncommitted", Int32, |c| c.stats_i32(|g| g.uncommitted)),
        col("max_member_lag", Int64, |c| {
            c.each_i64(|r| r.quality.as_ref().map(|q| q.max_member_lag))
        }),
        col("mean_member_lag", Float64, |c| {
            c.quality_f64(|q| Some(q.mean_member_lag))
        }),
        col("lag_ratio", Float64, |c| c.quality_f64(|q| q.lag_ratio)),
        col("lag_ratio_bound", Float64, |c| c.quality_f64(|q| q.lag_ratio_bound)),
        // busiest member lag / max(top partition lag, mean): lag_ratio / lag_ratio_bound
        col("lag_vs_bound", Float64, |c| c.quality_f64(|q| q.lag_vs_bound())),
        col("lag_imbalanced", Boolean, |c| {
            Arc::new(BooleanArray::from(
                c.rows
                    .iter()
                    .map(|r| r.quality.as_ref().map(|q| q.lag_imbalanced))
                    .collect::<Vec<_>>(),
            ))
        }),
        col("moves", Int32, |c| c.quality_i32(|q| q.moves)),
        col("kept", Int32, |c| c.quality_i32(|q| q.kept)),
        col("rack_local", Int32, |c| c.quality_i32(|q| q.rack_local)),
        col("rack_eligible", Int32, |c| c.quality_i32(|q| q.rack_eligible)),
        col("rack_locality", Float64, |c| c.quality_f64(|q| q.rack_locality)),
        col("violations", Int32, |c| c.quality_i32(|q| q.violations)),
        col("time_ms", Float64, |c| c.each_f64(|r| r.time_ms)),
        col("churn_rounds", Int32, |c| c.churn_i32(|ch| ch.rounds)),
        col("churn_rebalances", Int32, |c| c.churn_i32(|ch| ch.rebalances)),
        col("churn_moves", Int64, |c| {
            c.each_i64(|r| r.churn.as_ref().map(|ch| ch.moves))
        }),
        col("churn_time_ms", Float64, |c| {
            c.each_f64(|r| r.churn.as_ref().map(|ch| ch.time_ms))
        }),
    ]
}

/// The result schema: [`columns`] and, with `with_assignment`, the `assignment` list column.
pub(crate) fn result_schema(with_assignment: bool) -> Arc<Schema> {
    let mut fields: Vec<Field> = columns()
        .into_iter()
        .map(|c| Field::new(c.name, c.kind, true))
        .collect();
    if with_assignment {
        fields.push(Field::new(
            "assignment",
            DataType::List(Arc::new(Field::new(
                "item",
                DataType::Struct(assignment_fields()),
                true,
            ))),
            true,
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

/// One group's result rows as a record batch in [`result_schema`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn to_batch(
    cluster: &str,
    group_id: &str,
    rows: &[ResultRow],
    group_rows: &GroupRows,
    group: Option<&Group>,
    member_ids: &[Option<String>],
    with_assignment: bool,
) -> PyResult<RecordBatch> {
    let n = rows.len();
    let source = Rows {
        cluster,
        group_id,
        rows,
        group_rows,
    };
    let mut cols: Vec<ArrayRef> = columns().iter().map(|c| (c.fill)(&source)).collect();
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
pub(crate) fn fleet_result_schema(py: Python<'_>, with_assignment: bool) -> PyResult<Bound<'_, PyAny>> {
    pyo3_arrow::PySchema::new(result_schema(with_assignment)).into_pyarrow(py)
}
