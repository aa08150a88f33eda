//! `kassign._core.fleet_evaluate`: one group of the fleet job, Arrow in, Arrow out.
//!
//! The job's `applyInArrow` function passes the group's two pyarrow tables (members, partition
//! side); they arrive through the Arrow C stream interface (`__arrow_c_stream__`, pyo3-arrow) with
//! no copy and no Python objects per row. The rows are decoded and the group is built once
//! ([`crate::fleet::Group`]), then every Rust strategy is evaluated with the GIL released. Python
//! strategies (lag-aware, fair, failover) are called back with one `kassign.assignors._greedy.Inputs`
//! per member set (shared by every Python strategy of a churn round), holding `kassign.Member`
//! objects built once per group member from the decoded rows (no re-validation), with the sorted
//! ids and the subscribers per topic derived here ([`PyAssigner::subs`]); the sticky ones
//! also get the previous owners the core derives ([`PyAssigner::previous`]) instead of members
//! carrying owned partitions. They return per-topic owner arrays, which the core measures like any
//! other result. The result rows go back as one pyarrow table.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Float64Array, Int32Array, Int64Array, ListArray, RecordBatch,
    StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};
use pyo3_arrow::PyTable;

use super::errors::run_detached;
use crate::fleet::{
    self, Assigner, EvalOptions, FxHashMap, Group, GroupRows, MemberRow, OffsetReset, Origin, PartRow, Placed,
    ResultRow, RustAssigner,
};
use crate::model::Problem;

