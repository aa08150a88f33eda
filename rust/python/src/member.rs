//! `kassign.Member`: one consumer group member as the assignor sees it.
//!
//! The type owns every shape and type check of a member, once, at construction; what it stores is
//! already in the form the core reads (sorted unique topics, owned partitions grouped by topic as
//! the wire carries them, an int32 generation), so `kassign.assign` reads members without checking
//! or converting anything again.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyInt, PyList, PyMemoryView, PyString, PyTuple};

use crate::errors::ReadError;
use crate::objects::{topic_partition_class, TpFactory};
use kassign_core::members::MemberSource;

/// Owned partitions of one topic, in the order given.
pub(crate) struct OwnedGroup {
    pub(crate) topic: Py<PyString>,
    pub(crate) partitions: Box<[i64]>,
}

/// One consumer group member as the assignor sees it.
///
/// Arguments:
///     topics: topics the member subscribes to (any iterable of str; stored sorted, deduplicated).
///     owned_partitions: partitions the member owned in the previous generation (history for the
///         sticky strategies): ``(topic, partition)`` pairs or ``TopicPartition``s, or grouped as
///         ``(topic, [partition, ...])`` the way the wire carries them.
///     generation: the generation those partitions were owned in (-1 = unknown).
///     rack: the member's ``client.rack`` (None or "" = no rack).
///     group_instance_id: static membership id (``group.instance.id``), or None.
///     user_data: the member's opaque user data bytes (failover reads its priority here).
///
/// Members are immutable, hashable and picklable; equal when every field is equal.
#[pyclass(module = "kassign", name = "Member", frozen)]
pub struct Member {
    /// Shared with the members before it that have the same names ([`shared_topics`]).
    pub(crate) topics: Py<PyTuple>,
    /// Consecutive entries of one topic are merged, so equal flattened histories store equally.
    pub(crate) owned: Box<[OwnedGroup]>,
    pub(crate) n_owned: usize,
    pub(crate) generation: i32,
    pub(crate) rack: Option<Py<PyString>>,
    pub(crate) group_instance_id: Option<Py<PyString>>,
    pub(crate) user_data: Option<Py<PyBytes>>,
    flat: PyOnceLock<Py<PyTuple>>,
}

/// The name of an object's type, for error messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// `repr(obj)`, for error messages.
pub(crate) fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into())
}

/// FNV-1a over the names, with a separator byte UTF-8 never contains.
pub(crate) fn hash_names<'a>(names: impl IntoIterator<Item = &'a str>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for n in names {
        for &b in n.as_bytes().iter().chain(std::iter::once(&0xffu8)) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// A partition index: an int (not a bool) within int64.
fn partition_index(p: &Bound<'_, PyAny>, topic: &Bound<'_, PyString>) -> PyResult<i64> {
    if !p.is_instance_of::<PyInt>() || p.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "Member.owned_partitions: partition must be an int, got {}",
            type_name(p)
        )));
    }
    p.extract::<i64>().map_err(|_| {
        PyValueError::new_err(format!(
            "Member.owned_partitions: partition index {} of topic {} is out of range",
            repr(p),
            repr(topic.as_any())
        ))
    })
}

fn topic_name<'py>(t: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyString>> {
    t.cast::<PyString>().cloned().map_err(|_| {
        PyTypeError::new_err(format!(
            "Member.owned_partitions: topic must be a str, got {}",
            type_name(t)
        ))
    })
}

/// Whether `obj` may be a list of partitions (an iterable that is not a str or bytes).
fn is_partition_list(obj: &Bound<'_, PyAny>) -> bool {
    !(obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>())
        && (obj.is_instance_of::<PyList>()
            || obj.is_instance_of::<PyTuple>()
            || obj.hasattr("__iter__").unwrap_or(false))
}

struct OwnedBuilder<'py> {
    groups: Vec<(Bound<'py, PyString>, Vec<i64>)>,
    n: usize,
}

