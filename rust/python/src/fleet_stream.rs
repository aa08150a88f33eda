//! The stream plan's per-group inputs in the core: `kassign._core.StreamIndex` and
//! `kassign._core.fleet_evaluate_stream`.
//!
//! The stream plan (python/kassign/fleet/stream.py) hands each task sorted record batches of the
//! rows keyed by group (members, one row per group with where its committed offsets are in the
//! offsets file, groups-table rows, told apart by `kind`) and ships the partitions (one row per
//! (cluster, topic), `stream.compact_partitions`) and committed offsets (`stream.pack_offsets`) as
//! memory-mapped Arrow IPC files. A [`StreamIndex`] reads those two files once per task (through
//! the Arrow C stream interface: no copy of the mapped pages); `fleet_evaluate_stream` then reads
//! one group's stream rows and the index straight into the core's [`GroupRows`] — the rows
//! `stream.group_inputs` (the Python reference, kept in the tests) builds as two pyarrow tables
//! for `fleet_evaluate` — and evaluates the group as `fleet_evaluate` does.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, Int8Type};
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, ListArray, RecordBatch, StringArray, StructArray};
use arrow_schema::DataType;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3_arrow::PyTable;

use crate::fleet::{evaluate_decoded, EvalArgs, EvalSettings};
use crate::fleet_arrow_in::{decode_members, one_batch, push_part};
use kassign_core::fleet::{FastMap, GroupRows, PartRow};

fn type_err(what: &str, e: impl std::fmt::Display) -> PyErr {
    PyTypeError::new_err(format!("StreamIndex: {what}: {e}"))
}

fn cast(a: &ArrayRef, to: &DataType, what: &str) -> PyResult<ArrayRef> {
    if a.data_type() == to {
        return Ok(a.clone());
    }
    arrow_cast::cast(a.as_ref(), to).map_err(|e| type_err(what, e))
}

fn column(batch: &RecordBatch, name: &str, to: &DataType, what: &str) -> PyResult<Option<ArrayRef>> {
    batch.column_by_name(name).map(|c| cast(c, to, what)).transpose()
}

/// Strings, plain or dictionary-encoded (the files keep rack and topic names as dictionaries).
enum StringColumn {
    Plain(StringArray),
    Dict(Int32Array, StringArray),
}

impl StringColumn {
    fn new(a: &ArrayRef, what: &str) -> PyResult<StringColumn> {
        match a.data_type() {
            DataType::Dictionary(_, _) => {
                let d = cast(
                    a,
                    &DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                    what,
                )?;
                let d = d.as_dictionary::<Int32Type>();
                Ok(StringColumn::Dict(
                    d.keys().clone(),
                    d.values().as_string::<i32>().clone(),
                ))
            }
            _ => Ok(StringColumn::Plain(
                cast(a, &DataType::Utf8, what)?.as_string::<i32>().clone(),
            )),
        }
    }

    fn get(&self, i: usize) -> Option<&str> {
        match self {
            StringColumn::Plain(s) => s.is_valid(i).then(|| s.value(i)),
            StringColumn::Dict(k, v) => {
                if k.is_null(i) {
                    return None;
                }
                let c = k.value(i) as usize;
                (c < v.len() && v.is_valid(c)).then(|| v.value(c))
            }
        }
    }
}

/// The committed offsets file (`stream.pack_offsets`' rows).
struct Offsets {
    /// The topic dictionary's code of each row (null: no topic).
    topic: Int32Array,
    /// Topic name -> its code (the last code of a name seen twice, as the Python index).
    code_of: FastMap<String, i32>,
    partition: Int32Array,
    offset: Int64Array,
}

/// The partitions and committed offsets files of the stream plan, read once per task.
#[pyclass(frozen, module = "kassign._core")]
pub struct StreamIndex {
    /// One row per (cluster, topic): its partitions, list<struct<partition, replica_racks,
    /// beginning_offset, end_offset>>.
    parts: ListArray,
    elems: StructArray,
    partition: Option<Int32Array>,
    racks: Option<(ListArray, StringColumn)>,
    beginning: Option<Int64Array>,
    end: Option<Int64Array>,
    /// (cluster, topic) -> its row.
    rows: FastMap<(String, String), u32>,
    offsets: Option<Offsets>,
}

#[pymethods]
impl StreamIndex {
    /// `parts`: the `stream.write_compact_partitions` table (cluster, topic, parts); `offsets`:
    /// the `stream.pack_offsets` rows table (topic, partition, offset), or None.
    #[new]
    #[pyo3(signature = (parts, offsets=None))]
    fn new(py: Python<'_>, parts: PyTable, offsets: Option<PyTable>) -> PyResult<Self> {
        let parts = one_batch(parts)?;
        let offsets = offsets.map(one_batch).transpose()?;
        py.detach(|| build_index(&parts, offsets.as_ref()))
    }

    /// (cluster, topic) rows of the partitions file.
    fn __len__(&self) -> usize {
        self.rows.len()
    }
}

