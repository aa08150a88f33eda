//! The PyO3 module `kassign._core`.
//!
//! Heavy work runs with the GIL released (`Python::detach`) so a consumer's heartbeat thread keeps
//! running, and inside `catch_unwind` so a Rust panic, should one ever happen, becomes a Python
//! `kassign.InternalError` instead of aborting the consumer process.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple, PyType};

use crate::model::{InputError, MemberColumns, Problem};

create_exception!(
    kassign,
    ProtocolError,
    PyValueError,
    "Raised when Kafka consumer-protocol bytes (another member's metadata) cannot be decoded."
);
create_exception!(
    kassign,
    InternalError,
    PyRuntimeError,
    "Raised when the Rust core hits an internal error (a bug); the process keeps running."
);

pub(crate) fn input_error(e: InputError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Run `f` without the GIL and with panics turned into `InternalError`.
pub(crate) fn run_detached<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, f: F) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f))).map_err(|panic| {
        let msg = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        InternalError::new_err(format!(
            "kassign core panicked (this is a bug, please report it): {msg}"
        ))
    })
}

/// Columnar member input, as `kassign.assign` prepares it: subscriptions are interned on the Python
/// side (members with the same topic tuple share an index), so 2100 members with one topic cost one
/// list of topic names, not 2100.
#[derive(FromPyObject)]
struct Members {
    ids: Vec<String>,
    /// member => index into `subscriptions`
    subs: Vec<usize>,
    subscriptions: Vec<Vec<String>>,
    /// member => owned (topic, partition) pairs; None when the member owns nothing. Converted
    /// member by member in `convert_owned`, with short GIL releases between chunks.
    owned: Vec<Option<Py<PyAny>>>,
    generations: Vec<i32>,
    racks: Vec<Option<String>>,
    instance_ids: Vec<Option<String>>,
}

/// Owned partitions of every member as (index into `topics`, partition), read straight from the
/// Python tuples: topic names are borrowed and looked up once per run of the same str object, never
/// copied. Unknown topics are dropped here (the model would drop them anyway). A million owned
/// partitions take a while; the GIL is handed over every few milliseconds (`GilYield`).
fn convert_owned(
    py: Python<'_>,
    topics: &[(String, i64)],
    owned: &[Option<Py<PyAny>>],
) -> PyResult<Vec<Vec<(u32, i64)>>> {
    let index: std::collections::HashMap<&str, u32> = topics
        .iter()
        .enumerate()
        .map(|(i, (t, _))| (t.as_str(), i as u32))
        .collect();
    let mut out = Vec::with_capacity(owned.len());
    let mut done: usize = 0;
    let mut gil = GilYield::new();
    for o in owned {
        let Some(obj) = o else {
            out.push(Vec::new());
            continue;
        };
        let seq = obj.bind(py);
        let mut v: Vec<(u32, i64)> = Vec::with_capacity(seq.len().unwrap_or(0));
        let mut last: Option<(*mut pyo3::ffi::PyObject, Option<u32>)> = None;
        for item in seq.try_iter()? {
            let item = item?;
            let pair = item.cast::<PyTuple>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err("owned_partitions: expected (topic, partition) tuples")
            })?;
            if pair.len() != 2 {
                return Err(pyo3::exceptions::PyTypeError::new_err(
                    "owned_partitions: expected (topic, partition) pairs",
                ));
            }
            let topic = pair.get_item(0)?;
            let ti = match last {
                Some((ptr, ti)) if ptr == topic.as_ptr() => ti,
                _ => {
                    let name = topic.cast::<PyString>().map_err(|_| {
                        pyo3::exceptions::PyTypeError::new_err("owned_partitions: topic names must be str")
                    })?;
                    let ti = index.get(&*name.to_cow()?).copied();
                    last = Some((topic.as_ptr(), ti));
                    ti
                }
            };
            let p: i64 = pair.get_item(1)?.extract()?;
            if let Some(ti) = ti {
                v.push((ti, p));
            }
        }
        done += v.len();
        out.push(v);
        if done >= CHECK_EVERY {
            done = 0;
            gil.maybe_yield(py);
        }
    }
    Ok(out)
}