impl<'py> OwnedBuilder<'py> {
    fn group(&mut self, topic: &Bound<'py, PyString>) -> PyResult<&mut Vec<i64>> {
        let same = match self.groups.last() {
            Some((t, _)) => t.is(topic) || t.as_any().eq(topic)?,
            None => false,
        };
        if !same {
            // Interned like the subscription's names, so that `assign` resolves the group's
            // topic by identity.
            self.groups.push((interned(topic), Vec::new()));
        }
        Ok(&mut self.groups.last_mut().expect("just pushed").1)
    }

    fn pair(&mut self, topic: &Bound<'py, PyAny>, p: &Bound<'py, PyAny>) -> PyResult<()> {
        let topic = topic_name(topic)?;
        let p = partition_index(p, &topic)?;
        self.group(&topic)?.push(p);
        self.n += 1;
        Ok(())
    }

    fn grouped(&mut self, topic: &Bound<'py, PyAny>, parts: &Bound<'py, PyAny>) -> PyResult<()> {
        let topic = topic_name(topic)?;
        let mut v = Vec::with_capacity(parts.len().unwrap_or(0));
        for p in parts.try_iter()? {
            v.push(partition_index(&p?, &topic)?);
        }
        self.n += v.len();
        self.group(&topic)?.extend(v);
        Ok(())
    }

    fn item(&mut self, item: &Bound<'py, PyAny>) -> PyResult<()> {
        if let Ok(t) = item.cast::<PyTuple>() {
            if t.len() == 2 {
                let (a, b) = (t.get_item(0)?, t.get_item(1)?);
                if a.is_instance_of::<PyString>() && is_partition_list(&b) {
                    return self.grouped(&a, &b);
                }
                return self.pair(&a, &b);
            }
        }
        if item.hasattr("topic")? {
            if item.hasattr("partition")? {
                return self.pair(&item.getattr("topic")?, &item.getattr("partition")?);
            }
            if item.hasattr("partitions")? {
                return self.grouped(&item.getattr("topic")?, &item.getattr("partitions")?);
            }
        }
        Err(PyTypeError::new_err(format!(
            "Member.owned_partitions: expected (topic, partition) pairs, got {}",
            repr(item)
        )))
    }
}

/// The interned (canonical) object for an exact `str`, so that members built from separately
/// parsed names share topic objects and `assign` compares subscriptions by identity; subclasses
/// of `str` are kept as given.
fn interned<'py>(s: &Bound<'py, PyString>) -> Bound<'py, PyString> {
    if !s.is_exact_instance_of::<PyString>() {
        return s.clone();
    }
    let mut ptr = s.clone().into_ptr();
    // SAFETY: `ptr` is a new strong reference to an exact str; PyUnicode_InternInPlace replaces
    // it with a strong reference to the interned object (or leaves it), and never fails.
    unsafe {
        pyo3::ffi::PyUnicode_InternInPlace(&mut ptr);
        Bound::from_owned_ptr(s.py(), ptr).cast_into_unchecked()
    }
}

/// How many distinct subscriptions [`shared_topics`] remembers.
const SHARED_SUBSCRIPTIONS: usize = 64;

/// Recent subscriptions (topic-name hash, tuple), for [`shared_topics`].
static SUBSCRIPTIONS: std::sync::Mutex<Vec<(u64, Py<PyTuple>)>> = std::sync::Mutex::new(Vec::new());

/// A tuple of these (sorted, unique) topic names: an earlier member's tuple when one of the last
/// few distinct subscriptions has the same names as the same objects (exact, interned `str`), so
/// that members of one group usually share one tuple and `assign` compares their subscriptions
/// by identity; otherwise a new tuple, remembered in place of the oldest.
fn shared_topics<'py>(py: Python<'py>, names: Vec<Bound<'py, PyString>>, hash: u64) -> PyResult<Bound<'py, PyTuple>> {
    let exact = names.iter().all(|n| n.is_exact_instance_of::<PyString>());
    if exact {
        let cache = SUBSCRIPTIONS.lock().unwrap_or_else(|e| e.into_inner());
        for (h, t) in cache.iter() {
            let t = t.bind(py);
            if *h == hash && t.len() == names.len() && t.iter().zip(&names).all(|(a, b)| a.is(b)) {
                return Ok(t.clone());
            }
        }
    }
    let tuple = PyTuple::new(py, names)?;
    if exact {
        let mut cache = SUBSCRIPTIONS.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() == SHARED_SUBSCRIPTIONS {
            cache.remove(0);
        }
        cache.push((hash, tuple.clone().unbind()));
    }
    Ok(tuple)
}

