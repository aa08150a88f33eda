//! Arrow in: a group's pyarrow tables (members, partition side) decoded into the core's
//! [`GroupRows`], through the Arrow C stream interface (pyo3-arrow): no copy, no Python object
//! per row. Conversion only; the rules of what the rows mean live in [`kassign_core::fleet`].

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, Int32Array, Int64Array, ListArray, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3_arrow::PyTable;

use kassign_core::fleet::{FastMap, GroupRows, MemberRow, PartRow};

pub(super) fn arrow_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("fleet_evaluate: {e}"))
}

/// The table's batches as one batch (a group usually arrives as a single batch).
pub(super) fn one_batch(table: PyTable) -> PyResult<RecordBatch> {
    let (batches, schema) = table.into_inner();
    if batches.len() == 1 {
        return Ok(batches.into_iter().next().unwrap());
    }
    arrow_select::concat::concat_batches(&schema, &batches).map_err(arrow_err)
}

fn cast_to(a: &ArrayRef, to: &DataType) -> PyResult<ArrayRef> {
    if a.data_type() == to {
        return Ok(a.clone());
    }
    arrow_cast::cast(a.as_ref(), to)
        .map_err(|e| PyTypeError::new_err(format!("fleet_evaluate: cannot read {} as {to}: {e}", a.data_type())))
}

/// Column accessors over a batch: absent columns read as all-null (the reference does the same).
struct Columns<'a> {
    batch: &'a RecordBatch,
}

impl<'a> Columns<'a> {
    fn get(&self, name: &str, to: &DataType) -> PyResult<Option<ArrayRef>> {
        self.batch
            .column_by_name(name)
            .map(|c| cast_to(c, to).map_err(|e| PyTypeError::new_err(format!("column {name}: {e}"))))
            .transpose()
    }

    fn utf8(&self, name: &str) -> PyResult<Option<StringArray>> {
        Ok(self.get(name, &DataType::Utf8)?.map(|a| a.as_string::<i32>().clone()))
    }

    fn i32(&self, name: &str) -> PyResult<Option<Int32Array>> {
        Ok(self
            .get(name, &DataType::Int32)?
            .map(|a| a.as_primitive::<Int32Type>().clone()))
    }

    fn i64(&self, name: &str) -> PyResult<Option<Int64Array>> {
        Ok(self
            .get(name, &DataType::Int64)?
            .map(|a| a.as_primitive::<Int64Type>().clone()))
    }

    fn binary(&self, name: &str) -> PyResult<Option<BinaryArray>> {
        Ok(self.get(name, &DataType::Binary)?.map(|a| a.as_binary::<i32>().clone()))
    }

    /// A list column with its values cast to `value` (a list of structs keeps its struct values).
    fn list(&self, name: &str, value: Option<&DataType>) -> PyResult<Option<ListArray>> {
        let Some(c) = self.batch.column_by_name(name) else {
            return Ok(None);
        };
        let item = match (c.data_type(), value) {
            (_, Some(v)) => v.clone(),
            (DataType::List(f) | DataType::LargeList(f), None) => f.data_type().clone(),
            (t, None) => return Err(PyTypeError::new_err(format!("column {name}: expected a list, got {t}"))),
        };
        let to = DataType::List(Arc::new(Field::new("item", item, true)));
        let a = cast_to(c, &to).map_err(|e| PyTypeError::new_err(format!("column {name}: {e}")))?;
        Ok(Some(a.as_list::<i32>().clone()))
    }
}

fn opt_str(a: &Option<StringArray>, i: usize) -> Option<&str> {
    a.as_ref().and_then(|a| a.is_valid(i).then(|| a.value(i)))
}

fn opt_i32(a: &Option<Int32Array>, i: usize) -> Option<i32> {
    a.as_ref().and_then(|a| a.is_valid(i).then(|| a.value(i)))
}

fn opt_i64(a: &Option<Int64Array>, i: usize) -> Option<i64> {
    a.as_ref().and_then(|a| a.is_valid(i).then(|| a.value(i)))
}

/// A list<string> cell: None for a null list, names (None for null elements) otherwise.
fn string_list(list: &Option<ListArray>, i: usize, mut each: impl FnMut(Option<&str>)) -> bool {
    let Some(l) = list else { return false };
    if l.is_null(i) {
        return false;
    }
    let values = l.values().as_string::<i32>();
    let offsets = l.value_offsets();
    for j in offsets[i] as usize..offsets[i + 1] as usize {
        each(values.is_valid(j).then(|| values.value(j)));
    }
    true
}