fn arrow_err(e: impl std::fmt::Display) -> PyErr {
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

fn decode(members: &RecordBatch, parts: &RecordBatch) -> PyResult<GroupRows> {
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
    for i in 0..n {
        let Some(t) = opt_str(&topic, i) else {
            g.add_marker(opt_str(&state, i), opt_str(&protocol, i));
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
    let mut committed: FxHashMap<i32, Vec<Option<i64>>> = FxHashMap::default();
    for i in 0..n {
        let Some(t) = opt_str(&topic, i) else {
            g.add_marker(opt_str(&state, i), opt_str(&protocol, i));
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

/// `kassign.assignors._greedy.TOPIC_LAGS`: the key of `Inputs.shared` holding the lag arrays.
const TOPIC_LAGS: &str = "topic-lags";

/// Python strategies: called with `kassign.Member`s, they return `{topic: [owner index]}` (owner =
/// index into the sorted member ids, -1 = unassigned).
struct PyAssigner<'py, 'g> {
    py: Python<'py>,
    group: &'g Group,
    funcs: HashMap<String, (Bound<'py, PyAny>, bool)>,
    member_class: Bound<'py, PyType>,
    sub_tuples: Vec<Bound<'py, PyTuple>>,
    /// History-free Members: per member row, and per joiner template row.
    row_members: Vec<Option<Bound<'py, PyAny>>>,
    joiner_members: HashMap<u32, Bound<'py, PyAny>>,
    ids: FxHashMap<String, Bound<'py, PyString>>,
    partitions_per_topic: Bound<'py, PyDict>,
    lags: Bound<'py, PyDict>,
    topic_ids: FxHashMap<String, u32>,
    /// Problem topic id => its name as a Python string (the keys of `Inputs.subs`).
    topic_names: Vec<Bound<'py, PyString>>,
    /// `kassign.assignors._greedy.Inputs`, and one instance per member set seen (a churn round has
    /// the same members for every strategy): derived inputs are shared by every Python strategy.
    inputs_class: Bound<'py, PyAny>,
    inputs: FxHashMap<Vec<(Origin, String)>, Bound<'py, PyAny>>,
    /// `Inputs.shared` of every instance: values derived from the group's partitions and lags
    /// alone (e.g. per-topic lag arrays), the same in every churn round.
    shared: Bound<'py, PyDict>,
}

impl<'py, 'g> PyAssigner<'py, 'g> {
    fn new(
        py: Python<'py>,
        group: &'g Group,
        funcs: HashMap<String, (Bound<'py, PyAny>, bool)>,
        member_class: Bound<'py, PyType>,
        inputs_class: Bound<'py, PyAny>,
    ) -> PyResult<Self> {
        let p = &group.problem;
        let partitions_per_topic = PyDict::new(py);
        let names: Vec<Bound<'py, PyString>> = p.topics.iter().map(|t| PyString::new(py, t)).collect();
        for (t, name) in names.iter().enumerate() {
            partitions_per_topic.set_item(name, p.topic_len[t])?;
        }
        // No strategy written in Python reads partition racks: they are not passed.
        let lags = PyDict::new(py);
        for f in 0..p.num_partitions() {
            if group.has_lag[f as usize] {
                let (t, i) = p.split(f);
                let key = PyTuple::new(
                    py,
                    [names[t as usize].clone().into_any(), i.into_pyobject(py)?.into_any()],
                )?;
                lags.set_item(key, group.lag[f as usize])?;
            }
        }
        // `Inputs.shared[TOPIC_LAGS]` (kassign.assignors._greedy): each topic's lag array, None
        // when all 0, from the decoded lags (what the strategies would derive from `lags`).
        let topic_lags = PyDict::new(py);
        for (t, name) in names.iter().enumerate() {
            let (lo, hi) = (p.topic_base[t] as usize, p.topic_base[t + 1] as usize);
            let arr: Vec<i64> = (lo..hi)
                .map(|f| if group.has_lag[f] { group.lag[f] } else { 0 })
                .collect();
            if arr.iter().any(|&x| x != 0) {
                topic_lags.set_item(name, arr)?;
            } else {
                topic_lags.set_item(name, py.None())?;
            }
        }
        let shared = PyDict::new(py);
        shared.set_item(TOPIC_LAGS, topic_lags)?;
        let sub_tuples = group
            .subscriptions
            .iter()
            .map(|s| {
                let mut v: Vec<&str> = s.iter().map(|&t| group.topic_names.get(t)).collect();
                v.sort_unstable();
                PyTuple::new(py, v)
            })
            .collect::<PyResult<Vec<_>>>()?;
        let topic_ids = p
            .topics
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        Ok(PyAssigner {
            py,
            group,
            funcs,
            member_class,
            sub_tuples,
            row_members: vec![None; group.num_members()],
            joiner_members: HashMap::new(),
            ids: FxHashMap::default(),
            partitions_per_topic,
            lags,
            topic_ids,
            topic_names: names,
            inputs_class,
            inputs: FxHashMap::default(),
            shared,
        })
    }

    /// A `kassign.Member` from the decoded fields (already validated; the constructor is Rust).
    /// Without owned partitions and generation: the strategies that read them get
    /// [`Self::previous`] instead.
    fn member(&self, row: u32, joiner: bool) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let g = self.group;
        let r = row as usize;
        let kwargs = PyDict::new(py);
        let gid: Option<&str> = if joiner { None } else { g.instance_ids[r].as_deref() };
        kwargs.set_item("rack", g.member_rack[r].as_deref())?;
        kwargs.set_item("group_instance_id", gid)?;
        kwargs.set_item("user_data", g.user_data[r].as_deref().map(|b| PyBytes::new(py, b)))?;
        self.member_class
            .call((self.sub_tuples[g.sub_of_row[r] as usize].clone(),), Some(&kwargs))
    }

    /// The history-free `kassign.Member` of a round member (built once per row / joiner template).
    fn history_free(&mut self, origin: Origin) -> PyResult<Bound<'py, PyAny>> {
        Ok(match origin {
            Origin::Joiner { like_row: row } => match self.joiner_members.get(&row) {
                Some(o) => o.clone(),
                None => {
                    let o = self.member(row, true)?;
                    self.joiner_members.insert(row, o.clone());
                    o
                }
            },
            Origin::Row(row) => match &self.row_members[row as usize] {
                Some(o) => o.clone(),
                None => {
                    let o = self.member(row, false)?;
                    self.row_members[row as usize] = Some(o.clone());
                    o
                }
            },
        })
    }

    /// What the sticky Python strategies read of the members' history
    /// (`kassign.assignors._greedy.Inputs.previous`): topic -> {member index: [partition]} for
    /// the partitions whose previous owner is that member: the highest generation's claim, a tie
    /// between members leaves none; subscribed topics only.
    fn previous(&self, problem: &Problem) -> PyResult<Bound<'py, PyDict>> {
        let py = self.py;
        let n = problem.num_partitions() as usize;
        let mut owner = vec![fleet::NONE; n];
        let mut best = vec![i64::MIN; n];
        let mut tied = vec![false; n];
        let mut claimed = Vec::new();
        for (i, m) in problem.members.iter().enumerate() {
            let gen = m.generation as i64;
            for &f in &m.owned {
                let f = f as usize;
                if best[f] == i64::MIN {
                    claimed.push(f as u32);
                }
                if best[f] == i64::MIN || gen > best[f] {
                    best[f] = gen;
                    owner[f] = i as u32;
                    tied[f] = false;
                } else if gen == best[f] && owner[f] != i as u32 {
                    tied[f] = true;
                }
            }
        }
        let mut subscribed = vec![false; problem.topics.len()];
        let mut seen_sub = vec![false; problem.subs.len()];
        for m in &problem.members {
            if !std::mem::replace(&mut seen_sub[m.sub as usize], true) {
                for &t in &problem.subs[m.sub as usize] {
                    subscribed[t as usize] = true;
                }
            }
        }
        claimed.sort_unstable();
        let out = PyDict::new(py);
        let mut per_topic: Option<(u32, FxHashMap<u32, Vec<u32>>)> = None;
        let flush = |entry: Option<(u32, FxHashMap<u32, Vec<u32>>)>| -> PyResult<()> {
            if let Some((t, by_member)) = entry {
                let d = PyDict::new(py);
                for (i, ps) in by_member {
                    d.set_item(i, ps)?;
                }
                out.set_item(problem.topics[t as usize].as_str(), d)?;
            }
            Ok(())
        };
        for &f in &claimed {
            if tied[f as usize] {
                continue;
            }
            let (t, p) = problem.split(f);
            if !subscribed[t as usize] || problem.topic_len[t as usize] == 0 {
                continue;
            }
            if per_topic.as_ref().map(|(pt, _)| *pt) != Some(t) {
                flush(per_topic.take())?;
                per_topic = Some((t, FxHashMap::default()));
            }
            let (_, by_member) = per_topic.as_mut().unwrap();
            by_member.entry(owner[f as usize]).or_default().push(p);
        }
        flush(per_topic)?;
        Ok(out)
    }

    /// `Inputs.subs` of the round's members, derived in the core
    /// ([`fleet::problem::subscribers_by_topic`]: the same dict order and tuple sharing as the
    /// Python derivation it replaces).
    fn subs(&self, problem: &Problem) -> PyResult<Bound<'py, PyDict>> {
        let (topics, sets) = fleet::problem::subscribers_by_topic(problem);
        let tuples = sets
            .iter()
            .map(|s| PyTuple::new(self.py, s))
            .collect::<PyResult<Vec<_>>>()?;
        let out = PyDict::new(self.py);
        for (t, s) in topics {
            out.set_item(&self.topic_names[t as usize], &tuples[s as usize])?;
        }
        Ok(out)
    }

    /// A member id as a Python string, interned for the group.
    fn id(&mut self, id: &str) -> Bound<'py, PyString> {
        match self.ids.get(id) {
            Some(s) => s.clone(),
            None => {
                let s = PyString::new(self.py, id);
                self.ids.insert(id.to_string(), s.clone());
                s
            }
        }
    }

    fn call(
        &mut self,
        strategy: &str,
        problem: &Problem,
        origins: &[Origin],
    ) -> PyResult<Result<Placed, (String, String)>> {
        let py = self.py;
        let (func, reads_history) = match self.funcs.get(strategy) {
            Some((f, h)) => (f.clone(), *h),
            None => return Ok(RustAssigner.assign(strategy, problem, origins)),
        };
        let key: Vec<(Origin, String)> = origins
            .iter()
            .copied()
            .zip(problem.members.iter().map(|m| m.id.clone()))
            .collect();
        let inputs = match self.inputs.get(&key) {
            Some(i) => i.clone(),
            None => {
                let members = PyDict::new(py);
                let ids = PyList::empty(py);
                for (m, origin) in problem.members.iter().zip(origins) {
                    let obj = self.history_free(*origin)?;
                    let id = self.id(&m.id);
                    members.set_item(&id, obj)?;
                    ids.append(id)?; // problem members are sorted by id: this is sorted(members)
                }
                let kwargs = PyDict::new(py);
                kwargs.set_item("shared", &self.shared)?;
                kwargs.set_item("ids", ids)?;
                kwargs.set_item("subs", self.subs(problem)?)?;
                let i = self
                    .inputs_class
                    .call((members, &self.partitions_per_topic, &self.lags), Some(&kwargs))?;
                self.inputs.insert(key, i.clone());
                i
            }
        };
        let inputs = if reads_history {
            inputs.call_method1("with_previous", (self.previous(problem)?,))?
        } else {
            inputs
        };
        let owners = match func.call1((inputs,)) {
            Ok(o) => o,
            Err(e) => return Ok(Err(py_error(py, &e))),
        };
        let owners = owners.cast::<PyDict>().map_err(|_| {
            PyTypeError::new_err(format!(
                "{strategy}: owner arrays: expected a dict of topic -> list of member indexes"
            ))
        })?;
        let n = problem.members.len();
        let mut placed = Placed::from_lists(vec![Vec::new(); n]);
        for (topic, own) in owners.iter() {
            let topic: String = topic.extract()?;
            let own: Vec<i64> = own.extract()?;
            let tid = self.topic_ids.get(&topic).copied();
            for (p, &o) in own.iter().enumerate() {
                if o < 0 {
                    continue;
                }
                if o as usize >= n {
                    // what kassign.assign's result conversion (_core.result_lists) raises
                    return Ok(Err((
                        "ValueError".to_string(),
                        format!("result_lists: owner {o} of {topic}-{p} out of range"),
                    )));
                }
                match tid {
                    Some(t) if (p as u64) < problem.topic_len[t as usize] as u64 => {
                        placed.per_member[o as usize].push(problem.topic_base[t as usize] + p as u32)
                    }
                    _ => placed.invalid[o as usize] += 1,
                }
            }
        }
        for v in &mut placed.per_member {
            v.sort_unstable();
        }
        Ok(Ok(placed))
    }
}

fn py_error(py: Python<'_>, e: &PyErr) -> (String, String) {
    let ty = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let msg = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    (ty, msg)
}

/// Adapter: the PyAssigner as a core Assigner (Python errors abort the evaluation; they are
/// carried out in `failure`).
struct PyAssignerAdapter<'a, 'py, 'g> {
    inner: &'a mut PyAssigner<'py, 'g>,
    failure: Option<PyErr>,
}

impl Assigner for PyAssignerAdapter<'_, '_, '_> {
    fn assign(&mut self, strategy: &str, problem: &Problem, origins: &[Origin]) -> Result<Placed, (String, String)> {
        match self.inner.call(strategy, problem, origins) {
            Ok(r) => r,
            Err(e) => {
                let out = py_error(self.inner.py, &e);
                self.failure = Some(e);
                Err(out)
            }
        }
    }
}

fn result_schema(with_assignment: bool) -> Arc<Schema> {
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
fn to_batch(
    cluster: &str,
    group_id: &str,
    rows: &[ResultRow],
    state: Option<&str>,
    protocol: Option<&str>,
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
        repeated_str(state),
        repeated_str(protocol),
        // members: the metric when measured, else the group's (or row count's) size
        to32(
            rows.iter()
                .map(|r| Some(r.quality.as_ref().map_or(r.members, |q| q.members)))
                .collect(),
        ),
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

/// Evaluate one group of the fleet job (see the module documentation). Returns a pyarrow Table
/// with one row per strategy, in the order of `strategies`, with the columns of
/// `kassign.fleet.group.result_schema(with_assignment)`.
#[pyfunction]
#[pyo3(signature = (cluster, group_id, members, parts, strategies, *, churn_rounds, churn_seed, with_assignment,
                    auto_offset_reset, python_strategies, member_class, inputs_class))]