fn optional_str<'py>(v: Option<&Bound<'py, PyAny>>, field: &str) -> PyResult<Option<Py<PyString>>> {
    match v {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => match v.cast::<PyString>() {
            Ok(s) => Ok(Some(s.clone().unbind())),
            Err(_) => Err(PyTypeError::new_err(format!(
                "Member.{field}: expected a str or None, got {}",
                type_name(v)
            ))),
        },
    }
}

/// A `kassign.Member` under its id, as the core's member reader ([`MemberSource`]) reads it: the
/// subscription is recognised by its tuple (members of a group usually share one, see
/// [`shared_topics`]), names are borrowed from the member's `str` objects.
pub(crate) struct MemberObject<'a, 'py> {
    pub(crate) py: Python<'py>,
    /// The member id, read from its `str` key.
    pub(crate) id: &'a str,
    pub(crate) member: &'a Member,
}

impl MemberSource for MemberObject<'_, '_> {
    type Error = ReadError;
    /// The address of the member's topics tuple: the members are borrowed while the reader runs,
    /// so an address is one tuple (equal names in another tuple are interned by content).
    type TopicsKey<'k>
        = usize
    where
        Self: 'k;
    fn id(&self) -> &str {
        self.id
    }
    fn topics_key(&self) -> usize {
        self.member.topics.as_ptr() as usize
    }
    fn topics(&self) -> Result<impl AsRef<[&str]>, ReadError> {
        let names: Vec<&str> = self
            .member
            .topics
            .bind(self.py)
            .iter_borrowed()
            .map(|t| t.extract::<&str>())
            .collect::<PyResult<_>>()?;
        Ok(names)
    }
    fn owned_groups(&self) -> usize {
        self.member.owned.len()
    }
    fn owned_group(&self, i: usize) -> Result<(&str, impl Iterator<Item = i64>), ReadError> {
        let g = &self.member.owned[i];
        Ok((g.topic.to_str(self.py)?, g.partitions.iter().copied()))
    }
    fn owned_hint(&self) -> usize {
        self.member.n_owned
    }
    fn generation(&self) -> i32 {
        self.member.generation
    }
    fn rack(&self) -> Result<Option<&str>, ReadError> {
        Ok(match &self.member.rack {
            Some(r) => Some(r.to_str(self.py)?),
            None => None,
        })
    }
    fn group_instance_id(&self) -> Result<Option<&str>, ReadError> {
        Ok(match &self.member.group_instance_id {
            Some(r) => Some(r.to_str(self.py)?),
            None => None,
        })
    }
}

impl Member {
    /// A member from parts already in stored form (topics sorted and unique, `topics_hash` their
    /// [`hash_names`], groups merged).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts<'py>(
        py: Python<'py>,
        topics: Vec<Bound<'py, PyString>>,
        topics_hash: u64,
        owned: Box<[OwnedGroup]>,
        n_owned: usize,
        generation: i32,
        rack: Option<Py<PyString>>,
        group_instance_id: Option<Py<PyString>>,
        user_data: Option<Py<PyBytes>>,
    ) -> PyResult<Member> {
        Ok(Member {
            topics: shared_topics(py, topics, topics_hash)?.unbind(),
            owned,
            n_owned,
            generation,
            rack,
            group_instance_id,
            user_data,
            flat: PyOnceLock::new(),
        })
    }

    fn flat_tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let t = self.flat.get_or_try_init(py, || {
            let cls = topic_partition_class(py)?;
            let longest = self
                .owned
                .iter()
                .flat_map(|g| g.partitions.iter())
                .copied()
                .max()
                .unwrap_or(0);
            let mut factory = TpFactory::new(py, cls, usize::try_from(longest + 1).unwrap_or(0).min(1 << 17))?;
            let mut items = Vec::with_capacity(self.n_owned);
            for g in self.owned.iter() {
                let topic = g.topic.bind(py);
                for &p in g.partitions.iter() {
                    items.push(factory.make(py, topic, p)?);
                }
            }
            Ok::<_, PyErr>(PyTuple::new(py, items)?.unbind())
        })?;
        Ok(t.bind(py).clone())
    }

    /// Owned partitions grouped by topic as a list of (topic, [partition, ...]).
    fn grouped_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for g in self.owned.iter() {
            out.append((g.topic.bind(py), PyList::new(py, g.partitions.iter())?))?;
        }
        Ok(out)
    }

    fn key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let groups: Vec<Bound<'py, PyAny>> = self
            .owned
            .iter()
            .map(|g| {
                Ok((g.topic.bind(py), PyTuple::new(py, g.partitions.iter())?)
                    .into_pyobject(py)?
                    .into_any())
            })
            .collect::<PyResult<_>>()?;
        (
            self.topics.bind(py),
            PyTuple::new(py, groups)?,
            self.generation,
            self.rack.as_ref().map(|r| r.bind(py)),
            self.group_instance_id.as_ref().map(|r| r.bind(py)),
            self.user_data.as_ref().map(|r| r.bind(py)),
        )
            .into_pyobject(py)
    }
}