pub(super) fn decode(members: &RecordBatch, parts: &RecordBatch) -> PyResult<GroupRows> {
    let mut g = GroupRows::default();
    decode_members(members, &mut g)?;
    let p = Columns { batch: parts };
    if parts.column_by_name("parts").is_some() {
        decode_topic_rows(&p, parts.num_rows(), &mut g)?;
        return Ok(g);
    }
    decode_part_rows(&p, parts.num_rows(), &mut g)?;
    Ok(g)
}

/// The member rows of a group (columns by name; others are ignored) into `g.members`.
pub(super) fn decode_members(members: &RecordBatch, g: &mut GroupRows) -> PyResult<()> {
    let m = Columns { batch: members };
    let (ids, gids, racks) = (m.utf8("member_id")?, m.utf8("group_instance_id")?, m.utf8("rack")?);
    let topics = m.list("topics", Some(&DataType::Utf8))?;
    let generation = m.i32("generation")?;
    let user_data = m.binary("user_data")?;
    let owned = m.list("owned_partitions", None)?;
    let (owned_topic, owned_part, owned_struct) = match &owned {
        Some(l) => {
            let s = l.values().as_struct_opt().ok_or_else(|| {
                PyTypeError::new_err("column owned_partitions: expected list<struct<topic, partition>>")
            })?;
            let child = |name: &str, to: &DataType| -> PyResult<Option<ArrayRef>> {
                s.column_by_name(name).map(|c| cast_to(c, to)).transpose()
            };
            let t = child("topic", &DataType::Utf8)?.map(|a| a.as_string::<i32>().clone());
            let p = child("partition", &DataType::Int32)?.map(|a| a.as_primitive::<Int32Type>().clone());
            (t, p, Some(s.clone()))
        }
        None => (None, None, None),
    };
    // members whose current assignment carries user data (KIP-848 migration input)
    if let Some(a) = m.binary("assignment_user_data")? {
        g.custom_user_data += (0..a.len())
            .filter(|&i| a.is_valid(i) && !a.value(i).is_empty())
            .count() as i32;
    }
    for i in 0..members.num_rows() {
        let mut row = MemberRow {
            id: opt_str(&ids, i).map(str::to_string),
            instance_id: opt_str(&gids, i).map(str::to_string),
            rack: opt_str(&racks, i).map(str::to_string),
            generation: opt_i32(&generation, i),
            user_data: user_data
                .as_ref()
                .and_then(|a| a.is_valid(i).then(|| a.value(i).to_vec())),
            ..Default::default()
        };
        let mut names = Vec::new();
        if string_list(&topics, i, |t| names.push(t.map(|t| g.topics.intern(t)))) {
            row.topics = Some(names);
        }
        if let (Some(l), Some(s)) = (&owned, &owned_struct) {
            if l.is_valid(i) {
                let offsets = l.value_offsets();
                let claims = (offsets[i] as usize..offsets[i + 1] as usize)
                    .map(|j| {
                        s.is_valid(j).then(|| {
                            (
                                opt_str(&owned_topic, j).map(|t| g.topics.intern(t)),
                                opt_i32(&owned_part, j),
                            )
                        })
                    })
                    .collect();
                row.owned = Some(claims);
            }
        }
        g.members.push(row);
    }
    Ok(())
}

/// The partition side as one row per partition (the cogroup plan's join).
fn decode_part_rows(p: &Columns<'_>, n: usize, g: &mut GroupRows) -> PyResult<()> {
    let (topic, partition) = (p.utf8("topic")?, p.i32("partition")?);
    let replica_racks = p.list("replica_racks", Some(&DataType::Utf8))?;
    let (beginning, end, committed) = (p.i64("beginning_offset")?, p.i64("end_offset")?, p.i64("committed")?);
    let (state, protocol) = (p.utf8("state")?, p.utf8("protocol")?);
    let group_protocol = p.utf8("group_protocol")?;
    for i in 0..n {
        let Some(t) = opt_str(&topic, i) else {
            g.add_marker(opt_str(&state, i), opt_str(&protocol, i));
            if topic.is_some() {
                g.add_group_protocol(opt_str(&group_protocol, i));
            }
            continue;
        };
        let mut rs = Vec::new();
        let has = string_list(&replica_racks, i, |r| rs.push(r.map(str::to_string)));
        g.parts.push(PartRow {
            topic: Some(g.topics.intern(t)),
            partition: opt_i32(&partition, i),
            racks: has.then_some(rs),
            beginning: opt_i64(&beginning, i),
            end: opt_i64(&end, i),
            committed: opt_i64(&committed, i),
        });
    }
    Ok(())
}