impl Members {
    /// (subscriptions, members) for [`Problem::build_interned`]; subscriptions stay shared.
    fn into_columns(self, owned: Vec<Vec<(u32, i64)>>) -> Result<(Vec<Vec<String>>, Vec<MemberColumns>), InputError> {
        let n = self.ids.len();
        if [
            self.subs.len(),
            owned.len(),
            self.generations.len(),
            self.racks.len(),
            self.instance_ids.len(),
        ]
        .iter()
        .any(|&l| l != n)
        {
            return Err(InputError::Invalid("members: column lengths differ".into()));
        }
        let mut out = Vec::with_capacity(n);
        let cols = self.ids.into_iter().zip(self.subs).zip(owned).zip(self.generations);
        for ((((id, sub), owned), generation), (rack, group_instance_id)) in
            cols.zip(self.racks.into_iter().zip(self.instance_ids))
        {
            out.push(MemberColumns {
                id,
                sub,
                owned: Vec::new(),
                owned_by_index: owned,
                generation,
                rack,
                group_instance_id,
            });
        }
        Ok((self.subscriptions, out))
    }
}

/// Assign partitions with a Rust strategy.
///
/// `members` is a `Members`-shaped object (attributes `ids`, `subs`, `subscriptions`, `owned`,
/// `generations`, `racks`, `instance_ids`), `topics` are `(name, partition_count)`,
/// `partition_racks` are `(topic, partition, racks)`. Returns one list per member, aligned with
/// `members.ids`, of `tp_class` instances sorted by (topic, partition). `tp_class` must be a tuple
/// subclass (built with `tuple.__new__`, skipping a Python-level `__new__`).
#[pyfunction]
#[pyo3(signature = (strategy, topics, members, partition_racks, tp_class))]
fn assign<'py>(
    py: Python<'py>,
    strategy: &str,
    topics: Vec<(String, i64)>,
    members: Members,
    partition_racks: Vec<(String, i64, Vec<String>)>,
    tp_class: Bound<'py, PyType>,
) -> PyResult<Bound<'py, PyList>> {
    if !crate::strategy::RUST_STRATEGIES.contains(&strategy) {
        return Err(input_error(InputError::UnknownStrategy(strategy.to_string())));
    }
    let tuple_type = py.get_type::<PyTuple>();
    if !tp_class.is_subclass(&tuple_type)? {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "tp_class: expected a tuple subclass",
        ));
    }
    let tuple_new = tuple_type.getattr("__new__")?;
    let strategy = strategy.to_string();
    let ids_order: Vec<String> = members.ids.clone();
    let mut members = members;
    let owned = convert_owned(py, &topics, &std::mem::take(&mut members.owned))?;
    if owned.len() != ids_order.len() {
        return Err(input_error(InputError::Invalid(
            "members: column lengths differ".into(),
        )));
    }
    let (problem, result) = run_detached(py, move || {
        let (subscriptions, columns) = members.into_columns(owned)?;
        let problem = Problem::build_interned(topics, subscriptions, columns, partition_racks)?;
        let result = crate::strategy::run(&strategy, &problem)?;
        Ok::<_, InputError>((problem, result))
    })?
    .map_err(input_error)?;

    // The problem holds members sorted by id; answer in the caller's order.
    let mut position = std::collections::HashMap::with_capacity(problem.members.len());
    for (i, m) in problem.members.iter().enumerate() {
        position.insert(m.id.as_str(), i);
    }
    let topic_names: Vec<Bound<'py, PyString>> = problem.topics.iter().map(|t| PyString::new(py, t)).collect();
    let longest = problem.topic_len.iter().copied().max().unwrap_or(0) as usize;
    let factory = TpFactory::new(py, &tp_class, longest)?;
    let out = PyList::empty(py);
    let mut made: usize = 0;
    let mut gil = GilYield::new();
    for id in &ids_order {
        let parts = &result.per_member[position[id.as_str()]];
        let sorted_copy;
        let parts: &[u32] = if parts.windows(2).all(|w| w[0] < w[1]) {
            parts
        } else {
            let mut v = parts.clone();
            v.sort_unstable();
            sorted_copy = v;
            &sorted_copy
        };
        let mut items: Vec<Bound<'py, PyAny>> = Vec::with_capacity(parts.len());
        let mut t = 0usize;
        for &p in parts {
            while problem.topic_base[t + 1] <= p {
                t += 1;
            }
            let idx = p - problem.topic_base[t];
            items.push(factory.make(py, &topic_names[t], idx, &tuple_new, &tp_class)?);
            made += 1;
            if made % CHECK_EVERY == 0 {
                // Let other Python threads (a consumer's heartbeat) run between chunks.
                gil.maybe_yield(py);
            }
        }
        out.append(PyList::new(py, items)?)?;
    }
    Ok(out)
}