#[allow(clippy::too_many_arguments)]
fn fleet_evaluate<'py>(
    py: Python<'py>,
    cluster: &str,
    group_id: &str,
    members: PyTable,
    parts: PyTable,
    strategies: Vec<String>,
    churn_rounds: u32,
    churn_seed: u64,
    with_assignment: bool,
    auto_offset_reset: &str,
    python_strategies: Bound<'py, PyDict>,
    member_class: Bound<'py, PyType>,
    inputs_class: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let (members, parts) = (one_batch(members)?, one_batch(parts)?);
    let args = EvalArgs {
        cluster,
        group_id,
        strategies,
        opts: EvalOptions {
            churn_rounds,
            churn_seed,
            with_assignment,
        },
        auto_offset_reset,
        python_strategies,
        member_class,
        inputs_class,
    };
    evaluate_decoded(py, args, move || decode(&members, &parts))
}

/// The arguments of a group's evaluation besides its rows.
pub(super) struct EvalArgs<'a, 'py> {
    pub cluster: &'a str,
    pub group_id: &'a str,
    pub strategies: Vec<String>,
    pub opts: EvalOptions,
    pub auto_offset_reset: &'a str,
    pub python_strategies: Bound<'py, PyDict>,
    pub member_class: Bound<'py, PyType>,
    pub inputs_class: Bound<'py, PyAny>,
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
        opts,
        auto_offset_reset,
        python_strategies,
        member_class,
        inputs_class,
    } = args;
    let with_assignment = opts.with_assignment;
    let reset = match auto_offset_reset.to_ascii_lowercase().as_str() {
        "latest" => OffsetReset::Latest,
        "earliest" => OffsetReset::Earliest,
        other => {
            return Err(PyValueError::new_err(format!(
                "auto_offset_reset: expected latest or earliest, got {other:?}"
            )))
        }
    };
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
                    out.push(fleet::evaluate_strategy(group, s, &opts_rust, &mut RustAssigner, None));
                }
            }
        }
        Ok((rows, built, out))
    })??;
    let repr = |s: &str| -> String {
        PyString::new(py, s)
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| crate::model::py_repr(s))
    };
    let member_ids: Vec<Option<String>> = rows.members.iter().map(|m| m.id.clone()).collect();
    let result_rows: Vec<ResultRow> = match &built {
        Err(e) => fleet::error_rows(&strategies, &e.message(&repr), rows.members.len()),
        Ok(group) => {
            let input_error = group.input_error.as_ref().map(|e| {
                let (t, m) = e.message(&repr);
                (t.to_string(), m)
            });
            let mut rust_rows = rust_rows.into_iter();
            let mut py_assigner = None;
            let mut out = Vec::with_capacity(strategies.len());
            for s in &strategies {
                if input_error.is_some() {
                    out.push(fleet::evaluate_strategy(
                        group,
                        s,
                        &opts,
                        &mut RustAssigner,
                        input_error.as_ref(),
                    ));
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
                    let row = fleet::evaluate_strategy(group, s, &opts, &mut calling, None);
                    if let Some(e) = calling.failure {
                        // a failure of the boundary itself (not of the strategy): surface it
                        if !e.is_instance_of::<pyo3::exceptions::PyException>(py) {
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
        rows.state.as_deref(),
        rows.protocol.as_deref(),
        built.as_ref().ok(),
        &member_ids,
        with_assignment,
    )?;
    let schema = batch.schema();
    PyTable::try_new(vec![batch], schema)?.into_pyarrow(py)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fleet_evaluate, m)?)?;
    super::fleet_stream::register(m)?;
    Ok(())
}