/// The job's compact partition side: one row per subscribed topic, with the topic's partitions
/// (`parts`: list<struct<partition, replica_racks, beginning_offset, end_offset>>) and the group's
/// committed offsets of it (`offsets`: list<struct<partition, committed>>, null when none), plus
/// marker rows (`topic` null). Expanded to the rows the join of partitions with offsets gives: one
/// row per (partition, matching committed offset), or one with no committed offset.
fn decode_topic_rows(p: &Columns<'_>, n: usize, g: &mut GroupRows) -> PyResult<()> {
    let topic = p.utf8("topic")?;
    let (state, protocol) = (p.utf8("state")?, p.utf8("protocol")?);
    let group_protocol = p.utf8("group_protocol")?;
    let parts = p.list("parts", None)?.expect("checked by the caller");
    let ps = parts
        .values()
        .as_struct_opt()
        .ok_or_else(|| PyTypeError::new_err("column parts: expected list<struct<partition, ...>>"))?
        .clone();
    let child = |s: &StructArray, name: &str, to: &DataType| -> PyResult<Option<ArrayRef>> {
        s.column_by_name(name).map(|c| cast_to(c, to)).transpose()
    };
    let part = child(&ps, "partition", &DataType::Int32)?.map(|a| a.as_primitive::<Int32Type>().clone());
    let begin = child(&ps, "beginning_offset", &DataType::Int64)?.map(|a| a.as_primitive::<Int64Type>().clone());
    let end = child(&ps, "end_offset", &DataType::Int64)?.map(|a| a.as_primitive::<Int64Type>().clone());
    let racks_ty = DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
    let racks = child(&ps, "replica_racks", &racks_ty)?.map(|a| a.as_list::<i32>().clone());
    let offs = p.list("offsets", None)?;
    let (off_part, off_val) = match &offs {
        Some(l) => {
            let os = l
                .values()
                .as_struct_opt()
                .ok_or_else(|| PyTypeError::new_err("column offsets: expected list<struct<partition, committed>>"))?
                .clone();
            (
                child(&os, "partition", &DataType::Int32)?.map(|a| a.as_primitive::<Int32Type>().clone()),
                child(&os, "committed", &DataType::Int64)?.map(|a| a.as_primitive::<Int64Type>().clone()),
            )
        }
        None => (None, None),
    };
    let mut committed: FastMap<i32, Vec<Option<i64>>> = FastMap::default();
    for i in 0..n {
        let Some(t) = opt_str(&topic, i) else {
            g.add_marker(opt_str(&state, i), opt_str(&protocol, i));
            if topic.is_some() {
                g.add_group_protocol(opt_str(&group_protocol, i));
            }
            continue;
        };
        let t = g.topics.intern(t);
        committed.clear();
        if let Some(l) = offs.as_ref().filter(|l| l.is_valid(i)) {
            let o = l.value_offsets();
            for j in o[i] as usize..o[i + 1] as usize {
                if let Some(pt) = opt_i32(&off_part, j) {
                    committed.entry(pt).or_default().push(opt_i64(&off_val, j));
                }
            }
        }
        if parts.is_null(i) {
            continue;
        }
        let o = parts.value_offsets();
        for j in o[i] as usize..o[i + 1] as usize {
            let partition = if ps.is_valid(j) { opt_i32(&part, j) } else { None };
            let mut rs = Vec::new();
            let has = ps.is_valid(j) && string_list(&racks, j, |r| rs.push(r.map(str::to_string)));
            let row = PartRow {
                topic: Some(t),
                partition,
                racks: has.then_some(rs),
                beginning: if ps.is_valid(j) { opt_i64(&begin, j) } else { None },
                end: if ps.is_valid(j) { opt_i64(&end, j) } else { None },
                committed: None,
            };
            push_part(g, row, partition.and_then(|pt| committed.get(&pt)));
        }
    }
    Ok(())
}

/// A partition's row as the join with committed offsets gives it: one row per committed offset of
/// the partition (`committed`), or the row itself without one.
pub(super) fn push_part(g: &mut GroupRows, row: PartRow, committed: Option<&Vec<Option<i64>>>) {
    match committed {
        Some(cs) => {
            for &c in cs {
                g.parts.push(PartRow {
                    committed: c,
                    ..row.clone()
                });
            }
        }
        None => g.parts.push(row),
    }
}