/// Per-member lists of `tp_class` instances from per-topic owner arrays, for the strategies
/// written in Python: `owners[i][p]` is the member index (into the returned lists) owning
/// partition `p` of `topics[i]`, or -1. Topics are visited in the given order, so lists come out
/// sorted when `topics` is. Objects are built as in `assign` (GC-untracked, GIL released briefly
/// between chunks).
#[pyfunction]
#[pyo3(signature = (tp_class, n_members, topics, owners))]
fn result_lists<'py>(
    py: Python<'py>,
    tp_class: Bound<'py, PyType>,
    n_members: usize,
    topics: Vec<String>,
    owners: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    if topics.len() != owners.len() {
        return Err(PyValueError::new_err(
            "result_lists: topics and owners differ in length",
        ));
    }
    let tuple_type = py.get_type::<PyTuple>();
    if !tp_class.is_subclass(&tuple_type)? {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "tp_class: expected a tuple subclass",
        ));
    }
    let tuple_new = tuple_type.getattr("__new__")?;
    let factory = TpFactory::new(py, &tp_class, 0)?;
    let lists: Vec<Bound<'py, PyList>> = (0..n_members).map(|_| PyList::empty(py)).collect();
    let mut made: usize = 0;
    let mut gil = GilYield::new();
    for (topic, own) in topics.iter().zip(owners) {
        let own: Vec<i64> = own.extract()?;
        let name = PyString::new(py, topic);
        for (p, &o) in own.iter().enumerate() {
            if o < 0 {
                continue;
            }
            let list = lists
                .get(o as usize)
                .ok_or_else(|| PyValueError::new_err(format!("result_lists: owner {o} of {topic}-{p} out of range")))?;
            list.append(factory.make(py, &name, p as u32, &tuple_new, &tp_class)?)?;
            made += 1;
            if made % CHECK_EVERY == 0 {
                gil.maybe_yield(py);
            }
        }
    }
    PyList::new(py, lists)
}

/// Objects converted between two looks at the clock (well under a millisecond of work).
const CHECK_EVERY: usize = 4_096;

/// Hands the GIL to waiting threads (a consumer's heartbeat) while a long conversion holds it.
///
/// Releasing and at once re-taking the GIL is not enough: CPython's waiting thread asks for a
/// switch only after 5 ms without one, and every release and re-take restarts that wait, so
/// frequent short releases can starve it for the whole conversion. Instead, after `SLICE` of
/// holding, the GIL is released for `PAUSE` (the waiter takes it), then re-taken.
struct GilYield {
    last: std::time::Instant,
}

const SLICE: std::time::Duration = std::time::Duration::from_millis(4);
const PAUSE: std::time::Duration = std::time::Duration::from_micros(200);

impl GilYield {
    fn new() -> GilYield {
        GilYield {
            last: std::time::Instant::now(),
        }
    }

    fn maybe_yield(&mut self, py: Python<'_>) {
        if self.last.elapsed() >= SLICE {
            py.detach(|| std::thread::sleep(PAUSE));
            self.last = std::time::Instant::now();
        }
    }
}