#[pymethods]
impl Member {
    #[new]
    #[pyo3(signature = (topics, owned_partitions=None, generation=None, rack=None, group_instance_id=None, user_data=None))]
    #[pyo3(
        text_signature = "(topics, owned_partitions=(), generation=-1, rack=None, group_instance_id=None, user_data=None)"
    )]
    fn new<'py>(
        py: Python<'py>,
        topics: &Bound<'py, PyAny>,
        owned_partitions: Option<&Bound<'py, PyAny>>,
        generation: Option<&Bound<'py, PyAny>>,
        rack: Option<&Bound<'py, PyAny>>,
        group_instance_id: Option<&Bound<'py, PyAny>>,
        user_data: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Member> {
        // topics: an iterable of str, stored sorted and deduplicated
        if topics.is_instance_of::<PyString>() || topics.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(format!(
                "Member.topics: expected an iterable of topic names, not a single {}",
                type_name(topics)
            )));
        }
        let iter = topics.try_iter().map_err(|_| {
            PyTypeError::new_err(format!(
                "Member.topics: expected an iterable of topic names, got {}",
                type_name(topics)
            ))
        })?;
        let mut names: Vec<(String, Bound<'py, PyString>)> = Vec::new();
        for t in iter {
            let t = t?;
            let s = t.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err(format!("Member.topics: topic names must be str, got {}", repr(&t)))
            })?;
            names.push((s.to_str()?.to_owned(), interned(s)));
        }
        if !names.windows(2).all(|w| w[0].0 < w[1].0) {
            names.sort_by(|a, b| a.0.cmp(&b.0));
            names.dedup_by(|a, b| a.0 == b.0);
        }
        let topics_hash = hash_names(names.iter().map(|(n, _)| n.as_str()));
        let topics_t = shared_topics(py, names.into_iter().map(|(_, s)| s).collect(), topics_hash)?;

        // owned partitions
        let mut owned = OwnedBuilder {
            groups: Vec::new(),
            n: 0,
        };
        if let Some(o) = owned_partitions.filter(|o| !o.is_none()) {
            if o.is_instance_of::<PyString>() || o.is_instance_of::<PyBytes>() {
                return Err(PyTypeError::new_err(
                    "Member.owned_partitions: expected an iterable of (topic, partition) pairs",
                ));
            }
            let iter = o.try_iter().map_err(|_| {
                PyTypeError::new_err(format!(
                    "Member.owned_partitions: expected an iterable of (topic, partition) pairs, got {}",
                    type_name(o)
                ))
            })?;
            for item in iter {
                owned.item(&item?)?;
            }
        }

        let generation = match generation.filter(|g| !g.is_none()) {
            None => -1,
            Some(g) => {
                if !g.is_instance_of::<PyInt>() || g.is_instance_of::<PyBool>() {
                    return Err(PyTypeError::new_err(format!(
                        "Member.generation: expected an int, got {}",
                        type_name(g)
                    )));
                }
                g.extract::<i32>().map_err(|_| {
                    PyValueError::new_err(format!(
                        "Member.generation: {} does not fit in a signed 32-bit int",
                        repr(g)
                    ))
                })?
            }
        };
        let rack = optional_str(rack, "rack")?;
        let group_instance_id = optional_str(group_instance_id, "group_instance_id")?;
        let user_data = match user_data.filter(|u| !u.is_none()) {
            None => None,
            Some(u) => {
                if let Ok(b) = u.cast::<PyBytes>() {
                    Some(b.clone().unbind())
                } else if u.is_instance_of::<PyByteArray>() || u.is_instance_of::<PyMemoryView>() {
                    Some(py.get_type::<PyBytes>().call1((u,))?.cast_into::<PyBytes>()?.unbind())
                } else {
                    return Err(PyTypeError::new_err(format!(
                        "Member.user_data: expected bytes or None, got {}",
                        type_name(u)
                    )));
                }
            }
        };
        Ok(Member {
            topics: topics_t.unbind(),
            n_owned: owned.n,
            owned: owned
                .groups
                .into_iter()
                .map(|(t, v)| OwnedGroup {
                    topic: t.unbind(),
                    partitions: v.into_boxed_slice(),
                })
                .collect(),
            generation,
            rack,
            group_instance_id,
            user_data,
            flat: PyOnceLock::new(),
        })
    }

    /// Subscribed topics, sorted, without duplicates.
    #[getter]
    fn topics(&self, py: Python<'_>) -> Py<PyTuple> {
        self.topics.clone_ref(py)
    }

    /// Owned partitions, as ``TopicPartition``s in the order given.
    #[getter]
    fn owned_partitions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.flat_tuple(py)
    }

    /// Owned partitions grouped by topic, ``[(topic, [partition, ...]), ...]``, in the order given.
    #[getter]
    fn owned_groups<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.grouped_list(py)
    }

    /// The generation the owned partitions were owned in (-1 = unknown).
    #[getter]
    fn generation(&self) -> i32 {
        self.generation
    }

    /// The member's rack, or None.
    #[getter]
    fn rack(&self, py: Python<'_>) -> Option<Py<PyString>> {
        self.rack.as_ref().map(|r| r.clone_ref(py))
    }

    /// The static membership id, or None.
    #[getter]
    fn group_instance_id(&self, py: Python<'_>) -> Option<Py<PyString>> {
        self.group_instance_id.as_ref().map(|r| r.clone_ref(py))
    }

    /// The member's user data bytes, or None.
    #[getter]
    fn user_data(&self, py: Python<'_>) -> Option<Py<PyBytes>> {
        self.user_data.as_ref().map(|r| r.clone_ref(py))
    }

    fn __richcmp__<'py>(&self, other: &Bound<'py, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(other) = other.cast::<Member>() else {
            return Ok(py.NotImplemented());
        };
        let eq = self.key(py)?.eq(other.get().key(py)?)?;
        match op {
            CompareOp::Eq => Ok(eq.into_pyobject(py)?.to_owned().into_any().unbind()),
            CompareOp::Ne => Ok((!eq).into_pyobject(py)?.to_owned().into_any().unbind()),
            _ => Ok(py.NotImplemented()),
        }
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.key(py)?.hash()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Member(topics={}, owned_partitions={}, generation={}, rack={}, group_instance_id={})",
            repr(self.topics.bind(py).as_any()),
            repr(self.flat_tuple(py)?.as_any()),
            self.generation,
            repr(
                &self
                    .rack
                    .as_ref()
                    .map(|r| r.bind(py).clone().into_any())
                    .unwrap_or_else(|| py.None().into_bound(py))
            ),
            repr(
                &self
                    .group_instance_id
                    .as_ref()
                    .map(|r| r.bind(py).clone().into_any())
                    .unwrap_or_else(|| py.None().into_bound(py))
            ),
        ))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let m = slf.get();
        let args = (
            m.topics.bind(py),
            m.grouped_list(py)?,
            m.generation,
            m.rack.as_ref().map(|r| r.bind(py)),
            m.group_instance_id.as_ref().map(|r| r.bind(py)),
            m.user_data.as_ref().map(|r| r.bind(py)),
        );
        (slf.get_type(), args).into_pyobject(py)
    }
}