fn build_index(parts: &RecordBatch, offsets: Option<&RecordBatch>) -> PyResult<StreamIndex> {
    let utf8 = &DataType::Utf8;
    let cluster = column(parts, "cluster", utf8, "cluster")?.ok_or_else(|| type_err("partitions", "no cluster"))?;
    let topic = column(parts, "topic", utf8, "topic")?.ok_or_else(|| type_err("partitions", "no topic"))?;
    let (cluster, topic) = (cluster.as_string::<i32>(), topic.as_string::<i32>());
    let list = parts
        .column_by_name("parts")
        .ok_or_else(|| type_err("partitions", "no parts column"))?;
    let list = list
        .as_list_opt::<i32>()
        .ok_or_else(|| type_err("parts", "expected a list"))?
        .clone();
    let elems = list
        .values()
        .as_struct_opt()
        .ok_or_else(|| type_err("parts", "expected list<struct>"))?
        .clone();
    let child = |name: &str, to: &DataType| -> PyResult<Option<ArrayRef>> {
        elems.column_by_name(name).map(|c| cast(c, to, name)).transpose()
    };
    let partition = child("partition", &DataType::Int32)?.map(|a| a.as_primitive::<Int32Type>().clone());
    let beginning = child("beginning_offset", &DataType::Int64)?.map(|a| a.as_primitive::<Int64Type>().clone());
    let end = child("end_offset", &DataType::Int64)?.map(|a| a.as_primitive::<Int64Type>().clone());
    let racks = match elems.column_by_name("replica_racks") {
        None => None,
        Some(r) => {
            let l = r
                .as_list_opt::<i32>()
                .ok_or_else(|| type_err("replica_racks", "expected a list"))?
                .clone();
            let names = StringColumn::new(l.values(), "replica_racks")?;
            Some((l, names))
        }
    };
    let mut rows = FastMap::default();
    for i in 0..parts.num_rows() {
        if cluster.is_valid(i) && topic.is_valid(i) {
            // a later row of the same key replaces an earlier one, as in the Python index's dict
            rows.insert((cluster.value(i).to_string(), topic.value(i).to_string()), i as u32);
        }
    }
    let offsets = match offsets {
        None => None,
        Some(o) if o.num_rows() == 0 => None,
        Some(o) => {
            let t = o
                .column_by_name("topic")
                .ok_or_else(|| type_err("offsets", "no topic column"))?;
            let dict = cast(
                t,
                &DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                "offsets topic",
            )?;
            let dict = dict.as_dictionary::<Int32Type>();
            let values = dict.values().as_string::<i32>();
            let mut code_of = FastMap::default();
            for c in 0..values.len() {
                if values.is_valid(c) {
                    code_of.insert(values.value(c).to_string(), c as i32);
                }
            }
            let partition = column(o, "partition", &DataType::Int32, "offsets partition")?
                .ok_or_else(|| type_err("offsets", "no partition column"))?;
            let offset = column(o, "offset", &DataType::Int64, "offsets offset")?
                .ok_or_else(|| type_err("offsets", "no offset column"))?;
            Some(Offsets {
                topic: dict.keys().clone(),
                code_of,
                partition: partition.as_primitive::<Int32Type>().clone(),
                offset: offset.as_primitive::<Int64Type>().clone(),
            })
        }
    };
    Ok(StreamIndex {
        parts: list,
        elems,
        partition,
        racks,
        beginning,
        end,
        rows,
        offsets,
    })
}

fn opt<T: Array>(a: &Option<T>, i: usize) -> bool {
    a.as_ref().is_some_and(|a| a.is_valid(i))
}

/// The first non-null value of a string column over the rows where `keep` holds.
fn first_valid(col: &Option<StringArray>, rows: &[usize]) -> Option<String> {
    let c = col.as_ref()?;
    rows.iter().find(|&&i| c.is_valid(i)).map(|&i| c.value(i).to_string())
}