/// Builds `tp_class` instances, a `tuple` subclass of (topic, partition) without an instance
/// dict (`kassign.TopicPartition`). They are allocated directly and untracked by the cyclic GC: a
/// tuple of a str and an int cannot be part of a reference cycle (CPython untracks exact tuples
/// like these itself), and a million tracked results would otherwise trigger full collections
/// that stall every thread. Other classes go through `tuple.__new__`.
struct TpFactory<'py> {
    direct: Option<*mut pyo3::ffi::PyTypeObject>,
    /// Partition index objects 0..n, shared by every result (ints above 256 are not cached by
    /// CPython; a million results would otherwise allocate a million ints).
    ints: Vec<Bound<'py, PyAny>>,
}

/// At most this many shared index objects (a topic with more partitions allocates the rest).
const MAX_SHARED_INTS: usize = 1 << 17;

impl<'py> TpFactory<'py> {
    fn new(py: Python<'py>, tp_class: &Bound<'py, PyType>, longest_topic: usize) -> PyResult<TpFactory<'py>> {
        let no_dict = tp_class.getattr("__dictoffset__")?.extract::<isize>()? == 0;
        let plain_alloc = tp_class.getattr("__itemsize__")?.extract::<isize>()?
            == std::mem::size_of::<*mut pyo3::ffi::PyObject>() as isize;
        let direct = if no_dict && plain_alloc {
            Some(tp_class.as_type_ptr())
        } else {
            None
        };
        let n = if direct.is_some() {
            longest_topic.min(MAX_SHARED_INTS)
        } else {
            0
        };
        let ints: Vec<Bound<'py, PyAny>> = (0..n as u32)
            .map(|i| match i.into_pyobject(py) {
                Ok(o) => o.into_any(),
                Err(never) => match never {},
            })
            .collect();
        Ok(TpFactory { direct, ints })
    }

    fn make(
        &self,
        py: Python<'py>,
        topic: &Bound<'py, PyString>,
        idx: u32,
        tuple_new: &Bound<'py, PyAny>,
        tp_class: &Bound<'py, PyType>,
    ) -> PyResult<Bound<'py, PyAny>> {
        use pyo3::ffi;
        match self.direct {
            Some(cls) => unsafe {
                let obj = ffi::PyType_GenericAlloc(cls, 2);
                if obj.is_null() {
                    return Err(PyErr::fetch(py));
                }
                let obj = Bound::from_owned_ptr(py, obj);
                if ffi::PyTuple_SetItem(obj.as_ptr(), 0, topic.clone().into_ptr()) != 0 {
                    return Err(PyErr::fetch(py));
                }
                let index = match self.ints.get(idx as usize) {
                    Some(i) => i.clone().into_ptr(),
                    None => ffi::PyLong_FromUnsignedLong(idx as std::os::raw::c_ulong),
                };
                if index.is_null() || ffi::PyTuple_SetItem(obj.as_ptr(), 1, index) != 0 {
                    return Err(PyErr::fetch(py));
                }
                ffi::PyObject_GC_UnTrack(obj.as_ptr().cast());
                Ok(obj)
            },
            None => {
                let pair = PyTuple::new(py, [topic.clone().into_any(), idx.into_pyobject(py)?.into_any()])?;
                tuple_new.call1((tp_class, pair))
            }
        }
    }
}

/// Panic inside the core on purpose, through the same guarded path every heavy call uses.
/// Exists so tests can prove a panic surfaces as `kassign.InternalError` and the process survives.
#[pyfunction]
fn _trigger_panic(py: Python<'_>) -> PyResult<()> {
    run_detached(py, || -> () { panic!("deliberate panic for tests") })
}

/// Names of the strategies the Rust core computes.
#[pyfunction]
fn rust_strategies() -> Vec<&'static str> {
    crate::strategy::RUST_STRATEGIES.to_vec()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ProtocolError", m.py().get_type::<ProtocolError>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    m.add_function(wrap_pyfunction!(assign, m)?)?;
    m.add_function(wrap_pyfunction!(result_lists, m)?)?;
    m.add_function(wrap_pyfunction!(rust_strategies, m)?)?;
    m.add_function(wrap_pyfunction!(_trigger_panic, m)?)?;
    crate::python_protocol::register(m)?;
    crate::py::fleet::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
