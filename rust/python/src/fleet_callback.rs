//! The Python strategies (lag-aware, fair, failover) as a core [`Assigner`]: each is called with
//! one `kassign.assignors._greedy.Inputs` per member set (shared by every Python strategy of a
//! churn round), holding `kassign.Member` objects built once per group member from the decoded
//! rows (no re-validation), the sorted ids and the subscribers per topic the core derives
//! ([`PyAssigner::subs`]); the sticky ones also get the previous owners ([`kassign_core::claims`])
//! instead of members carrying owned partitions. They return per-topic owner arrays, read back
//! into a [`Placed`]. Conversion only: every rule is the core's or the strategy's.

use std::collections::HashMap;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};

use kassign_core::fleet::{Assigner, FastMap, Group, Origin, Placed, RustAssigner, StrategyError};
use kassign_core::model::Problem;

/// `kassign.assignors._greedy.TOPIC_LAGS`: the key of `Inputs.shared` holding the lag arrays.
const TOPIC_LAGS: &str = "topic-lags";

/// Python strategies: called with `kassign.Member`s, they return `{topic: [owner index]}` (owner =
/// index into the sorted member ids, -1 = unassigned).
pub(super) struct PyAssigner<'py, 'g> {
    py: Python<'py>,
    group: &'g Group,
    funcs: HashMap<String, (Bound<'py, PyAny>, bool)>,
    member_class: Bound<'py, PyType>,
    sub_tuples: Vec<Bound<'py, PyTuple>>,
    /// History-free Members: per member row, and per joiner template row.
    row_members: Vec<Option<Bound<'py, PyAny>>>,
    joiner_members: HashMap<u32, Bound<'py, PyAny>>,
    ids: FastMap<String, Bound<'py, PyString>>,
    partitions_per_topic: Bound<'py, PyDict>,
    lags: Bound<'py, PyDict>,
    topic_ids: FastMap<String, u32>,
    /// Problem topic id => its name as a Python string (the keys of `Inputs.subs`).
    topic_names: Vec<Bound<'py, PyString>>,
    /// `kassign.assignors._greedy.Inputs`, and one instance per member set seen (a churn round has
    /// the same members for every strategy): derived inputs are shared by every Python strategy.
    inputs_class: Bound<'py, PyAny>,
    inputs: FastMap<Vec<(Origin, String)>, Bound<'py, PyAny>>,
    /// `Inputs.shared` of every instance: values derived from the group's partitions and lags
    /// alone (e.g. per-topic lag arrays), the same in every churn round.
    shared: Bound<'py, PyDict>,
}

impl<'py, 'g> PyAssigner<'py, 'g> {
    pub(super) fn new(
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
            ids: FastMap::default(),
            partitions_per_topic,
            lags,
            topic_ids,
            topic_names: names,
            inputs_class,
            inputs: FastMap::default(),
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
    /// (`kassign.assignors._greedy.Inputs.previous`): [`kassign_core::claims::previous_by_topic`] as
    /// topic -> {member index: [partition]}.
    fn previous(&self, problem: &Problem) -> PyResult<Bound<'py, PyDict>> {
        let claims = kassign_core::claims::previous_by_topic(problem);
        crate::claims::previous_dict(self.py, claims, &self.topic_names)
    }

    /// `Inputs.subs` of the round's members, derived in the core
    /// ([`kassign_core::greedy::subscribers_by_topic`]: the same dict order and tuple sharing as the
    /// Python derivation it replaces).
    fn subs(&self, problem: &Problem) -> PyResult<Bound<'py, PyDict>> {
        let sets = kassign_core::greedy::subscribers_by_topic(problem);
        crate::claims::subscribers_dict(self.py, sets, &self.topic_names)
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
    ) -> PyResult<Result<Placed, StrategyError>> {
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
                    return Ok(Err(StrategyError::Raised {
                        label: "ValueError".to_string(),
                        message: format!("result_lists: owner {o} of {topic}-{p} out of range"),
                    }));
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

/// A Python strategy's exception as the core's error (type name and message, verbatim).
fn py_error(py: Python<'_>, e: &PyErr) -> StrategyError {
    let label = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let message = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
    StrategyError::Raised { label, message }
}

/// Adapter: the PyAssigner as a core Assigner (Python errors abort the evaluation; they are
/// carried out in `failure`).
pub(super) struct PyAssignerAdapter<'a, 'py, 'g> {
    pub(super) inner: &'a mut PyAssigner<'py, 'g>,
    pub(super) failure: Option<PyErr>,
}

impl Assigner for PyAssignerAdapter<'_, '_, '_> {
    fn assign(&mut self, strategy: &str, problem: &Problem, origins: &[Origin]) -> Result<Placed, StrategyError> {
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