/// One group's stream rows (any order of `kind`) into the core's rows, with the index.
fn decode_stream(batch: &RecordBatch, index: &StreamIndex) -> PyResult<GroupRows> {
    let n = batch.num_rows();
    let kind = column(batch, "kind", &DataType::Int8, "kind")?
        .ok_or_else(|| PyValueError::new_err("fleet_evaluate_stream: the group's rows have no kind column"))?;
    let kind = kind.as_primitive::<Int8Type>();
    let of_kind = |k: i8| -> Vec<usize> { (0..n).filter(|&i| kind.is_valid(i) && kind.value(i) == k).collect() };
    let (member_rows, offset_rows, group_rows) = (of_kind(0), of_kind(1), of_kind(2));
    let members = if member_rows.iter().enumerate().all(|(j, &i)| i == j) {
        batch.slice(0, member_rows.len())
    } else {
        let take = arrow_array::UInt32Array::from(member_rows.iter().map(|&i| i as u32).collect::<Vec<_>>());
        let cols = batch
            .columns()
            .iter()
            .map(|c| arrow_select::take::take(c.as_ref(), &take, None))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| PyValueError::new_err(format!("fleet_evaluate_stream: {e}")))?;
        RecordBatch::try_new(batch.schema(), cols)
            .map_err(|e| PyValueError::new_err(format!("fleet_evaluate_stream: {e}")))?
    };
    let mut g = GroupRows::default();
    decode_members(&members, &mut g)?;

    // Distinct subscribed topics, first seen first, that have partitions in the group's cluster.
    let cluster = column(batch, "cluster", &DataType::Utf8, "cluster")?;
    let cluster = cluster
        .as_ref()
        .map(|c| c.as_string::<i32>())
        .and_then(|c| (n > 0 && c.is_valid(0)).then(|| c.value(0).to_string()));
    let mut seen = vec![false; g.topics.names.len()];
    let mut topics: Vec<(String, u32)> = Vec::new();
    for m in &g.members {
        for t in m.topics.iter().flatten().flatten() {
            if std::mem::replace(&mut seen[*t as usize], true) {
                continue;
            }
            let name = g.topics.get(*t);
            if let Some(c) = &cluster {
                if let Some(&row) = index.rows.get(&(c.clone(), name.to_string())) {
                    topics.push((name.to_string(), row));
                }
            }
        }
    }

    // The group's committed offsets: the spans its offset rows point at, in order.
    let mut own: Vec<usize> = Vec::new();
    if let (Some(off), false) = (&index.offsets, topics.is_empty()) {
        let start = column(batch, "offsets_start", &DataType::Int64, "offsets_start")?;
        let stop = column(batch, "offsets_end", &DataType::Int64, "offsets_end")?;
        if let (Some(s), Some(e)) = (start, stop) {
            let (s, e) = (s.as_primitive::<Int64Type>(), e.as_primitive::<Int64Type>());
            let rows = off.topic.len() as i64;
            for &i in &offset_rows {
                if s.is_valid(i) && e.is_valid(i) && e.value(i) > s.value(i) {
                    let (a, b) = (s.value(i), e.value(i));
                    if a < 0 || b > rows {
                        return Err(PyValueError::new_err(format!(
                            "fleet_evaluate_stream: offsets rows {a}..{b} outside the offsets file ({rows} rows)"
                        )));
                    }
                    own.extend(a as usize..b as usize);
                }
            }
        }
    }

    let mut committed: FastMap<i32, Vec<Option<i64>>> = FastMap::default();
    for (name, row) in &topics {
        let t = g.topics.intern(name);
        committed.clear();
        if let Some(off) = &index.offsets {
            if let Some(&code) = off.code_of.get(name) {
                for &j in &own {
                    if off.topic.is_valid(j) && off.topic.value(j) == code && off.partition.is_valid(j) {
                        let c = off.offset.is_valid(j).then(|| off.offset.value(j));
                        committed.entry(off.partition.value(j)).or_default().push(c);
                    }
                }
            }
        }
        let r = *row as usize;
        if index.parts.is_null(r) {
            continue;
        }
        let o = index.parts.value_offsets();
        let ps = &index.elems;
        for j in o[r] as usize..o[r + 1] as usize {
            let valid = ps.is_valid(j);
            let partition = (valid && opt(&index.partition, j)).then(|| index.partition.as_ref().unwrap().value(j));
            let racks = match &index.racks {
                Some((l, names)) if valid && l.is_valid(j) => {
                    let lo = l.value_offsets();
                    Some(
                        (lo[j] as usize..lo[j + 1] as usize)
                            .map(|k| names.get(k).map(str::to_string))
                            .collect(),
                    )
                }
                _ => None,
            };
            let row = PartRow {
                topic: Some(t),
                partition,
                racks,
                beginning: (valid && opt(&index.beginning, j)).then(|| index.beginning.as_ref().unwrap().value(j)),
                end: (valid && opt(&index.end, j)).then(|| index.end.as_ref().unwrap().value(j)),
                committed: None,
            };
            push_part(&mut g, row, partition.and_then(|pt| committed.get(&pt)));
        }
    }

    // The marker: the first non-null state, protocol and group protocol of the groups-table rows.
    let strings = |name: &str| -> PyResult<Option<StringArray>> {
        Ok(column(batch, name, &DataType::Utf8, name)?.map(|a| a.as_string::<i32>().clone()))
    };
    let state = first_valid(&strings("state")?, &group_rows);
    let protocol = first_valid(&strings("protocol")?, &group_rows);
    let group_protocol = first_valid(&strings("group_protocol")?, &group_rows).filter(|p| !p.is_empty());
    g.add_marker(state.as_deref(), protocol.as_deref());
    g.group_protocol = group_protocol;
    Ok(g)
}

/// `fleet_evaluate` on one group's stream rows and the task's [`StreamIndex`]: the same result
/// table.
#[pyfunction]
fn fleet_evaluate_stream<'py>(
    py: Python<'py>,
    cluster: &str,
    group_id: &str,
    group: PyTable,
    index: Py<StreamIndex>,
    strategies: Vec<String>,
    settings: EvalSettings<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    let batch = one_batch(group)?;
    let args = EvalArgs {
        cluster,
        group_id,
        strategies,
        settings,
    };
    let idx = index.get();
    evaluate_decoded(py, args, move || decode_stream(&batch, idx))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StreamIndex>()?;
    m.add_function(wrap_pyfunction!(fleet_evaluate_stream, m)?)?;
    Ok(())
}
